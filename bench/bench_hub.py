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
sys.path.insert(0, str(ROOT / "tests"))
BUDGET = 64 * 1024


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser(description="Bytes a header-level verify of a Hub repo transfers.")
    ap.add_argument("--write", action="store_true", help="replace the ## hub section of bench/RESULTS.md")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-hub-"))
    os.environ.update(HF_HOME=str(tmp / "hf-home"), HF_HUB_DISABLE_TELEMETRY="1")
    os.environ.pop("HF_TOKEN", None)
    os.environ.pop("HF_HUB_OFFLINE", None)
    from _kit.fakehub import FakeHub  # the tests' server: one implementation of the protocol
    from dflash2_ckpt.dev.synth import materialise, read_tensor_list

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
        files = [
            (e.method, e.path.rsplit("/", 1)[-1], e.status, e.sent, e.range)
            for e in hub.log
            if "/resolve/" in e.path or e.path.startswith("/cdn/")
        ]
        file_bytes, total = hub.file_bytes(), hub.total_bytes()
        api = total - file_bytes
        retry_lines = retries(hub, cli, ckpt)

    lines = [
        f"repo: 27B-shaped drafter, model.safetensors {size:,} B (sparse), commit {sha[:12]}",
        f"verify exit {r.exit_code}, findings {[f['code'] for f in doc['findings']]}, commit_sha reported: "
        f"{doc['commit_sha'] == sha}",
        f"file bytes sent by the server: {file_bytes:,} B (report's bytes_fetched: {doc['bytes_fetched']:,} B)",
        f"API JSON (model info, agent registry): {api:,} B; all bytes sent: {total:,} B "
        f"({'under' if total < BUDGET else 'OVER'} the {BUDGET // 1024} KiB budget)",
        f"requests for file content: {len(files)}; wall time in-process (local server): {wall * 1000:.0f} ms",
    ] + [
        f"  {m} {name} -> {st}, {sent:,} B{f', Range {rg}' if rg else ''}" for m, name, st, sent, rg in files
    ]
    lines += retry_lines
    print("\n".join(lines))
    if args.write:
        write_section("\n".join(lines))
    return 0 if total < BUDGET and r.exit_code in (0, 1) else 1


def retries(hub: object, cli: object, ckpt: Path) -> list[str]:
    """The same verify with transient faults, and with a Hub that keeps failing, under the default policy."""
    from click.testing import CliRunner

    from dflash2_ckpt.sources.hub_transport import RetryPolicy

    out = []
    for label, faults in [
        (
            "one 503 on the listing, one 429 (Retry-After: 0) on config.json, one reset + one short Range "
            "answer on the header",
            [
                ("503", "/api/models/", 1),
                ("429", "config.json", 1),
                ("reset", "/cdn/", 1),
                ("short", "/cdn/", 1),
            ],
        ),
        ("the header always 503 (retries run out)", [("503", "/cdn/", 10**6)]),
    ]:
        repo = f"z-lab/retry-{len(out)}"
        hub.add_commit(repo, ckpt)  # type: ignore[attr-defined]
        for kind, where, times in faults:
            hub.inject(kind, where, times=times, retry_after="0" if kind == "429" else None)  # type: ignore[attr-defined]
        t0 = time.perf_counter()
        r = CliRunner().invoke(cli, ["verify", repo, "--format", "json"])  # type: ignore[arg-type]
        wall = time.perf_counter() - t0
        last = r.output.strip().splitlines()[0] if r.exit_code == 3 else ""
        out.append(f"with {label}: exit {r.exit_code}, wall {wall:.2f} s{f' ({last})' if last else ''}")
    p = RetryPolicy()
    out.append(
        f"default policy: {p.max_retries} retries, waits {p.base_wait}-{p.max_wait} s doubling, "
        f"{p.connect_retries} quick retry when no connection, {p.timeout:.0f} s per request, "
        f"{p.deadline:.0f} s deadline per read"
    )
    return out


def write_section(body: str) -> None:
    path = ROOT / "bench" / "RESULTS.md"
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    section = (
        "## hub\n\n"
        "`python bench/bench_hub.py --write` — header-level `verify` of a Hub repo: the Qwen3.8-27B-DFlash2 layout\n"
        "served by the tests' fake Hub (tests/_kit/fakehub.py) on 127.0.0.1 through the real huggingface_hub\n"
        "client; the server counts the bytes it sends.\n\n"
        f"```text\n{body}\n```\n\n"
        "- config.json is fetched whole by one GET (read from the hub cache instead when it is there); the\n"
        "  safetensors header by one ranged GET of the first 16 KiB (readahead: the 8-byte length and the\n"
        "  8,928-byte header in one round trip; the Hub's CDN redirect is followed). No tensor data beyond\n"
        "  that readahead is transferred.\n"
        "- Every request goes through huggingface_hub's `http_stream_backoff` (dflash2_ckpt/sources/\n"
        "  hub_transport.py); the faulted runs use the default retry policy a user gets, on 127.0.0.1.\n"
    )
    start = text.find("## hub\n")
    if start >= 0:
        end = text.find("\n## ", start + 1)
        text = text[:start] + section + ("\n" + text[end + 1 :] if end >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
