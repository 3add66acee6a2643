"""vLLM's own code as the judge of DFlash drafters: run as a file by the python of a vLLM install
(scripts/vllm_cpu.py), never imported by the toolkit, so it imports nothing of dflash2_ckpt.

    <vllm python> vllm_probe.py CASES.json      (prints one JSON object on stdout)

CASES.json: {"cases": [{"name", "target", "drafter", "num_speculative_tokens"}]}. For each case, in one
process (one `import vllm` for all of them):

config  vLLM's own validation: EngineArgs(...speculative_config={"method": "dflash", ...})
        .create_engine_config(), as `vllm serve` runs it. A refusal is recorded in vLLM's words.
load    vLLM's own model loader: get_model() on the draft model config, which builds the drafter's model
        class (the registry's choice for its architecture) and runs its load_weights over the
        checkpoint's safetensors through DefaultModelLoader. When the config check refused only because
        of the model runner (the CPU build runs the V1 runner; DFlash2 drafters need V2), the same config
        is built once more without that one check, so the loader still judges the weights.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys
import traceback
from typing import Any

RUNNER_REFUSAL = "Model Runner V1 does not support"


def _error(e: BaseException) -> dict[str, Any]:
    """The exception as vLLM raised it, and the innermost vLLM frame that raised it."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if "/vllm/" in f.filename]
    where = None
    if frames:
        f = frames[-1]
        where = f"vllm/{f.filename.split('/vllm/', 1)[1]}:{f.lineno} {f.name}"
    return {"type": type(e).__name__, "message": str(e).strip()[:2000], "where": where}


def _engine_args(case: dict[str, Any]) -> Any:
    from vllm.engine.arg_utils import EngineArgs  # heavy: vllm loads only when this runs

    spec = {
        "method": "dflash",
        "model": case["drafter"],
        "num_speculative_tokens": case["num_speculative_tokens"],
    }
    return EngineArgs(
        model=case["target"],
        speculative_config=spec,
        enforce_eager=True,
        skip_tokenizer_init=True,
        dtype="float32",
        seed=0,
    )


def _config(case: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """(what vLLM's validation said, a config to load with or None)."""
    try:
        return {"ok": True}, _engine_args(case).create_engine_config()
    except Exception as e:  # noqa: BLE001 - every refusal is the record
        said = {"ok": False, **_error(e)}
    if RUNNER_REFUSAL not in said["message"]:
        return said, None
    from vllm.config import VllmConfig  # heavy: vllm loads only when this runs

    check = VllmConfig._validate_v1_model_runner
    VllmConfig._validate_v1_model_runner = lambda self: None
    try:
        return said | {"loaded_without": "the V1 model runner check"}, _engine_args(
            case
        ).create_engine_config()
    except Exception as e:  # noqa: BLE001
        return said | {"second": _error(e)}, None
    finally:
        VllmConfig._validate_v1_model_runner = check


_DIST = False


def _distributed() -> None:
    """A one-process gloo group: vLLM's parallel layers ask for their tensor-parallel rank."""
    global _DIST
    if _DIST:
        return
    import tempfile  # lazy: tempfile only when a file is written (tests/cli/test_start.py)

    from vllm.platforms import current_platform  # heavy: vllm loads only when this runs

    if current_platform.is_cpu():
        # what CPUModelRunner does before it loads a model: torch.accelerator calls become no-ops
        from vllm.v1.worker.cpu_model_runner import _set_torch_accelerator_to_noop

        _set_torch_accelerator_to_noop()
    # heavy: vllm loads only when this runs
    from vllm.distributed import init_distributed_environment, initialize_model_parallel

    fd, path = tempfile.mkstemp(prefix="vllm-probe-dist-")
    os.close(fd)
    os.unlink(path)
    init_distributed_environment(
        world_size=1, rank=0, local_rank=0, distributed_init_method=f"file://{path}", backend="gloo"
    )
    initialize_model_parallel(1, 1)
    _DIST = True


def _load(cfg: Any) -> dict[str, Any]:
    from vllm.config import set_current_vllm_config  # heavy: vllm loads only when this runs
    from vllm.model_executor.model_loader import get_model  # heavy: vllm loads only when this runs
    from vllm.model_executor.models.utils import AutoWeightsLoader  # heavy: vllm loads only when this runs

    draft = cfg.speculative_config.draft_model_config
    # the DFlash drafters' load_weights drops the set of names AutoWeightsLoader loaded, so the loader's
    # strict check ("Following weights were not initialized from checkpoint") never runs for them: keep it
    loaded: set[str] = set()
    inner = AutoWeightsLoader.load_weights

    def keep(self: Any, *args: Any, **kwargs: Any) -> Any:
        got = inner(self, *args, **kwargs)
        loaded.update(got or ())
        return got

    AutoWeightsLoader.load_weights = keep
    try:
        with set_current_vllm_config(cfg):
            _distributed()
            model = get_model(vllm_config=cfg, model_config=draft)
    except Exception as e:  # noqa: BLE001
        return {"ok": False, **_error(e)}
    finally:
        AutoWeightsLoader.load_weights = inner
    params = dict(model.named_parameters())
    return {
        "ok": True,
        "class": type(model).__name__,
        "parameters": len(params),
        "numel": int(sum(p.numel() for p in params.values())),
        "not_loaded": sorted(set(params) - loaded),
        "causal": [bool(c) for c in model.get_draft_attn_causal()]
        if hasattr(model, "get_draft_attn_causal")
        else None,
    }


def probe(case: dict[str, Any]) -> dict[str, Any]:
    said, cfg = _config(case)
    out: dict[str, Any] = {"name": case["name"], "config": said}
    if cfg is not None:
        out["architecture"] = list(cfg.speculative_config.draft_model_config.architectures or [])
        out["load"] = _load(cfg)
    return out


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as f:
        request = json.load(f)
    logging.disable(logging.WARNING)
    import vllm  # heavy: vllm loads only when this runs

    results = []
    for case in request["cases"]:
        # vLLM logs to stdout; the JSON answer is the only thing printed there
        with contextlib.redirect_stdout(io.StringIO()):
            results.append(probe(case))
    json.dump({"vllm": vllm.__version__, "results": results}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
