"""DF5xx: does the drafter fit its target model (its config here, its tokenizer in tokenizer.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..checkpoint import Checkpoint
from ..findings import Finding
from ..sources import Source
from . import tokenizer

if TYPE_CHECKING:
    from .context import CheckContext

EMITS: frozenset[str] = frozenset({"DF501", "DF502", "DF503", "DF504", "DF505", "DF506", "DF507", "DF508"})


def check(ctx: CheckContext) -> list[Finding]:
    """With a target; a target whose config cannot be read is DF508. A malformed tokenizer record (DF520)
    is said with or without one."""
    t = ctx.target
    record = tokenizer.malformed_record(ctx.checkpoint)
    if t is None:
        return record
    if t.config is None:
        return [*record, Finding("DF508", f"target {t.label}: {t.error}", file="config.json")]
    out = record + pairing_findings(ctx.checkpoint, t.config, t.label)
    if t.source is not None:
        out += tokenizer_pairing(
            ctx.checkpoint, t.source, t.label, vocab_checked=any(f.code == "DF501" for f in out)
        )
    return out


def tokenizer_pairing(
    ckpt: Checkpoint, target: Source, label: str, *, vocab_checked: bool = False
) -> list[Finding]:
    """The drafter against the target's tokenizer (tokenizer.py); `vocab_checked`: DF501 already came from the
    target's config. A tokenizer with ids past vocab_size is DF501 too when nothing is recorded."""
    vocab, out = tokenizer.read_target_vocabulary(target, label)
    spec = ckpt.spec
    if vocab is None or spec is None:
        return out
    if not vocab_checked and tokenizer.recorded_fingerprint(ckpt) is None and vocab.size > spec.vocab_size:
        out.append(
            Finding(
                "DF501",
                f"the target {label}'s tokenizer ({vocab.file}) has ids up to {vocab.size - 1} "
                f"but vocab_size = {spec.vocab_size}: the drafter cannot embed or score them",
                field=spec.path("vocab_size"),
                details={"draft": spec.vocab_size, "target_tokenizer": vocab.size},
            )
        )
    return out + tokenizer.tokenizer_findings(ckpt, vocab, label)


def target_text_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Multimodal targets keep the language model in text_config; its keys win."""
    merged = dict(config)
    text = config.get("text_config")
    if isinstance(text, dict):
        merged.update(text)
    return merged


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def borrow_target_vocab(ckpt: Checkpoint, target: Mapping[str, Any] | None) -> None:
    """A drafter without vocab_size (the assistant export) uses the target's vocabulary: take it from the
    target's config when one is given (a target smaller than the drafter's own ids keeps the bound, so
    DF505 reports it)."""
    spec = ckpt.spec
    if spec is None or spec.vocab_from != "bound" or target is None:
        return
    vocab = _int(target_text_config(target).get("vocab_size"))
    if vocab is not None and vocab >= spec.vocab_size:
        ckpt.spec = spec.with_(vocab_size=vocab, vocab_from="target")


def _quantized_head(cfg: Mapping[str, Any]) -> str | None:
    q = cfg.get("quantization_config")
    if not isinstance(q, dict):
        return None
    skip: list[str] = []
    for key in ("ignore", "modules_to_not_convert", "ignored_layers", "skip_modules", "exclude_modules"):
        v = q.get(key)
        if isinstance(v, list):
            skip += [str(x) for x in v]
    # GPTQ writes lm_head: false when the head stays dense; the others list the modules they skip
    if q.get("lm_head") is False or any(s.endswith("lm_head") for s in skip):
        return None
    return str(q.get("quant_method") or q.get("format") or "quantized")


def pairing_findings(ckpt: Checkpoint, target: Mapping[str, Any], label: str) -> list[Finding]:
    spec = ckpt.spec
    if spec is None:
        return []
    t = target_text_config(target)
    out: list[Finding] = []
    vocab, hidden, layers = (
        _int(t.get("vocab_size")),
        _int(t.get("hidden_size")),
        _int(t.get("num_hidden_layers")),
    )
    if vocab is not None and vocab != spec.vocab_size:
        out.append(
            Finding(
                "DF501",
                f"vocab_size = {spec.vocab_size} but the target {label} has {vocab}; the "
                "drafter embeds and scores with the target's tables",
                field=spec.path("vocab_size"),
                details={"draft": spec.vocab_size, "target": vocab},
            )
        )
    if hidden is not None:
        n = len(spec.target_layer_ids)
        fc = ckpt.quant.logical.get("fc.weight")  # a quantized fc by its logical shape
        width = fc.shape[1] if fc is not None and len(fc.shape) == 2 else spec.fc_in_features
        if width != n * hidden:
            out.append(
                Finding(
                    "DF502",
                    f"fc takes {width} inputs but the target gives {n} taps x hidden_size "
                    f"{hidden} = {n * hidden}",
                    tensor="fc.weight",
                    details={"fc_in": width, "expected": n * hidden},
                )
            )
    if layers is not None:
        beyond = [i for i in spec.target_layer_ids if i >= layers]
        if beyond:
            out.append(
                Finding(
                    "DF503",
                    f"tap layer(s) {beyond} do not exist in the target ({layers} layers)",
                    field=spec.path("target_layer_ids"),
                    details={"target_layers": layers},
                )
            )
        if spec.num_target_layers is not None and spec.num_target_layers != layers:
            out.append(
                Finding(
                    "DF504",
                    f"num_target_layers = {spec.num_target_layers} but the target has "
                    f"{layers}: the drafter was built for another model",
                    field="num_target_layers",
                    details={"draft": spec.num_target_layers, "target": layers},
                )
            )
    mask = spec.mask_token_id
    if mask is not None and vocab is not None and mask >= vocab:
        out.append(
            Finding(
                "DF505",
                f"mask_token_id = {mask} is outside the target vocabulary [0, {vocab})",
                field=spec.path("mask_token_id"),
            )
        )
    if mask is not None:
        eos = t.get("eos_token_id")
        specials = {
            "pad_token_id": [t.get("pad_token_id")],
            "eos_token_id": eos if isinstance(eos, list) else [eos],
        }
        for key, ids in specials.items():
            if mask in ids:
                out.append(
                    Finding(
                        "DF506",
                        f"mask_token_id = {mask} is the target's {key}; the query block would "
                        "be indistinguishable from padding / end of text",
                        field=spec.path("mask_token_id"),
                    )
                )
    method = _quantized_head(target)
    if method and spec.version == "v2":
        out.append(
            Finding(
                "DF507",
                f"the target's lm_head is quantized ({method}); DFlash2's candidate top-K needs "
                "a dense head in vLLM and older SGLang. Keep lm_head unquantized (add it to the ignore "
                "list)",
                details={"quant_method": method},
            )
        )
    return out
