"""Shared fuzz settings: a CI budget per test, raised for a long run with DFLASH2_FUZZ_EXAMPLES.

    DFLASH2_FUZZ_EXAMPLES=20000 pytest tests/fuzz      # every fuzz test runs 20,000 inputs

The only exceptions a parser may raise on hostile input are the toolkit's own typed errors
(Dflash2Error and subclasses); anything else (KeyError, TypeError, RecursionError, MemoryError,
OverflowError, ...) escapes the CLI's error boundary as a traceback and fails the test.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, settings


def examples(ci_default: int) -> int:
    override = os.environ.get("DFLASH2_FUZZ_EXAMPLES")
    return int(override) if override else ci_default


def fuzz(ci_default: int) -> Any:
    """hypothesis settings for one fuzz test: no deadline (CI machines vary), no slow-data health check."""
    return settings(
        max_examples=examples(ci_default),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
