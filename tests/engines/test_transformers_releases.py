"""The transformers profiles' ranges against every transformers wheel downloaded (marker `released`).

The profiles were bisected over the releases 5.10 ... 5.24: DFlash assisted generation first ships in
5.15.0; before 5.17 the noise block is embedded with the raw table, from 5.17 through the embedding
module. Every wheel in the wheel directory (the cited ends at least, `.ci/run` fetches them) is read
here and must fall in the profile its code calls for, so a new release or a wrong boundary fails.
"""

from __future__ import annotations

import re

import pytest

from dflash2_ckpt.engines import released as r
from dflash2_ckpt.engines.registry import UnknownEngine, resolve
from dflash2_ckpt.engines.transformers import CURRENT, FIRST
from dflash2_ckpt.engines.versions import parse_version
from dflash2_ckpt.engines.wheels import read_member, wheel_dir

pytestmark = pytest.mark.released


def _wheels() -> list[tuple[str, object]]:
    root = wheel_dir()
    if not root.is_dir():
        return []
    found = [
        (m.group(1), p)
        for p in root.glob("transformers-*.whl")
        if (m := re.match(r"transformers-(\d+\.\d+\.\d+)-", p.name))
    ]
    return sorted(found, key=lambda vp: parse_version(vp[0], "release"))


def test_profile_ranges_start_where_the_cited_code_does() -> None:
    assert FIRST.versions.low == parse_version(r.TF_NOISE_TABLE.versions[0], "release") == (5, 15, 0)
    assert (
        FIRST.versions.high == CURRENT.versions.low == parse_version(r.TF_NOISE_MODULE.versions[0], "release")
    )
    assert r.TF_NO_DFLASH.absent and r.TF_NO_DFLASH.versions == ("5.14.1",)


@pytest.mark.parametrize(
    "version,wheel",
    _wheels()
    or [
        pytest.param(
            "none",
            None,
            marks=pytest.mark.skip(reason=f"no transformers wheel in {wheel_dir()}: .ci/run downloads them"),
        )
    ],
)
def test_every_downloaded_release_falls_in_the_profile_its_code_calls_for(
    version: str, wheel: object
) -> None:
    from pathlib import Path

    assert isinstance(wheel, Path)
    cand = read_member(wheel, r.T_CAND) or ""
    has_dflash = "class DFlashTokenCandidateGenerator" in cand
    if not has_dflash:
        with pytest.raises(UnknownEngine):
            resolve(f"transformers@{version}")
        return
    profile = resolve(f"transformers@{version}")
    raw_table = r.TF_NOISE_TABLE.anchor in cand
    assert (profile is FIRST) == raw_table and (profile is CURRENT) == (r.TF_NOISE_MODULE.anchor in cand)
    # what holds in every release with DFlash: bidirectional layers, block_size - 1 slots, layer outputs as taps
    assert r.TF_TOKENS.anchor in cand and r.TF_BIDIRECTIONAL.anchor in (read_member(wheel, r.T_MODEL) or "")
    reads = [c for c in (r.TF_TAPS_EVERY_INDEX, r.TF_TAPS_SELECTED_INDEX) if c.anchor in cand]
    assert reads, f"transformers {version} reads the taps in a way no profile records"
