"""The fast parse: a config the dialect model accepts, read without importing pydantic.

pydantic costs a command about a third of its start-up (its import and the models' schema builds), and a
header verify or a pre-commit hook parses one config. The models (formats/models.py) stay the one source:
dev/fast_schema.py reduces them to the table in fast_schema.py, and this module applies it with the
models' rules (strict types, extra keys kept in order, no inf / nan). It answers only "valid, and here
are the values" or None; every config it does not accept, and everything it does not fully understand (a
lone surrogate, a non-string key, a value that is not plain JSON data), goes to pydantic (formats/parse.py), so each
finding about a bad config is still pydantic's own. tests/formats/test_fast_parse.py checks, on every
config in the repository and on thousands of mutations of them, that both agree, down to the spec and the
findings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .fast_schema import FIELDS, MODELS


class Invalid(Exception):
    """The fast parse does not accept the value; pydantic decides (and writes the findings)."""


def _text(s: str) -> str:
    """A string pydantic reads as text: a lone surrogate (JSON's "\\ud800") is not; pydantic refuses it in
    a key and keeps it in a value, so the fast parse refuses both and leaves the decision to pydantic."""
    if not s.isascii():
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            raise Invalid from None
    return s


def _key(k: Any) -> str:
    if type(k) is not str:
        raise Invalid
    return k if k.isascii() else _text(k)


_SCALARS = frozenset({bool, int, float, type(None)})


def _plain(v: Any) -> Any:
    """`v` itself when it is plain JSON data (str keys, text, numbers, bools, None); anything else (a
    tuple, bytes, an int key from a library caller, a surrogate) is not this module's to judge."""
    t = type(v)
    if t in _SCALARS:
        return v
    if t is str:
        return v if v.isascii() else _text(v)
    if t is dict:
        for k, x in v.items():
            _key(k)
            _plain(x)
    elif t is list:
        for x in v:
            _plain(x)
    else:
        raise Invalid
    return v


def _copy(v: Any) -> Any:
    """JSON values copied as pydantic's model_dump copies them (containers new, scalars shared)."""
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v


class Parsed:
    """What the code after parsing reads from a validated model: fields as attributes, `model_extra`,
    `model_dump()`. Nothing else of pydantic's BaseModel is offered."""

    __slots__ = ("_name", "_fields", "model_extra")

    def __init__(self, name: str, fields: dict[str, Any], extra: dict[str, Any]) -> None:
        self._name = name
        self._fields = fields
        self.model_extra = extra

    def __getattr__(self, name: str) -> Any:
        try:
            return self._fields[name]
        except KeyError:
            raise AttributeError(f"{self._name} has no field {name!r}") from None

    def model_dump(
        self, *, exclude: set[str] | frozenset[str] = frozenset(), exclude_none: bool = False
    ) -> dict[str, Any]:
        out = {
            k: dump(v)
            for k, v in (*self._fields.items(), *self.model_extra.items())
            if k not in exclude and not (exclude_none and v is None)
        }
        return out

    def __repr__(self) -> str:
        return f"{self._name}({', '.join(f'{k}={v!r}' for k, v in self._fields.items())})"


def dump(v: Any) -> Any:
    """A parsed value as plain data: nested models as dicts (either parse's models)."""
    if hasattr(v, "model_dump"):
        return v.model_dump()
    return _copy(v)


def _number(v: Any, kind: str, ge: Any, gt: Any) -> Any:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (kind == "int" and not isinstance(v, int)):
        raise Invalid
    if kind == "float":
        try:
            v = float(v)
        except OverflowError:
            raise Invalid from None
        if not math.isfinite(v):
            raise Invalid
    if (ge is not None and not v >= ge) or (gt is not None and not v > gt):
        raise Invalid
    return v


def _value(spec: tuple[Any, ...], v: Any) -> Any:
    kind = spec[0]
    if kind == "opt":
        return None if v is None else _value(spec[1], v)
    if kind in ("int", "float"):
        return _number(v, kind, spec[1], spec[2])
    if kind == "str":
        if not isinstance(v, str):
            raise Invalid
        return _text(v)
    if kind == "bool":
        if not isinstance(v, bool):
            raise Invalid
        return v
    if kind == "literal":
        if not any(type(v) is type(x) and v == x for x in spec[1]):
            raise Invalid
        return v
    if kind == "list":
        if not isinstance(v, list) or (spec[2] is not None and len(v) < spec[2]):
            raise Invalid
        return [_value(spec[1], x) for x in v]
    if kind == "dict":
        if not isinstance(v, dict):
            raise Invalid
        return _copy(_plain(v))
    if kind == "model":
        return _model(spec[1], v)
    raise Invalid  # a spec kind this module does not know: let pydantic judge


def _model(name: str, data: Any) -> Parsed:
    if not isinstance(data, dict):
        raise Invalid
    fields: dict[str, Any] = {}
    for key, spec, required, default in FIELDS[name]:
        if key in data:
            fields[key] = _value(spec, data[key])
        elif required:
            raise Invalid
        else:
            fields[key] = default
    extra = {_key(k): _plain(v) for k, v in data.items() if k not in fields}
    return Parsed(name, fields, extra)


def parse(dialect: str, version: str, config: Mapping[str, Any]) -> Parsed | None:
    """The config as the (dialect, version) model reads it, or None when the model might refuse it."""
    name = MODELS.get((dialect, version))
    if name is None:
        return None
    try:
        return _model(name, dict(config))
    except (Invalid, RecursionError):
        return None
