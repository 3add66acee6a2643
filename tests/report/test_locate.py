"""Placing a finding on the line of its config key: the JSON walk against every key of generated configs."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dflash2_ckpt.report.locate import field_keys, key_line

# field paths cannot spell . [ ] inside a key
KEYS = st.text(st.characters(codec="utf-8", exclude_characters=".[]"), min_size=1, max_size=6)
LEAF = st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.lists(st.integers(), max_size=3)
OBJ = st.recursive(
    st.dictionaries(KEYS, LEAF, max_size=4),
    lambda c: st.dictionaries(KEYS, LEAF | c, max_size=4),
    max_leaves=20,
)


def paths(obj: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for k, v in obj.items():
        out.append(prefix + (k,))
        if isinstance(v, dict):
            out += paths(v, prefix + (k,))
    return out


def expected_line(obj: dict[str, Any], path: tuple[str, ...], indent: int | None) -> int:
    """Where json.dumps writes the key: dump with a marker in place of that key and find the marker."""

    def mark(o: Any, rest: tuple[str, ...]) -> Any:
        return {
            ("\x00MARK" if (k == rest[0] and len(rest) == 1) else k): (
                mark(v, rest[1:]) if k == rest[0] and len(rest) > 1 else v
            )
            for k, v in o.items()
        }

    text = json.dumps(mark(obj, path), indent=indent)
    return text[: text.index('"\\u0000MARK"')].count("\n") + 1


@settings(max_examples=200, deadline=None)
@given(OBJ, st.sampled_from([None, 2, 4]))
def test_every_key_is_found_on_its_line(obj: dict[str, Any], indent: int | None) -> None:
    text = json.dumps(obj, indent=indent)
    for path in paths(obj):
        assert key_line(text, ".".join(path)) == expected_line(obj, path, indent), path


@given(st.text(max_size=200), st.text(max_size=30))
def test_never_raises_on_any_text(text: str, field: str) -> None:
    line = key_line(text, field)
    assert line is None or 1 <= line <= text.count("\n") + 1


def test_list_index_stays_on_the_list_line() -> None:
    text = json.dumps({"a": {"layer_types": ["x", "y"]}}, indent=2)
    assert field_keys("a.layer_types[1]") == ["a", "layer_types"]
    assert key_line(text, "a.layer_types[1]") == 3
    assert key_line(text, "a.missing") == 2  # the deepest key found
