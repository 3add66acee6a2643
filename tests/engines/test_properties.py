"""Profiles never crash, whatever DraftSpec / drafter they are given: every verdict is one of the five."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import real_config
from dflash2_ckpt.engines import PROFILES, Drafter
from dflash2_ckpt.engines.effective import engine_views
from dflash2_ckpt.engines.judge import VERDICTS, judge
from dflash2_ckpt.formats.parse import to_spec
from dflash2_ckpt.formats.spec import CausalityKeys

BASE, _ = to_spec(real_config("z-lab_Qwen3.8-27B-DFlash2"))
opt_bool = st.none() | st.booleans()
opt_int = st.none() | st.integers(1, 300)


@st.composite
def drafters(draw: st.DrawFn) -> Drafter:
    n = draw(st.integers(1, 6))
    types = draw(
        st.lists(st.sampled_from(["sliding_attention", "full_attention", None]), min_size=0, max_size=8)
    )
    dialect = draw(st.sampled_from(["nested", "flat"]))
    version = draw(st.sampled_from(["v1", "v2"]))
    spec = BASE.with_(
        dialect=dialect,
        version=version,
        num_hidden_layers=n,
        layer_types=tuple(types),
        causality=CausalityKeys(draw(opt_bool), draw(opt_bool), draw(opt_bool)),
        block_size=draw(opt_int),
        mask_token_id=draw(st.none() | st.integers(0, 10**6)),
        conv_kernel_size=draw(opt_int),
        conv_group_size=draw(opt_int),
        selector_rank=draw(opt_int),
        selector_top_k=draw(opt_int),
        num_target_layers=draw(st.none() | st.integers(0, 200)),
        drafter_extra=draw(
            st.sampled_from([{}, {"sample_from_anchor": True}, {"sample_from_anchor": False}])
        ),
    )
    config = draw(
        st.sampled_from(
            [
                {},
                real_config("z-lab_Qwen3.8-27B-DFlash2"),
                {"dflash_config": 3},
                {"is_causal": "no", "speculators_config": []},
            ]
        )
    )
    modules = draw(
        st.dictionaries(
            st.sampled_from(
                [
                    "fc",
                    "layers.0.self_attn.q_proj",
                    "candidate_selector.successor_codebook",
                    "layers.1.attention_conv.kernel_projection",
                    "x",
                ]
            ),
            st.sampled_from(["w4a16", "fp8", "nvfp4", "mlx-q4", "mxfp4"]),
            max_size=3,
        )
    )
    tensors = draw(
        st.frozensets(
            st.sampled_from(
                [
                    "lm_head.weight",
                    "fc.weight",
                    "candidate_selector.successor_codebook",
                    "candidate_selector.successor_codebook.weight",
                ]
            )
        )
    )
    return Drafter(
        draw(st.sampled_from([dialect, "gguf", None])),
        draw(st.sampled_from([version, None])),
        draw(st.sampled_from([spec, None])),
        config,
        tensors,
        modules,
        "p",
        draw(st.none() | st.just("t")),
    )


@settings(max_examples=300, deadline=None)
@given(drafters())
def test_profiles_never_crash(d: Drafter) -> None:
    for p in PROFILES:
        v = judge(p, d)
        assert v.verdict in VERDICTS
        assert (v.verdict == "loads") <= all(r.severity == "info" for r in v.reasons)
        assert v.verdict != "fails" or any(r.severity == "error" for r in v.reasons)
        v.to_json()
    engine_views(PROFILES, d)
