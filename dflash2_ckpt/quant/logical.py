"""The logical view of a quantized checkpoint, as data: each quantized module's stored tensors and the one
dense tensor they stand for. checkpoint/quant.py builds it while a checkpoint opens."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..sources.safetensors_header import TensorInfo
from .config import QuantConfig, Scheme


@dataclass(frozen=True)
class QuantModule:
    module: str  # module path as stored ("fc", "layers.0.self_attn.q_proj")
    weight: str  # the dense tensor it stands for ("fc.weight", or a bare codebook name)
    declared: Scheme | None  # what the config says this module is quantized with (None: dense)
    scheme: Scheme | None  # how it is stored (declared, else inferred from the config)
    tensors: tuple[str, ...]  # stored names that belong to it
    logical: tuple[int, ...] | None  # dense shape; None when it cannot be derived

    @property
    def label(self) -> str:
        return self.scheme.label if self.scheme else "unknown"


@dataclass
class QuantView:
    config: QuantConfig | None = None
    config_error: str | None = None
    unknown_method: bool = False
    config_file: str = "config.json"
    modules: dict[str, QuantModule] = field(default_factory=dict)
    logical: dict[str, TensorInfo] = field(default_factory=dict)
    aux: set[str] = field(default_factory=set)  # stored names folded into a module
    classes: dict[str, str | None] = field(default_factory=dict)  # expected module -> class (None: parameter)
