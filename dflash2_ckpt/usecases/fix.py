"""`--fix` / `--diff`: the mechanical repairs verify's findings describe, applied to a local checkpoint.

One fixer per code says what it would change: config.json keys (only those keys' text is edited,
usecases/json_edit.py, so every other value keeps its exact text; written to a private temporary file
beside it, then renamed over it) or tensor names (a new safetensors header of exactly the old length,
padded with spaces as the format allows, so every data offset stays valid; only the header region is
rewritten, behind a journal of the old header). A rename whose header would grow is refused with the
`dflash2-ckpt convert` command to run. No tensor byte is ever changed. Every write goes through the
write guard (sources/safe_write.py).
"""

from __future__ import annotations

import json
import os
import re
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ..checkpoint import CONFIG, INDEX, Checkpoint
from ..engines.causality import intended
from ..errors import UsageError
from ..findings import Finding, Fix
from ..formats.parse import load_config
from ..sources.safe_write import TEMP_TAG, Inputs, check, temp_beside, write_bytes

Applicability = Literal["safe", "unsafe"]


@dataclass(frozen=True)
class Edit:
    """What one finding's fix changes: config keys (dotted path -> value) and tensor renames."""

    applicability: Applicability
    description: str
    config: tuple[tuple[str, Any], ...] = ()
    renames: tuple[tuple[str, str], ...] = ()


Fixer = Callable[[Finding, Checkpoint], "Edit | None"]


def _rewritable(ckpt: Checkpoint, dialect: str = "nested") -> bool:
    """A config of `dialect` whose JSON reads one way: with a duplicated key (DF117) engines disagree on
    which value counts, and writing the file again would silently pick one."""
    return (
        ckpt.spec is not None
        and ckpt.spec.dialect == dialect
        and not any(f.code == "DF117" for f in ckpt.config_findings)
    )


def _causality(f: Finding, ckpt: Checkpoint) -> Edit | None:
    """DF401: write the causality the reference reads explicitly (both keys), so every engine resolves it
    the same way; only when it is one value for every layer of a nested config (else no key can say it)."""
    spec = ckpt.spec
    if spec is None or not _rewritable(ckpt):
        return None
    want = set(intended(spec))
    if len(want) != 1:
        return None
    v = want.pop()
    word = str(v).lower()
    return Edit(
        "safe",
        f"set is_causal: {word} and dflash_config.causal: {word}",
        config=(("is_causal", v), ("dflash_config.causal", v)),
    )


def _unstated(f: Finding, ckpt: Checkpoint) -> Edit | None:
    """DF403: state bidirectional, the DFlash2 training default. Unsafe: the files cannot say how this
    drafter was trained."""
    if not _rewritable(ckpt):
        return None
    return Edit(
        "unsafe",
        "set is_causal: false and dflash_config.causal: false (DFlash2's training default)",
        config=(("is_causal", False), ("dflash_config.causal", False)),
    )


def _borrowed_vocab(f: Finding, ckpt: Checkpoint) -> Edit | None:
    """DF120 with --target: write the target's vocab_size into the assistant export. Unsafe: it is the
    vocabulary of the target given on this command line, which the files cannot confirm is the one the
    drafter was trained against."""
    spec = ckpt.spec
    if spec is None or spec.vocab_from != "target" or not _rewritable(ckpt, "assistant"):
        return None
    return Edit(
        "unsafe",
        f"set vocab_size: {spec.vocab_size} (the target's)",
        config=(("vocab_size", spec.vocab_size),),
    )


def _rename(f: Finding, ckpt: Checkpoint) -> Edit | None:
    """DF202 (a `model.` prefix) / DF206 (a codebook's `.weight`): the name the engines load, when the
    check named one and no tensor holds it already."""
    new = f.details.get("rename_to")
    old = f.tensor
    if not isinstance(new, str) or old is None or old not in ckpt.tensors or new in ckpt.tensors:
        return None
    if ckpt.gguf is not None or not ckpt.tensors[old].file.endswith(".safetensors"):
        return None
    return Edit("safe", f"rename tensor {old} to {new}", renames=((old, new),))


def _tap_shift(f: Finding, ckpt: Checkpoint) -> Edit | None:
    """DF404: pin dflash_config.tap_shift: 0, so exllamav3 taps the layers vLLM taps (no other engine reads the
    key). Unsafe: exllamav3 found the +1 shift better on some published checkpoints of the same trainer."""
    if not _rewritable(ckpt):
        return None
    return Edit(
        "unsafe",
        "set dflash_config.tap_shift: 0 (exllamav3 then taps what vLLM taps)",
        config=(("dflash_config.tap_shift", 0),),
    )


FIXERS: dict[str, Fixer] = {
    "DF404": _tap_shift,
    "DF120": _borrowed_vocab,
    "DF401": _causality,
    "DF403": _unstated,
    "DF202": _rename,
    "DF206": _rename,
}


def edit_for(f: Finding, ckpt: Checkpoint | None) -> Edit | None:
    fixer = FIXERS.get(f.code)
    return None if fixer is None or ckpt is None else fixer(f, ckpt)


def annotate(findings: Iterable[Finding], ckpt: Checkpoint | None) -> tuple[Finding, ...]:
    """Each finding with its `fix` (what --fix would do), where a fixer has one."""
    out = []
    for f in findings:
        e = edit_for(f, ckpt)
        if e is None or ckpt is None:
            out.append(f)
            continue
        out.append(replace(f, fix=Fix(e.applicability, e.description, _text_changes(f, e, ckpt))))
    return tuple(out)


def _text_changes(f: Finding, e: Edit, ckpt: Checkpoint) -> tuple[tuple[str, str, str], ...]:
    """The config edit of this one finding as whole-file text (SARIF `fixes`); none for renames, which
    rewrite a binary header, or off a local directory."""
    if not e.config or e.renames or not isinstance(getattr(ckpt.source, "root", None), Path):
        return ()
    p = plan([f], ckpt, unsafe=True)
    try:
        return tuple(
            (name, old.decode("utf-8"), new.decode("utf-8"))
            for name, (old, new) in sorted(p.files.items())
            if name.endswith(".json")
        )
    except UnicodeDecodeError:
        return ()


@dataclass
class Plan:
    """Every applicable edit of one checkpoint, merged: new file bytes by file name."""

    root: Path
    files: dict[str, tuple[bytes, bytes]] = field(default_factory=dict)  # name -> (old, new)
    applied: list[Finding] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def diff(self) -> str:
        """A unified diff per changed file (a safetensors file: its header JSON, one tensor a line)."""
        import difflib  # only --diff pays for it; verify imports this module for the fix markers

        out: list[str] = []
        for name, (old, new) in sorted(self.files.items()):
            label = name + (" (header)" if name.endswith(".safetensors") else "")
            a, b = _text(name, old), _text(name, new)
            out += difflib.unified_diff(a, b, f"a/{label}", f"b/{label}")
        return "".join(line if line.endswith("\n") else line + "\n" for line in out)


def _text(name: str, data: bytes) -> list[str]:
    if name.endswith(".safetensors"):
        n = struct.unpack("<Q", data[:8])[0]
        obj = json.loads(data[8 : 8 + n])
        return [_encode({k: v}).decode("utf-8")[1:-1] + "\n" for k, v in obj.items()]
    return data.decode("utf-8", "backslashreplace").splitlines(keepends=True)


def _root(ckpt: Checkpoint) -> Path:
    root = getattr(ckpt.source, "root", None)  # a local directory's; None for a Hub repository
    if not isinstance(root, Path):
        raise UsageError(
            f"{ckpt.label}: --fix and --diff change files on disk; download the repository "
            "and run them on the local copy"
        )
    return root


def _set(obj: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, key = dotted.split(".")
    for p in parents:
        child = obj.get(p)
        if not isinstance(child, dict):
            child = obj[p] = {}
        obj = child
    obj[key] = value


def _encode(obj: Any, **layout: Any) -> bytes:
    """UTF-8 JSON, non-ASCII kept as is; escaped where a string holds what UTF-8 cannot (a lone surrogate
    from a `\\ud800` escape)."""
    try:
        return json.dumps(obj, ensure_ascii=False, **layout).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(obj, ensure_ascii=True, **layout).encode("ascii")


def _json_bytes(obj: Any) -> bytes:
    return _encode(obj, indent=2) + b"\n"


def plan(findings: Iterable[Finding], ckpt: Checkpoint, *, unsafe: bool = False) -> Plan:
    """The edits of every fixable finding (unsafe ones only with `unsafe`), merged per file."""
    root = _root(ckpt)
    out = Plan(root)
    config_edits: dict[str, Any] = {}
    renames: dict[str, str] = {}
    for f in findings:
        e = edit_for(f, ckpt)
        if e is None or (e.applicability == "unsafe" and not unsafe):
            continue
        if any(config_edits.get(k, v) != v for k, v in e.config):
            continue  # two findings want different values: neither is mechanical
        if any(new in renames.values() for _, new in e.renames):
            continue  # two tensors would take one name
        config_edits.update(e.config)
        renames.update(e.renames)
        out.applied.append(f)
    if config_edits:
        old = (root / CONFIG).read_bytes()
        cfg, _ = load_config(old)  # the reader verify used (a BOM, duplicate keys, no NaN)
        if cfg is None:
            out.refused.append(f"{CONFIG}: changed since it was verified and no longer parses")
            out.applied = [f for f in out.applied if not (edit := edit_for(f, ckpt)) or not edit.config]
        else:
            new = _edit_text(old, config_edits)
            if new is None:
                out.refused.append(
                    f"{CONFIG}: its text cannot be edited in place without changing other values"
                )
                out.applied = [f for f in out.applied if not (edit := edit_for(f, ckpt)) or not edit.config]
            else:
                out.files[CONFIG] = (old, new)
    if renames:
        _plan_renames(ckpt, renames, out)
    return out


def _edit_text(old: bytes, edits: dict[str, Any]) -> bytes | None:
    """config.json with only the edited keys' text changed (usecases/json_edit.py): every other value keeps
    its exact text, so `1e999`, `-0.0` or `1e-400` survive; None when the result would not read back, with
    the same reader verify uses, as the old values plus the edits."""
    from .json_edit import JsonEditError, set_keys  # lazy: usecases.json_edit loads only on this path

    try:  # a byte order mark goes (JSON forbids it; strict readers refuse it), as verify read past it
        new = set_keys(old.decode("utf-8-sig"), edits).encode("utf-8")
    except (UnicodeError, JsonEditError, RecursionError):
        return None
    want, _ = load_config(old)
    got, dups = load_config(new)
    if want is None or got is None or dups:
        return None
    for k, v in edits.items():
        _set(want, k, v)
    return new if _same(want, got) else None


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values, a float NaN-free and -0.0 told from 0.0 (the texts were kept, so this only
    guards the edit itself)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and (repr(a) == repr(b))


def _plan_renames(ckpt: Checkpoint, renames: dict[str, str], out: Plan) -> None:
    by_file: dict[str, dict[str, str]] = {}
    for old, new in renames.items():
        by_file.setdefault(ckpt.tensors[old].file, {})[old] = new
    done: set[str] = set()
    # convert writes the names the engines load, in the dialect it is given: keep the checkpoint's own
    to = ckpt.spec.dialect if ckpt.spec is not None and ckpt.spec.dialect == "flat" else "nested"
    for name, names in sorted(by_file.items()):
        path = out.root / name
        with path.open("rb") as fh:
            prefix = fh.read(8)
            n = struct.unpack("<Q", prefix)[0]
            raw = fh.read(n)
        header = json.loads(raw)
        new_header = {names.get(k, k): v for k, v in header.items()}
        text = _encode(new_header, separators=(",", ":"))
        if len(text) > n:
            out.refused.append(
                f"{name}: the renamed header is {len(text) - n} bytes longer, so every data offset "
                f"would move; run `dflash2-ckpt convert {out.root} --to {to} -o OUT` to write a renamed copy"
            )
            continue
        out.files[name] = (prefix + raw, prefix + text + b" " * (n - len(text)))
        done.update(names)
    out.applied = [f for f in out.applied if not f.details.get("rename_to") or f.tensor in done]
    if done and ckpt.index is not None and (out.root / INDEX).is_file():
        before = (out.root / INDEX).read_bytes()
        index, _ = load_config(before, file=INDEX)
        wm = index.get("weight_map") if index is not None else None
        if index is not None and isinstance(wm, dict):
            index["weight_map"] = {(renames[k] if k in done else k): v for k, v in wm.items()}
            after = _json_bytes(index)
            if load_config(after, file=INDEX)[0] is None:  # a number JSON cannot write back (1e999)
                out.refused.append(f"{INDEX}: it holds a value that would not be written back as it reads")
            else:
                out.files[INDEX] = (before, after)


def apply(p: Plan, reading: Inputs = Inputs()) -> list[str]:
    """Write every changed file through the write guard (sources/safe_write.py: no link, no hard-linked
    file, nothing of `reading`, e.g. the target). A JSON file goes to a private temporary file beside it,
    renamed over it. A safetensors file whose header keeps its length (always: the plan pads it) has only
    its header region rewritten in place, so no data byte is copied and a sparse shard stays sparse; the
    old header is first saved to a journal beside it, which a run killed mid-write leaves for the next
    --fix to restore (clean_stale). Every destination is judged before anything is written. Returns what
    was cleaned up from earlier runs."""
    cleaned = clean_stale(p.root)
    root = Path(os.path.abspath(p.root))  # its folders are the user's choice: only the files are judged
    dests = {
        name: check(
            root / name,
            reading=reading,
            hint="--fix does not write through links; copy the checkpoint to plain files first",
        )
        for name in p.files
    }
    for name, (old, new) in sorted(p.files.items()):
        if name.endswith(".safetensors"):
            if len(old) != len(new):
                raise AssertionError("internal: a fixed header must keep its length")
            _rewrite_header(dests[name], old, new, reading)
        else:
            write_bytes(dests[name], new, reading=reading)
    return cleaned


JOURNAL = ".header.fix"


def _rewrite_header(dest: Path, old: bytes, new: bytes, reading: Inputs) -> None:
    """`new` over the first len(old) bytes of `dest`, in place. The old header is saved to a journal
    first; a failed write (a full disk filling a sparse shard's hole) puts it back; the journal goes only
    once the shard holds a whole header, so a kill -9 leaves it for clean_stale."""
    fd, journal = temp_beside(dest, JOURNAL)
    keep_journal = False
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(old)
            fh.flush()
            os.fsync(fh.fileno())
        check(dest, reading=reading)
        shard = os.open(dest, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
        try:
            if os.pread(shard, len(old), 0) != old:
                raise UsageError(
                    f"{dest.name} changed since it was verified; nothing was written",
                    path=str(dest),
                    hint="run --fix again",
                )
            try:
                _pwrite_all(shard, new)
            except BaseException:
                keep_journal = True
                _pwrite_all(shard, old)  # the old header back; if this fails too, the journal stays
                keep_journal = False
                raise
        finally:
            os.close(shard)
    finally:
        if not keep_journal:
            os.unlink(journal)


def _pwrite_all(fd: int, data: bytes) -> None:
    done = 0
    while done < len(data):
        n = os.pwrite(fd, data[done:], done)
        if n <= 0:
            raise OSError(f"wrote {done} of {len(data)} header bytes")
        done += n
    os.fsync(fd)


# .NAME.XXXXXXXX.fix (an older --fix's whole-file copy) and .NAME.dflash2-ckpt-HEX.fix / .header.fix
_STALE = re.compile(
    r"^\.(?P<name>.+?)\.(?:[a-z0-9_]{8}|" + re.escape(TEMP_TAG[1:]) + r"[0-9a-f]{12})"
    r"(?P<journal>" + re.escape(JOURNAL) + r"|\.fix)$"
)


def clean_stale(root: Path) -> list[str]:
    """What a killed --fix left in `root`: a header journal is written back over its shard's header (when
    the shard's header region still has the journal's length, the old header is whole again), then
    removed; a whole-file temporary copy is removed. One sentence per file, for the report."""
    out: list[str] = []
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return out
    for entry in entries:
        m = _STALE.match(entry.name)
        if not m or entry.is_symlink() or not entry.is_file():
            continue
        size = entry.stat().st_size
        shard = root / m.group("name")
        if (
            m.group("journal") == JOURNAL
            and shard.is_file()
            and not shard.is_symlink()
            and size >= 8
            and shard.stat().st_nlink == 1
        ):
            saved = entry.read_bytes()
            fd = os.open(shard, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
            try:
                if os.pread(fd, 8, 0) == saved[:8] and len(saved) == 8 + struct.unpack("<Q", saved[:8])[0]:
                    os.pwrite(fd, saved, 0)
                    os.fsync(fd)
                    out.append(
                        f"restored the header of {shard.name} from {entry.name}, left by an interrupted --fix"
                    )
            finally:
                os.close(fd)
        entry.unlink()
        out.append(f"removed {entry.name} ({size:,} bytes), left by an interrupted --fix")
    return out
