"""Load a drafter's tensors the way the engines do, and account for every one of them.

Every tensor in the files must land in exactly one parameter of the reference drafter and every
parameter must be filled; a tensor that lands nowhere is what a loader would silently drop (the
v2-as-v1 failure), a parameter that stays empty is what it would leave uninitialised. Both are
findings, never a silent skip. Data is read with safetensors `safe_open` (never pickle).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors import safe_open

from ..checkpoint.layout import draft_vocab, expected_tensors, role_for
from ..findings import Finding
from ..formats.spec import DraftSpec

EMITS: frozenset[str] = frozenset({"DF701", "DF702", "DF713"})

# the target tables the forward borrows; a carried copy of either is used instead of a random one
BORROWED = ("embed_tokens.weight", "lm_head.weight")


# a reduced-vocabulary drafter's own maps (layout.role_for): loaded as integers, beside the parameters
MAPS = {"d2t": "d2t", "d2t.weight": "d2t", "t2d": "t2d", "t2d.weight": "t2d"}


def parameter_shapes(spec: DraftSpec) -> dict[str, tuple[int, ...]]:
    """The reference drafter's parameters: the layout's expected tensors (docs/contract.md#tensors), and
    for a reduced draft vocabulary its own head [draft_vocab, H]."""
    out = {e.name: e.shape for e in expected_tensors(spec)}
    dv = draft_vocab(spec)
    if dv is not None:
        out["lm_head.weight"] = (dv, spec.hidden_size)
    return out


def destination(name: str, spec: DraftSpec | None = None) -> tuple[str, str | None]:
    """Where the loader puts a stored tensor, as the role table decides: ("param", parameter name),
    ("borrowed", target table), ("ignored", None) for a role no forward reads (vocab maps, a copy of
    the target's norm), or ("not-consumed", None) for what a loader would drop (unknown, quantized)."""
    r = role_for(name, spec)
    if r.role == "own-head":
        return "param", r.canonical
    if r.role == "vocab-map" and draft_vocab(spec) is not None:
        return "map", MAPS[name]
    if r.role == "target-copy":
        table = f"{r.rule.copies}.weight"
        return ("borrowed", table) if table in BORROWED else ("ignored", None)
    if r.role == "vocab-map":
        return "ignored", None
    if r.role in ("quant-aux", "unknown"):
        return "not-consumed", None
    # an alias (.weight-suffixed codebooks, encoder.*): vLLM refuses the name (verify says so at header
    # level), but the values are the same, so the smoke still proves they draft
    return "param", r.canonical


def does_not_fit(
    name: str,
    found: str,
    shape: list[int],
    needs: str,
    expected: list[int],
    outcome: str,
    file: str | None = None,
    **details: object,
) -> Finding:
    """DF713: a tensor that cannot fill the slot of its name (a drafter parameter or a borrowed table)."""
    return Finding(
        "DF713",
        f"{name} is {found} {shape} but {needs} {expected}; {outcome}",
        tensor=name,
        file=file,
        details={"shape": shape, "expected": expected, **details},
    )


@dataclass
class LoadedWeights:
    params: dict[str, torch.Tensor] = field(default_factory=dict)
    borrowed: dict[str, torch.Tensor] = field(default_factory=dict)  # embed_tokens / lm_head copies
    maps: dict[str, torch.Tensor] = field(default_factory=dict)  # d2t / t2d of a reduced vocabulary
    findings: list[Finding] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not any(f.code in ("DF702", "DF713") for f in self.findings)


def _dtype_shape(handle: object, name: str) -> tuple[str, tuple[int, ...]]:
    sl = handle.get_slice(name)  # type: ignore[attr-defined]
    return str(sl.get_dtype()), tuple(sl.get_shape())


def load_weights(spec: DraftSpec, files: Mapping[str, Path], device: torch.device) -> LoadedWeights:
    """files: tensor name -> safetensors file holding it. Everything loads as float32 on `device`."""
    shapes = parameter_shapes(spec)
    out = LoadedWeights()
    filled_by: dict[str, str] = {}
    by_file: dict[Path, list[str]] = defaultdict(list)
    for name in sorted(files):
        by_file[Path(files[name])].append(name)
    for path, names in by_file.items():
        with safe_open(str(path), framework="pt", device="cpu") as f:
            for name in names:
                dtype, shape = _dtype_shape(f, name)
                where, target = destination(name, spec)
                if where == "map" and target is not None:
                    out.maps[target] = f.get_tensor(name).to(device=device, dtype=torch.long)
                    continue
                if where == "borrowed" and target is not None:
                    out.borrowed.setdefault(target, f.get_tensor(name).to(device=device, dtype=torch.float32))
                    continue
                if where == "ignored":
                    continue
                if target is None or target not in shapes:
                    out.findings.append(
                        Finding(
                            "DF701",
                            f"{name} {list(shape)} is not a parameter of this {spec.version} drafter: "
                            "a loader would drop it without a word; remove it or fix the config that omits its module",
                            tensor=name,
                            file=path.name,
                            details={"shape": list(shape), "dtype": dtype},
                        )
                    )
                    continue
                if target in filled_by:
                    out.findings.append(
                        Finding(
                            "DF701",
                            f"{name} fills {target}, which {filled_by[target]} already filled; "
                            "one of the two is dropped — keep only one",
                            tensor=name,
                            file=path.name,
                            details={"parameter": target, "first": filled_by[target]},
                        )
                    )
                    continue
                if shape != shapes[target] or not dtype.startswith(("F", "BF")):
                    out.findings.append(
                        does_not_fit(
                            name,
                            dtype,
                            list(shape),
                            "the parameter needs a float tensor",
                            list(shapes[target]),
                            "the forward cannot run",
                            file=path.name,
                            dtype=dtype,
                        )
                    )
                    filled_by[target] = name
                    continue
                filled_by[target] = name
                out.params[target] = f.get_tensor(name).to(device=device, dtype=torch.float32)
    for target in shapes:
        if target not in filled_by:
            out.findings.append(
                Finding(
                    "DF702",
                    f"parameter {target} {list(shapes[target])} is filled by no tensor: an engine leaves "
                    "it uninitialised (or refuses to load); export the checkpoint again with it",
                    tensor=target,
                    details={"shape": list(shapes[target])},
                )
            )
    return out
