"""Open a checkpoint from any Source: config, detection, DraftSpec and safetensors headers, never tensor data."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from .errors import HeaderError, SourceError
from .findings import Finding
from .formats.detect import Detection, detect
from .formats.parse import load_config, to_spec
from .formats.rules import spec_rules
from .formats.spec import DraftSpec
from .sources.safetensors_header import Header, TensorInfo, parse_header, parse_length
from .sources import LocalSource, Source, read_small

CONFIG = "config.json"
INDEX = "model.safetensors.index.json"
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")


@dataclass
class Checkpoint:
    source: Source
    config: dict[str, Any] | None = None
    detection: Detection | None = None
    spec: DraftSpec | None = None
    headers: dict[str, Header] = field(default_factory=dict)
    tensors: dict[str, TensorInfo] = field(default_factory=dict)
    index: dict[str, Any] | None = None
    findings: list[Finding] = field(default_factory=list)
    bytes_read: int = 0
    # tensors the index places in shards that could not be read (already reported as DF60x)
    unavailable: set[str] = field(default_factory=set)

    @property
    def label(self) -> str:
        return self.source.label

    def _read(self, name: str, start: int, length: int) -> bytes:
        data = self.source.read_range(name, start, length)
        self.bytes_read += len(data)
        return data

    def read_small(self, name: str) -> bytes:
        data = read_small(self.source, name)   # the one size cap for JSON files
        self.bytes_read += len(data)
        return data


def read_header(ckpt: Checkpoint, name: str) -> Header:
    """Read and validate one file's header: two bounded reads, no tensor data."""
    size = ckpt.source.file_size(name)
    n = parse_length(ckpt._read(name, 0, 8) if size >= 8 else b"", size, file=name)
    return parse_header(ckpt._read(name, 8, n), header_len=n, file_size=size, file=name)


def _safe_shard_name(name: Any) -> str | None:
    if (not isinstance(name, str) or not name or "\x00" in name or name.startswith(("/", "\\"))
            or os.path.isabs(name)):
        return None
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if ".." in parts:
        return None
    return name


def _load_index(ckpt: Checkpoint, files: list[str]) -> list[str] | None:
    """Shard names from the index, or None when the index is unusable (findings say why)."""
    try:
        raw = ckpt.read_small(INDEX)
        index, dups = load_config(raw, file=INDEX)
    except SourceError as e:
        ckpt.findings.append(Finding("DF608", f"{INDEX}: {e.message}", file=INDEX))
        return None
    wm = index.get("weight_map") if index else None
    if index is None or not isinstance(wm, dict) or not all(isinstance(v, str) for v in wm.values()):
        why = dups[0].message if dups and index is None else "it has no weight_map of tensor name -> shard file"
        ckpt.findings.append(Finding("DF608", f"{INDEX} is not a valid index: {why}", file=INDEX))
        return None
    ckpt.index = index
    ckpt.findings += dups    # a repeated weight_map key silently keeps the last shard: DF117
    shards = []
    for shard in dict.fromkeys(wm.values()):
        if _safe_shard_name(shard) is None:
            ckpt.findings.append(Finding("DF607", f"{INDEX} names shard {shard!r}, an absolute path or one that "
                                         "climbs out of the checkpoint; it is refused, never opened",
                                         file=INDEX, details={"shard": shard}))
            continue
        if shard not in files:
            try:
                ckpt.source.file_size(shard)
            except SourceError as e:
                code = "DF607" if "link" in e.message or "climbs" in e.message else "DF604"
                msg = e.message if code == "DF607" else f"{INDEX} lists shard {shard} but the file is not there"
                ckpt.findings.append(Finding(code, msg, file=shard,
                                             details={"hint": "download the missing shard or fix the index"}))
                continue
        shards.append(shard)
    return shards


def _merge_headers(ckpt: Checkpoint, shards: list[str]) -> None:
    owner: dict[str, str] = {}
    for shard in shards:
        try:
            header = read_header(ckpt, shard)
        except HeaderError as e:
            where = f" (tensor {e.tensor})" if e.tensor else (f" (byte {e.offset})" if e.offset else "")
            ckpt.findings.append(Finding("DF603", f"{shard}: {e.message}{where}", file=shard, tensor=e.tensor,
                                         details={"offset": e.offset, "hint": e.hint or
                                                  "re-export the file with safetensors"}))
            continue
        except SourceError as e:
            code = "DF607" if "link" in e.message or "climbs" in e.message else "DF603"
            ckpt.findings.append(Finding(code, e.message, file=shard))
            continue
        ckpt.headers[shard] = header
        for t in header.tensors:
            if t.name in owner:
                ckpt.findings.append(Finding("DF605", f"tensor {t.name} is in both {owner[t.name]} and {shard}; "
                                             "engines load whichever they read last", tensor=t.name,
                                             details={"shards": [owner[t.name], shard]}))
                continue
            owner[t.name] = shard
            ckpt.tensors[t.name] = t
    if ckpt.index is not None:
        wm: dict[str, str] = ckpt.index["weight_map"]
        bad_shards = {s for s in wm.values() if s not in ckpt.headers}
        for name, shard in wm.items():
            if shard in bad_shards:
                ckpt.unavailable.add(name)
                continue
            if name not in ckpt.tensors:
                ckpt.findings.append(Finding("DF606", f"{INDEX} maps {name} to {shard}, but no shard holds it",
                                             tensor=name, file=INDEX))
            elif owner[name] != shard:
                ckpt.findings.append(Finding("DF606", f"{INDEX} maps {name} to {shard}, but it is in {owner[name]}",
                                             tensor=name, file=INDEX))
        for name in ckpt.tensors:
            if name not in wm:
                ckpt.findings.append(Finding("DF606", f"{name} is in {owner[name]} but not in {INDEX}; "
                                             "loaders that follow the index never see it", tensor=name, file=INDEX))


def _scan_files(ckpt: Checkpoint) -> list[str]:
    files = ckpt.source.list_files()
    for f in files:
        if f.endswith(PICKLE_SUFFIXES):
            ckpt.findings.append(Finding("DF602", f"{f} is a pickle file; it was not loaded (unpickling runs "
                                         "arbitrary code). Publish safetensors only", file=f))
        elif f.endswith(".gguf"):
            ckpt.findings.append(Finding("DF610", f"{f} is GGUF; only the safetensors checkpoint is checked", file=f))
    st = [f for f in files if f.endswith(".safetensors")]
    if INDEX in files:
        shards = _load_index(ckpt, files)
        if shards is not None:
            for f in st:
                if f not in shards:
                    ckpt.findings.append(Finding("DF609", f"{f} is not listed in {INDEX}; loaders ignore it", file=f))
            return shards
    return st


def open_checkpoint(src: Source | str | os.PathLike[str]) -> Checkpoint:
    """Read config and headers. Raises SourceError only when the checkpoint cannot be read at all."""
    source: Source = LocalSource(src) if isinstance(src, (str, os.PathLike)) else src
    ckpt = Checkpoint(source)
    files = source.list_files()
    if CONFIG in files:
        try:
            cfg, found = load_config(ckpt.read_small(CONFIG))
        except SourceError as e:
            cfg, found = None, [Finding("DF100", e.message, file=CONFIG)]
        ckpt.findings += found
        ckpt.config = cfg
    else:
        ckpt.findings.append(Finding("DF100", f"no {CONFIG} in {source.label}", file=CONFIG,
                                     details={"hint": "a drafter checkpoint needs its config.json beside the weights"}))
    shards = _scan_files(ckpt)
    if not shards and not any(f.code in ("DF604", "DF607", "DF608") for f in ckpt.findings):
        ckpt.findings.append(Finding("DF601", f"no .safetensors weights in {source.label}",
                                     details={"files": files[:20]}))
    _merge_headers(ckpt, shards)
    if ckpt.config is not None:
        # after the headers: tensor names are part of what identifies the assistant dialect
        ckpt.detection = detect(ckpt.config, ckpt.tensors)
        spec, found = to_spec(ckpt.config, ckpt.detection)
        ckpt.findings += found
        if spec is not None:
            ckpt.spec = spec
            ckpt.findings += spec_rules(spec, ckpt.config)
    return ckpt
