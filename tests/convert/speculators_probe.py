"""Runs in the speculators environment (scripts/speculators_venv.py), not the toolkit's: loads one flat
checkpoint directory with speculators and prints what the test compares, as one JSON object."""

from __future__ import annotations

import json
import sys

from speculators import SpeculatorModel, SpeculatorModelConfig


def main(path: str) -> None:
    cfg = SpeculatorModelConfig.from_pretrained(path)
    model = SpeculatorModel.from_pretrained(path)
    verifier = cfg.speculators_config.verifier
    print(
        json.dumps(
            {
                "verifier": verifier.name_or_path,
                "architectures": list(verifier.architectures),
                "model": type(model).__name__,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
