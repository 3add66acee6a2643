"""An accept report as a model-card table (markdown) or a small page (html), each with a per-position acceptance chart.

The markdown is what `push --accept-table` puts in README.md: τ with its interval, the acceptance rate,
the pair and the settings, so a reader can reproduce the figure; the chart is an inline SVG (the Hub and
GitHub render an <img> with a data URI; the page embeds the SVG itself)."""

from __future__ import annotations

import base64
import html
from typing import Any

from ..usecases.card_markdown import md_cell, md_value

BAR_W, BAR_GAP, HEIGHT = 18, 4, 80


def chart_svg(rates: list[float]) -> str:
    """Bars of P(draft j accepted), j = 1 … B − 1, on a 0-1 scale, labelled with the position."""
    width = max(1, len(rates)) * (BAR_W + BAR_GAP) + BAR_GAP
    bars = []
    for j, r in enumerate(rates):
        h = max(0.0, min(1.0, r)) * HEIGHT
        x = BAR_GAP + j * (BAR_W + BAR_GAP)
        bars.append(
            f'<rect x="{x}" y="{HEIGHT - h:.1f}" width="{BAR_W}" height="{h:.1f}" fill="#4c78a8">'
            f"<title>position {j + 1}: {r:.2f}</title></rect>"
            f'<text x="{x + BAR_W / 2}" y="{HEIGHT + 12}" font-size="9" text-anchor="middle">{j + 1}</text>'
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{HEIGHT + 16}" '
        f'role="img" aria-label="acceptance per draft position">'
        f'<line x1="0" y1="{HEIGHT}" x2="{width}" y2="{HEIGHT}" stroke="#999"/>{"".join(bars)}</svg>'
    )


def _cell(v: Any) -> str:
    # names come from the command line and the Hub, and the table goes into a model card: shown inert
    return md_cell(v)


def verdict(r: Any) -> str:
    """PASSED, or FAILED with the codes that failed it (DF751 for a drafter that does not draft): a table
    pasted into a card carries the run's own verdict, so a failing τ cannot pass for a result."""
    if not r.failed():
        return "PASSED"
    codes = sorted({f.code for f in r.findings if f.severity == "error"})
    return f"FAILED ({', '.join(codes)})" if codes else "FAILED"


def markdown(r: Any) -> str:
    t = r.tau
    svg = base64.b64encode(chart_svg(r.per_position).encode()).decode()
    rows = [
        "| drafter | target | τ (mean acceptance length) | 95% CI | acceptance rate | block | prompts | tokens "
        "| verdict |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| {_cell(r.drafter)} | {_cell(r.target)} | {t.mean:.2f} | {t.low:.2f} – {t.high:.2f} | "
        f"{r.acceptance_rate:.3f} | {r.block_size} | {len(r.prompts)} ({_cell(r.prompts_source)}) | "
        f"{r.max_new_tokens} | **{verdict(r)}** |",
        "",
        "| draft position | " + " | ".join(str(j + 1) for j in range(len(r.per_position))) + " |",
        "|---|" + "---|" * len(r.per_position),
        "| accepted | " + " | ".join(f"{x:.2f}" for x in r.per_position) + " |",
        "",
        f'<img alt="acceptance per draft position" src="data:image/svg+xml;base64,{svg}"/>',
        "",
        f"Measured with `dflash2-ckpt accept` on {md_value(r.device)} (greedy, lossless: "
        f"{'yes' if all(p.lossless for p in r.prompts) else 'NO'}).",
    ]
    return "\n".join(rows) + "\n"


def page(r: Any) -> str:
    t = r.tau
    esc = html.escape
    return (
        '<!doctype html><html><head><meta charset="utf-8"><title>accept: '
        + esc(r.drafter)
        + "</title></head><body>"
        f"<h1>{esc(r.drafter)} drafting for {esc(r.target)}</h1>"
        f"<p><strong>Verdict: {esc(verdict(r))}</strong></p>"
        f"<p>τ {t.mean:.3f} (95% CI {t.low:.3f} – {t.high:.3f}), acceptance rate {r.acceptance_rate:.3f}, "
        f"blocks of {r.block_size}, {len(r.prompts)} prompts</p>"
        f"<figure>{chart_svg(r.per_position)}<figcaption>acceptance per draft position</figcaption></figure>"
        "</body></html>\n"
    )
