"""Row ranges of a tensor read (`Side.read(name, row0, row1)`): ALL as row1 reads every row (scalars and
per-tensor scales). Its own module so the sides and the decoders (torch and numpy) share it without
importing each other."""

from __future__ import annotations

ALL = 1 << 62
