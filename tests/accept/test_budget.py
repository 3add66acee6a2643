"""accept refuses, before loading anything, a pair that would not fit --max-memory (the kernel would
otherwise kill it with nothing printed): a 27B-layout drafter and target, from their configs alone."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from _kit.cli import invoke_cli

pytest.importorskip("torch")
pytest.importorskip("transformers")

from dflash2_ckpt.cli.accept import accept_command  # noqa: E402
from dflash2_ckpt.dev.synth import materialise, read_tensor_list  # noqa: E402

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "real"
NAME = "z-lab_Qwen3.8-27B-DFlash2"


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("27b")
    cfg = json.loads((REAL / f"{NAME}.config.json").read_text())
    drafter = materialise(root / "drafter", cfg, read_tensor_list(REAL / f"{NAME}.tensors.tsv"))  # sparse
    target = root / "target"
    target.mkdir()
    (target / "config.json").write_text(
        json.dumps(
            {
                "architectures": ["Qwen3ForCausalLM"],
                "model_type": "qwen3",
                "vocab_size": cfg["vocab_size"],
                "hidden_size": cfg.get("target_hidden_size") or 5120,
                "intermediate_size": 17408,
                "num_hidden_layers": cfg["num_target_layers"],
                "num_attention_heads": 40,
                "num_key_value_heads": 8,
                "head_dim": 128,
                "tie_word_embeddings": False,
            }
        )
    )
    return drafter, target


def test_over_the_budget_is_refused_before_loading_with_what_would_fit(pair: tuple[Path, Path]) -> None:
    drafter, target = pair
    t0 = time.monotonic()
    r = invoke_cli(
        accept_command,
        [str(drafter), "--target", str(target), "--device", "cpu", "--max-memory", "8G", "--format", "json"],
    )
    assert r.exit_code == 3, r.output
    err = json.loads(r.stdout)["error"]
    assert err["type"] == "BudgetError" and "nothing was loaded" in err["message"]
    need = float(err["message"].split("about ")[1].split(" GiB")[0])
    assert need > 100  # 27B target parameters in float32 alone are ~108 GB
    assert "--max-memory" in err["hint"] and "--device cuda" in err["hint"]
    assert time.monotonic() - t0 < 30  # arithmetic on two configs, no weights read


def test_text_output_says_it_too(pair: tuple[Path, Path]) -> None:
    drafter, target = pair
    r = invoke_cli(
        accept_command, [str(drafter), "--target", str(target), "--device", "cpu", "--max-memory", "8G"]
    )
    assert r.exit_code == 3 and "8.0 GiB budget" in r.output
