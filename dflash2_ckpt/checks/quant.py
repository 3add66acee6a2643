"""DF220-DF229: quantized drafters, from config and headers (docs/engines.md, quantized drafters).

Checkpoint-level verdicts only: the conv and selector must stay dense (vLLM builds them with
quant_config=None and acceptance is most sensitive there), every quantized module must carry the
auxiliary tensors its scheme needs, and config and storage must agree module by module. Whether an
engine serves a quantized fc / attention / MLP is judged per engine by the engine profiles, from
`checkpoint.quant.quantized_modules`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..findings import Finding
from ..quant.config import QuantConfig
from ..quant.logical import QuantModule, QuantView
from ..quant.storage import MAIN_DTYPE, expected_aux, main_suffix, stored_main_shape

if TYPE_CHECKING:
    from ..checkpoint import Checkpoint
    from .context import CheckContext

EMITS: frozenset[str] = frozenset(
    {"DF220", "DF221", "DF222", "DF223", "DF224", "DF225", "DF226", "DF227", "DF228", "DF229", "DF234"}
)
# must stay dense (docs/engines.md, quantized drafters): vLLM builds these unquantized
_DENSE_ONLY = re.compile(
    r"(^|\.)(attention_conv|mlp_conv)\.(kernel_projection|base_kernel)$|"
    r"(^|\.)candidate_selector\.(hidden_projection|predecessor_codebook|successor_codebook)$"
)
# modules of the target that quantizers list by habit (llm-compressor ignores lm_head by default)
_TARGET_MODULES = ("lm_head", "embed_tokens", "model.embed_tokens")


def _module_findings(m: QuantModule, ckpt: Checkpoint) -> list[Finding]:
    out: list[Finding] = []
    s = m.scheme
    if s is None:
        return out
    main_name = f"{m.module}.{main_suffix(s.family)}"
    main = ckpt.tensors.get(main_name)
    if main is None:
        return [
            Finding(
                "DF222",
                f"{m.module} is stored quantized ({s.label}) but has no {main_name}; the "
                "loader has no weight to dequantize",
                tensor=main_name,
                details={"scheme": s.label},
            )
        ]
    if main.dtype not in MAIN_DTYPE[s.family]:
        out.append(
            Finding(
                "DF223",
                f"{main_name} is {main.dtype}; {s.label} ({s.family}) stores it as "
                f"{' or '.join(MAIN_DTYPE[s.family])}",
                tensor=main_name,
                details={"dtype": main.dtype, "scheme": s.label},
            )
        )
    logical = m.logical or ()
    for aux in expected_aux(s, logical):
        name = f"{m.module}.{aux.suffix}"
        t = ckpt.tensors.get(name)
        if t is None:
            out.append(
                Finding(
                    "DF222",
                    f"{name} is missing: {m.module} is {s.label} and needs {aux.why}; "
                    "loaders fail or dequantize with an uninitialised scale",
                    tensor=name,
                    details={"scheme": s.label, "expected_shape": [list(x) for x in aux.shapes]},
                )
            )
        elif t.shape not in aux.shapes or (aux.dtypes and t.dtype not in aux.dtypes):
            out.append(
                Finding(
                    "DF223",
                    f"{name} is {t.dtype} {list(t.shape)} but {s.label} over the logical "
                    f"weight {list(logical)} implies {' or '.join(str(list(x)) for x in aux.shapes)}"
                    f"{' ' + '/'.join(aux.dtypes) if aux.dtypes else ''}"
                    f"{f' (group size {s.group_size})' if s.group_size else ''}",
                    tensor=name,
                    details={"found": list(t.shape), "expected": [list(x) for x in aux.shapes]},
                )
            )
    return out


def _unmatched_ignores(cfg: QuantConfig, classes: dict[str, str | None]) -> list[str]:
    # module paths as the drafter class names them, and as a model.-wrapped export would
    paths = [(p + mod, cls) for mod, cls in classes.items() for p in ("", "model.")]
    # exact names and class names by set lookup: an ignore list may be long, the drafter is small
    exact = {n for n, _ in paths} | {c for _, c in paths if c is not None} | ({"Module"} if paths else set())
    out = []
    for pat in cfg.ignore:
        if pat in _TARGET_MODULES:
            continue
        if cfg.library == "compressed-tensors" and not pat.startswith("re:"):
            hit = pat in exact
        else:
            hit = any(cfg.matches(n, cls, pat) for n, cls in paths)
        if not hit:
            out.append(pat)
    return out


def _skipped_findings(cfg: QuantConfig) -> list[Finding]:
    """DF234: one finding per pattern that was not evaluated (a few named, the rest counted)."""
    items = sorted(cfg.skipped.items())
    out = [
        Finding(
            "DF234",
            f"{cfg.where}: the pattern {pat!r} was not evaluated: {why}. It is treated as matching "
            "no module, so the verdicts on the modules it names may be wrong; rewrite it as plain "
            "alternatives or exact module names",
            field=cfg.where,
            details={"pattern": pat, "why": why},
        )
        for pat, why in items[:20]
    ]
    if len(items) > 20:
        out.append(
            Finding(
                "DF234",
                f"{cfg.where}: {len(items) - 20} more patterns were not evaluated",
                field=cfg.where,
                details={"count": len(items) - 20},
            )
        )
    return out


def _config_findings(view: QuantView) -> list[Finding]:
    if view.unknown_method:
        return [
            Finding("DF228", f"{view.config_error}; its modules are not checked", field="quantization_config")
        ]
    if view.config_error:
        return [
            Finding(
                "DF229",
                f"{view.config_file}: {view.config_error}; no engine can build the quantized modules from it",
                file=view.config_file,
            )
        ]
    return []


def check(ctx: CheckContext) -> list[Finding]:
    """Only for a DFlash drafter whose headers were read, like the tensors family."""
    ckpt = ctx.checkpoint
    if ckpt.detection is None or not ckpt.detection.is_dflash or not ckpt.tensors:
        return []
    return quant_findings(ckpt)


def quant_findings(ckpt: Checkpoint) -> list[Finding]:
    view = ckpt.quant
    out = _config_findings(view)
    cfg = view.config
    if view.modules and cfg is None and not view.config_error:
        names = sorted(view.modules)
        out.append(
            Finding(
                "DF227",
                f"{len(names)} module(s) stored quantized ({', '.join(names[:4])}"
                f"{', ...' if len(names) > 4 else ''}) but the config has no quantization_config: "
                "engines build dense modules and leave them uninitialised. Add the quantizer's "
                "quantization_config or publish dense weights",
                tensor=f"{names[0]}",
                details={
                    "modules": names,
                    "tensors": sorted(t for n in names for t in view.modules[n].tensors),
                },
            )
        )
    for m in view.modules.values():
        if _DENSE_ONLY.search(m.module):
            out.append(
                Finding(
                    "DF221",
                    f"{m.module} is stored quantized ({m.label}); vLLM builds the conv "
                    "kernel_projection / base_kernel, the selector hidden_projection and the codebooks "
                    "dense, and acceptance is most sensitive there. Keep it dense (add it to the "
                    "ignore list and re-export)",
                    tensor=m.weight,
                    details={"scheme": m.label},
                )
            )
        elif cfg is not None and m.declared is None and m.scheme is not None:
            why = cfg.ignored_by(m.module, view.classes.get(m.module, "Linear"))
            out.append(
                Finding(
                    "DF224",
                    f"{m.module} is stored quantized ({m.label}) but {cfg.where} "
                    f"{f'ignores it ({why!r})' if why else 'targets no scheme at it'}: the loader "
                    "builds it dense and cannot take the packed tensors",
                    tensor=m.weight,
                    details={"scheme": m.label, "ignored_by": why},
                )
            )
        elif cfg is not None and m.scheme is None:
            out.append(
                Finding(
                    "DF223",
                    f"{m.module} stores {', '.join(m.tensors)}, which match no scheme of {cfg.where}",
                    tensor=m.weight,
                    details={"tensors": list(m.tensors)},
                )
            )
        out += _module_findings(m, ckpt)
    if cfg is not None and cfg.library != "mlx":
        unmatched = _unmatched_ignores(cfg, view.classes)
        dense_but_quantized = []
        for mod, cls in view.classes.items():
            s = cfg.scheme_for(mod, cls)
            if s is None or mod in view.modules or f"{mod}.weight" not in ckpt.tensors:
                continue
            dense_but_quantized.append((mod, s))
        if unmatched:
            mods = [m for m, _ in dense_but_quantized]
            out.append(
                Finding(
                    "DF226",
                    f"{cfg.where}.{cfg.ignore_key} entr{'y' if len(unmatched) == 1 else 'ies'} "
                    f"{', '.join(map(repr, unmatched))} match{'es' if len(unmatched) == 1 else ''} no "
                    "module of the drafter"
                    + (f"; so {', '.join(mods[:4])} stored dense would be built quantized" if mods else ""),
                    field=f"{cfg.where}.{cfg.ignore_key}",
                    severity="error" if mods else None,
                    details={"unmatched": unmatched, "modules": mods},
                )
            )
        else:
            for mod, s in dense_but_quantized:
                shape = ckpt.tensors[f"{mod}.weight"].shape
                out.append(
                    Finding(
                        "DF225",
                        f"{mod} is stored dense but {cfg.where} quantizes it ({s.label}): "
                        f"the loader expects {mod}.{main_suffix(s.family)} "
                        f"{list(stored_main_shape(s, shape))} and leaves the weight uninitialised",
                        tensor=f"{mod}.weight",
                        details={"scheme": s.label},
                    )
                )
    if view.modules and cfg is not None:
        schemes = {m.module: m.label for m in view.modules.values()}
        counts: dict[str, int] = {}
        for label in schemes.values():
            counts[label] = counts.get(label, 0) + 1
        out.append(
            Finding(
                "DF220",
                f"{len(schemes)} module(s) quantized ("
                f"{', '.join(f'{k} x{v}' for k, v in sorted(counts.items()))}, {cfg.library}); whether "
                "an engine serves them is judged per engine",
                details={"modules": schemes, "library": cfg.library},
            )
        )
    if cfg is not None:
        out += _skipped_findings(cfg)
    return out
