"""Quantization configs as the loaders read them (docs/engines.md, quantized drafters): compressed-tensors,
ModelOpt, MLX affine.

Pure data, no torch: the header-level checks run on it. Each library decides per module whether it
is quantized and with which scheme; `QuantConfig.scheme_for` reproduces that decision:

- compressed-tensors: `config_groups.*.targets` and `ignore` hold `re:` regular expressions
  (`re.match`, anchored at the start only), exact module names, or class names matched against the
  module's class hierarchy (`Linear` also matches vLLM's `LinearBase`). Rules from
  compressed_tensors/utils/match.py (`match_name`, `_match_class`, `is_match`), v0.20.
  tests/quant/test_matching.py checks this matcher against the library's own.
- ModelOpt: every linear layer is quantized with `quant_algo` unless a glob of `exclude_modules`
  matches its name (fnmatch; modelopt/torch/export and vLLM's modelopt.py `is_layer_excluded`).
- MLX (mlx_lm.utils.load_model): `quantization: {group_size, bits, "<path>": false | {...}}`; a
  module is quantized when the weights hold `<path>.scales`, with a per-path override of bits and
  group size, and `false` for modules kept dense.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .match import MAX_REGEXES, compile_pattern

# the config.json keys holding a quantization config (MLX writes `quantization`); top level in both dialects
CONFIG_KEYS = ("quantization_config", "quantization")
Library = Literal["compressed-tensors", "modelopt", "mlx"]
Family = Literal["ct-pack", "ct-float", "ct-nvfp4", "modelopt-fp8", "modelopt-nvfp4", "mlx-affine"]
# entries of one ignore / targets list: a drafter has a few dozen modules; real lists stay far below
MAX_ENTRIES = 10_000
CT_FORMATS: dict[str, Family] = {
    "pack-quantized": "ct-pack",
    "float-quantized": "ct-float",
    "naive-quantized": "ct-float",
    "nvfp4-pack-quantized": "ct-nvfp4",
}


class QuantConfigError(ValueError):
    """The quantization config is malformed; message names the JSON path."""


@dataclass(frozen=True)
class Scheme:
    family: Family
    bits: int
    type: str = "int"  # "int" or "float"
    strategy: str = "group"  # tensor / channel / group / tensor_group
    group_size: int | None = None
    symmetric: bool = True
    static_input: bool = False  # a stored input scale is expected
    input_global: bool = False  # NVFP4 activations: input_global_scale

    @property
    def label(self) -> str:
        """The label engine profiles key on: w4a16, w8a16, fp8, nvfp4, mlx-q4, mlx-q8."""
        if self.family == "mlx-affine":
            return f"mlx-q{self.bits}"
        if self.family in ("ct-nvfp4", "modelopt-nvfp4"):
            return "nvfp4"
        if self.type == "float" and self.bits == 8:
            return "fp8"
        return f"w{self.bits}a16" + ("" if self.symmetric else "-asym")


@dataclass(frozen=True)
class Group:
    name: str
    targets: tuple[str, ...]
    scheme: Scheme


@dataclass(frozen=True)
class _Patterns:
    """One ignore / targets list split for lookup: exact names and class names in a set, the rest in
    order (`re:` for compressed-tensors, globs for ModelOpt)."""

    exact: frozenset[str]
    ordered: tuple[str, ...]

    @staticmethod
    def of(entries: tuple[str, ...], library: str) -> _Patterns:
        if library == "modelopt":
            is_exact = [not any(c in p for c in "*?[") for p in entries]
        else:
            is_exact = [not p.startswith("re:") for p in entries]
        return _Patterns(
            frozenset(p for p, e in zip(entries, is_exact) if e),
            tuple(p for p, e in zip(entries, is_exact) if not e),
        )


@dataclass(frozen=True)
class QuantConfig:
    library: Library
    where: str  # JSON path / file the config was read from
    groups: tuple[Group, ...]
    ignore: tuple[str, ...] = ()
    ignore_key: str = "ignore"
    overrides: Mapping[str, Any] = field(default_factory=dict)  # MLX per-module entries
    # `re:` entries that were not evaluated (pattern -> why): they matched nothing; checks report them
    skipped: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        lib = self.library
        object.__setattr__(self, "_ignore", _Patterns.of(self.ignore, lib))
        object.__setattr__(self, "_targets", tuple(_Patterns.of(g.targets, lib) for g in self.groups))
        regexes = [
            p for p in (*self.ignore, *(t for g in self.groups for t in g.targets)) if p.startswith("re:")
        ]
        over = dict.fromkeys(regexes[MAX_REGEXES:]) if lib == "compressed-tensors" else {}
        for p in over:
            self.skipped[p] = (
                f"the config has {len(regexes)} regular expressions; the first {MAX_REGEXES} are evaluated"
            )
        object.__setattr__(self, "_over_budget", frozenset(over))

    def _hit(self, module: str, cls: str | None, pat: str) -> bool:
        if self.library == "modelopt":
            return fnmatch.fnmatchcase(module, pat)
        if pat in self._over_budget:  # type: ignore[attr-defined]
            return False
        m = compile_pattern(pat[3:])  # validated by _strs
        hit = m.match(module)
        if hit is None:
            self.skipped.setdefault(pat, m.why)
        return bool(hit)

    def _find(self, pats: _Patterns, module: str, cls: str | None) -> str | None:
        if module in pats.exact:
            return module
        if self.library != "modelopt" and cls is not None:
            # class targets match anywhere in the class hierarchy; every module is a torch nn.Module
            for c in (cls, "Module"):
                if c in pats.exact:
                    return c
        for pat in pats.ordered:
            if self._hit(module, cls, pat):
                return pat
        return None

    def ignored_by(self, module: str, cls: str | None) -> str | None:
        """An ignore / exclude entry that keeps `module` dense, or None."""
        return self._find(self._ignore, module, cls)  # type: ignore[attr-defined]

    def matches(self, module: str, cls: str | None, entry: str) -> bool:
        """Does one ignore / targets entry match `module`, as the library matches it."""
        if self.library == "modelopt":
            return fnmatch.fnmatchcase(module, entry)
        if not entry.startswith("re:"):
            return entry == module or (cls is not None and entry in (cls, "Module"))
        return self._hit(module, cls, entry)

    def scheme_for(self, module: str, cls: str | None = "Linear") -> Scheme | None:
        """What the library would quantize `module` (class `cls`; None for a bare parameter) with."""
        if self.library == "mlx":
            o = self.overrides.get(module)
            if o is False:
                return None
            base = self.groups[0].scheme
            if isinstance(o, dict):  # validated by _mlx
                return Scheme(
                    "mlx-affine",
                    o.get("bits") or base.bits,
                    group_size=o.get("group_size") or base.group_size or 64,
                )
            return base
        g = self.group_for(module, cls)
        return g.scheme if g else None

    def group_for(self, module: str, cls: str | None = "Linear") -> Group | None:
        """The config group that quantizes `module` (compressed-tensors / ModelOpt), or None. Only
        linear (and embedding) modules are quantized, whatever else a target matches
        (apply_quantization_config)."""
        if cls not in ("Linear", "Embedding") or self.ignored_by(module, cls):
            return None
        for g, pats in zip(self.groups, self._targets):  # type: ignore[attr-defined]
            if self._find(pats, module, cls) is not None:
                return g
        return None


def ct_match(name: str, cls: str | None, target: str) -> bool:
    """compressed-tensors' is_match for one target: regex (bounded, quant/match.py), exact name, or
    class name. A regex that is not evaluated matches nothing."""
    if target.startswith("re:"):
        try:
            return compile_pattern(target[3:]).match(name) is True
        except re.error:
            return False
    # class targets match anywhere in the class hierarchy; every module is a torch nn.Module
    return target == name or (cls is not None and target in (cls, "Module"))


def _int(v: Any, where: str, default: int | None = None) -> int | None:
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise QuantConfigError(f"{where} = {v!r}: expected a positive integer")
    return v


if TYPE_CHECKING:
    from pydantic import TypeAdapter


@functools.cache
def _adapter(tp: type) -> TypeAdapter[Any]:
    """pydantic's lax reading of `tp`, as compressed-tensors' fields read it; pydantic loads only for a
    quantized drafter's config, not on every verify."""
    from pydantic import TypeAdapter  # heavy: pydantic loads only when this runs

    return TypeAdapter(tp)


def _lib_bool(v: Any, where: str, default: bool) -> bool:
    """A bool as compressed-tensors reads it (a pydantic field): "no" / "false" / 0 are False, and
    what pydantic refuses ("maybe", a list) is refused here too, not read as Python's truthiness."""
    if v is None:
        return default
    from pydantic import ValidationError  # heavy: pydantic loads only when this runs

    try:
        return bool(_adapter(bool).validate_python(v))
    except ValidationError:
        raise QuantConfigError(f"{where} = {v!r}: expected true or false") from None


def _lib_int(v: Any, where: str, default: int | None = None) -> int | None:
    """A positive int as compressed-tensors reads it (pydantic: 4 and "4", not "four" or 4.5)."""
    if v is None:
        return default
    from pydantic import ValidationError  # heavy: pydantic loads only when this runs

    try:
        n = int(_adapter(int).validate_python(v))
    except ValidationError:
        n = 0
    if isinstance(v, bool) or n <= 0:
        raise QuantConfigError(f"{where} = {v!r}: expected a positive integer")
    return n


def _strs(v: Any, where: str) -> tuple[str, ...]:
    if v is None:
        return ()
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise QuantConfigError(f"{where} must be a list of strings")
    if len(v) > MAX_ENTRIES:
        raise QuantConfigError(
            f"{where} has {len(v)} entries; no drafter has that many modules (at most {MAX_ENTRIES} are read)"
        )
    for x in v:
        if x.startswith("re:"):
            try:
                compile_pattern(x[3:])
            except (re.error, RecursionError, OverflowError) as e:
                raise QuantConfigError(f"{where}: {x!r} is not a valid regular expression ({e})") from None
    return tuple(v)


def _ct(q: Mapping[str, Any], where: str) -> QuantConfig:
    groups = []
    cg = q.get("config_groups")
    if not isinstance(cg, dict) or not cg:
        raise QuantConfigError(f"{where}.config_groups must be a non-empty object")
    for gname, g in cg.items():
        gw = f"{where}.config_groups.{gname}"
        if not isinstance(g, dict) or not isinstance(g.get("weights"), dict):
            raise QuantConfigError(f"{gw}.weights must be an object")
        w, ia = g["weights"], g.get("input_activations")
        fmt = g.get("format") or q.get("format")
        family = CT_FORMATS.get(str(fmt))
        if family is None:
            raise QuantConfigError(f"{gw}: format {fmt!r} is not one of {sorted(CT_FORMATS)}")
        bits = _lib_int(w.get("num_bits"), f"{gw}.weights.num_bits")
        assert bits is not None
        strategy = str(w.get("strategy") or "tensor")
        gs = _lib_int(w.get("group_size"), f"{gw}.weights.group_size")
        if strategy in ("group", "tensor_group") and gs is None:
            raise QuantConfigError(f"{gw}.weights.group_size is required for strategy {strategy}")
        dynamic = isinstance(ia, dict) and (
            ia.get("dynamic") == "local"
            or _lib_bool(ia.get("dynamic"), f"{gw}.input_activations.dynamic", False)
        )
        static = isinstance(ia, dict) and not dynamic
        symmetric = _lib_bool(w.get("symmetric"), f"{gw}.weights.symmetric", True)
        scheme = Scheme(
            family,
            bits,
            str(w.get("type") or "int"),
            strategy,
            gs,
            symmetric,
            static_input=static and family == "ct-float",
            input_global=isinstance(ia, dict) and family == "ct-nvfp4",
        )
        groups.append(Group(gname, _strs(g.get("targets"), f"{gw}.targets"), scheme))
    return QuantConfig("compressed-tensors", where, tuple(groups), _strs(q.get("ignore"), f"{where}.ignore"))


def _modelopt(q: Mapping[str, Any], where: str) -> QuantConfig:
    nested = q.get("quantization")
    inner: Mapping[str, Any] = nested if isinstance(nested, dict) else q
    algo = str(inner.get("quant_algo") or "").upper()
    key = "exclude_modules" if "exclude_modules" in inner else "ignore"
    if algo == "FP8":
        scheme = Scheme("modelopt-fp8", 8, "float", "tensor", static_input=True)
    elif algo == "NVFP4":
        gs = _int(inner.get("group_size"), f"{where}.group_size", 16)
        scheme = Scheme("modelopt-nvfp4", 4, "float", "tensor_group", gs, static_input=True)
    else:
        raise QuantConfigError(
            f"{where}.quant_algo = {inner.get('quant_algo')!r}: FP8 and NVFP4 are modelled"
        )
    return QuantConfig(
        "modelopt",
        where,
        (Group("all", ("*",), scheme),),
        _strs(inner.get(key), f"{where}.{key}"),
        ignore_key=key,
    )


def _mlx(q: Mapping[str, Any], where: str) -> QuantConfig:
    bits = _int(q.get("bits"), f"{where}.bits", 4)
    gs = _int(q.get("group_size"), f"{where}.group_size", 64)
    assert bits is not None
    overrides = {k: v for k, v in q.items() if k not in ("bits", "group_size", "mode", "quant_method")}
    for k, v in overrides.items():
        if v is not False and not isinstance(v, dict):
            raise QuantConfigError(f"{where}.{k} = {v!r}: a per-module entry is false or an object")
        if isinstance(v, dict):
            _int(v.get("bits"), f"{where}.{k}.bits")
            _int(v.get("group_size"), f"{where}.{k}.group_size")
    return QuantConfig(
        "mlx", where, (Group("all", ("*",), Scheme("mlx-affine", bits, group_size=gs)),), overrides=overrides
    )


class UnknownMethod(QuantConfigError):
    """A quantization method this toolkit does not model (GPTQ, AWQ, bitsandbytes, ...)."""


def parse_quant_config(
    config: Mapping[str, Any] | None, hf_quant: Mapping[str, Any] | None = None
) -> QuantConfig | None:
    """The checkpoint's quantization config, or None for a dense one. Raises QuantConfigError."""
    if hf_quant is not None:
        return _modelopt(hf_quant, "hf_quant_config.json")
    if not config:
        return None
    if isinstance(config.get("quantization"), dict):  # MLX writes this one first
        return _mlx(config["quantization"], "quantization")
    q = config.get("quantization_config")
    if q is None:
        return None
    if not isinstance(q, dict):
        raise QuantConfigError("quantization_config must be an object")
    method = str(q.get("quant_method") or "")
    if method == "compressed-tensors":
        return _ct(q, "quantization_config")
    if method == "modelopt":
        return _modelopt(q, "quantization_config")
    if method == "mlx" or ("bits" in q and "group_size" in q and not method):
        return _mlx(q, "quantization_config")
    raise UnknownMethod(
        f"quantization_config.quant_method = {method or None!r} is not modelled "
        "(compressed-tensors, modelopt and MLX are)"
    )
