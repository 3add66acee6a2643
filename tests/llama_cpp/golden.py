"""The llama.cpp golden table: variants of the recall drafter, what compat says, what llama.cpp did.

    PYTHONPATH=. python tests/llama_cpp/golden.py      (records fixtures/llama_cpp/golden.json)
    PYTHONPATH=. python tests/llama_cpp/golden.py --only NAME,NAME    (re-records those rows in place)

Recording runs the pinned llama.cpp (scripts/llama_cpp.py) on each variant: does llama-server load it,
with which message does it refuse, at which τ does it draft. The tests compare compat's llama.cpp
verdict with that record (no engine needed) and, with the engine built, re-run it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gguf import GGUFReader, GGUFValueType

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
GOLDEN = ROOT / "fixtures" / "llama_cpp" / "golden.json"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

try:
    from .variants import rewrite  # noqa: E402
except ImportError:  # run as a script or from tests/engines
    from variants import rewrite  # type: ignore[no-redef]  # noqa: E402

PROFILE = "llama.cpp@b11434"
DFLASH = "llama.cpp b11434:src/models/dflash.cpp"
SPEC = "llama.cpp b11434:common/speculative.cpp"
QUANT = "llama.cpp b11434:tools/quantize/quantize.cpp"


def _field(path: Path, key: str) -> Any:
    f = GGUFReader(path).fields.get(key)
    return None if f is None else f.contents()


def _causal(value: bool) -> Callable[[Path, Path, dict[str, str]], Path]:
    def make(base: Path, out: Path, engine: dict[str, str]) -> Path:
        return rewrite(base, out, set_keys={"dflash.attention.causal": (value, GGUFValueType.BOOL)})

    return make


def _causal_absent_sliding(base: Path, out: Path, engine: dict[str, str]) -> Path:
    n = int(_field(base, "dflash.block_count"))
    return rewrite(
        base,
        out,
        drop_keys=("dflash.attention.causal",),
        set_keys={
            "dflash.attention.sliding_window": (64, GGUFValueType.UINT32),
            "dflash.attention.sliding_window_pattern": ([True] * n, GGUFValueType.ARRAY),
        },
    )


def _taps_unshifted(base: Path, out: Path, engine: dict[str, str]) -> Path:
    ids = [int(x) - 1 for x in _field(base, "dflash.target_layers")]
    return rewrite(base, out, set_keys={"dflash.target_layers": (ids, GGUFValueType.ARRAY)})


def _mask_missing(base: Path, out: Path, engine: dict[str, str]) -> Path:
    return rewrite(base, out, drop_keys=("tokenizer.ggml.mask_token_id",))


def _attn_bias(base: Path, out: Path, engine: dict[str, str]) -> Path:
    n = int(_field(base, "dflash.block_count"))
    r = GGUFReader(base)
    shapes = {t.name: int(t.shape[-1]) for t in r.tensors}  # ne[1]: output features
    add = {}
    for i in range(n):
        for p in ("q", "k", "v", "output"):
            rows = [t for t in r.tensors if t.name == f"blk.{i}.attn_{p}.weight"][0]
            add[f"blk.{i}.attn_{p}.bias"] = np.zeros(int(rows.shape[1]), dtype=np.float32)
    del shapes
    return rewrite(base, out, add_tensors=add)


def _v1(base: Path, out: Path, engine: dict[str, str]) -> Path:
    """The v2 weights with conv and selector removed: what a v1 reader of this drafter runs."""
    r = GGUFReader(base)
    drop = [t.name for t in r.tensors if "conv" in t.name or "selector" in t.name]
    return rewrite(
        base,
        out,
        drop_tensors=drop,
        drop_keys=(
            "dflash.conv_kernel_size",
            "dflash.conv_group_size",
            "dflash.selector_rank",
            "dflash.selector_top_k",
        ),
    )


def _quantize(kind: str, codebooks_only: bool = False) -> Callable[[Path, Path, dict[str, str]], Path]:
    def make(base: Path, out: Path, engine: dict[str, str]) -> Path:
        cmd = [engine["llama_quantize"]]
        kind_arg = kind
        if codebooks_only:
            # the two codebooks in `kind`, every other tensor F32 as it was: --tensor-type overrides apply
            # only under a quantized base type, the first matching pattern wins
            # (llama.cpp b11434:src/llama-quant.cpp llama_tensor_get_type)
            cmd += [
                "--tensor-type",
                f"selector_predecessor={kind.lower()}",
                "--tensor-type",
                f"selector_successor={kind.lower()}",
                "--tensor-type",
                ".=f32",
            ]
        res = subprocess.run(
            cmd + ["--allow-requantize", str(base), str(out), kind_arg], capture_output=True, text=True
        )
        if res.returncode != 0:
            raise RuntimeError(f"llama-quantize {kind} failed: {(res.stdout + res.stderr)[-1500:]}")
        if codebooks_only:
            types = {t.name: t.tensor_type.name for t in GGUFReader(out).tensors}
            assert types["selector_predecessor.weight"] == types["selector_successor.weight"] == kind, types
            assert types["selector_hidden.weight"] == "F32", types
        return out

    return make


def kept_ids() -> np.ndarray:
    """The draft vocabulary of the reduced-vocabulary variant: the specials and every token the recall
    pair's language uses (its words and the separator), so a correct d2t drafts as the full vocabulary."""
    from transformers import AutoTokenizer

    pair = ROOT / "fixtures" / "pairs" / "recall"
    tok = AutoTokenizer.from_pretrained(str(pair / "target"))
    lang = json.loads((pair / "recall.json").read_text())
    ids = {0, 1, 2} | {
        i for w in lang["words"] + [lang["separator"]] for i in tok(w, add_special_tokens=False)["input_ids"]
    }
    return np.array(sorted(ids), dtype=np.int64)


def _reduced_vocab(d2t: str = "absolute", head: bool = True) -> Callable[[Path, Path, dict[str, str]], Path]:
    """The drafter with its own head over a reduced vocabulary: output.weight = the target's head rows of
    kept_ids(), and d2t the target id of each draft row: absolute ids, as llama.cpp's converter writes
    them (llama.cpp b11434:conversion/qwen.py DSparkModel.prepare_tensors), or the offsets an HF
    checkpoint stores (target id - draft id, speculators' d2t) copied as they are."""

    def make(base: Path, out: Path, engine: dict[str, str]) -> Path:
        from safetensors import safe_open

        ids = kept_ids()
        add: dict[str, np.ndarray] = {
            "d2t": ids if d2t == "absolute" else ids - np.arange(ids.size, dtype=np.int64)
        }
        if head:
            with safe_open(
                str(ROOT / "fixtures" / "pairs" / "recall" / "target" / "model.safetensors"), "np"
            ) as f:
                add["output.weight"] = f.get_tensor("lm_head.weight")[ids].astype(np.float32)
        return rewrite(base, out, add_tensors=add)

    return make


_V2_PARTS = ("attention_conv", "mlp_conv", "candidate_selector")
_V2_KEYS = (
    "dflash.conv_kernel_size",
    "dflash.conv_group_size",
    "dflash.selector_rank",
    "dflash.selector_top_k",
)
_V2_GGUF = ("_conv_", "selector_")


def reduced_vocab_hf(out: Path) -> Path:
    """The recall drafter as a flat v1 HF checkpoint with a reduced draft vocabulary, as speculators stores one:
    the trunk (conv and selector removed, as in the v1 row), lm_head = the target's head rows of kept_ids(),
    d2t = OFFSETS (target id - draft id) and t2d = the kept ids, written by safetensors."""
    from safetensors.numpy import load_file, save_file

    from dflash2_ckpt.convert import convert

    pair = ROOT / "fixtures" / "pairs" / "recall"
    nested = out.with_name(out.name + "-nested-v1")
    nested.mkdir(parents=True)
    cfg = json.loads((pair / "drafter" / "config.json").read_text())
    cfg["architectures"] = ["DFlashDraftModel"]
    for k in ("conv_kernel_size", "conv_group_size", "selector_rank", "selector_top_k"):
        cfg["dflash_config"].pop(k)
    (nested / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    weights = load_file(str(pair / "drafter" / "model.safetensors"))
    save_file(
        {k: v for k, v in weights.items() if not any(p in k for p in _V2_PARTS)},
        str(nested / "model.safetensors"),
    )
    convert(
        nested, out, to="flat", verifier_name="recall/target", verifier_architectures=("Qwen3ForCausalLM",)
    )
    ids = kept_ids()
    flat = json.loads((out / "config.json").read_text())
    flat["draft_vocab_size"] = int(ids.size)
    (out / "config.json").write_text(json.dumps(flat, indent=2) + "\n")
    tensors = load_file(str(out / "model.safetensors"))
    tensors["lm_head.weight"] = load_file(str(pair / "target" / "model.safetensors"))["lm_head.weight"][ids]
    tensors["d2t"] = ids - np.arange(ids.size, dtype=np.int64)
    t2d = np.zeros(flat["transformer_layer_config"]["vocab_size"], dtype=bool)
    t2d[ids] = True
    tensors["t2d"] = t2d
    save_file(tensors, str(out / "model.safetensors"))
    return out


def _converted_reduced(dflash2: bool) -> Callable[[Path, Path, dict[str, str]], Path]:
    """reduced_vocab_hf() through `dflash2-ckpt convert --to gguf` (the tokenizer copied from the base file, as
    from the target GGUF): output.weight and d2t as this toolkit writes them. `dflash2` puts the recall
    drafter's conv and selector tensors and keys back beside them (taken from the base file, which this
    converter wrote from the same drafter), so the head and d2t are judged on the drafter that drafts well."""

    def make(base: Path, out: Path, engine: dict[str, str]) -> Path:
        from dflash2_ckpt.convert.to_gguf import convert_to_gguf

        hf = reduced_vocab_hf(out.with_name(out.stem + "-hf"))
        v1 = out.with_name(out.stem + "-trunk.gguf") if dflash2 else out
        convert_to_gguf(hf, v1, target=None, tokenizer_from=base)
        if not dflash2:
            return out
        r = GGUFReader(base)
        keys = {k: (int(_field(base, k)), GGUFValueType.UINT32) for k in _V2_KEYS}
        add = {
            t.name: np.asarray(t.data).reshape(tuple(int(n) for n in reversed(t.shape)))
            for t in r.tensors
            if any(p in t.name for p in _V2_GGUF)
        }
        return rewrite(v1, out, set_keys=keys, add_tensors=add)

    return make


@dataclass
class Variant:
    name: str
    what: str
    make: Callable[[Path, Path, dict[str, str]], Path]
    source: str


VARIANTS = [
    Variant("as-converted", "this toolkit's convert --to gguf output", lambda b, o, e: b, DFLASH),
    Variant("causal-true", "dflash.attention.causal = true", _causal(True), SPEC),
    Variant("causal-false", "dflash.attention.causal = false", _causal(False), SPEC),
    Variant(
        "causal-absent-sliding",
        "no dflash.attention.causal, every layer sliding",
        _causal_absent_sliding,
        SPEC,
    ),
    Variant("taps-unshifted", "dflash.target_layers = target_layer_ids (not + 1)", _taps_unshifted, SPEC),
    Variant("mask-missing", "no tokenizer.ggml.mask_token_id", _mask_missing, SPEC),
    Variant("attention-bias", "blk.N.attn_{q,k,v,output}.bias added", _attn_bias, DFLASH),
    Variant("v1", "conv and selector tensors and keys removed (DFlash v1)", _v1, DFLASH),
    Variant("q8_0", "llama-quantize Q8_0, whole drafter", _quantize("Q8_0"), QUANT),
    Variant("q4_0", "llama-quantize Q4_0, whole drafter", _quantize("Q4_0"), QUANT),
    Variant("q4_k_m", "llama-quantize Q4_K_M, whole drafter", _quantize("Q4_K_M"), QUANT),
    Variant(
        "codebooks-q8_0",
        "llama-quantize --tensor-type: the selector codebooks alone in Q8_0",
        _quantize("Q8_0", codebooks_only=True),
        QUANT,
    ),
    Variant(
        "codebooks-q4_0",
        "llama-quantize --tensor-type: the selector codebooks alone in Q4_0",
        _quantize("Q4_0", codebooks_only=True),
        QUANT,
    ),
    Variant(
        "reduced-vocab-d2t",
        "its own head over the language's 44 tokens, d2t absolute target ids",
        _reduced_vocab(),
        DFLASH,
    ),
    Variant(
        "reduced-vocab-d2t-offsets",
        "the same, d2t as HF offsets (target id - draft id) copied unchanged",
        _reduced_vocab("offsets"),
        DFLASH,
    ),
    Variant(
        "reduced-vocab-no-head",
        "d2t without the drafter's own output.weight",
        _reduced_vocab(head=False),
        DFLASH,
    ),
    Variant(
        "reduced-vocab-converted-v1",
        "a flat v1 HF drafter with a reduced vocabulary (d2t offsets, t2d) through convert --to gguf",
        _converted_reduced(False),
        DFLASH,
    ),
    Variant(
        "reduced-vocab-converted",
        "the same converted file with the conv and selector put back (DFlash2)",
        _converted_reduced(True),
        DFLASH,
    ),
]


def compat_verdict(path: Path) -> tuple[str, list[str]]:
    from dflash2_ckpt.usecases.compat import compat

    [v] = compat(path, engines=[PROFILE]).verdicts
    return v.verdict, [r.code for r in v.reasons]


def engine_outcome(
    engine: dict[str, str], target: Path, drafter: Path, prompts: list[list[int]], max_new: int
) -> dict[str, Any]:
    from dflash2_ckpt.engines.runners.llama_cpp import LlamaServer
    from dflash2_ckpt.errors import EngineError

    try:
        with LlamaServer(
            Path(engine["llama_server"]), target, drafter, n_max=7, ctx=2048, load_deadline_s=120
        ) as s:
            try:
                runs = [s.complete(p, max_new) for p in prompts]
            finally:
                s.cleanup()
    except EngineError as e:
        return {"loads": False, "error": e.message, "log_tail": e.log_tail[-4:]}
    steps = sum(r.steps for r in runs)
    committed = sum(r.predicted_n - 1 for r in runs)
    return {
        "loads": True,
        "tau": round(committed / steps, 3) if steps else None,
        "draft_n": sum(r.draft_n for r in runs),
        "draft_n_accepted": sum(r.draft_n_accepted for r in runs),
    }


def prompt_ids() -> list[list[int]]:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(ROOT / "fixtures" / "pairs" / "recall" / "target"))
    rows = [
        json.loads(x)
        for x in (ROOT / "fixtures" / "pairs" / "recall" / "target" / "prompts.jsonl")
        .read_text()
        .splitlines()
        if x.strip()
    ]
    return [tok(r["prompt"])["input_ids"] for r in rows if "prompt" in r][:3]


def record(
    engine: dict[str, str],
    ggufs: dict[str, Path],
    scratch: Path,
    max_new: int = 32,
    only: set[str] | None = None,
) -> list[dict[str, Any]]:
    prompts = prompt_ids()
    rows = []
    for v in VARIANTS:
        if only is not None and v.name not in only:
            continue
        path = v.make(ggufs["drafter"], scratch / f"{v.name}.gguf", engine)
        verdict, codes = compat_verdict(path)
        rows.append(
            {
                "variant": v.name,
                "what": v.what,
                "source": v.source,
                "compat": verdict,
                "codes": codes,
                "engine": engine_outcome(engine, ggufs["target"], path, prompts, max_new),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> int:
    import tempfile

    sys.path.insert(0, str(ROOT / "fixtures"))
    import llama_cpp_pair as pair

    info = pair.engine()
    if info is None:
        print("llama.cpp is not built: python scripts/llama_cpp.py", file=sys.stderr)
        return 1
    only = set(sys.argv[sys.argv.index("--only") + 1].split(",")) if "--only" in sys.argv else None
    with tempfile.TemporaryDirectory() as tmp:
        ggufs = pair.build(Path(tmp) / "pair", info)
        rows = record(info, ggufs, Path(tmp), only=only)
    if only is not None:  # re-record those rows in place, in the table's order
        new = {r["variant"]: r for r in rows}
        old = {r["variant"]: r for r in json.loads(GOLDEN.read_text())["rows"]}
        rows = [new.get(v.name) or old[v.name] for v in VARIANTS]
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(
        json.dumps({"build": "b11434", "max_new_tokens": 32, "prompts": 3, "rows": rows}, indent=1) + "\n"
    )
    print(f"recorded {len(rows)} rows in {GOLDEN}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
