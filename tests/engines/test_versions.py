"""Version parsing and `engine@version` resolution."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dflash2_ckpt.engines import PROFILES, UnknownEngine, parse_ref, resolve
from dflash2_ckpt.engines.versions import compare, parse_version, show


@pytest.mark.parametrize(
    "ref,profile",
    [
        ("vllm@0.19.0", "vllm<0.20"),
        ("vllm@0.21.0", "vllm>=0.20,<0.23"),
        ("vllm@0.25.1", "vllm>=0.23,<0.26"),
        ("vllm@0.26.0", "vllm>=0.26,<0.28"),
        ("vllm@0.27.1", "vllm>=0.26,<0.28"),
        ("vllm@0.28.0", "vllm==0.28.0"),
        ("vllm@0.29.0", "vllm>=0.29,<0.31"),
        ("vllm@0.29", "vllm>=0.29,<0.31"),
        ("vllm@v0.30.2", "vllm>=0.29,<0.31"),
        ("vllm@0.31.0", "vllm>=0.31,<0.33"),
        ("vllm@0.33.0", "vllm>=0.33,<0.34"),
        ("vllm@0.34.0", "vllm>=0.34"),
        ("vllm", "vllm>=0.34"),
        ("vllm@9.0.0", "vllm>=0.34"),
        ("sglang@0.5.10", "sglang<0.5.11"),
        ("sglang@0.5.12", "sglang>=0.5.11,<0.5.14"),
        ("sglang@0.5.16", "sglang>=0.5.14,<0.5.17"),
        ("sglang@0.5.17", "sglang==0.5.17"),
        ("sglang@0.5.18", "sglang>=0.5.18,<0.5.19"),
        ("sglang@0.5.19", "sglang>=0.5.19"),
        ("SGLang", "sglang>=0.5.19"),
        ("llama.cpp@b10644", "llama.cpp>=b9837,<b10662"),
        ("llama.cpp@b10661", "llama.cpp>=b9837,<b10662"),
        ("llama.cpp@b10662", "llama.cpp>=b10662"),
        ("llama.cpp@b9837", "llama.cpp>=b9837,<b10662"),
        ("llama.cpp@b10700", "llama.cpp>=b10662"),
        ("dflash-mlx", "dflash-mlx>=0.1.0"),
        ("dflash-mlx@0.1.8", "dflash-mlx>=0.1.0"),
        ("mlx-vlm", "mlx-vlm>=0.7.0"),
        ("mlx-vlm@0.6.15", "mlx-vlm>=0.6.0,<0.6.16"),
        ("mlx-vlm@0.6.17", "mlx-vlm>=0.6.16,<0.7.0"),
        ("mlx-vlm@0.7.10", "mlx-vlm>=0.7.0"),
        ("z-lab", "z-lab>=0.1.0"),
        ("z-lab@0.1.0", "z-lab>=0.1.0"),
        ("speculators@0.9.0", "speculators>=0.9,<0.10"),
    ],
)
def test_resolve(ref: str, profile: str) -> None:
    assert resolve(ref).id == profile


@pytest.mark.parametrize(
    "ref,why",
    [
        ("tensorrt", "unknown engine"),
        ("vllm@0.28.1", "no vllm profile covers"),
        ("vllm@b10700", "release number"),
        ("llama.cpp@0.29", "build number"),
        ("llama.cpp@b9830", "no llama.cpp profile covers"),
        ("mlx-vlm@0.5.0", "no mlx-vlm profile covers"),
        ("dflash-mlx@0.0.9", "covers"),
        ("speculators@0.8", "covers"),
    ],
)
def test_unknown_names_and_versions_say_what_exists(ref: str, why: str) -> None:
    with pytest.raises(UnknownEngine, match=why):
        resolve(ref)


def test_bad_reference_syntax() -> None:
    for bad in ("", "@0.29", "vllm@"):
        with pytest.raises(ValueError):
            parse_ref(bad)


def test_profile_ids_are_unique_and_ranges_of_an_engine_do_not_overlap() -> None:
    assert len({p.id for p in PROFILES}) == len(PROFILES)
    probes = [(0, v, p) for v in range(40) for p in range(25)] + [(b,) for b in range(10000, 11000, 7)]
    for engine in {p.engine for p in PROFILES}:
        mine = [p for p in PROFILES if p.engine == engine and p.versions.scheme is not None]
        for v in probes:
            assert sum(p.versions.contains(v) for p in mine) <= 1, (engine, v)


@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=4))
def test_release_versions_round_trip(parts: list[int]) -> None:
    v = tuple(parts)
    assert parse_version(show(v, "release"), "release") == v


@given(st.integers(0, 10**7))
def test_build_numbers_round_trip(n: int) -> None:
    assert parse_version(show((n,), "build"), "build") == (n,)


@given(
    st.lists(st.integers(0, 99), min_size=1, max_size=4), st.lists(st.integers(0, 99), min_size=1, max_size=4)
)
def test_compare_is_antisymmetric_and_pads(a: list[int], b: list[int]) -> None:
    assert compare(tuple(a), tuple(b)) == -compare(tuple(b), tuple(a))
    assert compare(tuple(a), tuple(a) + (0,)) == 0


@given(st.text(max_size=30))
def test_parse_version_never_crashes(text: str) -> None:
    for scheme in ("release", "build"):
        try:
            parse_version(text, scheme)  # type: ignore[arg-type]
        except ValueError:
            pass
