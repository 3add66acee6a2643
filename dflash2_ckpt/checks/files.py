"""DF6xx: the files, the shard index and every shard's header, as opening the checkpoint read them.

checkpoint/files.py writes these findings while it resolves the weight files (nothing can be judged
before that); this family hands them to verify in its place in the order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..findings import Finding

if TYPE_CHECKING:
    from .context import CheckContext


def check(ctx: CheckContext) -> list[Finding]:
    return list(ctx.checkpoint.file_findings)
