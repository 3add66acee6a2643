"""Engines are self-contained modules: the registry finds them, and read keys, causality text and tap offsets
are data gathered from their profiles (docs/engines.md, "Adding an engine")."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

import pytest

import dflash2_ckpt.engines as package
from conftest import real_config
from dflash2_ckpt.engines import causality, read_keys, registry
from dflash2_ckpt.engines.profile import Drafter, KeyRead, Profile, TapOffset
from dflash2_ckpt.formats.parse import to_spec
from dflash2_ckpt.formats.spec import CausalityKeys, DraftSpec


def drafter(layer_types: list[str] | None = None, dialect: str | None = None) -> Drafter:
    cfg = real_config("z-lab_Qwen3-4B-DFlash-b16")
    if layer_types is not None:
        cfg = {**cfg, "layer_types": layer_types, "num_hidden_layers": len(layer_types)}
    spec, errors = to_spec(cfg)
    assert spec is not None, errors
    return Drafter(dialect or spec.dialect, spec.version, spec, cfg, frozenset(), {}, "drafter")


def _modules_with_profiles() -> set[str]:
    out = set()
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        if info.name != "registry" and isinstance(getattr(module, "PROFILES", None), tuple):
            out.add(module.__name__)
    return out


def test_the_registry_gathers_every_module_that_defines_profiles() -> None:
    assert {m.__name__ for m in registry.ENGINE_MODULES} == _modules_with_profiles()
    assert tuple(p for m in registry.ENGINE_MODULES for p in m.PROFILES) == registry.PROFILES
    ranks = [getattr(m, "RANK", 100) for m in registry.ENGINE_MODULES]
    assert ranks == sorted(ranks)


def test_a_read_keys_since_is_its_first_citations_first_release() -> None:
    reads = [k for p in registry.PROFILES for k in p.read_keys]
    assert reads
    for k in reads:
        assert k.cites, k.key
        if k.since:
            assert k.cites[0].versions[0] == k.since, k.key


def test_read_keys_merge_engines_in_registry_order() -> None:
    base = registry.PROFILES[0]
    cites = base.sources[0].cites
    one = dataclasses.replace(base, engine="a", label="A", read_keys=(KeyRead("k", "does x", cites),))
    two = dataclasses.replace(
        base,
        engine="b",
        label="B",
        read_keys=(KeyRead("k", "does y", base.sources[0].cites, since="1.2", only="v1"),),
    )
    merged = read_keys.gather((one, two))["k"]
    assert merged.readers == "A, B 1.2 and later (DFlash v1)" and merged.effect == "does x; does y"
    assert read_keys.reader_of("k", "nested") is None  # the registry's engines do not read it


def _spec(**keys: bool | None) -> DraftSpec:
    d = drafter(layer_types=["sliding_attention", "full_attention"])
    assert d.spec is not None
    return d.spec.with_(causality=CausalityKeys(**keys))  # type: ignore[arg-type]


def test_a_causal_rule_reads_its_keys_in_order_and_says_so() -> None:
    rule = causality.CausalRule(("is_causal", "dflash_config.is_causal"), default="causal")
    assert rule(_spec()) == (True, True)
    assert rule(_spec(dflash_is_causal=False, dflash_causal=True)) == (False, False)
    assert rule(_spec(is_causal=True, dflash_is_causal=False)) == (True, True)
    assert rule.text == (
        "is_causal, else dflash_config.is_causal for every layer; absent = causal; "
        "dflash_config.causal not read"
    )
    assert causality.zlab(_spec()) == (True, False)  # sliding => causal
    assert causality.zlab.text.startswith("is_causal, else dflash_config.causal, else sliding => causal")


def test_profile_causality_text_is_derived_from_its_rule() -> None:
    for p in registry.PROFILES:
        if isinstance(p.causality, causality.CausalRule):
            assert p.causality_text == p.causality.text, p.id


def test_the_dflash_config_is_causal_key_reaches_the_spec() -> None:
    cfg = real_config("z-lab_Qwen3-4B-DFlash-b16")
    cfg = {**cfg, "dflash_config": {**cfg["dflash_config"], "is_causal": True}}
    spec, _ = to_spec(cfg)
    assert spec is not None and spec.causality.dflash_is_causal is True


@pytest.mark.parametrize(
    "config,version,want",
    [
        ({}, "v1", 1),
        ({}, "v2", 0),
        ({"dflash_config": {"tap_shift": 0}}, "v1", 0),
        ({"dflash_config": {"tap_shift": 2}}, "v2", 0),
        ({"dflash_config": {"tap_shift": True}}, "v1", 1),
    ],
)
def test_a_tap_offset_is_per_version_and_may_be_pinned_by_a_key(
    config: dict, version: str, want: int
) -> None:
    offset = TapOffset(v1=1, v2=0, key="dflash_config.tap_shift", keyed=("v1",))
    assert offset.of(version, config) == want  # type: ignore[arg-type]
    assert offset.text == "+1 (v1), +0 (v2), or dflash_config.tap_shift where set"


def test_the_meaning_check_compares_taps_through_the_offset() -> None:
    from dflash2_ckpt.engines.meaning import built

    [lc] = [p for p in registry.PROFILES if p.id == "llama.cpp>=b10662"]
    assert lc.tap_offset.of("v1") == 1
    d = drafter(dialect="gguf")
    view = built(lc, d)
    assert view is not None and d.spec is not None
    assert view["taps"] == [t + 1 for t in d.spec.target_layer_ids]
    shifted = built(dataclasses.replace(lc, tap_offset=TapOffset(3, 3)), d)
    assert shifted is not None and shifted["taps"] == [t + 3 for t in d.spec.target_layer_ids]


def test_conversion_loaders_are_the_profiles_that_say_so() -> None:
    names = {n.removesuffix("-legacy") for n in registry.LOADERS}
    assert names == {p.engine for p in registry.PROFILES if p.conversion_loader}
    assert all(isinstance(p, Profile) for p in registry.PROFILES)


def test_the_meaning_check_leaves_out_the_releases_before_the_per_layer_rules() -> None:
    from dflash2_ckpt.engines import resolve

    assert not resolve("vllm@0.24.0").meaning_check and resolve("vllm@0.26.0").meaning_check
    assert not resolve("sglang@0.5.17").meaning_check and resolve("sglang@0.5.18").meaning_check
