"""DF9xx: the rules of llama.cpp's DFlash loader and the known GGUF drifts (docs/engines.md, GGUF).

The DraftSpec read from the metadata already went through every HF rule; what is here is what only a
GGUF file can get wrong: the architecture string, the +1 tap convention, the mask token key, the
DFlash2 metadata the loader insists on, tensor types, and what a converter may have dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, LlamaFileType

from ..checkpoint import Checkpoint
from ..checkpoint.layout import component_of
from ..findings import Finding
from ..formats import gguf_names as N
from ..formats.gguf_spec import read_spec
from ..formats.spec import DraftSpec
from ..sources.gguf_header import GGUFHeader
from .pairing import target_text_config

if TYPE_CHECKING:
    from .context import CheckContext

EMITS: frozenset[str] = frozenset(
    {
        "DF901",
        "DF902",
        "DF903",
        "DF904",
        "DF905",
        "DF906",
        "DF907",
        "DF908",
        "DF909",
        "DF910",
        "DF911",
        "DF913",
    }
)
# HF-dialect findings that say nothing true about a GGUF file: quantized and mixed tensor types are normal
# there (norms stay F32), and the types are judged here instead; a missing mask id is DF904 here
SUPERSEDED: frozenset[str] = frozenset({"DF204", "DF205", "DF113"})

# Codebooks quantized to MXFP4 cost acceptance; Q4_K ones measured fine (docs/engines.md: quantized
# drafters, GGUF). So the floor is Q4_K's 4.5 bits per weight, and MXFP4 is named explicitly.
MIN_BITS = 4.5
_FILE_TYPES = {
    LlamaFileType.ALL_F32: GGMLQuantizationType.F32,
    LlamaFileType.MOSTLY_F16: GGMLQuantizationType.F16,
    LlamaFileType.MOSTLY_BF16: GGMLQuantizationType.BF16,
    LlamaFileType.MOSTLY_Q8_0: GGMLQuantizationType.Q8_0,
    LlamaFileType.MOSTLY_Q4_0: GGMLQuantizationType.Q4_0,
    LlamaFileType.MOSTLY_Q4_1: GGMLQuantizationType.Q4_1,
    LlamaFileType.MOSTLY_Q5_0: GGMLQuantizationType.Q5_0,
    LlamaFileType.MOSTLY_Q5_1: GGMLQuantizationType.Q5_1,
    LlamaFileType.MOSTLY_Q4_K_S: GGMLQuantizationType.Q4_K,
    LlamaFileType.MOSTLY_Q4_K_M: GGMLQuantizationType.Q4_K,
    LlamaFileType.MOSTLY_Q5_K_S: GGMLQuantizationType.Q5_K,
    LlamaFileType.MOSTLY_Q5_K_M: GGMLQuantizationType.Q5_K,
    LlamaFileType.MOSTLY_Q6_K: GGMLQuantizationType.Q6_K,
    LlamaFileType.MOSTLY_MXFP4_MOE: GGMLQuantizationType.MXFP4,
}


def bits_per_weight(ggml_type: int) -> float:
    block, size = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
    return size * 8 / block


def check(ctx: CheckContext) -> list[Finding]:
    """The GGUF family: only for a GGUF file; the target's layer count (if given) judges unshifted taps."""
    layers = None
    if ctx.target is not None and ctx.target.config is not None:
        n = target_text_config(ctx.target.config).get("num_hidden_layers")
        layers = n if isinstance(n, int) and not isinstance(n, bool) else None
    return gguf_findings(ctx.checkpoint, target_layers=layers)


_MAX_TAPS = 4096  # tap ids looked at: no target has more layers (formats.parse.MAX_DRAFT_LAYERS)


def gguf_findings(
    ckpt: Checkpoint,
    *,
    target_layers: int | None = None,
    reference: DraftSpec | None = None,
    reference_tensors: Iterable[str] = (),
) -> list[Finding]:
    """GGUF rules; `reference` / `reference_tensors` are the HF drafter it was converted from, when known."""
    h = ckpt.gguf
    if h is None:
        return []
    out: list[Finding] = []
    fork = _architecture(h, out)
    read = read_spec(h)
    if not fork:
        _keys(h, read.bad_keys, read.v2_tensors, out)
    raw_taps = h.get(N.KEY_TARGET_LAYERS)
    if raw_taps is not None and not isinstance(raw_taps, list):
        # a scalar, bool or float where llama.cpp reads an array: it refuses the file as if it were absent
        if not any(f.code == "DF902" for f in out):
            out.append(
                Finding(
                    "DF902",
                    f"{N.KEY_TARGET_LAYERS} = {raw_taps!r} is not an array of layer ids: the "
                    "llama.cpp loader stops with \"DFlash model requires 'target_layers' in GGUF "
                    'metadata". Write the z-lab target_layer_ids + 1 as an array',
                    field=N.KEY_TARGET_LAYERS,
                    details={"value": repr(raw_taps)[:80]},
                )
            )
        raw_taps = []
    taps = [int(v) for v in raw_taps or [] if isinstance(v, int) and not isinstance(v, bool)][:_MAX_TAPS]
    _taps(taps, target_layers, reference, out)
    _mask(h, reference, out)
    spec = read.spec
    if spec is not None and spec.version == "v2" and spec.selector_top_k:
        k = spec.selector_top_k
        if spec.hidden_size < k * (k + 1):
            out.append(
                Finding(
                    "DF907",
                    f"{N.KEY_EMBED} = {spec.hidden_size} < selector_top_k·(selector_top_k + 1) "
                    f"= {k * (k + 1)}; the llama.cpp loader refuses the file",
                    field=N.KEY_SEL_TOP_K,
                    details={"hidden_size": spec.hidden_size, "top_k": k},
                )
            )
    if "tokenizer.ggml.tokens" not in h.kv:
        out.append(
            Finding(
                "DF913",
                "no tokenizer.ggml.tokens: llama.cpp takes the drafter's vocabulary from the "
                "file and it must be the target's. Convert with --target (tokenizer.json) or "
                "--tokenizer-from TARGET.gguf",
                field="tokenizer.ggml.tokens",
            )
        )
    _types(h, out)
    _biases(h, reference, reference_tensors, out)
    if not fork:
        from .gguf_window import window_findings  # lazy: checks.gguf_window loads only on this path

        out += window_findings(h, spec.version if spec is not None else None, reference)
    return out


def _architecture(h: GGUFHeader, out: list[Finding]) -> bool:
    """DF901; True for the fork dialect (whose keys then need no separate report)."""
    arch = h.get(N.KEY_ARCH)
    if arch == N.ARCH:
        return False
    fork = arch == N.FORK_ARCH or any(k.startswith(N.FORK_ARCH + ".") for k in h.kv)
    if fork:
        msg = (
            f"general.architecture = {arch!r} is the fork converters' dialect, which upstream llama.cpp refuses "
            f'(llama.cpp#25116). Set general.architecture = "{N.ARCH}", rename the {N.FORK_ARCH}.dflash.* keys '
            f"to {N.ARCH}.*, and write target_layer_ids + 1 as {N.KEY_TARGET_LAYERS}; or re-convert with "
            "`dflash2-ckpt convert SRC --to gguf`"
        )
    else:
        msg = f'general.architecture = {arch!r}: llama.cpp loads a DFlash drafter only as "{N.ARCH}"'
    out.append(Finding("DF901", msg, field=N.KEY_ARCH, details={"architecture": arch}))
    return fork


def _keys(h: GGUFHeader, bad: tuple[str, ...], v2_tensors: bool, out: list[Finding]) -> None:
    v2_keys = set(N.V2_KEYS.values())
    for key in bad:
        if key == N.KEY_TARGET_LAYERS:
            out.append(
                Finding(
                    "DF902",
                    f'{key} is missing (or empty): the llama.cpp loader stops with "DFlash '
                    "model requires 'target_layers' in GGUF metadata\". Write the z-lab "
                    "target_layer_ids + 1",
                    field=key,
                )
            )
        elif key in v2_keys:
            value = h.get(key)
            what = "DFlash2 tensors are present" if v2_tensors else "selector_top_k > 0 says DFlash2"
            out.append(
                Finding(
                    "DF906",
                    f"{key} is {'missing' if value is None else repr(value)} but {what}: "
                    'llama.cpp stops with "DFlash2 model is missing conv/selector metadata"; write '
                    "the drafter's dflash_config value",
                    field=key,
                    details={"value": value},
                )
            )
        else:
            out.append(
                Finding(
                    "DF911", f"{key} is missing or not an integer; the llama.cpp loader needs it", field=key
                )
            )


def _taps(
    taps: list[int], target_layers: int | None, reference: DraftSpec | None, out: list[Finding]
) -> None:
    if not taps:
        return
    why = None
    if 0 in taps:
        why = "contains 0, which no layer input can be (stored ids are z-lab ids + 1)"
    elif reference is not None and tuple(taps) == tuple(reference.target_layer_ids):
        why = f"equals the HF drafter's target_layer_ids {list(reference.target_layer_ids)} instead of those + 1"
    if why is None:
        return
    fixed = [t + 1 for t in taps]
    beyond = target_layers is not None and max(fixed) > target_layers
    out.append(
        Finding(
            "DF903",
            f"{N.KEY_TARGET_LAYERS} = {taps} {why}: an older converter wrote them unshifted; "
            "the drafter loads and taps the wrong layers, acceptance collapses. "
            + (f"Write {fixed}" if not beyond else "Re-convert from the HF checkpoint"),
            field=N.KEY_TARGET_LAYERS,
            details={"stored": taps, "expected": fixed, "target_layers": target_layers},
        )
    )


def _mask(h: GGUFHeader, reference: DraftSpec | None, out: list[Finding]) -> None:
    mask = h.get(N.KEY_MASK)
    if mask is None:
        out.append(
            Finding(
                "DF904",
                f"no {N.KEY_MASK}: llama.cpp drafts id -1 in every slot and nothing is "
                "accepted (llama.cpp#26761). Set it to the drafter's dflash_config.mask_token_id",
                field=N.KEY_MASK,
            )
        )
    elif reference is not None and reference.mask_token_id is not None and mask != reference.mask_token_id:
        out.append(
            Finding(
                "DF905",
                f"{N.KEY_MASK} = {mask} but the HF drafter's mask_token_id is "
                f"{reference.mask_token_id} (a re-export let a donor's mask id win, PrismML#127). "
                f"Set it to {reference.mask_token_id}",
                field=N.KEY_MASK,
                details={"gguf": mask, "hf": reference.mask_token_id},
            )
        )


def _types(h: GGUFHeader, out: list[Finding]) -> None:
    for t in h.tensors:
        hf = N.gguf_to_hf(t.name)
        if hf is None or component_of(hf) not in ("conv", "selector"):
            continue
        if t.ggml_type == GGMLQuantizationType.MXFP4 or bits_per_weight(t.ggml_type) < MIN_BITS:
            out.append(
                Finding(
                    "DF908",
                    f"{t.name} is {t.type_name} ({bits_per_weight(t.ggml_type):.2f} bits per "
                    "weight): codebooks quantized to MXFP4 dropped acceptance to 41.5%; keep the conv "
                    "and selector tensors at Q4_K or above (llama-quantize --tensor-type)",
                    tensor=t.name,
                    details={"type": t.type_name},
                )
            )
    ft = h.get(N.KEY_FILE_TYPE)
    want = (
        _FILE_TYPES.get(LlamaFileType(ft))
        if isinstance(ft, int) and ft in LlamaFileType._value2member_map_
        else None
    )
    matrices = Counter(t.type_name for t in h.tensors if len(t.ne) >= 2)
    if want is None or not matrices:
        return
    dominant = matrices.most_common(1)[0][0]
    if dominant != want.name:
        out.append(
            Finding(
                "DF909",
                f"general.file_type says {LlamaFileType(ft).name} but most weight matrices are "
                f"{dominant} ({dict(matrices)}); tools that trust the label misreport the file",
                field=N.KEY_FILE_TYPE,
                details={"file_type": LlamaFileType(ft).name, "types": dict(matrices)},
            )
        )


def _biases(
    h: GGUFHeader, reference: DraftSpec | None, reference_tensors: Iterable[str], out: list[Finding]
) -> None:
    have = {t.name for t in h.tensors}
    biases = [n for n in reference_tensors if n.endswith(".bias")]
    if not biases and reference is not None and reference.attention_bias:
        biases = [
            f"layers.{i}.self_attn.{p}_proj.bias"
            for i in range(reference.num_hidden_layers)
            for p in ("q", "k", "v", "o")
        ]
    lost = [n for n in biases if (N.hf_to_gguf(n) or n) not in have]
    if lost:
        out.append(
            Finding(
                "DF910",
                f"{len(lost)} bias tensor(s) of the HF drafter are not in the GGUF "
                f"({', '.join(lost[:3])}{', ...' if len(lost) > 3 else ''}): the GGUF computes without "
                "them, which is not the trained drafter. Keeping them does not help llama.cpp: its dflash "
                'loader has no attention-bias tensors and refuses such a file ("wrong number of '
                'tensors", llama.cpp b11434:src/models/dflash.cpp); measure the loss with '
                "`dflash2-ckpt accept DRAFTER.gguf --target TARGET.gguf --engine llama.cpp`",
                tensor=lost[0],
                details={"missing": lost},
            )
        )
