"""Open a checkpoint from any Source: config, detection, DraftSpec and safetensors headers, never tensor data."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .files import INDEX, PICKLE_SUFFIXES, read_files
from ..errors import HubError, SourceError
from ..findings import Finding
from ..formats.config_findings import unreadable
from ..formats.detect import Detection, detect
from ..formats.parse import load_config, to_spec
from ..formats.spec import DraftSpec
from ..sources.safetensors_header import Header, TensorInfo, parse_header, parse_length
from ..sources import LocalSource, Source, read_small

if TYPE_CHECKING:
    from ..sources.gguf_header import GGUFHeader

CONFIG = "config.json"
__all__ = ["CONFIG", "INDEX", "PICKLE_SUFFIXES", "Checkpoint", "open_checkpoint", "read_header"]


@dataclass
class Checkpoint:
    source: Source
    config: dict[str, Any] | None = None
    detection: Detection | None = None
    spec: DraftSpec | None = None
    headers: dict[str, Header] = field(default_factory=dict)
    tensors: dict[str, TensorInfo] = field(default_factory=dict)
    index: dict[str, Any] | None = None
    config_findings: list[Finding] = field(default_factory=list)   # DF1xx from reading and parsing config.json
    file_findings: list[Finding] = field(default_factory=list)     # DF6xx from the files, index and headers
    bytes_read: int = 0
    # tensors the index places in shards that could not be read (already reported as DF60x)
    unavailable: set[str] = field(default_factory=set)
    gguf: GGUFHeader | None = None      # a GGUF drafter (gguf_checkpoint.py): its header

    @property
    def label(self) -> str:
        return self.source.label

    def _read(self, name: str, start: int, length: int) -> bytes:
        data = self.source.read_range(name, start, length)
        self.bytes_read += len(data)
        return data

    def read_header(self, name: str) -> Header:
        """Read and validate one file's header: two bounded reads, no tensor data."""
        size = self.source.file_size(name)
        n = parse_length(self._read(name, 0, 8) if size >= 8 else b"", size, file=name)
        return parse_header(self._read(name, 8, n), header_len=n, file_size=size, file=name)

    @property
    def findings(self) -> list[Finding]:
        """Everything found while opening: the config's parse findings, then the files'."""
        return [*self.config_findings, *self.file_findings]

    def read_small(self, name: str) -> bytes:
        data = read_small(self.source, name)   # the one size cap for JSON files
        self.bytes_read += len(data)
        return data


# function form, for callers that hold a Checkpoint (tests, benches)
read_header = Checkpoint.read_header


def gguf_file(source: Source, files: list[str]) -> str | None:
    """The GGUF file to check: the one named (a path to it, org/name/file.gguf), or the only .gguf of a
    folder without safetensors weights (GGUF repos often carry a config.json too)."""
    named = getattr(source, "file", None)
    if isinstance(named, str) and named.endswith(".gguf"):
        return named
    ggufs = [f for f in files if f.endswith(".gguf")]
    if not ggufs or INDEX in files or any(f.endswith(".safetensors") for f in files):
        return None
    if len(ggufs) > 1:
        raise SourceError(f"{len(ggufs)} GGUF files and no safetensors weights: {', '.join(ggufs[:4])}",
                          path=source.label,
                          hint="name the file to check, e.g. " + f"{source.label.rstrip('/')}/{ggufs[0]}")
    return ggufs[0]


def open_checkpoint(src: Source | str | os.PathLike[str]) -> Checkpoint:
    """Read config and headers. Raises SourceError only when the checkpoint cannot be read at all."""
    source: Source = LocalSource(src) if isinstance(src, (str, os.PathLike)) else src
    files = source.list_files()
    ckpt = Checkpoint(source)
    ckpt.file_findings += getattr(source, "notes", ())     # e.g. DF612: the drafter was found in a subfolder
    gguf_name = gguf_file(source, files)
    if gguf_name is not None:
        from .gguf import open_gguf
        open_gguf(ckpt, gguf_name)
        return ckpt
    if CONFIG in files:
        try:
            cfg, found = load_config(ckpt.read_small(CONFIG))
        except HubError:
            raise
        except SourceError as e:
            cfg, found = None, [unreadable(CONFIG, e.message)]
        ckpt.config_findings += found
        ckpt.config = cfg
    else:
        ckpt.config_findings.append(unreadable(CONFIG, f"no {CONFIG} in {source.label}",
                                               hint="a drafter checkpoint needs its config.json beside the weights"))
    read_files(ckpt, files)
    if ckpt.config is not None:
        # after the headers: tensor names are part of what identifies the assistant dialect
        ckpt.detection = detect(ckpt.config, ckpt.tensors)
        ckpt.spec, found = to_spec(ckpt.config, ckpt.detection)
        ckpt.config_findings += found
    return ckpt
