"""The opened checkpoint: config, detection, DraftSpec, headers and tensor infos, and what opening found."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..findings import Finding
from ..formats.detect import Detection
from ..formats.spec import DraftSpec
from ..quant.logical import QuantView
from ..sources import Source, read_small
from ..sources.safetensors_header import Header, TensorInfo, parse_header, parse_length

if TYPE_CHECKING:
    from ..sources.gguf_header import GGUFHeader


@dataclass
class Checkpoint:
    source: Source
    config: dict[str, Any] | None = None
    detection: Detection | None = None
    spec: DraftSpec | None = None
    headers: dict[str, Header] = field(default_factory=dict)
    tensors: dict[str, TensorInfo] = field(default_factory=dict)
    index: dict[str, Any] | None = None
    config_findings: list[Finding] = field(default_factory=list)  # DF1xx from reading and parsing config.json
    file_findings: list[Finding] = field(default_factory=list)  # DF6xx from the files, index and headers
    bytes_read: int = 0
    # tensors the index places in shards that could not be read (already reported as DF60x)
    unavailable: set[str] = field(default_factory=set)
    gguf: GGUFHeader | None = None  # a GGUF drafter (gguf.py): its header
    # the quantized modules and the dense tensors they stand for (quant.py), filled at open
    quant: QuantView = field(default_factory=QuantView)

    @property
    def label(self) -> str:
        return self.source.label

    def read_counted(self, name: str, start: int, length: int) -> bytes:
        data = self.source.read_range(name, start, length)
        self.bytes_read += len(data)
        return data

    def read_header(self, name: str) -> Header:
        """Read and validate one file's header: two bounded reads, no tensor data."""
        size = self.source.file_size(name)
        n = parse_length(self.read_counted(name, 0, 8) if size >= 8 else b"", size, file=name)
        return parse_header(self.read_counted(name, 8, n), header_len=n, file_size=size, file=name)

    @property
    def findings(self) -> list[Finding]:
        """Everything found while opening: the config's parse findings, then the files'."""
        return [*self.config_findings, *self.file_findings]

    def read_small(self, name: str) -> bytes:
        data = read_small(self.source, name)  # the one size cap for JSON files
        self.bytes_read += len(data)
        return data


# function form, for callers that hold a Checkpoint (tests, benches)
read_header = Checkpoint.read_header
