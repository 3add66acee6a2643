"""The llama.cpp tests run the pinned build (python scripts/llama_cpp.py); without it they skip, saying so.

The recall pair's GGUF files are made once per session: the target by llama.cpp's own
convert_hf_to_gguf.py, the drafter by this toolkit's converter (fixtures/llama_cpp_pair.py).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAIR = ROOT / "fixtures" / "pairs" / "recall"


def _fixture_module() -> Any:
    spec = importlib.util.spec_from_file_location("llama_cpp_pair", ROOT / "fixtures" / "llama_cpp_pair.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["llama_cpp_pair"] = mod
    spec.loader.exec_module(mod)
    return mod


PAIRMOD = _fixture_module()
INFO = PAIRMOD.engine()
MISSING = [m for m in ("torch", "transformers", "sentencepiece") if importlib.util.find_spec(m) is None]
REASON = (
    "llama.cpp b11434 is not built: run `python scripts/llama_cpp.py` (about 16 min on 2 cores, cached)"
    if INFO is None
    else f"llama.cpp's converter needs {', '.join(MISSING)} (pip install -e '.[llama-cpp]')"
)


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.llama_cpp)
            if INFO is None or MISSING:
                item.add_marker(pytest.mark.skip(reason=REASON))


@pytest.fixture(scope="session")
def engine() -> dict[str, str]:
    assert INFO is not None
    return dict(INFO)


@pytest.fixture(scope="session")
def ggufs(engine: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out: dict[str, Path] = PAIRMOD.build(tmp_path_factory.mktemp("recall-gguf"), engine, PAIR)
    return out
