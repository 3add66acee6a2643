"""DF1xx findings about the JSON itself, written while config.json is parsed (formats/parse.py): the file
unreadable, a value the schema refuses, a required key absent, an unknown key, a repeated key.
The cross-field rules on the parsed spec are judged later, in checks/config.py."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..findings import Finding

if TYPE_CHECKING:
    from pydantic import ValidationError

EMITS: frozenset[str] = frozenset({"DF100", "DF101", "DF102", "DF116", "DF117"})


def json_path(loc: tuple[Any, ...] | list[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "$"


def _short(value: Any) -> str:
    s = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return s if len(s) <= 80 else s[:77] + "..."


def _jsonable(v: Any) -> bool:
    try:
        json.dumps(v, allow_nan=False)
        return True
    except (TypeError, ValueError):
        return False


def unreadable(file: str, message: str, **details: Any) -> Finding:
    """DF100: the file is missing, not UTF-8, not JSON, or not one JSON object."""
    return Finding("DF100", message, file=file, details=details)


def duplicate_keys(file: str, keys: Iterable[str]) -> list[Finding]:
    return [
        Finding(
            "DF117",
            f"{file} repeats the key {k!r}; every JSON reader silently keeps the last value",
            field=k,
            file=file,
            details={"key": k},
        )
        for k in dict.fromkeys(keys)
    ]


def validation_findings(err: ValidationError, prefix: tuple[Any, ...] = ()) -> list[Finding]:
    out = []
    for e in err.errors(include_url=False):
        path = json_path(prefix + tuple(e["loc"]))
        if e["type"] == "missing":
            out.append(
                Finding("DF102", f"{path} is required but absent", field=path, details={"rule": "required"})
            )
        else:
            value = e.get("input")
            out.append(
                Finding(
                    "DF101",
                    f"{path} = {_short(value)}: {e['msg']}",
                    field=path,
                    details={
                        "value": value if _jsonable(value) else repr(value),
                        "rule": e["msg"],
                        "type": e["type"],
                    },
                )
            )
    return out


def missing(path: str, message: str) -> Finding:
    """DF102 for a field no rule of the schema can supply."""
    return Finding("DF102", message, field=path, details={"rule": "required"})


def out_of_range(path: str, value: Any, why: str, rule: str) -> Finding:
    """DF101 for a value the schema admits but the engines cannot hold (int64 overflow, absurd counts)."""
    # JSON readers of the report may hold numbers in 64 bits too: a huge integer travels as text
    stored = str(value) if isinstance(value, int) and not -(2**63) <= value < 2**63 else value
    return Finding(
        "DF101", f"{path} = {_short(value)}: {why}", field=path, details={"value": stored, "rule": rule}
    )


def unknown_key(path: str, readers: str = "the engines") -> Finding:
    """DF116 for a key the schema does not model; verify turns it into DF121 where an engine release reads it
    (checks/engine_keys.py, from engines/read_keys.py)."""
    return Finding("DF116", f"{path} is not a key {readers} read; it is kept verbatim", field=path)
