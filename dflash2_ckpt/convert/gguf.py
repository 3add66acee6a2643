"""convert_gguf(): GGUF in either direction, the library entry the CLI calls for `--to gguf` or a .gguf SRC."""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..errors import ConversionUsageError
from .from_gguf import FromGGUFReport, convert_from_gguf
from .to_gguf import GGUFConversionReport, convert_to_gguf


def convert_gguf(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    to: str,
    target: str | os.PathLike[str] | None = None,
    verifier_name: str | None = None,
    outtype: str | None = None,
    tokenizer_from: str | os.PathLike[str] | None = None,
    dry_run: bool = False,
    force: bool = False,
    accept_findings: Iterable[str] = (),
    verifier_architectures: tuple[str, ...] = (),
    accept_changes: Iterable[str] = (),
) -> GGUFConversionReport | FromGGUFReport:
    """HF -> GGUF with to="gguf"; a .gguf SRC -> the HF dialect `to`. Raises as convert() does."""
    from_gguf = os.fspath(src).endswith(".gguf")
    if to == "gguf":
        if from_gguf:
            raise ConversionUsageError("the source is already GGUF; convert it to nested or flat")
        if not os.fspath(dst).endswith(".gguf"):
            # refused before any work: the written file is read back by its name, and llama.cpp users
            # look for the suffix
            raise ConversionUsageError(
                f"the GGUF destination {os.fspath(dst)!r} does not end in .gguf",
                hint=f"name it {os.fspath(dst).rstrip('/')}.gguf",
            )
        return convert_to_gguf(
            src,
            dst,
            target=target,
            outtype=outtype,
            tokenizer_from=tokenizer_from,
            force=force,
            dry_run=dry_run,
            accept_findings=accept_findings,
            accept_changes=accept_changes,
        )
    if outtype or tokenizer_from:
        raise ConversionUsageError("--outtype and --tokenizer-from apply to --to gguf only")
    if to not in ("nested", "flat"):
        raise ValueError(f"to must be 'nested', 'flat' or 'gguf', not {to!r}")
    return convert_from_gguf(
        src,
        dst,
        to=to,  # type: ignore[arg-type]
        target=target,
        verifier_name=verifier_name,
        verifier_architectures=verifier_architectures,
        force=force,
        dry_run=dry_run,
        accept_findings=accept_findings,
        accept_changes=accept_changes,
    )
