#!/usr/bin/env python3
"""Bytes a header-level verify of a Hub repo transfers, counted by the server that sent them.

`python bench/bench_hub.py [--write]`: the published Qwen3.8-27B-DFlash2 layout (81 tensors, 3.85 GB,
a sparse file from fixtures/real/) is served by the test suite's fake Hub on 127.0.0.1; the real
huggingface_hub client reaches it through HF_ENDPOINT, and `dflash2-ckpt verify org/repo` runs
through the CLI in this process. The server counts every body byte it sends. --write replaces the
`## hub` section of bench/RESULTS.md with the result.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "hub"))
BUDGET = 64 * 1024


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="bench-hub-"))
    os.environ.update(HF_HOME=str(tmp / "hf-home"), HF_HUB_DISABLE_TELEMETRY="1")
    os.environ.pop("HF_TOKEN", None)
    os.environ.pop("HF_HUB_OFFLINE", None)
    from fakehub import FakeHub  # the tests' server: one implementation of the protocol

    from dflash2_ckpt.synth import materialise, read_tensor_list
    real = ROOT / "fixtures" / "real"
    cfg = json.loads((real / "z-lab_Qwen3.8-27B-DFlash2.config.json").read_text())
    ckpt = materialise(tmp / "27b", cfg, read_tensor_list(real / "z-lab_Qwen3.8-27B-DFlash2.tensors.tsv"))
    size = (ckpt / "model.safetensors").stat().st_size

    with FakeHub() as hub:
        os.environ["HF_ENDPOINT"] = hub.url
        from huggingface_hub import constants
        constants.ENDPOINT = hub.url
        constants.HUGGINGFACE_CO_URL_TEMPLATE = hub.url + "/{repo_id}/resolve/{revision}/{filename}"
        constants.AGENT_HARNESSES_PATH = str(tmp / "hf-home" / ".agent_harnesses.json")
        sha = hub.add_commit("z-lab/Qwen3.8-27B-DFlash2", ckpt)
        from click.testing import CliRunner

        from dflash2_ckpt.cli import main as cli
        t0 = time.perf_counter()
        r = CliRunner().invoke(cli, ["verify", "z-lab/Qwen3.8-27B-DFlash2", "--format", "json"])
        wall = time.perf_counter() - t0
        doc = json.loads(r.output)
        files = [(e.method, e.path.rsplit("/", 1)[-1], e.status, e.sent, e.range) for e in hub.log
                 if "/resolve/" in e.path or e.path.startswith("/cdn/")]
        file_bytes, total = hub.file_bytes(), hub.total_bytes()
        api = total - file_bytes

    lines = [
        f"repo: 27B-shaped drafter, model.safetensors {size:,} B (sparse), commit {sha[:12]}",
        f"verify exit {r.exit_code}, findings {[f['code'] for f in doc['findings']]}, commit_sha reported: "
        f"{doc['commit_sha'] == sha}",
        f"file bytes sent by the server: {file_bytes:,} B (report's bytes_fetched: {doc['bytes_fetched']:,} B)",
        f"API JSON (model info, agent registry): {api:,} B; all bytes sent: {total:,} B "
        f"({'under' if total < BUDGET else 'OVER'} the {BUDGET // 1024} KiB budget)",
        f"requests for file content: {len(files)}; wall time in-process (local server): {wall * 1000:.0f} ms",
    ] + [f"  {m} {name} -> {st}, {sent:,} B{f', Range {rg}' if rg else ''}" for m, name, st, sent, rg in files]
    print("\n".join(lines))
    if "--write" in sys.argv:
        write_section("\n".join(lines))
    return 0 if total < BUDGET and r.exit_code in (0, 1) else 1


def write_section(body: str) -> None:
    path = ROOT / "bench" / "RESULTS.md"
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    section = (
        "## hub\n\n"
        "`python bench/bench_hub.py --write` — header-level `verify` of a Hub repo: the Qwen3.8-27B-DFlash2 layout\n"
        "served by the tests' fake Hub (tests/hub/fakehub.py) on 127.0.0.1 through the real huggingface_hub\n"
        "client; the server counts the bytes it sends.\n\n"
        f"```text\n{body}\n```\n\n"
        "- config.json is fetched whole (HEAD + GET, into the hub cache); the safetensors header by one ranged\n"
        "  GET of the first 16 KiB (readahead: the 8-byte length and the 8,928-byte header in one round trip;\n"
        "  the Hub's CDN redirect is followed). No tensor data beyond that readahead is transferred.\n"
    )
    start = text.find("## hub\n")
    if start >= 0:
        end = text.find("\n## ", start + 1)
        text = text[:start] + section + (text[end + 1:] if end >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
