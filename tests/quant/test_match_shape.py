"""The nested-repetition test on a pattern's text (quant/match.py): the shapes that backtrack
exponentially are found, ordinary patterns are not, and escapes and character classes are literal."""

from __future__ import annotations

import pytest

from dflash2_ckpt.quant.match import nests_repetition as nested


@pytest.mark.parametrize(
    "pattern",
    [
        "(a+)+$",
        "(?=l)(a|a)*!",
        "(l)(\\1|l)*!",
        "(?!x)(a+)+$",
        "(a{2})*",
        "((a)+b)*",
        "(x+){2}",
        "(?:a|b)+",
        "(a*)*",
        "(a{2,})+?",
    ],
)
def test_a_repetition_over_a_repeating_or_alternating_group_is_nested(pattern: str) -> None:
    assert nested(pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        "(?!fc).*",
        "a+b*",
        "(ab)*",
        "(a|b)c",
        "(?:a|b)?",
        "[(+]+",
        "(a{1})*",
        "(a?)*",
        "\\(a+\\)+",
        "(?=x)model\\.layers\\.\\d+\\.mlp",
        "(x){1,3}",
        "[]a+]*",
        "(a{0,1})+",
    ],
)
def test_other_shapes_are_not(pattern: str) -> None:
    assert not nested(pattern)
