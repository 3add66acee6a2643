"""--fix on checkpoints broken at random (tensor names, causality keys): it leaves no fixable finding,
never changes a tensor byte, and a second --fix changes nothing."""

from __future__ import annotations

import json
import shutil
import struct
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _kit.cli import one_json, run
from conftest import FIXTURES

GOOD = FIXTURES / "good" / "nested-v2"
ABSENT = object()
CAUSAL = st.sampled_from([True, False, ABSENT])


def _split(path: Path) -> tuple[dict[str, object], bytes]:
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    return json.loads(raw[8 : 8 + n]), raw[8 + n :]


def _break(d: Path, prefixed: list[bool], suffix: bool, is_causal: object, dflash_causal: object) -> None:
    header, data = _split(d / "model.safetensors")
    names = [k for k in header if k != "__metadata__"]
    rename = {k: "model." + k for k, p in zip(names, prefixed) if p}
    if suffix:
        rename.update({k: rename.get(k, k) + ".weight" for k in names if k.endswith("_codebook")})
    text = json.dumps({rename.get(k, k): v for k, v in header.items()}).encode()
    (d / "model.safetensors").write_bytes(struct.pack("<Q", len(text)) + text + data)
    cfg = json.loads((d / "config.json").read_text())
    for container, key, value in (
        (cfg, "is_causal", is_causal),
        (cfg["dflash_config"], "causal", dflash_causal),
    ):
        container.pop(key, None)
        if value is not ABSENT:
            container[key] = value
    (d / "config.json").write_text(json.dumps(cfg, indent=2))


def _fixable(d: Path, unsafe: bool) -> list[str]:
    _, out, _ = run("verify", str(d), "--format", "json")
    return [
        f["code"]
        for f in one_json(out)["findings"]
        if "fix" in f and (unsafe or f["fix"]["applicability"] == "safe")
    ]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    prefixed=st.lists(st.booleans(), min_size=40, max_size=40),
    suffix=st.booleans(),
    is_causal=CAUSAL,
    dflash_causal=CAUSAL,
    unsafe=st.booleans(),
)
def test_fix_leaves_nothing_fixable_keeps_every_tensor_byte_and_is_idempotent(
    prefixed: list[bool], suffix: bool, is_causal: object, dflash_causal: object, unsafe: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "ckpt"
        shutil.copytree(GOOD, d)
        _break(d, prefixed, suffix, is_causal, dflash_causal)
        header, data = _split(d / "model.safetensors")
        flags = ["--unsafe-fixes"] if unsafe else []
        code, _, err = run("verify", str(d), "--fix", *flags)
        assert code in (0, 1) and "Traceback" not in err
        assert _fixable(d, unsafe) == []
        new_header, new_data = _split(d / "model.safetensors")
        assert new_data == data
        # the same tensors at the same offsets, only (some) names changed
        spans = sorted(tuple(v["data_offsets"]) for k, v in header.items() if k != "__metadata__")  # type: ignore[index]
        assert sorted(tuple(v["data_offsets"]) for k, v in new_header.items() if k != "__metadata__") == spans  # type: ignore[index]
        files = {p.name: p.read_bytes() for p in d.iterdir()}
        code, _, err = run("verify", str(d), "--fix", *flags)
        assert "Nothing to fix" in err
        assert {p.name: p.read_bytes() for p in d.iterdir()} == files
