"""The registry of finding codes: the single source of truth for code, name, severity and meaning.

Codes never change meaning once released and are never reused; retire one by marking it deprecated.
Families: DF1xx config schema, DF2xx tensors, DF3xx v1/v2 identity, DF4xx causality,
DF5xx pairing with the target, DF6xx files and shards, DF7xx smoke forward (DF75x acceptance),
DF8xx engine compatibility (one verdict per engine profile, dflash2_ckpt.engines), DF9xx GGUF (DF900-DF949).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Code:
    code: str
    name: str
    severity: Severity
    summary: str
    status: Literal["stable", "deprecated"] = "stable"


_TABLE: tuple[Code, ...] = (
    # DF1xx config schema
    Code("DF100", "config-unreadable", "error", "config.json is missing, not JSON, or not a JSON object"),
    Code("DF101", "invalid-field", "error", "a config field has the wrong type or violates its constraint"),
    Code("DF102", "missing-field", "error", "a field the engines require is absent"),
    Code("DF103", "group-size-not-divisor", "error", "conv_group_size does not divide hidden_size"),
    Code("DF104", "taps-exceed-block", "error", "conv_kernel_size is larger than block_size"),
    Code("DF105", "top-k-exceeds-vocab", "error", "selector_top_k is larger than vocab_size"),
    Code("DF106", "mask-id-out-of-vocab", "error", "mask_token_id is not inside [0, vocab_size)"),
    Code("DF107", "tap-ids-invalid", "error", "target layer ids are not unique, increasing and below num_target_layers"),
    Code("DF108", "layer-types-length", "error", "layer_types does not have one entry per draft layer"),
    Code("DF109", "sliding-window-missing", "error", "a sliding_attention layer without a positive sliding_window"),
    Code("DF110", "sample-from-anchor-v2", "error", "sample_from_anchor is true on a DFlash2 drafter"),
    Code("DF111", "draft-vocab-mismatch", "error", "draft_vocab_size differs from vocab_size on a DFlash2 drafter"),
    Code("DF112", "block-size-conflict", "error", "block_size is given twice with different values"),
    Code("DF113", "mask-token-missing", "warning", "no mask_token_id: the drafter cannot build its query block"),
    Code("DF114", "block-size-missing", "warning", "no block_size: engines fall back to their own default"),
    Code("DF115", "legacy-dialect", "info", "old nested dialect (top-level block_size / rope_theta); still read by the engines"),
    Code("DF116", "unknown-key", "info", "a key the schema does not model; kept verbatim by convert"),
    Code("DF117", "duplicate-key", "error", "a JSON object repeats a key; parsers silently keep the last"),
    Code("DF118", "head-geometry", "error", "attention geometry is inconsistent (kv heads must divide heads)"),
    Code("DF119", "unsupported-activation", "warning", "hidden_act is not silu; the engines build a SiLU MLP"),
    Code("DF120", "vocab-size-borrowed", "warning", "no vocab_size (the assistant export borrows the target's embedding and head): judged with the target's, or the bound its token ids give"),
    Code("DF130", "speculators-unloadable", "error", "a flat config speculators cannot load (speculators_config.verifier missing: 'Field required')"),
    Code("DF131", "tap-keys-conflict", "warning", "dflash_config.layer_ids and target_layer_ids disagree; vLLM's DFlash reads layer_ids first"),
    Code("DF132", "swa-window-conflict", "warning", "dflash_config.use_swa with a swa_window_size that differs from sliding_window"),
    # DF2xx tensors
    Code("DF201", "missing-tensor", "error", "a tensor the layout requires is not in the checkpoint"),
    Code("DF202", "unexpected-tensor", "warning", "a tensor no engine loads"),
    Code("DF203", "wrong-shape", "error", "a tensor's shape differs from the one the config implies"),
    Code("DF204", "wrong-dtype", "error", "a weight is not a floating-point tensor"),
    Code("DF205", "mixed-dtypes", "warning", "weights are stored in more than one dtype"),
    Code("DF206", "codebook-weight-suffix", "error", "selector codebooks named with a .weight suffix; vLLM requires the bare name"),
    Code("DF207", "target-copies", "info", "embed_tokens / lm_head copies of the target; the engines use the target's own"),
    Code("DF208", "encoder-names", "warning", "encoder.* names from the Muse-Glimmer assistant export; engines expect bare names"),
    Code("DF209", "quantized-tensors", "error", "quantized tensors (weight_packed / weight_scale); the engines load dense drafters",
         status="deprecated"),   # replaced by DF220-DF229: quantized drafters are judged per module and engine
    Code("DF210", "vocab-maps", "warning", "t2d / d2t vocabulary maps; DFlash2 uses the full target vocabulary"),
    Code("DF211", "config-dtype-mismatch", "info", "config dtype differs from the stored tensors"),
    Code("DF212", "own-draft-head", "info", "lm_head is the drafter's own head over a reduced draft vocabulary (v1), not a target copy"),
    Code("DF213", "vocab-map-layout", "error", "d2t / t2d have the wrong shape or dtype for draft_vocab_size and the target vocabulary"),
    Code("DF214", "vocab-maps-missing", "error", "a reduced-vocabulary drafter without its d2t / t2d maps; they would load as zeros"),
    Code("DF215", "draft-vocab-too-large", "error", "draft_vocab_size is larger than the target vocabulary"),
    Code("DF216", "vocab-map-values", "error", "d2t / t2d index outside the target vocabulary or disagree (found by --scan)"),
    Code("DF217", "draft-head-layout", "error", "a reduced-vocabulary drafter's own lm_head is missing or not a float [draft_vocab_size, hidden_size]"),
    Code("DF220", "quantized-modules", "info", "modules stored quantized, with their scheme; engine profiles judge them"),
    Code("DF221", "quantized-dense-only-module", "error", "the conv, the selector hidden_projection or a codebook is quantized; engines build them dense"),
    Code("DF222", "quant-aux-missing", "error", "a quantized module lacks its packed weight, a scale, a global scale or a zero point"),
    Code("DF223", "quant-aux-inconsistent", "error", "a quantized module's tensors have shapes or dtypes its scheme does not give"),
    Code("DF224", "dense-by-config-stored-quantized", "error", "the quantization config keeps a module dense but it is stored quantized"),
    Code("DF225", "quantized-by-config-stored-dense", "error", "the quantization config quantizes a module but it is stored dense"),
    Code("DF226", "ignore-matches-nothing", "warning", "an ignore / exclude_modules entry matches no module of the drafter"),
    Code("DF227", "quantized-without-config", "error", "quantized tensors but no quantization_config; engines build dense modules"),
    Code("DF228", "quant-method-unmodelled", "warning", "a quantization method this toolkit does not model; its modules are not checked"),
    Code("DF229", "quant-config-invalid", "error", "the quantization config is malformed"),
    Code("DF230", "derived-tensor-different", "error", "diff: a derived tensor is not its reference (random, zeroed, transposed, swapped)"),
    Code("DF231", "derived-tensor-missing", "error", "diff: a reference tensor is absent from the derived checkpoint"),
    Code("DF232", "derived-tensor-extra", "info", "diff: a derived tensor the reference does not have"),
    Code("DF233", "derived-tensor-noise", "info", "diff: tensors differ within the quantization noise their scheme predicts"),
    Code("DF234", "quant-pattern-not-evaluated", "error", "a quantization_config pattern was not evaluated (exponential backtracking, too long, too many); it is treated as matching nothing"),
    # DF3xx v1 / v2 identity
    Code("DF301", "v2-tensors-under-v1", "error", "a v1 architecture over a file carrying conv / selector tensors: a v1 loader drops them"),
    Code("DF302", "v2-tensors-missing", "error", "a v2 architecture whose file lacks the conv / selector tensors"),
    Code("DF303", "version-contradiction", "error", "config fields say one DFlash version and the architecture the other"),
    Code("DF304", "not-dflash", "error", "the config describes another drafter (DSpark, EAGLE-3, ...) or no drafter"),
    Code("DF305", "assistant-dialect", "info", "DFlash v1 in the assistant export dialect (encoder.* names); which engines load those names"),
    # DF4xx causality
    Code("DF401", "engines-disagree", "warning", "engines resolve a layer's in-block causality differently"),
    Code("DF402", "causal-keys-conflict", "warning", "top-level is_causal and dflash_config.causal disagree"),
    Code("DF403", "causality-unstated", "warning", "a DFlash2 config with sliding layers and no causality key: engines run them causal"),
    # DF5xx pairing with the target
    Code("DF501", "vocab-mismatch", "error", "draft vocab_size differs from the target's"),
    Code("DF502", "fc-width-mismatch", "error", "fc input width differs from target hidden size x number of taps"),
    Code("DF503", "tap-beyond-target", "error", "a tap id is not a layer of the target"),
    Code("DF504", "num-target-layers-mismatch", "error", "num_target_layers differs from the target's layer count"),
    Code("DF505", "mask-id-outside-target", "error", "mask_token_id is outside the target vocabulary"),
    Code("DF506", "mask-id-special", "error", "mask_token_id equals the target's pad or eos id"),
    Code("DF507", "quantized-target-head", "warning", "the target's lm_head is quantized; DFlash2 needs a dense one"),
    Code("DF508", "target-unreadable", "error", "the target's config.json is missing or unreadable"),
    # DF6xx files and shards
    Code("DF601", "no-weights", "error", "no .safetensors weights in the checkpoint"),
    Code("DF602", "pickle-file", "warning", "a pickle file (.bin / .pt); reported, never loaded"),
    Code("DF603", "bad-header", "error", "a safetensors header is malformed or lies about the data"),
    Code("DF604", "shard-missing", "error", "the index names a shard that is not there"),
    Code("DF605", "tensor-in-two-shards", "error", "a tensor appears in more than one shard"),
    Code("DF606", "index-disagrees", "error", "model.safetensors.index.json disagrees with the shard headers"),
    Code("DF607", "unsafe-path", "error", "a shard name is absolute, climbs out, or links outside the checkpoint"),
    Code("DF608", "bad-index", "error", "model.safetensors.index.json is not a valid index"),
    Code("DF609", "unindexed-shard", "warning", "a .safetensors file that the index does not list"),
    Code("DF610", "gguf-file", "info", "a GGUF file; this toolkit checks the safetensors checkpoint only",
         status="deprecated"),   # GGUF files are checked now: DF912 and the DF9xx family
    Code("DF611", "non-finite-weights", "error", "NaN or Inf values inside a weight (found by --scan)"),
    Code("DF613", "drafter-unreadable", "error", "audit: a drafter could not be read at all; its message says why"),
    Code("DF612", "drafter-in-subfolder", "info", "the folder given is not a drafter; its one subfolder that is was checked"),
    Code("DF620", "card-contradicts-config", "error", "README.md front matter names another base_model or DFlash version than config.json"),
    Code("DF621", "card-completed", "info", "push added the missing model card metadata (base_model, tags, library_name, pipeline_tag)"),
    # DF7xx smoke forward (dflash2_ckpt.smoke; needs the [smoke] extra)
    Code("DF701", "tensor-not-consumed", "error", "a tensor in the file that no parameter of the drafter takes; a loader would drop it"),
    Code("DF702", "parameter-not-filled", "error", "a drafter parameter that no tensor in the file fills; it would stay uninitialised"),
    Code("DF703", "non-finite-output", "error", "NaN or Inf in a stage of the smoke forward"),
    Code("DF704", "token-out-of-vocab", "error", "a drafted or embedded token id is outside [0, vocab_size)"),
    Code("DF705", "inert-conv", "warning", "a convolution module changes nothing (identity init): the drafter drafts like DFlash v1"),
    Code("DF706", "inert-selector", "warning", "the candidate selector never changes a drafted path: the drafter drafts like DFlash v1"),
    Code("DF707", "identity-equivalence-failed", "error", "with every convolution at identity the v2 forward differs from the v1 forward of the same trunk"),
    Code("DF708", "triton-torch-mismatch", "error", "a Triton kernel disagrees with its torch reference on the checkpoint's own activations"),
    Code("DF709", "q-not-normalised", "error", "a sampled proposal distribution q does not sum to 1 over the K candidates"),
    Code("DF710", "nondeterministic", "error", "two smoke runs with the same seed drafted different tokens"),
    Code("DF711", "random-embedding", "info", "no target embedding / head available: the smoke drafted with a seeded random one"),
    Code("DF712", "smoke-assumption", "info", "the smoke forward assumed a value the checkpoint does not give (block size, mask id, RoPE scaling)"),
    Code("DF713", "tensor-does-not-fit", "error", "a tensor's shape or dtype cannot fill the drafter parameter of that name"),
    Code("DF714", "selector-influence", "info", "fraction of drafted slots the candidate selector changes, over hundreds of sampled contexts"),
    Code("DF715", "conv-influence", "info", "how much the trained convolutions change the smoke forward when removed"),
    Code("DF716", "partial-smoke", "info", "the smoke ran only the first N draft layers (--layers)"),
    # DF75x acceptance against a real target (dflash2_ckpt.accept; needs the [accept] extra)
    Code("DF750", "not-lossless", "error", "speculative decoding committed a token the target's own greedy decoding does not produce"),
    Code("DF751", "not-drafting", "error", "mean acceptance length below 2.4 tokens per verification step: the drafter is not drafting"),
    Code("DF752", "acceptance-off-expected", "error", "mean acceptance length outside the expected figure and its tolerance (--expect)"),
    Code("DF753", "accept-assumption", "info", "the accept run relied on something that limits what its figures mean (final-norm tap, few steps)"),
    Code("DF754", "near-tie-divergence", "warning", "the speculative text left the target's greedy text where the target's top two logits tie within float rounding (block vs one-token forward), not through a loop error"),
    Code("DF755", "engine-below-reference", "error", "the serving engine drafts well below the reference loop on the same prompts (tau_engine / tau_reference under the floor)"),
    # DF8xx engine compatibility (dflash2_ckpt.engines; reasons of a `compat` verdict)
    Code("DF800", "engine-unsupported", "info", "this engine release has no such drafter at all"),
    Code("DF801", "needs-conversion", "info", "the engine reads another format or dialect; the convert command produces it"),
    Code("DF802", "engine-breakage", "error", "a bug of this engine release fails every such drafter; no checkpoint can fix it"),
    Code("DF803", "engine-required-key", "error", "the engine refuses to load without a key this checkpoint lacks"),
    Code("DF804", "engine-constraint", "error", "the checkpoint violates a hard constraint of the engine (geometry, causality keys)"),
    Code("DF805", "engine-refused-tensor", "error", "the engine refuses a tensor the checkpoint carries"),
    Code("DF806", "quantized-module-fails", "error", "the engine cannot load this quantized module"),
    Code("DF807", "quantized-module-dropped", "warning", "the engine loads but silently drops or degrades this quantized module"),
    Code("DF808", "engine-causality-diverges", "warning", "the engine runs layers with another in-block causality than the checkpoint means"),
    Code("DF809", "engine-silent-default", "warning", "the engine silently fills a missing key with a value that differs from the checkpoint's intent"),
    Code("DF810", "engine-note", "info", "what serving on this engine implies (draft-token convention, runner, logged defaults)"),
    Code("DF811", "format-not-read", "error", "the engine does not read this format and no conversion to one it reads exists"),
    Code("DF812", "quantized-module-must-be-dense", "error", "a module the engine builds unquantized is stored quantized"),
    Code("DF813", "checkpoint-errors", "error", "verify reports errors this engine would hit; it cannot load the checkpoint"),
    Code("DF814", "conversion-refused", "error", "the engine reads another dialect, and converting to it is refused or would not load"),
    Code("DF815", "engine-ignores-attention-key", "warning", "the engine does not read a sliding-window or attention-sink key the drafter was trained with"),
    # DF9xx GGUF drafters for llama.cpp (ENGINES.md §3)
    Code("DF900", "gguf-bad-header", "error", "a GGUF header is malformed, truncated or lies about the tensor data"),
    Code("DF901", "gguf-architecture", "error", "general.architecture is not \"dflash\" (fork files say dflash-draft); llama.cpp refuses the file"),
    Code("DF902", "gguf-target-layers-missing", "error", "dflash.target_layers is absent; the llama.cpp loader refuses the file"),
    Code("DF903", "gguf-taps-unshifted", "error", "dflash.target_layers look like the z-lab ids, not ids + 1 (layer inputs)"),
    Code("DF904", "gguf-mask-token-missing", "error", "no tokenizer.ggml.mask_token_id: every slot drafts -1 and nothing is accepted"),
    Code("DF905", "gguf-mask-token-differs", "error", "tokenizer.ggml.mask_token_id differs from the HF drafter's mask_token_id"),
    Code("DF906", "gguf-dflash2-metadata-missing", "error", "DFlash2 tensors present but conv / selector metadata missing or zero"),
    Code("DF907", "gguf-top-k-too-large", "error", "embedding_length < selector_top_k * (selector_top_k + 1); the llama.cpp loader refuses it"),
    Code("DF908", "gguf-low-precision", "warning", "codebooks or conv projections stored below the precision known to hold acceptance"),
    Code("DF909", "gguf-file-type-mismatch", "info", "general.file_type contradicts the tensor types"),
    Code("DF910", "gguf-bias-dropped", "error", "the HF drafter has attention bias tensors that the GGUF lacks"),
    Code("DF911", "gguf-key-missing", "error", "a metadata key the llama.cpp loader requires is absent or of the wrong type"),
    Code("DF912", "gguf-beside-safetensors", "info", "a GGUF file beside a safetensors checkpoint; it is checked on its own"),
    Code("DF913", "gguf-tokenizer-missing", "warning", "no tokenizer.ggml.tokens; llama.cpp needs the target's vocabulary in the drafter"),
)

REGISTRY: dict[str, Code] = {c.code: c for c in _TABLE}


def all_codes() -> list[Code]:
    return sorted(REGISTRY.values(), key=lambda c: c.code)


def anchor(code: str) -> str:
    """The code's anchor in docs/codes.md: DF206 -> df206."""
    return code.lower()


def markdown_table() -> str:
    """Every code as the Markdown table of docs/codes.md (dev/doc_tables.py writes it there)."""
    rows = ["| code | name | severity | meaning |", "|---|---|---|---|"]
    # one anchor per code (#df206): SARIF rules link each alert to its own row (report/sarif.py)
    rows += [f'| <a id="{anchor(c.code)}"></a>{c.code} | {c.name} | {c.severity} | {c.summary} |' for c in all_codes()]
    return "\n".join(rows)
