"""Where the bytes come from: local directories and Hub repos, and the bounded header readers.

Everything downstream talks to a Source, so a local path and a repo id with the same content
produce the same report.
"""
from .local import MAX_JSON_BYTES, LocalSource, Source, read_small

__all__ = ["Source", "LocalSource", "read_small", "MAX_JSON_BYTES"]
