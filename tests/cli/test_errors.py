"""The one error table: every typed error has its row, and an error document carries its attributes."""

from __future__ import annotations

import inspect as pyinspect

import pytest

from dflash2_ckpt import errors
from dflash2_ckpt.cli.errors import ERRORS, INTERNAL, error_doc, outcome_of

TYPED = [
    c
    for _, c in pyinspect.getmembers(errors, pyinspect.isclass)
    if issubclass(c, errors.Dflash2Error) and c is not errors.Dflash2Error
]


@pytest.mark.parametrize("cls", TYPED, ids=lambda c: c.__name__)
def test_every_typed_error_has_its_own_row(cls: type) -> None:
    assert any(t is cls for t, _ in ERRORS), f"add a row for {cls.__name__} to cli/errors.py ERRORS"


def test_rows_are_ordered_subclass_first() -> None:
    types = [t for t, _ in ERRORS]
    for i, t in enumerate(types):
        assert not any(issubclass(later, t) and later is not t for later in types[i + 1 :]), t.__name__


@pytest.mark.parametrize(
    "err, code",
    [
        (errors.ConversionUsageError("x"), 2),
        (errors.UsageError("x"), 2),
        (errors.SourceFindingsError("x", findings=[]), 1),
        (errors.ConversionError("x"), 1),
        (errors.SourceError("x"), 3),
        (errors.HeaderError("x"), 3),
        (errors.MissingDependencyError("x"), 3),
        (OSError(28, "No space left on device", "/out"), 3),
        (RuntimeError("bug"), 3),
    ],
)
def test_exit_codes(err: BaseException, code: int) -> None:
    assert outcome_of(err).exit_code == code
    assert error_doc(err)["exit_code"] == code


def test_document_carries_the_attributes_and_a_next_step() -> None:
    doc = error_doc(errors.SourceError("revision not found", path="org/x@v9", repo_id="org/x", revision="v9"))
    assert doc == {
        "type": "SourceError",
        "message": "revision not found",
        "hint": doc["hint"],
        "label": "cannot read",
        "exit_code": 3,
        "path": "org/x@v9",
        "repo_id": "org/x",
        "revision": "v9",
    }
    assert doc["hint"]  # the table's next step when the error has none
    assert error_doc(errors.HeaderError("bad", tensor="fc.weight", offset=8))["offset"] == 8
    assert error_doc(errors.SourceError("x", hint="do y"))["hint"] == "do y"
    assert error_doc(RuntimeError("boom"))["hint"] == INTERNAL.next_step
