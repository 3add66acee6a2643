"""The rule every conversion (between the HF dialects, to GGUF, from GGUF) ends on: its output has no error
finding the source did not have already."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from ..errors import ConversionError
from ..findings import Finding


def refuse_new_errors(
    before: Iterable[Finding],
    after: Iterable[Finding],
    *,
    output: str,
    source: str,
    exempt: Collection[str] = (),
) -> None:
    """ConversionError naming the first new error codes; `exempt`: codes the output is judged on elsewhere."""
    had = {f.code for f in before if f.severity == "error"}
    new = [f for f in after if f.severity == "error" and f.code not in had and f.code not in exempt]
    if new:
        raise ConversionError(
            f"{output} fails verification where {source} did not: "
            + "; ".join(f"{f.code} {f.message}" for f in new[:3])
        )
