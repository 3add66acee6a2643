"""`audit`: header-level verify and compat for many drafters at once, as one compatibility table.

inputs -> (cached by repo + commit sha) verify + compat per drafter, concurrently and rate-limited
-> rows -> text / JSON / Markdown / HTML.
"""

from .inputs import Item, collect, hub_search
from .rows import Row
from .run import AuditResult, audit

__all__ = ["audit", "AuditResult", "Row", "Item", "collect", "hub_search"]
