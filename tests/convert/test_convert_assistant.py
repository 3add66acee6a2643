"""Property: any v1 drafter exported in the assistant dialect converts to the nested dialect describing the
same drafter (every semantic field, causality per layer), with the same tensor bytes under the bare names."""

from __future__ import annotations

import importlib.util
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _kit.convert import TARGET_LAYERS, build, drafters, nested_config, tensor_bytes
from conftest import FIXTURES
from dflash2_ckpt.checkpoint import open_checkpoint
from dflash2_ckpt.convert import convert
from dflash2_ckpt.convert.exactness import drafter_differences
from dflash2_ckpt.dev.synth import materialise
from dflash2_ckpt.engines.causality import intended as intended_causality

_spec = importlib.util.spec_from_file_location("fixture_build", FIXTURES / "build.py")
assert _spec is not None and _spec.loader is not None
fixture_build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fixture_build)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drafters().filter(lambda p: p["version"] == "v1"), st.integers(0, 2**16))
def test_assistant_to_nested_is_the_same_drafter(p: dict[str, Any], seed: int) -> None:
    p = {k: v for k, v in p.items() if k != "drafter_unknown"}  # the assistant dialect has no dflash_config
    work = Path(tempfile.mkdtemp(prefix="dflash2-asst-"))
    try:
        nested = nested_config(p)
        plain = build(work / "nested", nested, seed=seed)  # the reference tensors
        cfg = fixture_build.assistant(nested)
        data = {fixture_build.ASSISTANT_NAMES.get(n, n): b for n, (_, b) in tensor_bytes(plain).items()}
        layout = fixture_build.assistant_layout(nested, "F32")
        materialise(work / "asst", cfg, layout, data=lambda n, k: data[n])
        src = open_checkpoint(work / "asst")
        assert src.detection is not None and src.detection.dialect == "assistant"
        # the export records no vocab_size (it borrows the target's): the target gives it
        (work / "target").mkdir()
        (work / "target" / "config.json").write_text(
            json.dumps({"vocab_size": p["V"], "num_hidden_layers": TARGET_LAYERS})
        )
        r = convert(work / "asst", work / "out", to="nested", target=work / "target")
        assert r.written and r.counts()["rename"] == 2 and r.counts()["drop"] == 0
        out = open_checkpoint(work / "out")
        assert src.spec is not None and out.spec is not None
        assert out.spec.vocab_size == p["V"]
        assert drafter_differences(src.spec.with_(vocab_size=p["V"]), out.spec) == []
        # against the drafter the export was made from: the same, but that the assistant class runs every layer
        # bidirectional (and slides every layer when the export names no layer types), which the output says
        ref = open_checkpoint(plain).spec
        assert ref is not None
        assert [
            d
            for d in drafter_differences(ref, out.spec)
            if not d.startswith(("per-layer causality", "layer_types", "sliding_window"))
        ] == []
        assert intended_causality(out.spec) == (False,) * p["layers"]
        assert tensor_bytes(work / "out") == tensor_bytes(plain)
    finally:
        shutil.rmtree(work, ignore_errors=True)
