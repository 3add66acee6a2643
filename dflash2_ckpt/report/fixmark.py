"""ruff's marker for a finding that `--fix` repairs: `[*]` safe, `[~]` only with --unsafe-fixes too."""
from __future__ import annotations

from typing import Any

FIX_LEGEND = "[*] fixable with --fix (see the change first with --diff); [~] with --fix --unsafe-fixes"


def fix_marker(f: Any) -> str:
    fix = getattr(f, "fix", None)
    return "" if fix is None else (" [*]" if fix.applicability == "safe" else " [~]")
