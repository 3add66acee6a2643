"""`--format sarif`: SARIF 2.1.0, so GitHub code scanning and other CI tools show findings on the config line.

Rules are the finding-code registry; each result sits on config.json at the line of its field, or on the
file it names. An error that stopped the run is a failed invocation with one notification, no results.
"""
from __future__ import annotations

import json
from typing import IO, Any, Mapping

from ..codes import all_codes
from .locate import locate_all, refusal

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _version() -> str:
    from ..version import package_version
    return package_version()


def _driver() -> dict[str, Any]:
    rules = [{"id": c.code, "name": c.name, "shortDescription": {"text": c.summary},
              "defaultConfiguration": {"level": LEVEL[c.severity]}} for c in all_codes()]
    return {"name": "dflash2-ckpt", "version": _version(), "rules": rules}


def _log(results: list[dict[str, Any]], invocation: dict[str, Any]) -> dict[str, Any]:
    return {"$schema": SCHEMA, "version": "2.1.0",
            "runs": [{"tool": {"driver": _driver()}, "invocations": [invocation], "results": results}]}


def _results(report: Any) -> list[dict[str, Any]]:
    index = {c.code: i for i, c in enumerate(all_codes())}
    results = []
    for f, loc in locate_all(report):
        region = {"region": {"startLine": loc.line}} if loc.line else {}
        result: dict[str, Any] = {
            "ruleId": f.code, "ruleIndex": index[f.code], "level": LEVEL[f.severity or "info"],
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": loc.uri}, **region}}]}
        props = {k: v for k, v in (("field", f.field), ("tensor", f.tensor)) if v is not None}
        if props:
            result["properties"] = props
        results.append(result)
    return results


def document(report: Any) -> dict[str, Any]:
    return _log(_results(report), {"executionSuccessful": True, "properties": {"subject": str(report.subject)}})


def render(report: Any, stream: IO[str]) -> None:
    stream.write(json.dumps(document(report), indent=2, default=str) + "\n")


def render_error(error: Mapping[str, Any], stream: IO[str], err_stream: IO[str]) -> None:
    text = str(error.get("message", ""))
    if error.get("hint"):
        text += f" (hint: {error['hint']})"
    note = {"level": "error", "message": {"text": text}, "properties": {"error": dict(error)}}
    refused = refusal(error)      # the run worked and said no: its findings are results
    doc = _log(_results(refused) if refused else [],
               {"executionSuccessful": error.get("exit_code") == 1, "toolExecutionNotifications": [note]})
    stream.write(json.dumps(doc, indent=2, default=str) + "\n")
