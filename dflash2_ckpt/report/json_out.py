"""`--format json`: exactly one JSON document on stdout, whatever happened (an error too)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import IO, Any


def dumps(report: Any) -> str:
    return json.dumps(report.to_json(), indent=2, default=str)


def render(report: Any, stream: IO[str]) -> None:
    stream.write(dumps(report) + "\n")


def render_error(error: Mapping[str, Any], stream: IO[str], err_stream: IO[str]) -> None:
    doc: dict[str, Any] = {"error": dict(error)}
    if error.get("exit_code") == 1:  # the run worked and said no (a refused conversion)
        doc["refused"] = True
    stream.write(json.dumps(doc, indent=2, default=str) + "\n")
