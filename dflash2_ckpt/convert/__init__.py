"""convert(): exact conversion between the nested and flat dialects
(docs/contract.md#nested-and-flat-field-by-field).

plan (headers only) -> stage beside DST -> copy tensor byte ranges in the kernel, every write checked
against the plan as it happens (stream.py) -> fsync -> open_checkpoint + verify() the staged output -> rename
into place. Any failure removes the
staging directory; a run killed outright leaves one that the next run for the same DST removes.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from ..checkpoint import INDEX, Checkpoint, open_checkpoint
from ..checkpoint.target import read_target
from ..checks.pairing import borrow_target_vocab, pairing_findings, target_text_config
from ..errors import ConversionError, ConversionUsageError, SourceError, SourceFindingsError
from ..findings import Finding, keep
from ..sources import MAX_JSON_BYTES
from ..usecases.verify import verify
from .configs import Verifier
from .meaning import check_drafters, planned_drafter, source_drafter
from .plan import ConversionPlan, make_plan, planned_infos
from .regressions import refuse_new_errors
from .report import ConversionReport, report_from_plan
from .staging import check_overlap, claim_destination, install, staging_area
from .stream import WriteError, write_shard
from .tokenizer_record import record_in_config, target_fingerprint

__all__ = ["convert", "ConversionReport", "WriteError"]

Progress = Callable[[int, int, str], None]  # (done, total, shard): where a long write is (cli/progress.py)


def _looks_like_repo_id(name: object) -> bool:
    """`org/name` as the Hub spells it: not a filesystem path (absolute, relative or home-based)."""
    if not isinstance(name, str) or name.count("/") != 1 or name.startswith((".", "~")):
        return False
    return all(part and all(c.isalnum() or c in "-_." for c in part) for part in name.split("/"))


def verifier_identity(
    target: str | os.PathLike[str],
    cfg: Mapping[str, Any],
    verifier_name: str | None,
    archs: tuple[str, ...] = (),
) -> Verifier:
    """name_or_path that loads from any working directory: the given name, else the repo id the target's
    config records, else the target's absolute path; architectures from the option or the target's config."""
    recorded = cfg.get("_name_or_path") or cfg.get("name_or_path")
    if verifier_name:
        name = verifier_name
    elif _looks_like_repo_id(recorded) and not os.path.exists(str(recorded)):
        name = str(recorded)
    else:
        name = os.path.abspath(os.fspath(target))
    given = cfg.get("architectures")
    found = tuple(a for a in given if isinstance(a, str)) if isinstance(given, list) else ()
    return Verifier(name, tuple(archs) or found)


def _target(
    target: str | os.PathLike[str] | None, verifier_name: str | None, archs: tuple[str, ...], ckpt: Checkpoint
) -> tuple[Verifier | None, int | None]:
    if target is None:
        return (Verifier(verifier_name, archs) if verifier_name else None), None
    t = read_target(target)
    cfg, label = t.config, t.label
    if cfg is None:
        raise SourceError(f"target {label}: {t.error}", path=str(target))
    borrow_target_vocab(ckpt, cfg)
    bad = [f for f in pairing_findings(ckpt, cfg, label) if f.severity == "error"]
    if bad:
        raise ConversionError(
            f"the drafter does not fit the target {label}: {bad[0].code} {bad[0].message}",
            hint="pass the target model the drafter was trained for",
        )
    layers = target_text_config(cfg).get("num_hidden_layers")
    return (
        verifier_identity(target, cfg, verifier_name, archs),
        layers if isinstance(layers, int) and not isinstance(layers, bool) else None,
    )


def _json_bytes(obj: Any, what: str) -> bytes:
    """Indented JSON, or compact when indenting would take it past the cap readers apply (a 60 MB
    config indents to 78 MB, which verify would then refuse); refused before any write when even the
    compact form is over."""

    text = json.dumps(obj, indent=2, sort_keys=True) + "\n"
    if len(text) > MAX_JSON_BYTES:
        text = json.dumps(obj, sort_keys=True, separators=(",", ":")) + "\n"
    data = text.encode()
    if len(data) > MAX_JSON_BYTES:
        raise ConversionError(
            f"the converted {what} would be {len(data):,} bytes, over the {MAX_JSON_BYTES:,}-byte "
            "cap every reader of this toolkit applies",
            hint="shrink the config (unknown keys are kept verbatim)",
        )
    return data


def needs_vocab(ckpt: Checkpoint) -> None:
    """A drafter without vocab_size converts only with the target's: every written dialect records it."""
    if ckpt.spec is not None and ckpt.spec.vocab_from == "bound":
        raise ConversionUsageError(
            "the drafter has no vocab_size (it borrows the target's embedding and head) "
            "and the converted config must record the target's",
            path=ckpt.label,
            hint="pass --target TARGET_DIR (its config.json gives vocab_size)",
        )


def _write_json(path: Path, data: bytes) -> None:
    with open(path, "xb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _stage(plan: ConversionPlan, src_root: Path, tmp: Path, progress: Progress | None = None) -> int:
    """Write everything into the staging directory, every tensor compared with the source; returns that count.
    `progress(done, total, shard)` after each shard written and checked."""
    checked = 0
    config = _json_bytes(plan.config, "config.json")  # before the tensors: a refusal costs nothing
    index = _json_bytes(plan.index(), INDEX) if plan.sharded else None
    for n, shard in enumerate(plan.shards, 1):
        checked += write_shard(str(src_root / shard.source), str(tmp / shard.name), shard)
        if progress is not None:
            progress(n, len(plan.shards), shard.name)
    _write_json(tmp / "config.json", config)
    if index is not None:
        _write_json(tmp / INDEX, index)
    if plan.copy_files:
        import shutil  # loaded only when there are other files to carry (bz2, lzma come with it)

        for f in plan.copy_files:
            shutil.copyfile(src_root / f, tmp / f)
            with open(tmp / f, "rb") as done:  # durable before the rename installs it, like the shards
                os.fsync(done.fileno())
    return checked


def _verify_staged(plan: ConversionPlan, source_findings: tuple[Finding, ...], tmp: Path) -> tuple[Any, ...]:
    out = open_checkpoint(tmp)
    want = planned_infos(plan)
    got = {n: (t.dtype, t.shape, t.begin, t.end, t.file) for n, t in out.tensors.items()}
    if got != {n: (t.dtype, t.shape, t.begin, t.end, t.file) for n, t in want.items()}:
        raise ConversionError("internal: the written headers do not describe the planned tensors")
    report = verify(out)
    refuse_new_errors(
        source_findings, report.findings, output="the converted checkpoint", source="the source"
    )
    return report.findings


def refuse_findings(
    ckpt: Checkpoint, found: tuple[Finding, ...], repaired: set[str], accept: list[str]
) -> None:
    """A source with error findings is not converted unless the caller accepts those codes by name.
    A finding about a tensor the conversion renames or drops (`repaired`: a name variant, a copy of the
    target) is one it repairs, and does not count."""
    errors: list[Finding] = [f for f in found if f.severity == "error" and f.tensor not in repaired]
    left = [f for f in errors if not (accept and keep(f.code, accept))]
    if left:
        codes = ",".join(sorted({f.code for f in left}))
        raise SourceFindingsError(
            f"the source has {len(left)} error finding(s) ({codes}); nothing was converted",
            path=ckpt.label,
            findings=[f.to_json() for f in left],
            hint=f"fix the source, or accept these with --accept-findings {codes}",
        )


def convert(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    to: Literal["nested", "flat"],
    target: str | os.PathLike[str] | None = None,
    verifier_name: str | None = None,
    verifier_architectures: tuple[str, ...] = (),
    dry_run: bool = False,
    force: bool = False,
    accept_findings: Iterable[str] = (),
    accept_changes: Iterable[str] = (),
    progress: Progress | None = None,
) -> ConversionReport:
    """Convert SRC into the `to` dialect at DST. Raises ConversionUsageError when asked for the impossible
    (no verifier name or architectures, DST exists without force, DST overlaps SRC), SourceFindingsError
    when the source has error findings whose codes (or prefixes) are not in `accept_findings`,
    ConversionError when it cannot be exact (MeaningChangedError when an engine would build another drafter
    from the output than from the source, unless `accept_changes` names the field: engines/meaning.py),
    SourceError when the source cannot be read, WriteError when writing fails; DST is then untouched."""
    if to not in ("nested", "flat"):
        raise ValueError(f"to must be 'nested' or 'flat', not {to!r}")
    start = time.monotonic()
    ckpt = open_checkpoint(src)
    src_root = ckpt.source.root or Path(src)
    dst_path = Path(dst).absolute()
    check_overlap(src_root, dst_path, [("target", target)])
    verifier, layers = _target(target, verifier_name, tuple(verifier_architectures), ckpt)
    needs_vocab(ckpt)
    source = verify(ckpt)  # the source is verified once: to plan, to refuse, then to compare
    plan = make_plan(
        ckpt, str(dst), to, verifier=verifier, num_target_layers=layers, families=source.families
    )
    record_in_config(plan.config, target_fingerprint(ckpt, target, plan.notes), plan.notes)
    src_drafter = source_drafter(ckpt, None if target is None else str(target))
    meaning = check_drafters(src_drafter, planned_drafter(plan, src_drafter), accept_changes).to_json()
    if dry_run:
        extra = {"dst_exists": os.path.lexists(dst_path), "meaning": meaning}
        return report_from_plan(plan, dry_run=True, seconds=time.monotonic() - start, extra=extra)
    cleaned = claim_destination(dst_path, dst, force)
    source_findings = source.findings
    refuse_findings(
        ckpt, source_findings, {t.name for t in plan.tensors if t.action != "copy"}, list(accept_findings)
    )
    with staging_area(dst_path, dst) as tmp:
        checked = _stage(plan, src_root, tmp, progress)
        findings = _verify_staged(plan, source_findings, tmp)
        install(tmp, dst_path, force)
    return report_from_plan(
        plan,
        dry_run=False,
        written=True,
        tensors_verified=checked,
        verify_findings=tuple(findings),
        cleaned=tuple(cleaned),
        seconds=time.monotonic() - start,
        extra={"meaning": meaning},
    )
