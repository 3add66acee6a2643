"""The audit table as Markdown (for a model card or README), a self-contained HTML page, and rich text."""

from __future__ import annotations

import html
import json
import re
from typing import TYPE_CHECKING, Any

from ..audit.rows import Row, column
from .safe import one_line, printable

if TYPE_CHECKING:
    from ..audit.run import AuditResult

_VERDICT_MARK = {
    "loads": "✅ loads",
    "degraded": "⚠️ degraded",
    "fails": "❌ fails",
    "needs-conversion": "🔁 needs-conversion",
    "unsupported": "— unsupported",
    "not-validated": "◌ not-validated",
    "unverified": "? unverified",
}


def _short(sha: str | None) -> str:
    return sha[:12] if sha else ""


def _counts(row: Row) -> str:
    if not row.readable:
        return "unreadable"
    return (
        f"{row.counts.get('error', 0)} E / {row.counts.get('warning', 0)} W / {row.counts.get('info', 0)} I"
    )


def summary_line(result: AuditResult) -> str:
    s = result.summary()
    per = ", ".join(f"{c}: {n}/{s['drafters']}" for c, n in s["loads"].items())
    return (
        f"{s['clean']}/{s['drafters']} drafters load cleanly; {s['drafters'] - s['readable']} unreadable"
        + (f"; loads per engine: {per}" if per else "")
    )


def _md_cell(text: str) -> str:
    # a CR splits a table row as LF does; other control characters show as escapes
    return printable(text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")).replace("|", "\\|")


def to_markdown(result: AuditResult) -> str:
    cols = result.columns
    head = ["drafter", "revision", "dialect", "version", "target", "findings", *cols]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in result.rows:
        verdicts = r.verdicts()
        cells = [
            r.repo + (f"/{r.subfolder}" if r.subfolder else ""),
            _short(r.revision),
            r.dialect or "",
            r.version or "",
            r.target or "",
            _counts(r) if r.readable else f"unreadable: {r.error.get('message', '') if r.error else ''}",
            *[_VERDICT_MARK.get(verdicts.get(c, ""), verdicts.get(c, "")) for c in cols],
        ]
        lines.append("| " + " | ".join(_md_cell(str(c)) for c in cells) + " |")
    return "\n".join(lines) + f"\n\n{summary_line(result)}\n"


def newest_columns(result: AuditResult) -> list[str]:
    """Each engine's newest checked release among the columns (profiles are oldest first per engine)."""
    last: dict[str, str] = {}
    for r in result.rows:
        for e in r.engines:
            last[str(e.get("engine"))] = column(e)
    return list(last.values())


def _name(r: Row) -> str:
    return (
        r.repo
        + (f"/{r.subfolder}" if r.subfolder and not r.repo.endswith(r.subfolder) else "")
        + (f"@{r.revision[:7]}" if r.revision else "")
    )


_ORDER = ("loads", "degraded", "needs-conversion", "fails", "not-validated", "unverified", "unsupported")


def drafter_line(r: Row, cols: list[str], engines_of: dict[str, str]) -> str:
    """One drafter: what it is, its findings, the engines whose newest release loads it, and how many
    judge it otherwise (named with --verbose); unreadable: why."""
    if not r.readable:
        err = r.error or {}
        hint = f" (hint: {err['hint']})" if err.get("hint") else ""
        return f"{_name(r)}: unreadable: {err.get('message', '')}{hint}"
    v = r.verdicts()
    groups: dict[str, list[str]] = {}
    for c in cols:
        if c in v:
            groups.setdefault(v[c], []).append(engines_of[c])
    loads = groups.pop("loads", [])
    rest = ", ".join(
        f"{len(groups[k])} {k}"
        for k in sorted(groups, key=lambda x: (_ORDER.index(x) if x in _ORDER else len(_ORDER), x))
    )
    said = (f"loads in {', '.join(loads)}" if loads else "loads in no engine") + (f"; {rest}" if rest else "")
    n = r.counts
    return (
        f"{_name(r)} ({r.dialect or '?'} {r.version or 'not DFlash'}, {n.get('error', 0)}E "
        f"{n.get('warning', 0)}W): {said}"
    )


def totals_line(result: AuditResult) -> str:
    s = result.summary()
    per = ", ".join(f"{str(e)} {s['loads'].get(c, 0)}" for c, e in _engine_names(result).items())
    return (
        f"{s['clean']} of {s['drafters']} drafters load cleanly, {s['drafters'] - s['readable']} unreadable"
        + (f"; loads per engine (newest release): {per}" if per else "")
    )


def _engine_names(result: AuditResult) -> dict[str, str]:
    """newest column -> its engine's name."""
    names = {column(e): str(e.get("engine")) for r in result.rows for e in r.engines}
    return {c: names[c] for c in newest_columns(result)}


def text_lines(result: AuditResult, width: int, verbose: bool = False) -> list[str]:
    """The totals, then one entry per drafter, each wrapped to `width`; `verbose` adds every release.
    Names and messages come from drafters and the Hub: each is one escaped line before it is wrapped."""
    from .fit import wrap  # lazy: report.fit loads only on this path

    cols = newest_columns(result)
    engines_of = {column(e): str(e.get("engine")) for r in result.rows for e in r.engines}
    lines = wrap(totals_line(result), width, hanging="  ")
    for r in result.rows:
        lines += wrap(one_line(drafter_line(r, cols, engines_of)), width, indent="  ", hanging="      ")
        if verbose:
            every = "; ".join(f"{c}: {x}" for c, x in r.verdicts().items())
            lines += (
                wrap(f"every release: {every}", width, indent="      ", hanging="        ") if every else []
            )
            lines += [
                ln
                for f in r.findings
                for ln in wrap(
                    one_line(f"{f.get('code')} {f.get('severity')}: {f.get('message')}"),
                    width,
                    indent="      ",
                    hanging="        ",
                )
            ]
    return lines


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dflash2-ckpt audit</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}
table{border-collapse:collapse;font-size:.9rem}th,td{border:1px solid #ccc;padding:.3rem .5rem;text-align:left}
th{background:#f3f3f3;cursor:pointer;user-select:none}th[data-dir=asc]::after{content:" ▲"}th[data-dir=desc]::after{content:" ▼"}
.loads{background:#e6f6e6}.degraded{background:#fff4d6}.fails{background:#fde2e2}.needs-conversion{background:#e2f0fd}
.unsupported{color:#888}.unreadable{color:#b00}tr.hidden{display:none}code{font-size:.85rem}
.controls{margin:.8rem 0}.controls label{margin-right:1rem}details{margin:.4rem 0}details.hidden{display:none}
.wrap{max-height:80vh;overflow:auto}thead{position:sticky;top:0;z-index:2}th.group{text-align:center;cursor:default}
td.v,th.v{white-space:nowrap;font-size:.8rem;padding:.2rem .3rem}
tbody td:first-child,thead th:first-child{position:sticky;left:0;background:#fff;z-index:1}thead th:first-child{z-index:3;background:#f3f3f3}
.verify-errors{outline:2px solid #b00;outline-offset:-2px}.verify-errors::after{content:" ⚠";color:#b00}
.legend span{display:inline-block;padding:.1rem .4rem;margin-right:.4rem;border:1px solid #ccc}
</style></head><body>
<h1>dflash2-ckpt audit</h1>
<p id="summary">__SUMMARY__</p>
<div class="controls">
<label>engine <select id="engine"><option value="">any</option>__ENGINE_OPTIONS__</select></label>
<label>verdict <select id="verdict"><option value="">any</option>__VERDICT_OPTIONS__</select></label>
<label>text <input id="text" type="search" placeholder="repo, dialect, target"></label>
<span id="shown"></span>
</div>
<p class="legend" id="legend">verdicts: <span class="loads">loads</span><span class="degraded">degraded</span>
<span class="needs-conversion">needs-conversion</span><span class="fails">fails</span>
<span class="unsupported">unsupported</span><span class="loads verify-errors">verify found errors</span>
(a verdict with ⚠ loads by the engine's rules, but verify reported error findings)</p>
<div class="wrap"><table id="audit"><thead><tr>__HEAD__</tr></thead><tbody>
__ROWS__
</tbody></table></div>
<h2>Findings</h2>
__DETAILS__
<script>
"use strict";
const table = document.getElementById("audit");
const body = table.tBodies[0];
const rows = Array.from(body.rows);
function key(cell) {
  const n = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
  const x = Number(n);
  return n !== "" && !Number.isNaN(x) ? x : n.toLowerCase();
}
// the sortable headers name their column: an engine's releases sit in a second header row under it
const heads = Array.from(table.tHead.querySelectorAll("th[data-col]"));
function sortBy(th) {
  const i = Number(th.dataset.col), dir = th.dataset.dir === "asc" ? "desc" : "asc";
  for (const h of heads) { delete h.dataset.dir; }
  th.dataset.dir = dir;
  const sorted = Array.from(body.rows).sort((a, b) => {
    const x = key(a.cells[i]), y = key(b.cells[i]);
    return (x < y ? -1 : x > y ? 1 : 0) * (dir === "asc" ? 1 : -1);
  });
  for (const r of sorted) { body.appendChild(r); }
}
for (const th of heads) { th.addEventListener("click", () => sortBy(th)); }
function applyFilter() {
  const engine = document.getElementById("engine").value;
  const verdict = document.getElementById("verdict").value;
  const text = document.getElementById("text").value.trim().toLowerCase();
  let shown = 0;
  for (const r of rows) {
    const verdicts = JSON.parse(r.dataset.verdicts);
    const picked = engine ? [verdicts[engine] || ""] : Object.values(verdicts);
    const okVerdict = !verdict || picked.includes(verdict);
    const okText = !text || r.dataset.search.includes(text);
    r.classList.toggle("hidden", !(okVerdict && okText));
    const details = document.getElementById(r.dataset.details);
    if (details) { details.classList.toggle("hidden", !(okVerdict && okText)); }   // the findings follow
    if (okVerdict && okText) { shown += 1; }
  }
  document.getElementById("shown").textContent = shown + " of " + rows.length + " shown";
}
for (const id of ["engine", "verdict", "text"]) {
  document.getElementById(id).addEventListener("input", applyFilter);
}
applyFilter();
</script>
</body></html>
"""


def _e(text: Any) -> str:
    return html.escape(printable("" if text is None else str(text)))


# the inline markdown finding messages and Hub errors carry: code spans, links, bare URLs, strong and
# emphasis; `_x_` emphasises only between non-word characters and `__` never does, so snake_case and
# dunder names stay as they are
_INLINE = re.compile(
    r"`(?P<code>[^`]+)`"
    r"|\[(?P<text>[^\]\n]+)\]\((?P<href>[^)\s]+)\)"
    r"|(?P<url>https?://[^\s<>()`]*[^\s<>()`.,;:!?'\"])"
    r"|\*\*(?=\S)(?P<strong>.+?)(?<=\S)\*\*"
    r"|(?<![\w*])\*(?=[^\s*])(?P<em>[^*]+?)(?<=[^\s*])\*(?![\w*])|(?<!\w)_(?=[^\s_])(?P<em_>[^_]+?)(?<=[^\s_])_(?!\w)"
)
_WEB = re.compile(r"https?://", re.I)


def _link(inner: str, href: str) -> str:
    """`inner` (HTML already) as a link to `href`: only web addresses become links."""
    if not _WEB.match(href):  # javascript:, data:, relative: shown as text, never followed
        return f"{inner} ({_e(href)})"
    return f'<a href="{_e(href)}" rel="noopener noreferrer">{inner}</a>'


def _m(text: Any) -> str:
    """A message as HTML: its inline markdown rendered (<code>, <a>, <strong>, <em>), so no cell shows raw
    backticks, asterisks or [text](url); everything else escaped."""
    s = printable("" if text is None else str(text))
    out, at = [], 0
    for m in _INLINE.finditer(s):
        out.append(html.escape(s[at : m.start()]))
        at = m.end()
        g = m.groupdict()
        if g["code"] is not None:
            out.append(f"<code>{html.escape(g['code'])}</code>")
        elif g["href"] is not None:
            out.append(_link(_m(g["text"]), g["href"]))
        elif g["url"] is not None:
            out.append(_link(html.escape(g["url"]), g["url"]))
        elif g["strong"] is not None:
            out.append(f"<strong>{_m(g['strong'])}</strong>")
        else:
            out.append(f"<em>{_m(g['em'] or g['em_'])}</em>")
    return "".join(out) + html.escape(s[at:])


def _details(n: int, r: Row) -> str:
    parts = [f'<details id="row-{n}"><summary><code>{_e(r.repo)}</code> {_e(_counts(r))}</summary>']
    if r.error:
        parts.append(
            f'<p class="unreadable">{_m(r.error.get("message"))}'
            + (f"<br>hint: {_m(r.error.get('hint'))}" if r.error.get("hint") else "")
            + "</p>"
        )
    if r.findings:
        parts.append(
            "<ul>"
            + "".join(
                f"<li><b>{_e(f.get('code'))}</b> {_e(f.get('severity'))}: {_m(f.get('message'))}</li>"
                for f in r.findings
            )
            + "</ul>"
        )
    for m, e in enumerate(r.engines):
        reasons = "".join(
            f"<li><b>{_e(x.get('code'))}</b> {_m(x.get('message'))}</li>" for x in e.get("reasons", ())
        )
        serve = f"<pre>{_e(e.get('serve'))}</pre>" if e.get("serve") else ""
        parts.append(
            f'<div id="row-{n}-e{m}"><b>{_e(column(e))}</b>: {_e(e.get("verdict"))}'
            f"<ul>{reasons}</ul>{serve}</div>"
        )
    return "".join(parts) + "</details>"


_FIXED = ("drafter", "revision", "dialect", "version", "target", "errors", "warnings")


def _groups(result: AuditResult) -> dict[str, list[tuple[str, str]]]:
    """engine -> its columns (column, release label), in the profiles' order."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for c in result.columns:
        entry = next(e for r in result.rows for e in r.engines if column(e) == c)
        groups.setdefault(str(entry.get("engine")), []).append((c, str(entry.get("versions") or "") or c))
    return groups


def _head(groups: dict[str, list[tuple[str, str]]]) -> str:
    """Two header rows: the drafter's columns span both; each engine heads its releases' columns, so 17
    columns read as 8 engines and fit a screen (the first column stays in view when scrolled)."""
    span = ' rowspan="2"' if groups else ""
    top = "".join(f'<th data-col="{i}"{span}>{_e(h)}</th>' for i, h in enumerate(_FIXED))
    top += "".join(f'<th class="group" colspan="{len(v)}">{_e(g)}</th>' for g, v in groups.items())
    labels = [label for v in groups.values() for _, label in v]
    below = "".join(f'<th class="v" data-col="{len(_FIXED) + i}">{_e(x)}</th>' for i, x in enumerate(labels))
    return top + (f"</tr><tr>{below}" if groups else "")


def to_html(result: AuditResult) -> str:
    groups = _groups(result)
    cols = [c for v in groups.values() for c, _ in v]  # the body's cells in the header's order
    head = _head(groups)
    body, details = [], []
    verdict_names: list[str] = []
    for n, r in enumerate(result.rows):
        v = r.verdicts()
        index = {column(e): m for m, e in enumerate(r.engines)}
        verdict_names += [x for x in v.values() if x not in verdict_names]
        cells = [
            f'<td><a href="#row-{n}">{_e(r.repo)}</a></td>',
            f"<td><code>{_e(_short(r.revision))}</code></td>",
            f"<td>{_e(r.dialect)}</td>",
            f"<td>{_e(r.version)}</td>",
            f"<td>{_e(r.target)}</td>",
        ]
        if r.readable:
            cells += [f"<td>{r.counts.get('error', 0)}</td>", f"<td>{r.counts.get('warning', 0)}</td>"]
        else:
            cells.append(
                f'<td colspan="2" class="unreadable" data-sort="-1">{_m((r.error or {}).get("message"))}</td>'
            )
        errors = r.counts.get("error", 0) if r.readable else 0
        for c in cols:
            verdict = v.get(c, "")
            link = f'<a href="#row-{n}-e{index[c]}">{_e(verdict)}</a>' if c in index else ""
            flag = " verify-errors" if errors and verdict else ""
            title = f' title="verify found {errors} error(s)"' if flag else ""
            cells.append(f'<td class="v {_e(verdict)}{flag}"{title}>{link}</td>')
        search = " ".join(str(x) for x in (r.repo, r.dialect, r.version, r.target) if x).lower()
        body.append(
            f'<tr data-verdicts=\'{_e(json.dumps(v))}\' data-search="{_e(search)}" data-details="row-{n}">'
            + "".join(cells)
            + "</tr>"
        )
        details.append(_details(n, r))
    return (
        _PAGE.replace("__SUMMARY__", _e(summary_line(result)))
        .replace("__ENGINE_OPTIONS__", "".join(f'<option value="{_e(c)}">{_e(c)}</option>' for c in cols))
        .replace(
            "__VERDICT_OPTIONS__", "".join(f'<option value="{_e(x)}">{_e(x)}</option>' for x in verdict_names)
        )
        .replace("__HEAD__", head)
        .replace("__ROWS__", "\n".join(body))
        .replace("__DETAILS__", "\n".join(details))
    )
