"""How a hostile case is run: in-process under a wall-clock alarm, or in a subprocess under limits.

In-process (the kit's CLI runner, which never catches an exception) is fast and turns any unexpected exception into
a test failure with its traceback. Allocation and hang bombs run the CLI in a
child process with RLIMIT_AS (address space) and a timeout, so a regression that allocates the
header length or opens a FIFO fails the test instead of taking the machine down or hanging CI.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

from _kit.cli import invoke_cli
from dflash2_ckpt.cli import main

# The CLI with numpy imported peaks near 160 MiB of address space; 384 MiB leaves room for normal
# work while any attempt to hold a 100 MB file (read + decode + parse) or a 2**64 header fails.
MEMORY_LIMIT = 384 * 1024 * 1024
TIMEOUT_S = 60
INPROCESS_TIMEOUT_S = 30


class Hang(Exception):
    pass


@contextlib.contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Raise Hang in the main thread if the body runs longer than `seconds` (a hang must fail, not block CI)."""

    def fire(signum: int, frame: Any) -> None:
        raise Hang(f"case still running after {seconds}s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def run_inprocess(args: list[str]) -> tuple[int, dict[str, Any]]:
    with deadline(INPROCESS_TIMEOUT_S):
        res = invoke_cli(main, [*args, "--format", "json"])
    assert res.exit_code != 3 or not res.output, res.output
    return res.exit_code, json.loads(res.output) if res.output.strip() else {}


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_limited(args: list[str], timeout: int = TIMEOUT_S) -> tuple[int, dict[str, Any], str]:
    """The CLI in a child process under MEMORY_LIMIT and `timeout`; returns exit code, JSON report, stderr."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop("DFLASH2_CKPT_DEBUG", None)
    # `-c` rather than `-m dflash2_ckpt.cli`: running cli.py as __main__ imports it twice
    proc = subprocess.run(
        [sys.executable, "-c", "from dflash2_ckpt.cli import main; main()", *args, "--format", "json"],
        capture_output=True,
        timeout=timeout,
        preexec_fn=_limits,
        env=env,
    )
    err = proc.stderr.decode(errors="replace")
    assert "Traceback" not in err and "MemoryError" not in err, err
    out = proc.stdout.decode(errors="replace")
    return proc.returncode, json.loads(out) if out.strip() else {}, err
