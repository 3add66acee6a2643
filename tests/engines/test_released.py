"""Every engine fact's citation is checked against the released file it names (marker `released`).

The wheels are read from $DFLASH2_WHEELS (default ~/.cache/dflash2-ckpt/wheels); `.ci/run` fills that
directory with `pip download --no-deps`. Tests never reach the network: a missing wheel skips its
citation with the command that fetches it.
"""
from __future__ import annotations

import pytest

from dflash2_ckpt.engines import PROFILES
from dflash2_ckpt.engines.profile import Cite
from dflash2_ckpt.engines.released import all_cites, requirements
from dflash2_ckpt.engines.wheels import find_wheel, read_member, wheel_dir

pytestmark = pytest.mark.released

CASES = [(c, v) for c in all_cites() for v in c.versions]


def _id(case: tuple[Cite, str]) -> str:
    c, v = case
    return f"{c.dist}=={v}:{c.path}:{c.anchor.strip().splitlines()[0][:40]}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_anchor_in_released_file(case: tuple[Cite, str]) -> None:
    cite, version = case
    wheel = find_wheel(cite.dist, version)
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


# llama.cpp ships as a source build (issue 20 runs it in tests); its facts cite the loader by commit
UNCITED_ENGINES = {"llama.cpp"}


@pytest.mark.parametrize("pid,text,cites", _facts(), ids=[f"{p}:{t[:30]}" for p, t, _ in _facts()])
def test_every_fact_cites_released_code(pid: str, text: str, cites: tuple[Cite, ...]) -> None:
    if pid.startswith(tuple(UNCITED_ENGINES)):
        pytest.skip("llama.cpp facts are checked by running the engine")
    assert cites, f"{pid}: fact without a released-code citation: {text}"
    assert all(c in all_cites() for c in cites), f"{pid}: cite not registered in released.py"


def test_requirements_name_every_cited_release() -> None:
    reqs = requirements()
    assert "vllm==0.33.0" in reqs and "sglang==0.5.23" in reqs and "mlx-vlm==0.7.10" in reqs
    assert all(r.count("==") == 1 for r in reqs)
