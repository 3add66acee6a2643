"""A GGUF drafter in a Hub repo: the header is read by growing Range requests, never the tensor data, and
the report equals the local one."""

from __future__ import annotations

from pathlib import Path

from _kit.convert import build, nested_config  # noqa: E402
from _kit.fakehub import FakeHub
from _kit.gguf import header_of, target_with_tokenizer, to_gguf  # noqa: E402
from dflash2_ckpt.checkpoint.open_source import open_source
from dflash2_ckpt.sources.gguf_header import MAX_CHUNK
from dflash2_ckpt.usecases.verify import verify


def test_gguf_header_by_range_reads_only(hub: FakeHub, tmp_path: Path) -> None:
    # a drafter with ~8 MB of weights and a 30k-token vocabulary: the header is hundreds of KB
    p = {
        "version": "v1",
        "H": 512,
        "I": 512,
        "layers": 1,
        "nq": 4,
        "nkv": 4,
        "hd": 128,
        "V": 30000,
        "bias": False,
        "theta": 10000.0,
        "layer_types": ["full_attention"],
        "causal": False,
        "block": 4,
        "mask": 29999,
        "taps": [1, 3],
        "dtype": "float32",
    }
    src = build(tmp_path / "src", nested_config(p))
    d = tmp_path / "repo"
    d.mkdir()
    g = to_gguf(src, d / "drafter.gguf", target=target_with_tokenizer(tmp_path / "t", 30000))
    h = header_of(g)
    assert h.header_bytes > 100_000 and g.stat().st_size > h.data_start + MAX_CHUNK
    (d / "README.md").write_text("a drafter\n")
    hub.add_commit("org/drafter-gguf", d)
    for ref in ("org/drafter-gguf", "org/drafter-gguf/drafter.gguf"):
        hub.log.clear()
        remote = verify(open_source(ref))
        local = verify(g)
        assert remote.summary == local.summary
        assert [f.to_json() for f in remote.findings] == [f.to_json() for f in local.findings]
        gets = [e for e in hub.log if e.path.endswith(".gguf") and e.method == "GET" and e.status == 206]
        assert gets and all(e.range for e in gets)
        assert h.header_bytes <= remote.extra["bytes_fetched"] < h.data_start + MAX_CHUNK
