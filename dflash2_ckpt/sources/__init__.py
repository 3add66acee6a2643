"""Where the bytes come from: local directories and Hub repos, and the bounded header readers.

Everything downstream talks to a Source, so a local path and a repo id with the same content
produce the same report. `checkpoint.open_source` turns what the user typed into a Source (local path,
repo id or Hub URL; a drafter in a subfolder is found by `checkpoint.discover`). The Hub side is split by
concern: `hub_ref` (ids and URLs), `hub_transport` (HTTP with bounded retries), `hub_cache` (the
local Hub cache), `hub_errors` (typed errors with the next step), `hub` (the HubSource).
"""

from .local import MAX_JSON_BYTES, LocalSource, Source, SourceBase, read_small

__all__ = ["Source", "SourceBase", "LocalSource", "read_small", "MAX_JSON_BYTES"]
