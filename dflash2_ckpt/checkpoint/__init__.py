"""Open a checkpoint from any Source: config, detection, DraftSpec and safetensors headers, never tensor data.

The opened checkpoint is a `Checkpoint` (model.py); the files, index and shards are read by files.py,
a GGUF drafter by gguf.py, the quantization view by quant.py.
"""

from __future__ import annotations

import os

from ..errors import HubError, SourceError
from ..formats.config_findings import unreadable
from ..formats.detect import detect
from ..formats.parse import load_config, to_spec
from ..sources import LocalSource, Source
from ..sources.names import CONFIG, INDEX, PICKLE_SUFFIXES
from .files import read_files
from .model import Checkpoint, read_header
from .quant import build_view

__all__ = ["CONFIG", "INDEX", "PICKLE_SUFFIXES", "Checkpoint", "open_checkpoint", "read_header"]


def gguf_file(source: Source, files: list[str]) -> str | None:
    """The GGUF file to check: the one named (a path to it, org/name/file.gguf), or the only .gguf of a
    folder without safetensors weights (GGUF repos often carry a config.json too)."""
    if source.file is not None and source.file.endswith(".gguf"):
        return source.file
    ggufs = [f for f in files if f.endswith(".gguf")]
    if not ggufs or INDEX in files or any(f.endswith(".safetensors") for f in files):
        return None
    if len(ggufs) > 1:
        raise SourceError(
            f"{len(ggufs)} GGUF files and no safetensors weights: {', '.join(ggufs[:4])}",
            path=source.label,
            hint="name the file to check, e.g. " + f"{source.label.rstrip('/')}/{ggufs[0]}",
        )
    return ggufs[0]


def open_checkpoint(src: Source | str | os.PathLike[str]) -> Checkpoint:
    """Read config and headers. Raises SourceError only when the checkpoint cannot be read at all."""
    source: Source = LocalSource(src) if isinstance(src, (str, os.PathLike)) else src
    files = source.list_files()
    ckpt = Checkpoint(source)
    ckpt.file_findings += source.notes  # e.g. DF612: the drafter was found in a subfolder
    gguf_name = gguf_file(source, files)
    if gguf_name is not None:
        from .gguf import open_gguf  # lazy: checkpoint.gguf loads only on this path

        open_gguf(ckpt, gguf_name)
        ckpt.quant = build_view(ckpt)
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
        ckpt.config_findings.append(
            unreadable(
                CONFIG,
                f"no {CONFIG} in {source.label}",
                hint="a drafter checkpoint needs its config.json beside the weights",
            )
        )
    read_files(ckpt, files)
    if ckpt.config is not None:
        # after the headers: tensor names are part of what identifies the assistant dialect
        ckpt.detection = detect(ckpt.config, ckpt.tensors)
        ckpt.spec, found = to_spec(ckpt.config, ckpt.detection)
        ckpt.config_findings += found
    ckpt.quant = build_view(ckpt)  # from the config and headers just read; hf_quant_config.json if present
    return ckpt
