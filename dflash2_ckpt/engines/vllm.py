"""vLLM, three eras: before DFlash2 (<0.28), the broken 0.28.0, and DFlash2 that loads (>=0.29)."""
from __future__ import annotations

from . import causality, quant, serve
from .profile import Breakage, Default, DraftTokens, Fact, Profile
from .versions import at_least, below, exactly

ALGOS = "vllm-project/vllm:vllm/transformers_utils/configs/speculators/algos.py (update_dflash)"
TOKENS = DraftTokens("num_speculative_tokens", lambda b: b - 1, "block_size - 1", "vllm-project/vllm#52816")
ROPE = Default("rope_theta", 1_000_000.0, "vllm model_executor/models/qwen3_dflash.py "
               "(set_default_rope_theta(config, default_theta=1000000)); lucebox#447",
               why="the drafter's RoPE base; the transformers Qwen3 default is 10000")
SAMPLE = Default("sample_from_anchor", False, ALGOS, why="DFlash drafts from the mask slots only "
                 "(default_sample_from_anchor = algorithm == 'dspark')")
FLAT_READS = Fact("reads the nested dialect and the speculators flat dialect (update_dflash maps "
                  "aux_hidden_state_layer_ids - 1 to dflash_config.target_layer_ids)", ALGOS)

ASSISTANT_READS = Fact("reads the Muse-Glimmer assistant export as it is: MuseGlimmerAssistantModel routes to "
                       "qwen3_dflash, whose hf_to_vllm_mapper maps encoder.fc / encoder.output_norm_enc to fc / "
                       "hidden_norm", "vllm-project/vllm:vllm/model_executor/models/qwen3_dflash.py@036a00d1")

LEGACY = Profile(
    engine="vllm", label="vLLM", versions=below("0.28", "release"),
    drafts=frozenset({"v1"}), reads=frozenset({"nested", "flat"}),
    version_by="architecture (DFlash2DraftModel is not registered)",
    causality=causality.vllm_legacy,
    causality_text="dflash_config.causal, else sliding => causal; top-level is_causal ignored; flat: not modelled",
    taps="dflash_config.target_layer_ids (0-based, output of that layer)",
    draft_tokens=TOKENS,
    sources=(Fact("no DFlash2: DFlash2DraftModel is not registered; a speculators 'dflash2' config is rejected "
                  "('Expected one of ...')", "vllm-project/vllm#52816; CONTRACT §4"),
             Fact("DFlash v1 served with the pre-DFlash2 causality rule", "CONTRACT §4"), FLAT_READS),
    defaults=(ROPE, SAMPLE), quant=quant.vllm, serve=serve.vllm,
)

BROKEN = Profile(
    engine="vllm", label="vLLM", versions=exactly("0.28.0", "release"),
    drafts=frozenset({"v1", "v2"}), reads=frozenset({"nested", "flat"}),
    version_by="architecture",
    causality=causality.zlab,
    causality_text="is_causal, else dflash_config.causal, else sliding => causal",
    taps="dflash_config.target_layer_ids (0-based, output of that layer)",
    draft_tokens=TOKENS,
    sources=(Fact("contains DFlash2 (#52816) but every DFlash2DraftModel checkpoint fails to load; fixed on main "
                  "by #53435 after the release", "vllm-project/vllm#53428, #53612"), FLAT_READS),
    breakages=(Breakage(frozenset({"v2"}), "There is no module or parameter named 'layers.0.attention_conv'",
                        "vllm-project/vllm#53428, #53612 (fixed by #53435, after 0.28.0)"),),
    defaults=(ROPE, SAMPLE), quant=quant.vllm, serve=serve.vllm,
)

CURRENT = Profile(
    engine="vllm", label="vLLM", versions=at_least("0.29", "release"),
    drafts=frozenset({"v1", "v2"}), reads=frozenset({"nested", "flat", "assistant"}),
    version_by="architecture (DFlash2DraftModel; speculators_model_type 'dflash2' for flat)",
    causality=causality.zlab,
    causality_text="is_causal, else dflash_config.causal, else sliding => causal; flat: "
                   "not sliding_window_non_causal for every layer, absent = bidirectional",
    taps="dflash_config.target_layer_ids (0-based, output of that layer); flat: aux ids - 1",
    draft_tokens=TOKENS,
    sources=(Fact("DFlash2 loads (nested; speculators flat 'dflash2' via #53797, first released in 0.29, "
                  "inferred); method 'dflash', num_speculative_tokens = block_size - 1",
                  "vllm-project/vllm#52816, #53797"),
             Fact("flat configs: dflash_config.causal = not config.get('sliding_window_non_causal', True), so an "
                  "absent key is bidirectional (vLLM test test_dflash_speculators_config_defaults_to_non_causal_swa)",
                  ALGOS),
             FLAT_READS, ASSISTANT_READS),
    notes=(Fact("needs the V2 model runner (forced when VLLM_USE_V2_MODEL_RUNNER is unset; with V1 forced it "
                "drafts like DFlash v1) and an unquantized target lm_head", "vllm-project/vllm#52816, #53116"),),
    defaults=(ROPE, SAMPLE), quant=quant.vllm, serve=serve.vllm,
)

PROFILES = (LEGACY, BROKEN, CURRENT)
