"""DF6xx: which files make up the checkpoint, the shard index, and every shard's header.

Opening a checkpoint has to resolve its files before anything else can be judged, so
`open_checkpoint` calls `read_files` once and keeps what it found on the Checkpoint; the files
family (checks/files.py) hands those findings to verify in its place in the order.
"""

from __future__ import annotations

import os
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from ..errors import HeaderError, HubError, SourceError, UnsafePathError
from ..findings import Finding
from ..formats.parse import load_config
from ..sources.names import INDEX, PICKLE_SUFFIXES

if TYPE_CHECKING:
    from .model import Checkpoint

EMITS: frozenset[str] = frozenset(
    {"DF601", "DF602", "DF603", "DF604", "DF605", "DF606", "DF607", "DF608", "DF609", "DF912"}
)


def _safe_shard_name(name: Any) -> str | None:
    if (
        not isinstance(name, str)
        or not name
        or "\x00" in name
        or name.startswith(("/", "\\"))
        or os.path.isabs(name)
    ):
        return None
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if ".." in parts:
        return None
    return name


def _source_code(e: SourceError, otherwise: str) -> str:
    """A source refuses a symlink or a climbing path with an UnsafePathError; that is DF607, not a read error."""
    return "DF607" if isinstance(e, UnsafePathError) else otherwise


def _load_index(ckpt: Checkpoint, files: list[str]) -> list[str] | None:
    """Shard names from the index, or None when the index is unusable (findings say why)."""
    out = ckpt.file_findings
    try:
        raw = ckpt.read_small(INDEX)
        index, dups = load_config(raw, file=INDEX)
    except HubError:
        raise  # the Hub could not be read: the run stops (exit 3), no finding
    except SourceError as e:
        out.append(Finding("DF608", f"{INDEX}: {e.message}", file=INDEX))
        return None
    wm = index.get("weight_map") if index else None
    if index is None or not isinstance(wm, dict) or not all(isinstance(v, str) for v in wm.values()):
        why = (
            dups[0].message if dups and index is None else "it has no weight_map of tensor name -> shard file"
        )
        out.append(Finding("DF608", f"{INDEX} is not a valid index: {why}", file=INDEX))
        return None
    ckpt.index = index
    out += dups  # a repeated weight_map key silently keeps the last shard: DF117
    shards = []
    for shard in dict.fromkeys(wm.values()):
        if _safe_shard_name(shard) is None:
            out.append(
                Finding(
                    "DF607",
                    f"{INDEX} names shard {shard!r}, an absolute path or one that climbs out "
                    "of the checkpoint; it is refused, never opened",
                    file=INDEX,
                    details={"shard": shard},
                )
            )
            continue
        if shard not in files:
            try:
                ckpt.source.file_size(shard)
            except HubError:
                raise  # the Hub could not be read: the run stops (exit 3), no finding
            except SourceError as e:
                code = _source_code(e, "DF604")
                msg = (
                    e.message if code == "DF607" else f"{INDEX} lists shard {shard} but the file is not there"
                )
                out.append(
                    Finding(
                        code, msg, file=shard, details={"hint": "download the missing shard or fix the index"}
                    )
                )
                continue
        shards.append(shard)
    return shards


def _merge_headers(ckpt: Checkpoint, shards: list[str]) -> None:
    out = ckpt.file_findings
    owner: dict[str, str] = {}
    for shard in shards:
        try:
            header = ckpt.read_header(shard)
        except HeaderError as e:
            where = f" (tensor {e.tensor})" if e.tensor else (f" (byte {e.offset})" if e.offset else "")
            out.append(
                Finding(
                    "DF603",
                    f"{shard}: {e.message}{where}",
                    file=shard,
                    tensor=e.tensor,
                    details={"offset": e.offset, "hint": e.hint or "re-export the file with safetensors"},
                )
            )
            continue
        except HubError:
            raise  # the Hub could not be read: the run stops (exit 3), no finding
        except SourceError as e:
            out.append(Finding(_source_code(e, "DF603"), e.message, file=shard))
            continue
        ckpt.headers[shard] = header
        for t in header.tensors:
            if t.name in owner:
                out.append(
                    Finding(
                        "DF605",
                        f"tensor {t.name} is in both {owner[t.name]} and {shard}; engines "
                        "load whichever they read last",
                        tensor=t.name,
                        details={"shards": [owner[t.name], shard]},
                    )
                )
                continue
            owner[t.name] = shard
            ckpt.tensors[t.name] = t
    if ckpt.index is None:
        return
    wm: dict[str, str] = ckpt.index["weight_map"]
    bad_shards = {s for s in wm.values() if s not in ckpt.headers}
    for name, shard in wm.items():
        if shard in bad_shards:
            ckpt.unavailable.add(name)
            continue
        if name not in ckpt.tensors:
            out.append(
                Finding(
                    "DF606", f"{INDEX} maps {name} to {shard}, but no shard holds it", tensor=name, file=INDEX
                )
            )
        elif owner[name] != shard:
            out.append(
                Finding(
                    "DF606",
                    f"{INDEX} maps {name} to {shard}, but it is in {owner[name]}",
                    tensor=name,
                    file=INDEX,
                )
            )
    for name in ckpt.tensors:
        if name not in wm:
            out.append(
                Finding(
                    "DF606",
                    f"{name} is in {owner[name]} but not in {INDEX}; loaders that follow "
                    "the index never see it",
                    tensor=name,
                    file=INDEX,
                )
            )


def _weight_files(ckpt: Checkpoint, files: list[str]) -> list[str]:
    out = ckpt.file_findings
    for f in files:
        if f.endswith(PICKLE_SUFFIXES):
            out.append(
                Finding(
                    "DF602",
                    f"{f} is a pickle file; it was not loaded (unpickling runs arbitrary "
                    "code). Publish safetensors only",
                    file=f,
                )
            )
        elif f.endswith(".gguf"):
            out.append(
                Finding(
                    "DF912",
                    f"{f} is a GGUF export beside the safetensors checkpoint; check it on its "
                    f"own: dflash2-ckpt verify {ckpt.label.rstrip('/')}/{f}",
                    file=f,
                )
            )
    st = [f for f in files if f.endswith(".safetensors")]
    if INDEX in files:
        shards = _load_index(ckpt, files)
        if shards is not None:
            for f in st:
                if f not in shards:
                    out.append(Finding("DF609", f"{f} is not listed in {INDEX}; loaders ignore it", file=f))
            return shards
    return st


def read_files(ckpt: Checkpoint, files: list[str]) -> None:
    """Resolve the weight files (index or directory listing) and read every shard header into `ckpt`."""
    shards = _weight_files(ckpt, files)
    if not shards and not any(f.code in ("DF604", "DF607", "DF608") for f in ckpt.file_findings):
        ckpt.file_findings.append(
            Finding("DF601", f"no .safetensors weights in {ckpt.label}", details={"files": files[:20]})
        )
    _merge_headers(ckpt, shards)
