"""`--format sarif`: SARIF 2.1.0, so GitHub code scanning and other CI tools show findings on the config line.

Rules are the finding codes of the log's results (from the registry), each linking to its row of
docs/codes.md as released with this version; each result sits on config.json at the key of its field
(line and columns), or on the file it names. An error that stopped the run is a failed invocation with one
notification, no results. A finding `verify --fix` repairs by editing a config carries `fixes`: the
rewritten file as one replacement (tensor renames rewrite a binary header and are left to --fix itself).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import IO, Any
from urllib.parse import quote

from ..codes import REGISTRY, family_of, help_uri
from ..findings import Verdict
from .locate import Location, locate_all, refusal

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}
FINGERPRINT = "dflash2Finding/v1"


def _rule(c: Any) -> dict[str, Any]:
    full = (
        f"{c.summary}. {c.code} ({c.name}) is a {c.severity} in the {family_of(c.code)[1]} family "
        f"(DF{c.code[2]}xx); `dflash2-ckpt codes` lists every code."
    )
    return {
        "id": c.code,
        "name": c.name,
        "shortDescription": {"text": c.summary},
        "fullDescription": {"text": full},
        "helpUri": help_uri(c.code),
        "help": {
            "text": f"{full} What breaks: {c.breaks} Fix: {c.fix}",
            "markdown": f"**{c.code} {c.name}** ({c.severity}): {c.summary}.\n\n**What breaks:** {c.breaks}"
            f"\n\n**Fix:** {c.fix}\n\nSee [{c.code} in the finding codes]({help_uri(c.code)}).",
        },
        "defaultConfiguration": {"level": LEVEL[c.severity]},
    }


def fingerprint(f: Any, uri: str) -> str:
    """What identifies a finding across runs without its line: code, file, field or tensor (the message
    only when neither is named), so an alert survives edits that move config.json's lines."""
    anchor = f.field or f.tensor or " ".join(str(f.message).split())
    return hashlib.sha256("\0".join((f.code, uri, anchor)).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _version() -> str:
    from ..version import package_version  # lazy: version loads only on this path

    return package_version()


def _log(results: list[dict[str, Any]], invocation: dict[str, Any]) -> dict[str, Any]:
    """The rules are those the results use, in code order; each result's ruleIndex is set here to match."""
    used = sorted({r["ruleId"] for r in results})
    index = {code: i for i, code in enumerate(used)}
    for r in results:
        r["ruleIndex"] = index[r["ruleId"]]
    driver = {"name": "dflash2-ckpt", "version": _version(), "rules": [_rule(REGISTRY[c]) for c in used]}
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "invocations": [invocation], "results": results}],
    }


def _region(loc: Location) -> dict[str, Any]:
    if not loc.line:
        return {}
    cols = {"startColumn": loc.column, "endColumn": loc.end_column} if loc.column and loc.end_column else {}
    return {"region": {"startLine": loc.line, **cols}}


def _fixes(f: Any, uri: str) -> list[dict[str, Any]]:
    """What `verify --fix` would write for this finding, as SARIF replacements of the whole file (the files
    sit beside the one the result is located in)."""
    fix = getattr(f, "fix", None)
    if fix is None or not fix.changes:
        return []
    base = uri.rpartition("/")[0]
    changes = [
        {
            "artifactLocation": {"uri": quote(f"{base}/{name}" if base else name, safe="/")},
            "replacements": [
                {"deletedRegion": {"charOffset": 0, "charLength": len(old)}, "insertedContent": {"text": new}}
            ],
        }
        for name, old, new in fix.changes
    ]
    return [
        {
            "description": {
                "text": f"{fix.description} ({fix.applicability}: dflash2-ckpt verify --fix"
                f"{'' if fix.applicability == 'safe' else ' --unsafe-fixes'})"
            },
            "artifactChanges": changes,
        }
    ]


def _results(report: Any) -> list[dict[str, Any]]:
    results = []
    for f, loc in locate_all(report):
        region = _region(loc)
        result: dict[str, Any] = {
            "ruleId": f.code,
            "ruleIndex": -1,
            "level": LEVEL[f.severity or "info"],
            "message": {"text": f.message},
            "locations": [
                {"physicalLocation": {"artifactLocation": {"uri": quote(loc.uri, safe="/")}, **region}}
            ],
            "partialFingerprints": {FINGERPRINT: fingerprint(f, loc.uri)},
        }
        fixes = _fixes(f, loc.uri)
        if fixes:
            result["fixes"] = fixes
        props = {k: v for k, v in (("field", f.field), ("tensor", f.tensor)) if v is not None}
        if props:
            result["properties"] = props
        results.append(result)
    return results


def document(report: Verdict) -> dict[str, Any]:
    """executionSuccessful: the tool checked everything it was given (findings are results, not failures);
    a drafter it could not read (audit) makes it false, with one notification each. exitCode: the exit code
    the findings give (1 when the report fails)."""
    code = 1 if report.failed() else 0
    skipped = tuple(getattr(report, "unreadable", ()))
    invocation: dict[str, Any] = {
        "executionSuccessful": not skipped,
        "exitCode": code,
        "properties": {"subject": str(report.subject)},
    }
    if skipped:
        invocation["toolExecutionNotifications"] = [
            {"level": "error", "message": {"text": s}} for s in skipped
        ]
    return _log(_results(report), invocation)


def render(report: Verdict, stream: IO[str]) -> None:
    stream.write(json.dumps(document(report), indent=2, default=str) + "\n")


def render_error(error: Mapping[str, Any], stream: IO[str], err_stream: IO[str]) -> None:
    text = str(error.get("message", ""))
    if error.get("hint"):
        text += f" (hint: {error['hint']})"
    note = {"level": "error", "message": {"text": text}, "properties": {"error": dict(error)}}
    refused = refusal(error)  # the run worked and said no: its findings are results
    doc = _log(
        _results(refused) if refused else [],
        {"executionSuccessful": error.get("exit_code") == 1, "toolExecutionNotifications": [note]},
    )
    stream.write(json.dumps(doc, indent=2, default=str) + "\n")
