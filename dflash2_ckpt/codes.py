"""The registry of finding codes: the single source of truth for code, name, severity and meaning.

Codes never change meaning once released and are never reused; retire one by marking it deprecated.
Families: DF1xx config schema, DF2xx tensors, DF3xx v1/v2 identity, DF4xx causality,
DF5xx pairing with the target, DF6xx files and shards, DF7xx smoke forward (DF75x acceptance),
DF8xx engine compatibility (one verdict per engine profile, dflash2_ckpt.engines), DF9xx GGUF (DF900-DF949).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Code:
    code: str
    name: str
    severity: Severity
    summary: str
    status: Literal["stable", "deprecated"] = "stable"
    breaks: str = ""  # what goes wrong where the checkpoint is used (docs/codes.md, SARIF help)
    fix: str = ""  # how to make the finding go away


_TABLE: tuple[Code, ...] = (
    # DF1xx config schema
    Code("DF100", "config-unreadable", "error", "config.json is missing, not JSON, or not a JSON object"),
    Code("DF101", "invalid-field", "error", "a config field has the wrong type or violates its constraint"),
    Code("DF102", "missing-field", "error", "a field the engines require is absent"),
    Code("DF103", "group-size-not-divisor", "error", "conv_group_size does not divide hidden_size"),
    Code("DF104", "taps-exceed-block", "error", "conv_kernel_size is larger than block_size"),
    Code("DF105", "top-k-exceeds-vocab", "error", "selector_top_k is larger than vocab_size"),
    Code("DF106", "mask-id-out-of-vocab", "error", "mask_token_id is not inside [0, vocab_size)"),
    Code(
        "DF107",
        "tap-ids-invalid",
        "error",
        "target layer ids are not unique, increasing and below num_target_layers",
    ),
    Code("DF108", "layer-types-length", "error", "layer_types does not have one entry per draft layer"),
    Code(
        "DF109",
        "sliding-window-missing",
        "error",
        "a sliding_attention layer without a positive sliding_window",
    ),
    Code("DF110", "sample-from-anchor-v2", "error", "sample_from_anchor is true on a DFlash2 drafter"),
    Code(
        "DF111",
        "draft-vocab-mismatch",
        "error",
        "draft_vocab_size differs from vocab_size on a DFlash2 drafter",
    ),
    Code("DF112", "block-size-conflict", "error", "block_size is given twice with different values"),
    Code(
        "DF113", "mask-token-missing", "warning", "no mask_token_id: the drafter cannot build its query block"
    ),
    Code("DF114", "block-size-missing", "warning", "no block_size: engines fall back to their own default"),
    Code(
        "DF115",
        "legacy-dialect",
        "info",
        "old nested dialect (top-level block_size / rope_theta); still read by the engines",
    ),
    Code("DF116", "unknown-key", "info", "a key the schema does not model; kept verbatim by convert"),
    Code("DF117", "duplicate-key", "error", "a JSON object repeats a key; parsers silently keep the last"),
    Code(
        "DF118", "head-geometry", "error", "attention geometry is inconsistent (kv heads must divide heads)"
    ),
    Code(
        "DF119", "unsupported-activation", "warning", "hidden_act is not silu; the engines build a SiLU MLP"
    ),
    Code(
        "DF120",
        "vocab-size-borrowed",
        "warning",
        "no vocab_size (the assistant export borrows the target's embedding and head): judged with the target's, or the bound its token ids give",
    ),
    Code(
        "DF121",
        "engine-key-unchecked",
        "info",
        "a key the schema does not model but some engine releases read (cited); not checked, kept verbatim",
    ),
    Code(
        "DF130",
        "speculators-unloadable",
        "error",
        "a flat config speculators cannot load (speculators_config.verifier missing: 'Field required')",
    ),
    Code(
        "DF131",
        "tap-keys-conflict",
        "warning",
        "dflash_config.layer_ids and target_layer_ids disagree; vLLM's DFlash reads layer_ids first",
    ),
    Code(
        "DF132",
        "swa-window-conflict",
        "warning",
        "dflash_config.swa_window_size differs from sliding_window on sliding layers",
    ),
    Code(
        "DF140",
        "no-rope-layers-mask",
        "warning",
        "no_rope_layers looks like a per-layer 0/1 mask; vLLM 0.34 reads it as layer indices",
    ),
    Code(
        "DF141",
        "no-rope-layers-range",
        "error",
        "no_rope_layers holds values that are not draft layer indices",
    ),
    Code(
        "DF142",
        "family-vocab-mismatch",
        "error",
        "draft_vocab_size differs from the target's vocabulary where the family shares the target lm_head",
    ),
    Code(
        "DF160",
        "architecture-not-registered",
        "error",
        "no release of an engine registers the config's draft architecture; that engine refuses it",
    ),
    Code(
        "DF161",
        "draft-position-layout",
        "error",
        "an anchor-first drafter (sample_from_anchor / logits_start) in an engine that drafts fill-in or refuses it",
    ),
    Code(
        "DF162",
        "speculative-tokens-exceed-block",
        "error",
        "a flat config's speculative_tokens is more than block_size - 1; vLLM drafts that many",
    ),
    # DF2xx tensors
    Code("DF201", "missing-tensor", "error", "a tensor the layout requires is not in the checkpoint"),
    Code("DF202", "unexpected-tensor", "warning", "a tensor no engine loads"),
    Code("DF203", "wrong-shape", "error", "a tensor's shape differs from the one the config implies"),
    Code("DF204", "wrong-dtype", "error", "a weight is not a floating-point tensor"),
    Code("DF205", "mixed-dtypes", "warning", "weights are stored in more than one dtype"),
    Code(
        "DF206",
        "codebook-weight-suffix",
        "error",
        "selector codebooks named with a .weight suffix; vLLM requires the bare name",
    ),
    Code(
        "DF207",
        "target-copies",
        "info",
        "embed_tokens / lm_head copies of the target; the engines use the target's own",
    ),
    Code(
        "DF208",
        "encoder-names",
        "warning",
        "encoder.* names from the Muse-Glimmer assistant export; engines expect bare names",
    ),
    Code(
        "DF209",
        "quantized-tensors",
        "error",
        "quantized tensors (weight_packed / weight_scale); the engines load dense drafters",
        status="deprecated",
    ),  # replaced by DF220-DF229: quantized drafters are judged per module and engine
    Code(
        "DF210", "vocab-maps", "warning", "t2d / d2t vocabulary maps; DFlash2 uses the full target vocabulary"
    ),
    Code("DF211", "config-dtype-mismatch", "info", "config dtype differs from the stored tensors"),
    Code(
        "DF212",
        "own-draft-head",
        "info",
        "lm_head is the drafter's own head over a reduced draft vocabulary (v1), not a target copy",
    ),
    Code(
        "DF213",
        "vocab-map-layout",
        "error",
        "d2t / t2d have the wrong shape or dtype for draft_vocab_size and the target vocabulary",
    ),
    Code(
        "DF240",
        "moe-experts",
        "warning",
        "expert MLP tensors of a MoE DFlash2 drafter; no released engine loads one",
    ),
    Code(
        "DF214",
        "vocab-maps-missing",
        "error",
        "a reduced-vocabulary drafter without its d2t / t2d maps; they would load as zeros",
    ),
    Code("DF215", "draft-vocab-too-large", "error", "draft_vocab_size is larger than the target vocabulary"),
    Code(
        "DF216",
        "vocab-map-values",
        "error",
        "t2d disagrees with d2t (found by --scan); a d2t outside the target vocabulary is DF218",
    ),
    Code(
        "DF217",
        "draft-head-layout",
        "error",
        "a reduced-vocabulary drafter's own lm_head is missing or not a float [draft_vocab_size, hidden_size]",
    ),
    Code(
        "DF218",
        "d2t-target-ids",
        "error",
        "d2t does not give each draft id its own target id inside the target vocabulary (absolute ids in a GGUF, offsets in safetensors)",
    ),
    Code(
        "DF220",
        "quantized-modules",
        "info",
        "modules stored quantized, with their scheme; engine profiles judge them",
    ),
    Code(
        "DF221",
        "quantized-dense-only-module",
        "error",
        "the conv, the selector hidden_projection or a codebook is quantized; engines build them dense",
    ),
    Code(
        "DF222",
        "quant-aux-missing",
        "error",
        "a quantized module lacks its packed weight, a scale, a global scale or a zero point",
    ),
    Code(
        "DF223",
        "quant-aux-inconsistent",
        "error",
        "a quantized module's tensors have shapes or dtypes its scheme does not give",
    ),
    Code(
        "DF224",
        "dense-by-config-stored-quantized",
        "error",
        "the quantization config keeps a module dense but it is stored quantized",
    ),
    Code(
        "DF225",
        "quantized-by-config-stored-dense",
        "error",
        "the quantization config quantizes a module but it is stored dense",
    ),
    Code(
        "DF226",
        "ignore-matches-nothing",
        "warning",
        "an ignore / exclude_modules entry matches no module of the drafter",
    ),
    Code(
        "DF227",
        "quantized-without-config",
        "error",
        "quantized tensors but no quantization_config; engines build dense modules",
    ),
    Code(
        "DF228",
        "quant-method-unmodelled",
        "warning",
        "a quantization method this toolkit does not model; its modules are not checked",
    ),
    Code("DF229", "quant-config-invalid", "error", "the quantization config is malformed"),
    Code(
        "DF230",
        "derived-tensor-different",
        "error",
        "diff: a derived tensor is not its reference (random, zeroed, transposed, swapped)",
    ),
    Code(
        "DF231",
        "derived-tensor-missing",
        "error",
        "diff: a reference tensor is absent from the derived checkpoint",
    ),
    Code("DF232", "derived-tensor-extra", "info", "diff: a derived tensor the reference does not have"),
    Code(
        "DF233",
        "derived-tensor-noise",
        "info",
        "diff: tensors differ within the quantization noise their scheme predicts",
    ),
    Code(
        "DF235",
        "derived-config-changes-engine",
        "error",
        "diff: an engine builds another drafter from the derived config than from the reference's (causality, taps, block, mask, V scale, ...)",
    ),
    Code(
        "DF234",
        "quant-pattern-not-evaluated",
        "error",
        "a quantization_config pattern was not evaluated (exponential backtracking, too long, too many); it is treated as matching nothing",
    ),
    # DF3xx v1 / v2 identity
    Code(
        "DF301",
        "v2-tensors-under-v1",
        "error",
        "a v1 architecture over a file carrying conv / selector tensors: a v1 loader drops them",
    ),
    Code(
        "DF302",
        "v2-tensors-missing",
        "error",
        "a v2 architecture whose file lacks the conv / selector tensors",
    ),
    Code(
        "DF303",
        "version-contradiction",
        "error",
        "config fields say one DFlash version and the architecture the other",
    ),
    Code(
        "DF304",
        "not-dflash",
        "error",
        "the config describes another drafter (DSpark, EAGLE-3, ...) or no drafter",
    ),
    Code(
        "DF305",
        "assistant-dialect",
        "info",
        "DFlash v1 in the assistant export dialect (encoder.* names); which engines load those names",
    ),
    # DF4xx causality
    Code("DF401", "engines-disagree", "warning", "engines resolve a layer's in-block causality differently"),
    Code("DF402", "causal-keys-conflict", "warning", "top-level is_causal and dflash_config.causal disagree"),
    Code(
        "DF403",
        "causality-unstated",
        "warning",
        "a DFlash2 config with sliding layers and no causality key: engines run them causal",
    ),
    Code(
        "DF404",
        "exllamav3-taps-differ",
        "warning",
        "exllamav3 taps other target layers than vLLM (DFlash v1's tap_shift of 1)",
    ),
    # DF5xx pairing with the target
    Code("DF501", "vocab-mismatch", "error", "draft vocab_size differs from the target's"),
    Code(
        "DF502",
        "fc-width-mismatch",
        "error",
        "fc input width differs from target hidden size x number of taps",
    ),
    Code("DF503", "tap-beyond-target", "error", "a tap id is not a layer of the target"),
    Code(
        "DF504",
        "num-target-layers-mismatch",
        "error",
        "num_target_layers differs from the target's layer count",
    ),
    Code("DF505", "mask-id-outside-target", "error", "mask_token_id is outside the target vocabulary"),
    Code("DF506", "mask-id-special", "error", "mask_token_id equals the target's pad or eos id"),
    Code(
        "DF507",
        "quantized-target-head",
        "warning",
        "the target's lm_head is quantized; DFlash2 needs a dense one",
    ),
    Code("DF508", "target-unreadable", "error", "the target's config.json is missing or unreadable"),
    Code(
        "DF509",
        "tokenizer-mismatch",
        "error",
        "the drafter records another tokenizer fingerprint than the target's tokenizer has",
    ),
    Code(
        "DF510",
        "special-id-not-a-token",
        "warning",
        "mask_token_id or a bos / eos / pad id of the drafter is not a token of the target's tokenizer",
    ),
    Code(
        "DF511", "target-tokenizer-unreadable", "warning", "the target's tokenizer is there but does not read"
    ),
    Code(
        "DF520",
        "tokenizer-record-malformed",
        "error",
        "the drafter records a target-tokenizer fingerprint that is not a v1 digest (64 lower-case hex "
        "digits)",
    ),
    # DF6xx files and shards
    Code("DF601", "no-weights", "error", "no .safetensors weights in the checkpoint"),
    Code("DF602", "pickle-file", "warning", "a pickle file (.bin / .pt); reported, never loaded"),
    Code("DF603", "bad-header", "error", "a safetensors header is malformed or lies about the data"),
    Code("DF604", "shard-missing", "error", "the index names a shard that is not there"),
    Code("DF605", "tensor-in-two-shards", "error", "a tensor appears in more than one shard"),
    Code(
        "DF606", "index-disagrees", "error", "model.safetensors.index.json disagrees with the shard headers"
    ),
    Code(
        "DF607",
        "unsafe-path",
        "error",
        "a shard name is absolute, climbs out, or links outside the checkpoint",
    ),
    Code("DF608", "bad-index", "error", "model.safetensors.index.json is not a valid index"),
    Code("DF609", "unindexed-shard", "warning", "a .safetensors file that the index does not list"),
    Code(
        "DF610",
        "gguf-file",
        "info",
        "a GGUF file; this toolkit checks the safetensors checkpoint only",
        status="deprecated",
    ),  # GGUF files are checked now: DF912 and the DF9xx family
    Code("DF611", "non-finite-weights", "error", "NaN or Inf values inside a weight (found by --scan)"),
    Code(
        "DF613",
        "drafter-unreadable",
        "error",
        "audit: a drafter could not be read at all; its message says why",
    ),
    Code(
        "DF612",
        "drafter-in-subfolder",
        "info",
        "the folder given is not a drafter; its one subfolder that is was checked",
    ),
    Code(
        "DF620",
        "card-contradicts-config",
        "error",
        "README.md front matter names another base_model or DFlash version than config.json",
    ),
    Code(
        "DF621",
        "card-completed",
        "info",
        "push added the missing model card metadata (base_model, relation, license, tags, library_name, pipeline_tag)",
    ),
    Code(
        "DF622",
        "card-library-cannot-load",
        "warning",
        "README.md's library_name is a library that compat says does not load the drafter",
    ),
    Code(
        "DF645",
        "card-unreadable",
        "error",
        "README.md's front matter is not YAML push can read (a syntax error, aliases past the budget, "
        "too large or too deep)",
    ),
    Code(
        "DF631",
        "mask-embedding-ignored",
        "warning",
        "the engine reads no mask embedding (file or tensor) the drafter ships: it embeds mask slots with the target's row",
    ),
    Code(
        "DF630",
        "mask-embedding-sidecar",
        "warning",
        "a mask_embedding.pt beside the safetensors: the learned mask row, read by some engines only",
    ),
    # DF7xx smoke forward (dflash2_ckpt.smoke; needs the [smoke] extra)
    Code(
        "DF701",
        "tensor-not-consumed",
        "error",
        "a tensor in the file that no parameter of the drafter takes; a loader would drop it",
    ),
    Code(
        "DF702",
        "parameter-not-filled",
        "error",
        "a drafter parameter that no tensor in the file fills; it would stay uninitialised",
    ),
    Code("DF703", "non-finite-output", "error", "NaN or Inf in a stage of the smoke forward"),
    Code("DF704", "token-out-of-vocab", "error", "a drafted or embedded token id is outside [0, vocab_size)"),
    Code(
        "DF705",
        "inert-conv",
        "warning",
        "a convolution module changes nothing (identity init): the drafter drafts like DFlash v1",
    ),
    Code(
        "DF706",
        "inert-selector",
        "warning",
        "the candidate selector never changes a drafted path: the drafter drafts like DFlash v1",
    ),
    Code(
        "DF707",
        "identity-equivalence-failed",
        "error",
        "with every convolution at identity the v2 forward differs from the v1 forward of the same trunk",
    ),
    Code(
        "DF708",
        "triton-torch-mismatch",
        "error",
        "a Triton kernel disagrees with its torch reference on the checkpoint's own activations",
    ),
    Code(
        "DF709",
        "q-not-normalised",
        "error",
        "a sampled proposal distribution q does not sum to 1 over the K candidates",
    ),
    Code("DF710", "nondeterministic", "error", "two smoke runs with the same seed drafted different tokens"),
    Code(
        "DF711",
        "random-embedding",
        "info",
        "no target embedding / head available: the smoke drafted with a seeded random one",
    ),
    Code(
        "DF712",
        "smoke-assumption",
        "info",
        "the smoke forward assumed a value the checkpoint does not give (block size, mask id, RoPE scaling)",
    ),
    Code(
        "DF713",
        "tensor-does-not-fit",
        "error",
        "a tensor's shape or dtype cannot fill the drafter parameter of that name",
    ),
    Code(
        "DF714",
        "selector-influence",
        "info",
        "fraction of drafted slots the candidate selector changes, over hundreds of sampled contexts",
    ),
    Code(
        "DF715",
        "conv-influence",
        "info",
        "how much the trained convolutions change the smoke forward when removed",
    ),
    Code("DF716", "partial-smoke", "info", "the smoke ran only the first N draft layers (--layers)"),
    # DF75x acceptance against a real target (dflash2_ckpt.accept; needs the [accept] extra)
    Code(
        "DF750",
        "not-lossless",
        "error",
        "speculative decoding committed a token the target's own greedy decoding does not produce",
    ),
    Code(
        "DF751",
        "not-drafting",
        "error",
        "mean acceptance length below 2.6 tokens per verification step over the first 32 new tokens of every output: the drafter is not drafting",
    ),
    Code(
        "DF752",
        "acceptance-off-expected",
        "error",
        "mean acceptance length outside the expected figure and its tolerance (--expect)",
    ),
    Code(
        "DF753",
        "accept-assumption",
        "info",
        "the accept run relied on something that limits what its figures mean (final-norm tap, few steps)",
    ),
    Code(
        "DF754",
        "near-tie-divergence",
        "warning",
        "the speculative text left the target's greedy text where the target's top two logits tie within float rounding (block vs one-token forward), not through a loop error",
    ),
    Code(
        "DF755",
        "engine-below-reference",
        "error",
        "the serving engine drafts well below the reference loop on the same prompts (tau_engine / tau_reference under the floor)",
    ),
    # DF8xx engine compatibility (dflash2_ckpt.engines; reasons of a `compat` verdict)
    Code("DF800", "engine-unsupported", "info", "this engine release has no such drafter at all"),
    Code(
        "DF801",
        "needs-conversion",
        "info",
        "the engine reads another format or dialect; the convert command produces it",
    ),
    Code(
        "DF802",
        "engine-breakage",
        "error",
        "a bug of this engine release fails every such drafter; no checkpoint can fix it",
    ),
    Code(
        "DF803",
        "engine-required-key",
        "error",
        "the engine refuses to load without a key this checkpoint lacks",
    ),
    Code(
        "DF804",
        "engine-constraint",
        "error",
        "the checkpoint violates a hard constraint of the engine (geometry, causality keys)",
    ),
    Code("DF805", "engine-refused-tensor", "error", "the engine refuses a tensor the checkpoint carries"),
    Code("DF806", "quantized-module-fails", "error", "the engine cannot load this quantized module"),
    Code(
        "DF807",
        "quantized-module-dropped",
        "warning",
        "the engine loads but silently drops or degrades this quantized module",
    ),
    Code(
        "DF808",
        "engine-causality-diverges",
        "warning",
        "the engine runs layers with another in-block causality than the checkpoint means",
    ),
    Code(
        "DF809",
        "engine-silent-default",
        "warning",
        "the engine silently fills a missing key with a value that differs from the checkpoint's intent",
    ),
    Code(
        "DF810",
        "engine-note",
        "info",
        "what serving on this engine implies (draft-token convention, runner, logged defaults)",
    ),
    Code(
        "DF811",
        "format-not-read",
        "error",
        "the engine does not read this format and no conversion to one it reads exists",
    ),
    Code(
        "DF812",
        "quantized-module-must-be-dense",
        "error",
        "a module the engine builds unquantized is stored quantized",
    ),
    Code(
        "DF813",
        "checkpoint-errors",
        "error",
        "verify reports errors this engine would hit; it cannot load the checkpoint",
    ),
    Code(
        "DF814",
        "conversion-refused",
        "error",
        "the engine reads another dialect, and converting to it is refused or would not load",
    ),
    Code(
        "DF815",
        "engine-ignores-attention-key",
        "warning",
        "the engine does not read a sliding-window or attention-sink key the drafter was trained with",
    ),
    Code(
        "DF816",
        "engine-release-unchecked",
        "warning",
        "the engine version asked for is newer or older than every release whose code was checked; it is judged as the nearest checked one",
    ),
    Code(
        "DF830",
        "family-not-loaded",
        "error",
        "this engine release has no model class for the drafter's family",
    ),
    Code(
        "DF831",
        "family-key-ignored",
        "warning",
        "this engine release loads the drafter but ignores a key its family was trained with",
    ),
    Code(
        "DF840",
        "engine-taps-shifted",
        "warning",
        "the engine taps other target layers than target_layer_ids say (a tap shift)",
    ),
    Code(
        "DF841",
        "engine-unverified",
        "info",
        "the engine release ships compiled code only: its verdict is unverified, neither loads nor fails",
    ),
    Code(
        "DF850",
        "dspark-served",
        "info",
        "a DSpark drafter: this engine release registers DSpark drafters; this toolkit does not validate them further",
    ),
    Code(
        "DF851",
        "target-not-read",
        "warning",
        "compat --target: the target's config could not be read, so the pairing checks did not run",
    ),
    # DF9xx GGUF drafters for llama.cpp (docs/engines.md, GGUF)
    Code(
        "DF900",
        "gguf-bad-header",
        "error",
        "a GGUF header is malformed, truncated or lies about the tensor data",
    ),
    Code(
        "DF901",
        "gguf-architecture",
        "error",
        'general.architecture is not "dflash" (fork files say dflash-draft); llama.cpp refuses the file',
    ),
    Code(
        "DF902",
        "gguf-target-layers-missing",
        "error",
        "dflash.target_layers is absent; the llama.cpp loader refuses the file",
    ),
    Code(
        "DF903",
        "gguf-taps-unshifted",
        "error",
        "dflash.target_layers look like the z-lab ids, not ids + 1 (layer inputs)",
    ),
    Code(
        "DF904",
        "gguf-mask-token-missing",
        "error",
        "no tokenizer.ggml.mask_token_id: every slot drafts -1 and nothing is accepted",
    ),
    Code(
        "DF905",
        "gguf-mask-token-differs",
        "error",
        "tokenizer.ggml.mask_token_id differs from the HF drafter's mask_token_id",
    ),
    Code(
        "DF906",
        "gguf-dflash2-metadata-missing",
        "error",
        "DFlash2 tensors present but conv / selector metadata missing or zero",
    ),
    Code(
        "DF907",
        "gguf-top-k-too-large",
        "error",
        "embedding_length < selector_top_k * (selector_top_k + 1); the llama.cpp loader refuses it",
    ),
    Code(
        "DF908",
        "gguf-low-precision",
        "warning",
        "codebooks or conv projections stored below the precision known to hold acceptance",
    ),
    Code("DF909", "gguf-file-type-mismatch", "info", "general.file_type contradicts the tensor types"),
    Code(
        "DF910", "gguf-bias-dropped", "error", "the HF drafter has attention bias tensors that the GGUF lacks"
    ),
    Code(
        "DF911",
        "gguf-key-missing",
        "error",
        "a metadata key the llama.cpp loader requires is absent or of the wrong type",
    ),
    Code(
        "DF912",
        "gguf-beside-safetensors",
        "info",
        "a GGUF file beside a safetensors checkpoint; it is checked on its own",
    ),
    Code(
        "DF913",
        "gguf-tokenizer-missing",
        "warning",
        "no tokenizer.ggml.tokens; llama.cpp needs the target's vocabulary in the drafter",
    ),
    Code(
        "DF915",
        "gguf-window-unknown",
        "warning",
        "a DFlash2 GGUF without sliding-window keys and no record of the source: llama.cpp runs full attention",
    ),
    Code(
        "DF914",
        "gguf-sliding-window-missing",
        "error",
        "the drafter slides but the GGUF lacks dflash.attention.sliding_window / sliding_window_pattern: llama.cpp runs full attention",
    ),
)

# what breaks / how to fix, per code: the finding-codes page (docs/codes.md) and SARIF help are written from it
_ADVICE: dict[str, tuple[str, str]] = {
    # DF1xx config schema
    "DF100": (
        "Nothing can load the drafter: every engine starts from config.json.",
        "Restore config.json as a JSON object (re-download it or re-export the drafter).",
    ),
    "DF101": (
        "The engines reject the field or read a different value than the trainer meant.",
        "Give the field the type and range the message names (`dflash2-ckpt schema` shows them).",
    ),
    "DF102": (
        "The engines refuse to build the drafter without it.",
        "Add the field with the value the trainer used.",
    ),
    "DF103": (
        "The grouped convolution cannot be built; loading fails.",
        "Set conv_group_size to a divisor of hidden_size (the trainer's value).",
    ),
    "DF104": (
        "The convolution reaches past the query block; the drafter cannot run.",
        "Set conv_kernel_size to at most block_size, as the drafter was trained.",
    ),
    "DF105": (
        "The selector asks for more candidates than the vocabulary has; the walk fails.",
        "Set selector_top_k below vocab_size (the trainer's value).",
    ),
    "DF106": (
        "The query block is built from a token id the embedding does not have.",
        "Set mask_token_id to the mask token of the target tokenizer, inside [0, vocab_size).",
    ),
    "DF107": (
        "The drafter reads the wrong target layers, or an engine refuses the ids.",
        "List the tap layer ids the drafter was trained on: unique, increasing, below num_target_layers.",
    ),
    "DF108": (
        "Layers get the wrong attention type or the config does not load.",
        "Give layer_types one entry per draft layer (num_hidden_layers).",
    ),
    "DF109": (
        "A sliding layer without a window attends to everything or fails to build.",
        "Set sliding_window to the window the drafter was trained with.",
    ),
    "DF110": (
        "DFlash2 never samples from the anchor; engines refuse or draft wrongly.",
        "Set sample_from_anchor to false (or drop it) on a DFlash2 drafter.",
    ),
    "DF111": (
        "DFlash2 drafts over the full target vocabulary; a reduced one misindexes tokens.",
        "Set draft_vocab_size equal to vocab_size, or drop it.",
    ),
    "DF112": (
        "Engines read different block sizes: drafts are misaligned with verification.",
        "Keep one block_size (remove the duplicate or make both equal).",
    ),
    "DF113": (
        "The drafter cannot fill its query block; engines guess a token or refuse.",
        "Set mask_token_id to the target tokenizer's mask token.",
    ),
    "DF114": (
        "Engines fall back to their own default block size, which may not be the trained one.",
        "Set block_size to the trained value.",
    ),
    "DF115": (
        "Nothing breaks today; the old keys may stop being read.",
        "Convert to the current nested dialect (`dflash2-ckpt convert --to nested`) when convenient.",
    ),
    "DF116": (
        "Nothing: engines ignore the key and convert keeps it verbatim.",
        "Remove the key if it is a typo of a known one.",
    ),
    "DF117": (
        "Parsers keep the last value silently; another tool may keep the first.",
        "Keep one occurrence of the key.",
    ),
    "DF118": (
        "Attention cannot be built (heads do not split into key/value groups).",
        "Set num_key_value_heads to a divisor of num_attention_heads, as trained.",
    ),
    "DF119": (
        "The engines build a SiLU MLP whatever the config says: outputs differ from training.",
        "Use hidden_act silu, or serve with a runtime that implements this activation.",
    ),
    "DF120": (
        "Nothing if the target is the one the drafter borrows from; the checks use its vocabulary.",
        "Pass --target so vocab_size comes from the target, or record vocab_size in the config "
        "(`verify --target T --fix --unsafe-fixes` writes the target's).",
    ),
    "DF121": (
        "Those engine releases act on the key; this toolkit neither checks its value nor judges its effect.",
        "Make sure the value is the one the drafter was trained with; remove it only if it was not.",
    ),
    "DF130": (
        "speculators refuses to load the flat config ('Field required').",
        "Add speculators_config.verifier (convert with --target or --verifier-name writes it).",
    ),
    "DF131": (
        "vLLM reads layer_ids, other engines target_layer_ids: they tap different layers.",
        "Make dflash_config.layer_ids and target_layer_ids equal, or keep one.",
    ),
    "DF132": (
        "vLLM windows sliding layers by swa_window_size, SGLang, mlx-vlm and the reference by sliding_window: "
        "attention differs between them.",
        "Make swa_window_size equal to sliding_window, or drop swa_window_size.",
    ),
    "DF160": (
        "That engine stops at load: the architecture is not supported.",
        "Set architectures to the name the engine registers (DFlashDraftModel, DFlash2DraftModel).",
    ),
    "DF161": (
        "Every draft position is shifted by one (acceptance near 1.0), or the engine refuses the drafter.",
        "Serve it with an engine that reads the anchor-first layout, or retrain fill-in.",
    ),
    "DF162": (
        "vLLM drafts more tokens than the block holds: the extra positions are garbage or it fails.",
        "Set speculative_tokens to block_size - 1.",
    ),
    # DF2xx tensors
    "DF140": (
        "vLLM 0.34 reads the list as layer indices: layers 0 and 1 lose RoPE, the rest keep it.",
        "Write the indices of the layers trained without RoPE, e.g. [1, 3].",
    ),
    "DF141": (
        "vLLM 0.34's context-KV precompute indexes each listed layer: IndexError, or RoPE stays on.",
        "List only draft layer indices in [0, num_hidden_layers).",
    ),
    "DF142": (
        "The family's model class raises at load (it shares the target's lm_head).",
        "Set draft_vocab_size to the target's vocab_size.",
    ),
    "DF201": (
        "The engine fails to load, or leaves the parameter at its initial value.",
        "Re-export the checkpoint with every tensor of the layout.",
    ),
    "DF202": (
        "Nothing loads it: wasted bytes, or a sign of a renamed module.",
        "Remove the tensor, or rename it to the name the layout expects (`verify --fix` renames a "
        "`model.`-prefixed one in the header).",
    ),
    "DF203": (
        "Loading fails with a size mismatch, or the config does not describe these weights.",
        "Fix the config field that implies the shape, or re-export the tensor.",
    ),
    "DF204": (
        "An integer weight is not a weight an engine can multiply with.",
        "Store weights in a floating-point dtype (bf16, fp16, fp32).",
    ),
    "DF205": (
        "Usually nothing; some loaders cast everything to one dtype and lose precision.",
        "Store the weights in one dtype unless the mix is intended.",
    ),
    "DF206": (
        "vLLM does not find the codebooks and drafts without them.",
        "Rename them without the .weight suffix (`verify --fix` does, in the header; so does "
        "`dflash2-ckpt convert`).",
    ),
    "DF207": (
        "Nothing: the engines use the target's copies; the bytes are dead weight.",
        "Drop them to save space (convert drops them).",
    ),
    "DF208": (
        "Engines expecting bare names do not find the weights.",
        "Convert to the nested dialect (`dflash2-ckpt convert --to nested`).",
    ),
    "DF209": (
        "No longer emitted (deprecated): quantized drafters are judged per module by DF220-DF229.",
        "Nothing to fix for this code.",
    ),
    "DF210": (
        "DFlash2 ignores the maps; a v1 loader may use them against the full vocabulary.",
        "Drop t2d / d2t on a DFlash2 drafter.",
    ),
    "DF211": (
        "Loaders that trust config dtype cast the weights on load.",
        "Set torch_dtype to the stored dtype.",
    ),
    "DF212": (
        "Nothing: the drafter's own head is loaded with its vocabulary maps.",
        "Nothing to fix; informational.",
    ),
    "DF213": (
        "The maps cannot index the vocabularies: drafted ids are wrong or loading fails.",
        "Re-export d2t / t2d as int64 with the shapes the message names.",
    ),
    "DF240": (
        "No released engine builds expert MLPs for a DFlash2 drafter: loading fails.",
        "Wait for an engine release that loads MoE DFlash2 drafters.",
    ),
    "DF214": (
        "The maps load as zeros: every drafted token maps to token 0.",
        "Ship the d2t / t2d tensors the trainer wrote.",
    ),
    "DF215": (
        "The draft head covers ids the target does not have.",
        "Set draft_vocab_size to at most the target vocabulary.",
    ),
    "DF216": (
        "Drafted ids map outside the target vocabulary or inconsistently: wrong tokens.",
        "Re-export the maps from the trainer's vocabulary selection.",
    ),
    "DF217": (
        "The reduced-vocabulary head cannot be loaded or multiplied.",
        "Ship lm_head.weight as a float [draft_vocab_size, hidden_size] tensor.",
    ),
    "DF218": (
        "The drafter's tokens land on the wrong target ids: it loads and drafts nothing useful "
        "(a GGUF with HF offsets in d2t: τ 1.03 against 7.75 in llama.cpp b11434).",
        "Re-export d2t from the trainer's vocabulary selection; in a GGUF store absolute ids "
        "(`dflash2-ckpt convert --to gguf` does), in safetensors speculators' offsets.",
    ),
    "DF220": (
        "Nothing by itself; `compat` says which engines load each scheme.",
        "Nothing to fix; check `dflash2-ckpt compat` for the engines you serve with.",
    ),
    "DF221": (
        "Engines build these modules dense: the quantized weights do not load.",
        "Keep the conv, hidden_projection and codebooks dense (add them to the ignore list) and re-quantize.",
    ),
    "DF222": (
        "The quantized module cannot be dequantized; loading fails.",
        "Re-export with every tensor the scheme stores (packed weight, scales, zero points).",
    ),
    "DF223": (
        "The kernels read the tensors with the wrong layout: garbage weights or a load error.",
        "Re-quantize with a tool that writes the scheme's layout.",
    ),
    "DF224": (
        "Engines build the module dense and cannot load the quantized tensors.",
        "Make the quantization config and the stored module agree (quantize it, or store it dense).",
    ),
    "DF225": (
        "Engines build a quantized module and find dense tensors: loading fails.",
        "Add the module to the ignore list, or store it quantized.",
    ),
    "DF226": (
        "Nothing directly; a misspelt entry may leave a module quantized that should be dense.",
        "Fix or remove the entry.",
    ),
    "DF227": (
        "Engines build dense modules and cannot load packed weights.",
        "Ship the quantization_config the quantizer wrote.",
    ),
    "DF228": (
        "Nothing known; its modules are not checked.",
        "Verify the drafter with the engine itself, or report the method to the toolkit.",
    ),
    "DF229": (
        "Engines refuse the config or misread which modules are quantized.",
        "Fix the quantization_config field the message names.",
    ),
    "DF230": (
        "The derived drafter is a different model: acceptance collapses.",
        "Re-derive it from the reference (re-quantize or re-export).",
    ),
    "DF231": (
        "The derived drafter lacks a weight: it fails to load or drafts without it.",
        "Re-export the derived checkpoint with every reference tensor.",
    ),
    "DF232": ("Nothing usually; an extra tensor may be a leftover.", "Drop it if nothing loads it."),
    "DF233": (
        "Nothing: the difference is what the scheme's rounding predicts.",
        "Nothing to fix; informational.",
    ),
    "DF235": (
        "That engine runs another drafter than the reference describes: it loads and drafts, and only "
        "acceptance falls.",
        "Carry the reference's config keys into the derived checkpoint (or convert it "
        "with `dflash2-ckpt convert`, which checks every engine).",
    ),
    "DF234": (
        "The pattern is treated as matching nothing, so the modules it names are judged unmatched.",
        "Rewrite the pattern without nested repetition, shorter, or as plain module names.",
    ),
    # DF3xx v1 / v2 identity
    "DF301": (
        "A v1 loader silently drops the conv and selector weights and drafts worse.",
        "Set the DFlash2 architecture, or strip the v2 tensors if it really is v1.",
    ),
    "DF302": (
        "A v2 loader fails on missing tensors, or drafts with initial conv / selector weights.",
        "Ship the conv and selector tensors, or declare the v1 architecture.",
    ),
    "DF303": (
        "Engines load it as one version and read the fields of the other.",
        "Make the architecture and the version fields agree.",
    ),
    "DF304": (
        "This toolkit's checks do not apply; DFlash engines will not load it.",
        "Check it with the tool for its own drafter family.",
    ),
    "DF305": (
        "Only engines that know the assistant export load its encoder.* names.",
        "Convert to the nested dialect for the other engines (`dflash2-ckpt compat` names them).",
    ),
    # DF4xx causality
    "DF401": (
        "Some engine runs a layer with another causality than trained: acceptance drops silently.",
        "State causality explicitly (is_causal and dflash_config.causal) as the message says "
        "(`verify --fix` writes them, where one value holds for every layer).",
    ),
    "DF402": (
        "Engines read different keys and run different causality.",
        "Make is_causal and dflash_config.causal agree.",
    ),
    "DF403": (
        "Engines run the sliding layers causal, which may not be what was trained.",
        "Set is_causal (and dflash_config.causal) explicitly (`verify --fix --unsafe-fixes` writes "
        "false, the DFlash2 training default).",
    ),
    "DF404": (
        "exllamav3 feeds a DFlash v1 drafter the hidden states one layer deeper than vLLM, SGLang and the "
        "z-lab reference: acceptance drops on one side.",
        "Pin dflash_config.tap_shift: 0 (`verify --engine exllamav3 --fix --unsafe-fixes` writes it); unsafe, "
        "as exllamav3 found +1 better on some published checkpoints.",
    ),
    # DF5xx pairing with the target
    "DF501": (
        "Drafted ids index another vocabulary: wrong tokens, nothing accepted.",
        "Pair the drafter with the target it was trained for, or fix vocab_size.",
    ),
    "DF502": (
        "The fc projection cannot take the target's hidden states: loading or the first step fails.",
        "Use the target the drafter was trained for (hidden size and number of taps).",
    ),
    "DF503": (
        "The drafter taps a layer the target does not have: it fails at run time.",
        "Use the right target, or fix the tap ids.",
    ),
    "DF504": (
        "Tap ids are read against another layer count; engines may refuse or tap wrong layers.",
        "Set num_target_layers to the target's num_hidden_layers.",
    ),
    "DF505": (
        "The query block uses a token the target cannot embed.",
        "Set mask_token_id inside the target vocabulary.",
    ),
    "DF506": (
        "Mask slots look like padding or end of text: drafting stops or is masked out.",
        "Use a dedicated mask token id.",
    ),
    "DF507": (
        "DFlash2's selector reads the target head; a quantized head gives other candidates.",
        "Serve with a dense lm_head on the target, or accept lower acceptance.",
    ),
    "DF508": (
        "Nothing of the pairing can be checked.",
        "Pass a --target directory or repo whose config.json reads.",
    ),
    "DF509": (
        "The same ids stand for other tokens: the drafter proposes wrong tokens and nearly nothing is "
        "accepted, though everything loads (same vocab_size).",
        "Pair the drafter with the target whose tokenizer it was trained for; re-convert with that --target "
        "to record its fingerprint.",
    ),
    "DF510": (
        "The drafter uses an id the target's tokenizer has no token for (a padding row of the embedding): "
        "a sign it was trained for another tokenizer; mask slots embed an untrained row.",
        "Use the target the drafter was trained for, or set the id to the target's token (a dedicated mask "
        "token for mask_token_id).",
    ),
    "DF511": (
        "Nothing: the tokenizer pairing is not checked.",
        "Fix or re-download the target's tokenizer.json.",
    ),
    "DF520": (
        "The record cannot be compared with any tokenizer, so a drafter made for another tokenizer "
        "would pass unseen (the special-id checks still run with --target).",
        "Re-convert with --target TARGET to record the fingerprint, or remove the key; the value is "
        "the bare 64-digit hex digest, without a `sha256:` prefix.",
    ),
    # DF6xx files and shards
    "DF601": ("There is nothing to load.", "Ship the .safetensors weights (pickle files are not read)."),
    "DF602": (
        "Nothing here; loading a pickle can run code, so it is never read.",
        "Ship safetensors instead and drop the pickle file.",
    ),
    "DF603": ("Loaders fail or read wrong bytes.", "Re-save or re-download the file."),
    "DF604": ("Loading fails on the missing shard.", "Upload the shard, or regenerate the index."),
    "DF605": ("Which copy loads depends on the loader.", "Keep each tensor in one shard."),
    "DF606": (
        "Loaders that trust the index look for tensors in the wrong shard.",
        "Regenerate model.safetensors.index.json from the shards.",
    ),
    "DF607": (
        "Reading it could leave the checkpoint directory; it is refused.",
        "Use plain shard names inside the checkpoint directory.",
    ),
    "DF608": ("Sharded loading fails.", "Regenerate model.safetensors.index.json."),
    "DF609": ("Loaders that follow the index ignore this file.", "Add it to the index, or remove it."),
    "DF610": (
        "No longer emitted (deprecated): GGUF files are checked (DF912, DF9xx).",
        "Nothing to fix for this code.",
    ),
    "DF611": (
        "The drafter outputs NaN / Inf: nothing is accepted.",
        "Re-export from a healthy training checkpoint.",
    ),
    "DF612": (
        "Nothing: the drafter in the subfolder was checked.",
        "Pass --subfolder (or org/name/subfolder) to name it explicitly.",
    ),
    "DF613": ("The drafter could not be judged at all.", "Run `dflash2-ckpt verify` on it for the reason."),
    "DF620": (
        "The model card misleads users about the base model or version.",
        "Fix README.md front matter to match config.json, or let push write it.",
    ),
    "DF621": ("Nothing: push filled in the card metadata.", "Nothing to fix; review the card."),
    "DF622": (
        "The Hub shows a loading snippet for a library that refuses the drafter; users copy it and fail.",
        "Remove library_name from README.md (push then writes one only where compat says it loads).",
    ),
    "DF645": (
        "push cannot read the card's metadata, so it can neither check it against the config nor "
        "complete it; the Hub would show the card without metadata.",
        "Fix the front matter between the `---` lines (the message names the line), without YAML "
        "anchors and aliases.",
    ),
    "DF631": (
        "The engine drafts with the target's near-zero mask row: nothing raises, acceptance falls to ~1.4.",
        "Serve it with vLLM (reads mask_embedding.pt) or exllamav3 (reads a mask_embedding tensor).",
    ),
    "DF630": (
        "Engines that read no mask embedding draft with the target's near-zero mask row (acceptance ~1.4).",
        "Keep the .pt for vLLM; for exllamav3 save it as a `mask_embedding` tensor (docs/compat.md).",
    ),
    # DF7xx smoke forward
    "DF701": (
        "A loader drops the tensor: the weights the trainer meant are not used.",
        "Rename the tensor to the parameter it fills, or remove it.",
    ),
    "DF702": (
        "The parameter stays at its initial value: drafts are wrong.",
        "Ship the tensor that fills it.",
    ),
    "DF703": (
        "The drafter outputs NaN / Inf: nothing is accepted.",
        "Check the weights (`verify --scan`) and the config's norms and scales.",
    ),
    "DF704": (
        "The drafter proposes tokens the target cannot take.",
        "Fix vocab_size / mask_token_id, or the vocabulary maps.",
    ),
    "DF705": (
        "The v2 convolution adds nothing: the drafter drafts like v1.",
        "Export the trained conv weights, not the initialisation.",
    ),
    "DF706": (
        "The v2 selector adds nothing: the drafter drafts like v1.",
        "Export the trained selector weights.",
    ),
    "DF707": (
        "The v2 forward is not v1 plus the v2 modules: an implementation or weight error.",
        "Check the conv weights and the layer layout against the trainer.",
    ),
    "DF708": (
        "Triton kernels compute something else than the reference on these activations.",
        'Report it with the checkpoint; draft with kernels="torch" (the library) meanwhile.',
    ),
    "DF709": (
        "The proposal distribution is not a distribution: sampling is biased.",
        "Check the selector weights and temperature handling.",
    ),
    "DF710": (
        "Runs are not reproducible: drafts change between identical runs.",
        'Report it with the device and versions; draft with kernels="torch" (the library) meanwhile.',
    ),
    "DF711": (
        "Nothing: the smoke ran with a seeded random embedding; results do not reflect real tokens.",
        "Pass --target with the target's weights for real embeddings.",
    ),
    "DF712": (
        "Nothing; the smoke assumed a value the config should state.",
        "State the value in config.json.",
    ),
    "DF713": (
        "Loading fails on a size or dtype mismatch.",
        "Re-export the tensor with the parameter's shape and dtype.",
    ),
    "DF714": ("Nothing: how much the selector changes drafts.", "Nothing to fix; informational."),
    "DF715": (
        "Nothing: how much the trained convolutions change the forward.",
        "Nothing to fix; informational.",
    ),
    "DF716": ("Nothing: only the first layers ran.", "Drop --layers for a full smoke."),
    # DF75x acceptance
    "DF750": (
        "Speculative decoding changed the output: the loop or the pair is broken.",
        "Check the drafter / target pairing and the engine; report it with the prompt.",
    ),
    "DF751": (
        "The drafter barely drafts: speculative decoding is slower than none.",
        "Check the pairing, causality (DF4xx) and the tap ids; retrain if needed.",
    ),
    "DF752": (
        "Acceptance is not what was expected.",
        "Check what changed (weights, engine, config), or update --expect.",
    ),
    "DF753": (
        "Nothing; the figures mean less than they seem.",
        "Run more prompts or steps as the message says.",
    ),
    "DF754": (
        "Nothing: a near-tie in the target's logits, not a loop error.",
        "Nothing to fix; informational.",
    ),
    "DF755": (
        "The serving engine drafts well below the reference: a conversion or engine problem.",
        "Check the GGUF conversion and the engine version; compare with `dflash2-ckpt compat`.",
    ),
    # DF8xx engine compatibility
    "DF800": (
        "This engine release cannot serve the drafter at all.",
        "Use a release that supports it (`dflash2-ckpt compat` lists them).",
    ),
    "DF801": ("The engine reads another dialect or format.", "Run the convert command `compat` prints."),
    "DF802": ("Every such drafter fails on this release.", "Use another release of the engine."),
    "DF803": ("The engine refuses to load.", "Add the key the message names."),
    "DF804": (
        "The engine refuses to load.",
        "Change the checkpoint to meet the constraint, or use another engine.",
    ),
    "DF805": (
        "The engine refuses to load.",
        "Remove or convert the tensor the message names, or use another engine.",
    ),
    "DF806": (
        "The engine cannot load this quantized module.",
        "Store the module dense or in a scheme the engine supports.",
    ),
    "DF807": (
        "The engine silently drops or degrades the module: lower acceptance.",
        "Store the module dense or in a scheme the engine supports.",
    ),
    "DF808": (
        "The engine runs another causality than meant: acceptance drops silently.",
        "State causality explicitly for this engine, as the message says.",
    ),
    "DF809": ("The engine runs with a value the checkpoint did not intend.", "Set the key explicitly."),
    "DF810": ("Nothing; how to serve on this engine.", "Nothing to fix; read the note."),
    "DF811": (
        "The engine cannot read the drafter and no conversion reaches a format it reads.",
        "Use another engine.",
    ),
    "DF812": (
        "The engine builds the module dense and cannot load the quantized tensors.",
        "Keep the module dense.",
    ),
    "DF813": (
        "The engine fails on the errors verify reports.",
        "Fix the verify errors first (`dflash2-ckpt verify`).",
    ),
    "DF814": (
        "The advised conversion is refused or its result would not load.",
        "Fix what the refusal names, then convert.",
    ),
    "DF815": (
        "The engine attends without the window or sinks the drafter was trained with: acceptance drops.",
        "Serve on a release that reads the key (`dflash2-ckpt compat` names them).",
    ),
    "DF816": (
        "Nothing known: the verdict is that of the nearest release whose code was read, and the release "
        "asked for may load the drafter differently.",
        "Check the release (`python -m dflash2_ckpt.engines.wheels check NAME==VERSION`) or serve on a "
        "checked one (`dflash2-ckpt engines` lists them).",
    ),
    "DF830": (
        "The engine raises while resolving the architecture or loading the family's tensors.",
        "Serve on a release that registers the family (`dflash2-ckpt compat` names them).",
    ),
    "DF831": (
        "The drafter runs, but not as trained (e.g. RoPE on its NoPE layers): acceptance drops.",
        "Serve on a release that reads the key (`dflash2-ckpt compat` names them).",
    ),
    "DF840": (
        "The drafter is fed other hidden states than it was trained on: acceptance drops, nothing raises.",
        "Pin the shift in the config (dflash_config.tap_shift: 0 for exllamav3).",
    ),
    "DF841": (
        "Nothing known: the release's source cannot be read, so no rule of it was checked.",
        "Try it; the verdict changes when its source is published.",
    ),
    "DF850": (
        "Nothing known: the engine serves DSpark drafters; this toolkit checks no DSpark rule.",
        "Check the drafter with the engine itself.",
    ),
    "DF851": (
        "The verdicts do not include the pairing with the target.",
        "Give --target as a local directory holding the target's config.json.",
    ),
    # DF9xx GGUF
    "DF900": (
        "llama.cpp fails to read the file.",
        "Re-convert (`dflash2-ckpt convert --to gguf`) or re-download it.",
    ),
    "DF901": (
        "llama.cpp refuses the file.",
        "Re-convert with `dflash2-ckpt convert --to gguf` (writes architecture dflash).",
    ),
    "DF902": ("llama.cpp refuses the file.", "Re-convert; the converter writes dflash.target_layers."),
    "DF903": (
        "llama.cpp taps the layer before the trained one: acceptance collapses.",
        "Re-convert; the converter shifts the ids by one.",
    ),
    "DF904": (
        "Every slot drafts -1 and nothing is accepted.",
        "Re-convert with the target's tokenizer (--target or --tokenizer-from).",
    ),
    "DF905": ("The GGUF masks with another token than trained.", "Re-convert from the HF drafter."),
    "DF906": (
        "llama.cpp loads the v2 tensors without their settings.",
        "Re-convert; the converter writes the conv and selector metadata.",
    ),
    "DF907": (
        "llama.cpp refuses the file.",
        "Use a smaller selector_top_k or a drafter with a larger embedding.",
    ),
    "DF908": (
        "Acceptance may drop with the codebooks or conv stored this low.",
        "Convert with --outtype bf16 / f16 / q8_0 for those tensors.",
    ),
    "DF909": (
        "Nothing for loading; tools reading file_type report the wrong type.",
        "Re-convert to write a consistent general.file_type.",
    ),
    "DF910": (
        "llama.cpp runs attention without the biases: outputs differ from the trained drafter.",
        "Serve the HF drafter on an engine that loads attention biases (llama.cpp refuses them: DF805).",
    ),
    "DF911": ("llama.cpp refuses the file.", "Re-convert; the converter writes every required key."),
    "DF912": (
        "Nothing: the GGUF file is checked on its own.",
        "Nothing to fix; verify the GGUF path to see its findings.",
    ),
    "DF913": (
        "llama.cpp has no vocabulary for the drafter.",
        "Re-convert with --target (tokenizer.json) or --tokenizer-from TARGET.gguf.",
    ),
    "DF915": (
        "If the drafter was trained on a window, llama.cpp attends over the whole context: acceptance drops.",
        "Re-convert from the safetensors with `dflash2-ckpt convert --to gguf`.",
    ),
    "DF914": (
        "llama.cpp attends over the whole context where the drafter was trained on a window: acceptance drops.",
        "Re-convert with `dflash2-ckpt convert --to gguf`, which writes both keys.",
    ),
}

REGISTRY: dict[str, Code] = {
    c.code: replace(c, breaks=_ADVICE[c.code][0], fix=_ADVICE[c.code][1]) for c in _TABLE
}

# the families, longest prefix first: the sections of docs/codes.md and the SARIF rules' family
FAMILIES: tuple[tuple[str, str], ...] = (
    ("DF1", "config schema"),
    ("DF2", "tensors"),
    ("DF3", "v1/v2 identity"),
    ("DF4", "causality"),
    ("DF5", "pairing with the target"),
    ("DF6", "files, shards and the model card"),
    ("DF75", "acceptance"),
    ("DF7", "smoke forward"),
    ("DF8", "engine compatibility"),
    ("DF9", "GGUF"),
)


def family_of(code: str) -> tuple[str, str]:
    """(prefix, title) of the family a code belongs to."""
    return max(((p, t) for p, t in FAMILIES if code.startswith(p)), key=lambda f: len(f[0]))


def all_codes() -> list[Code]:
    return sorted(REGISTRY.values(), key=lambda c: c.code)


def anchor(code: str) -> str:
    """The code's anchor in docs/codes.md: DF206 -> df206."""
    return code.lower()


def markdown_table() -> str:
    """Every code as the Markdown table of docs/codes.md (dev/doc_tables.py writes it there)."""
    rows = ["| code | name | severity | meaning |", "|---|---|---|---|"]
    # one anchor per code (#df206): SARIF rules link each alert to its own row (report/sarif.py)
    rows += [
        f'| <a id="{anchor(c.code)}"></a>{c.code} | {c.name} | {c.severity} | {c.summary} |'
        for c in all_codes()
    ]
    return "\n".join(rows)


def page(c: Code) -> list[str]:
    """A code's section of docs/codes.md (dev/doc_tables.py) and its `dflash2-ckpt codes CODE` page."""
    status = " (deprecated)" if c.status == "deprecated" else ""
    return [
        f"### {c.code} {c.name}",
        "",
        f"{c.severity}{status} · {c.summary}",
        "",
        f"- **What breaks:** {c.breaks}",
        f"- **Fix:** {c.fix}",
    ]


def help_uri(code: str) -> str:
    """The code's row in docs/codes.md of the released version (SARIF's helpUri, the codes page)."""
    from .version import docs_url  # lazy: version loads only on this path

    return f"{docs_url('codes.md')}#{anchor(code)}"


def as_json(c: Code) -> dict[str, str]:
    return {
        "code": c.code,
        "name": c.name,
        "severity": c.severity,
        "status": c.status,
        "summary": c.summary,
        "breaks": c.breaks,
        "fix": c.fix,
        "help_uri": help_uri(c.code),
    }


def close_matches(text: str, n: int = 3) -> list[str]:
    """Registered codes (or names) near `text`, for a usage error's suggestion: DF41 -> DF401, DF410."""
    import difflib  # lazy: difflib loads only on this path

    names = {c.name: c.code for c in REGISTRY.values()}
    typed = text.upper()
    # equally close codes: the one sharing the longest prefix first (DF41 -> DF401 before DF841)
    near = difflib.get_close_matches(typed, list(REGISTRY), n=len(REGISTRY), cutoff=0.75)
    by_code = sorted(
        near,
        key=lambda c: (
            -difflib.SequenceMatcher(None, typed, c).ratio(),
            -len(os.path.commonprefix([typed, c])),
            c,
        ),
    )[:n]
    by_name = [names[m] for m in difflib.get_close_matches(text.lower(), list(names), n=n, cutoff=0.8)]
    return list(dict.fromkeys(by_code + by_name))[:n]
