"""The engines' own small pure functions, taken from their released wheels, against our profiles, on every
config in fixtures/ and ../shared/real/ (marker `released`; skipped when the wheel is not downloaded).

vLLM `_dflash_layer_causal` (and its speculators `update_dflash` mapping), SGLang's block-size, tap and
per-layer attention-type resolution, mlx-vlm's DFlash v1 config reader, the z-lab / SGLang / dflash-mlx tap
guess and speculators' causality defaults. A disagreement means a profile misstates that release.
"""

from __future__ import annotations

import ast
import copy
import enum
from typing import Any

import pytest

from _kit.released_code import configs, extract, hf_config, released_source
from dflash2_ckpt.engines import Drafter, resolve
from dflash2_ckpt.engines.judge import effective_value
from dflash2_ckpt.engines.sglang import guessed_taps
from dflash2_ckpt.formats.parse import to_spec
from dflash2_ckpt.formats.spec import DraftSpec

pytestmark = pytest.mark.released

CONFIGS = configs()


def _spec(cfg: dict[str, Any]) -> DraftSpec | None:
    try:
        spec, _ = to_spec(copy.deepcopy(cfg))
    except Exception:  # a broken fixture: not a drafter any engine would see
        return None
    return spec


DRAFTERS = [(name, cfg, spec) for name, cfg in CONFIGS if (spec := _spec(cfg)) is not None]
NESTED = [(n, c, s) for n, c, s in DRAFTERS if s.dialect == "nested"]
FLAT = [(n, c, s) for n, c, s in DRAFTERS if s.dialect == "flat"]


def test_the_fixture_set_is_broad() -> None:
    assert len(NESTED) >= 15 and FLAT, (len(NESTED), len(FLAT))


# --- vLLM ------------------------------------------------------------------------------------------------

VLLM_DFLASH = "vllm/model_executor/models/qwen3_dflash.py"
VLLM_ALGOS = "vllm/transformers_utils/configs/speculators/algos.py"


def _vllm(version: str) -> Any:
    ns = extract(
        released_source("vllm", version, VLLM_DFLASH), ["_dflash_layer_causal"], filename=VLLM_DFLASH
    )
    return ns["_dflash_layer_causal"]


@pytest.mark.parametrize("version", ["0.26.0", "0.27.1", "0.28.0", "0.29.0", "0.31.0", "0.33.0"])
def test_vllm_layer_causality_matches_the_profile(version: str) -> None:
    fn = _vllm(version)
    profile = resolve(f"vllm@{version}")
    assert profile.causality is not None
    checked = 0
    for name, cfg, spec in NESTED:
        ours = profile.causality(spec)
        if ours is None or spec.num_hidden_layers != len(spec.layer_types):
            continue
        theirs = tuple(bool(fn(hf_config(cfg), i)) for i in range(spec.num_hidden_layers))
        assert theirs == ours, f"{name}: vLLM {version} runs {theirs}, profile {profile.id} says {ours}"
        checked += 1
    assert checked >= 15


@pytest.mark.parametrize("version", ["0.27.1", "0.29.0", "0.33.0"])
def test_vllm_speculators_mapping_then_causality_matches_the_profile(version: str) -> None:
    src = released_source("vllm", version, VLLM_ALGOS)
    ns = extract(src, ["update_dflash"], filename=VLLM_ALGOS)
    fn = _vllm(version)
    profile = resolve(f"vllm@{version}")
    assert profile.causality is not None
    for name, cfg, spec in FLAT:
        pre = dict(cfg.get("transformer_layer_config") or {})
        ns["update_dflash"](cfg, pre)
        theirs = tuple(bool(fn(hf_config(pre), i)) for i in range(spec.num_hidden_layers))
        assert theirs == profile.causality(spec), f"{name}: vLLM {version}"
        assert pre["dflash_config"]["target_layer_ids"] == list(spec.target_layer_ids), name


@pytest.mark.parametrize("version", ["0.24.0", "0.25.1"])
def test_vllm_before_the_per_layer_rule_runs_dflash_config_causal_everywhere(version: str) -> None:
    """0.23-0.25: the runners take one causal flag for every layer from dflash_config.causal, default false
    (a sliding layer is not causal by default), before vllm-project/vllm#43445 / #47453."""
    import types

    path = "vllm/v1/worker/gpu/spec_decode/dflash/utils.py"
    fn = extract(released_source("vllm", version, path), ["get_dflash_causal"], filename=path)[
        "get_dflash_causal"
    ]
    profile = resolve(f"vllm@{version}")
    assert profile.causality is not None
    checked = 0
    for name, cfg, spec in NESTED:
        ours = profile.causality(spec)
        if ours is None:
            continue
        theirs = (bool(fn(types.SimpleNamespace(hf_config=hf_config(cfg)))),) * spec.num_hidden_layers
        assert theirs == ours, f"{name}: vLLM {version} runs {theirs}, profile {profile.id} says {ours}"
        checked += 1
    assert checked >= 15


# --- SGLang ----------------------------------------------------------------------------------------------

SG_UTILS = "sglang/srt/speculative/dflash_utils.py"
SG_MODEL = "sglang/srt/models/dflash.py"


class AttentionType(enum.Enum):
    DECODER = "decoder"
    ENCODER_ONLY = "encoder_only"


def _sglang(version: str) -> dict[str, Any]:
    utils = extract(
        released_source("sglang", version, SG_UTILS),
        [
            "parse_dflash_draft_config",
            "build_target_layer_ids",
            "get_dflash_layer_types",
            "get_dflash_attention_sliding_window_size",
        ],
        {"logger": None},
        SG_UTILS,
    )
    model = extract(
        released_source("sglang", version, SG_MODEL),
        ["_get_dflash_layer_attention_params"],
        {
            "AttentionType": AttentionType,
            **{k: utils[k] for k in ("get_dflash_layer_types", "get_dflash_attention_sliding_window_size")},
        },
        SG_MODEL,
    )
    return {**utils, **model}


@pytest.mark.parametrize("version", ["0.5.14", "0.5.16", "0.5.17", "0.5.18", "0.5.19", "0.5.23"])
def test_sglang_block_size_taps_and_causality_match_the_profile(version: str) -> None:
    fns = _sglang(version)
    profile = resolve(f"sglang@{version}")
    assert profile.causality is not None
    by_key = {d.key: d for d in profile.defaults}
    checked = 0
    for name, cfg, spec in NESTED:
        try:
            parsed = fns["parse_dflash_draft_config"](draft_hf_config=cfg)
        except (ValueError, TypeError):  # SGLang refuses the config outright (broken fixtures)
            continue
        d = Drafter("nested", spec.version, spec, cfg)
        assert parsed.resolve_block_size(default=16) == effective_value(d, by_key["block_size"]), name
        n = spec.num_target_layers or (max(spec.target_layer_ids) + 1 if spec.target_layer_ids else None)
        if n is not None and n >= 4:
            try:
                theirs = parsed.resolve_target_layer_ids(
                    target_num_layers=n, draft_num_layers=spec.num_hidden_layers
                )
            except ValueError:  # taps outside the target: refused at load (verify's DF1xx)
                theirs = None
            if theirs is not None:
                assert tuple(theirs) == tuple(effective_value(d, by_key["target_layer_ids"])), name
        try:
            kinds = [
                fns["_get_dflash_layer_attention_params"](hf_config(cfg), i)[1]
                for i in range(spec.num_hidden_layers)
            ]
        except (ValueError, AssertionError):  # e.g. sliding layers without sliding_window
            continue
        theirs_causal = tuple(k is AttentionType.DECODER for k in kinds)
        if spec.num_hidden_layers != len(spec.layer_types):
            continue  # a broken layer_types length: judged elsewhere (DF10x)
        assert theirs_causal == profile.causality(spec), f"{name}: SGLang {version}"
        checked += 1
    assert checked >= 10


def test_sglang_guesses_taps_like_the_profile() -> None:
    fns = _sglang("0.5.23")
    for n in range(4, 80):
        for k in range(1, 9):
            spec = NESTED[0][2].with_(num_target_layers=n, num_hidden_layers=k)
            assert tuple(fns["build_target_layer_ids"](n, k)) == guessed_taps(spec), (n, k)


def test_zlab_and_dflash_mlx_guess_taps_like_the_profile() -> None:
    zlab = extract(released_source("dflash", "0.1.0", "dflash/model.py"), ["build_target_layer_ids"])
    mlx = extract(released_source("dflash-mlx", "0.1.8", "dflash_mlx/model.py"), ["build_target_layer_ids"])
    for n in range(4, 80):
        for k in range(1, 9):
            spec = NESTED[0][2].with_(num_target_layers=n, num_hidden_layers=k)
            assert tuple(zlab["build_target_layer_ids"](n, k)) == guessed_taps(spec), (n, k)
            assert tuple(mlx["build_target_layer_ids"](n, k)) == guessed_taps(spec), (n, k)


# --- mlx-vlm ---------------------------------------------------------------------------------------------

MLX_V1 = "mlx_vlm/speculative/drafters/qwen3_dflash/config.py"


class BaseModelConfig:
    """Stand-in for mlx_vlm.models.base.BaseModelConfig (a plain dataclass base)."""


@pytest.mark.parametrize("version", ["0.6.0", "0.6.17", "0.7.10"])
def test_mlx_vlm_v1_config_reading_matches_the_profile(version: str) -> None:
    ns = extract(
        released_source("mlx-vlm", version, MLX_V1),
        ["DFlashConfig"],
        {"BaseModelConfig": BaseModelConfig},
        MLX_V1,
    )
    profile = resolve(f"mlx-vlm@{version}")
    defaults = {d.key: d for d in profile.defaults}
    checked = 0
    for name, cfg, spec in NESTED:
        if spec.version != "v1":
            continue
        theirs = ns["DFlashConfig"].from_dict(copy.deepcopy(cfg))
        d = Drafter("nested", "v1", spec, cfg)
        for key in ("block_size", "mask_token_id", "target_layer_ids"):
            ours = effective_value(d, defaults[key])
            got = getattr(theirs, key)
            assert (list(got) if isinstance(got, (list, tuple)) else got) == ours, f"{name}: {key}"
        if profile.causality is not None:
            assert (
                bool(theirs.is_causal) if hasattr(theirs, "is_causal") else False,
            ) * spec.num_hidden_layers == profile.causality(spec), name
        checked += 1
    assert checked >= 3


# --- speculators -----------------------------------------------------------------------------------------


def _field_default(source: str, cls: str, field: str) -> Any:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for stmt in node.body:
                if (
                    isinstance(stmt, ast.AnnAssign)
                    and isinstance(stmt.target, ast.Name)
                    and stmt.target.id == field
                ):
                    assert isinstance(stmt.value, ast.Call)
                    [kw] = [k for k in stmt.value.keywords if k.arg == "default"]
                    return ast.literal_eval(kw.value)
    raise AssertionError(f"{cls}.{field} not found")


def test_speculators_causality_defaults_match_the_profile() -> None:
    v2 = _field_default(
        released_source("speculators", "0.9.0", "speculators/models/dflash2/config.py"),
        "DFlash2SpeculatorConfig",
        "sliding_window_non_causal",
    )
    v1 = _field_default(
        released_source("speculators", "0.9.0", "speculators/models/dflash/config.py"),
        "DFlashSpeculatorConfig",
        "sliding_window_non_causal",
    )
    profile = resolve("speculators@0.9.0")
    assert profile.causality is not None
    for name, _cfg, spec in FLAT:
        unset = spec.with_(causality=type(spec.causality)())
        want = v2 if spec.version == "v2" else v1
        assert profile.causality(unset) == tuple(
            (t == "sliding_attention") and not want for t in spec.layer_types
        ), name
    assert (v1, v2) == (False, True)


# --- transformers: the assistant config class resolves what the profile says it fills in ---------------------
ASSISTANT = [(n, c, s) for n, c, s in DRAFTERS if s.dialect == "assistant"]
TF_KEYS = ("block_size", "mask_token_id", "target_layer_ids")


def _without(cfg: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in cfg.items() if k != key}


def test_transformers_assistant_config_fills_what_the_profile_says() -> None:
    """The installed transformers' MuseGlimmerAssistantConfig, given each assistant config and the same config
    without each DFlash key, reads or fills in the value the profile's effective_value predicts."""
    transformers = pytest.importorskip("transformers")
    from dflash2_ckpt.engines.transformers import PROFILES

    profile = resolve(f"transformers@{transformers.__version__}")
    assert profile in PROFILES
    by_key = {d.key: d for d in profile.defaults}
    from huggingface_hub.errors import StrictDataclassFieldValidationError as StrictError

    cls = transformers.MuseGlimmerAssistantConfig
    names = set(cls.__dataclass_fields__) if hasattr(cls, "__dataclass_fields__") else None
    checked = 0
    for name, cfg, spec in ASSISTANT:
        for drop in (None, *TF_KEYS):
            c = cfg if drop is None else _without(cfg, drop)
            kwargs = {k: v for k, v in c.items() if names is None or k in names}
            d = Drafter("assistant", spec.version, spec, c)
            refused = [x.check(d) for x in profile.constraints if x.check(d)]
            try:
                theirs = cls(**kwargs)
            except (TypeError, ValueError, StrictError) as e:  # the strict dataclass validates every field
                assert refused, f"{name}: transformers refuses the config, the profile does not: {e}"
                continue
            assert not refused, f"{name}: the profile refuses what transformers loads: {refused}"
            for key in TF_KEYS:
                want = effective_value(d, by_key[key])
                got = getattr(theirs, key)
                assert (list(got) if isinstance(got, (list, tuple)) else got) == want, (
                    f"{name} without {drop}: {key}"
                )
            checked += 1
    assert checked >= 4  # the tiny v1 drafter whole and less each key (the assistant fixture's
    #                                  sliding_window null is refused by both)
