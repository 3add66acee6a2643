"""Edit a JSON document's text in place: set a few keys, keep every other byte as it was.

`--fix` used to parse config.json and dump it again, which rewrote numbers the parser could not hold
(`1e999` became `Infinity`, not JSON; `1e-400` became `0.0`) and reformatted the whole file. Here the
document is scanned once for the text span of each value; a changed key's value span is replaced, a
missing key is inserted before its object's closing brace. Untouched values keep their exact text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["JsonEditError", "set_keys"]


class JsonEditError(ValueError):
    """The text is not a JSON object this editor can place the keys in (the fix is then refused)."""


@dataclass
class _Node:
    start: int
    end: int
    members: dict[str, tuple[_Node, int]] | None = None  # key -> (value, key start); objects only
    last_end: int = -1  # end of the last member's value (objects)
    children: list[_Node] = field(default_factory=list)


_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"')
MAX_DEPTH = 256


def _ws(text: str, i: int) -> int:
    m = _WS.match(text, i)
    return m.end() if m else i


def _value(text: str, i: int, depth: int) -> _Node:
    if depth > MAX_DEPTH:
        raise JsonEditError("nested too deeply")
    i = _ws(text, i)
    if i >= len(text):
        raise JsonEditError("ends early")
    c = text[i]
    if c == "{":
        return _object(text, i, depth)
    if c == "[":
        node = _Node(i, i)
        j = _ws(text, i + 1)
        if text.startswith("]", j):
            node.end = j + 1
            return node
        while True:
            child = _value(text, j, depth + 1)
            node.children.append(child)
            j = _ws(text, child.end)
            if text.startswith(",", j):
                j += 1
                continue
            if text.startswith("]", j):
                node.end = j + 1
                return node
            raise JsonEditError(f"expected , or ] at {j}")
    m = _STRING.match(text, i) if c == '"' else _NUMBER.match(text, i)
    if m:
        return _Node(i, m.end())
    for word in ("true", "false", "null"):
        if text.startswith(word, i):
            return _Node(i, i + len(word))
    raise JsonEditError(f"not a JSON value at {i}")


def _object(text: str, i: int, depth: int) -> _Node:
    node = _Node(i, i, members={})
    assert node.members is not None
    j = _ws(text, i + 1)
    if text.startswith("}", j):
        node.end = j + 1
        return node
    while True:
        m = _STRING.match(text, j)
        if not m:
            raise JsonEditError(f"expected a key at {j}")
        key = json.loads(m.group())
        j = _ws(text, m.end())
        if not text.startswith(":", j):
            raise JsonEditError(f"expected : at {j}")
        child = _value(text, j + 1, depth + 1)
        if key in node.members:
            raise JsonEditError(f"duplicate key {key!r}")
        node.members[key] = (child, m.start())
        node.last_end = child.end
        j = _ws(text, child.end)
        if text.startswith(",", j):
            j = _ws(text, j + 1)
            continue
        if text.startswith("}", j):
            node.end = j + 1
            return node
        raise JsonEditError(f"expected , or }} at {j}")


def _indent_of(text: str, node: _Node) -> tuple[str, str]:
    """(member indent, closing indent) as the object already uses them; one line when it is on one."""
    assert node.members is not None
    if node.members:
        _, key_at = next(iter(node.members.values()))
        line = text.rfind("\n", node.start, key_at)
        if line < 0:
            return "", ""
        inner = text[line + 1 : key_at]
    else:
        inner = None
    close = text.rfind("\n", node.start, node.end - 1)
    outer = text[close + 1 : node.end - 1] if close >= 0 else ""
    if inner is None:
        inner = outer + "  " if close >= 0 else ""
    return inner, outer


def _dumps(value: Any, indent: str) -> str:
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, indent=2 if indent else None)
    return text.replace("\n", "\n" + indent) if indent else text


def _insert(text: str, node: _Node, key: str, value: Any) -> str:
    inner, outer = _indent_of(text, node)
    sep = ("\n" + inner) if inner or "\n" in text[node.start : node.end] else " "
    member = f"{json.dumps(key, ensure_ascii=False)}: {_dumps(value, inner)}"
    if node.members:
        at = node.last_end
        return text[:at] + "," + sep + member + text[at:]
    at = node.end - 1
    tail = ("\n" + outer) if inner else ""
    return text[: node.start + 1] + (sep if inner else "") + member + tail + text[at:]


def set_keys(text: str, edits: dict[str, Any]) -> str:
    """`text` with each dotted key set to its value (objects made where missing); every other byte kept.
    JsonEditError when `text` is not one JSON object or a parent on a path is not an object."""
    for dotted, value in edits.items():
        root = _value(text, 0, 0)
        if root.members is None or text[_ws(text, root.end) :].strip():
            raise JsonEditError("not one JSON object")
        *parents, key = dotted.split(".")
        node = root
        missing: list[str] = []
        for p in parents:
            assert node.members is not None
            found = node.members.get(p)
            if found is None:
                missing = parents[parents.index(p) :]
                break
            if found[0].members is None:
                raise JsonEditError(f"{p} is not an object")
            node = found[0]
        assert node.members is not None
        if missing:
            text = _insert(text, node, missing[0], _nested(missing[1:] + [key], value))
            continue
        if key in node.members:
            child, _ = node.members[key]
            indent = _indent_of(text, node)[0]
            text = text[: child.start] + _dumps(value, indent) + text[child.end :]
        else:
            text = _insert(text, node, key, value)
    return text


def _nested(path: list[str], value: Any) -> Any:
    """{path[0]: {path[1]: ... value}} (just `value` for an empty path): what to insert under a missing
    parent."""
    out: Any = value
    for name in reversed(path):
        out = {name: out}
    return out
