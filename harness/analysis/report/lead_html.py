"""The lead figure in HTML: each row's words are HTML (they wrap at any width, never cut) and its
drawing an inline SVG placed in percent of its width, so that the tick labels keep their reading
size on a phone instead of shrinking with a scaled image."""

from __future__ import annotations

import html

from harness.analysis.report.lead import (
    AXIS_TITLE,
    Lead,
    LeadRow,
    LeadYouden,
    capital,
    tick_label,
    ticks,
)
from harness.analysis.report.results import fmt

PLOT_HEIGHT = 26  # px: one row's drawing
AXIS_HEIGHT = 20  # px: its tick marks and labels

CSS = """
.lead{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1.15fr);
grid-template-rows:auto 1fr;grid-template-areas:"text figure" "notes figure";gap:0 2em;
align-items:start}
.lead-text{grid-area:text}.lead-notes{grid-area:notes}
.lead-figure{grid-area:figure;margin:1.2em 0 .6em;padding:.5em .8em;border:1px solid #ddd;
border-radius:4px;background:#fcfcfc}
@media (max-width:760px){.lead{grid-template-columns:minmax(0,1fr);grid-template-rows:auto;
grid-template-areas:"text" "figure" "notes"}}
.lf-row{margin:.3em 0 .7em}.lf-label{font-size:.92em}.lf-note{font-size:.82em;color:#444}
.lf-track{padding:0 1.3em}.lf-track svg{display:block;overflow:visible}
.lf-track text{font-size:12px;fill:#333}
.lf-title{font-size:.82em;color:#444;text-align:center;margin:-.3em 0 .4em}
.lead-figure figcaption{font-size:.85em}
"""


def figure_html(lead: Lead) -> str:
    """The lead figure: one row per estimate on a shared difference axis, then J."""
    low, high = lead.axis()
    parts = [_row(row, low, high) for row in lead.rows]
    parts.append(f'<div class="lf-title">{html.escape(AXIS_TITLE)}</div>')
    if lead.youden is not None:
        parts.append(_youden(lead.youden))
    caption = html.escape(lead.caption)
    return (
        f'<figure class="lead-figure" id="verdict-figure">{"".join(parts)}'
        f"<figcaption>{caption}</figcaption></figure>"
    )


def _row(row: LeadRow, low: float, high: float) -> str:
    def x(value: float) -> str:
        return _pct(value, low, high)

    marks = []
    if row.margin:
        m = row.margin
        width = (2 * m) / (high - low) * 100
        marks.append(
            f'<rect x="{x(-m)}" y="0" width="{width:.2f}%" height="100%" '
            'fill="#7f8c8d" fill-opacity=".16"/>'
        )
        marks += [_vline(x(v), 'stroke="#555" stroke-dasharray="4 3"') for v in (-m, m)]
    marks.append(_vline(x(0.0), 'stroke="#000"'))
    if row.low is not None and row.high is not None:
        marks.append(_hline(x(row.low), x(row.high), 2))
    if row.inner is not None:
        marks.append(_hline(x(row.inner[0]), x(row.inner[1]), 6))
    marks.append(_point(x(row.estimate)))
    label = (
        f"<strong>{html.escape(capital(row.label))}</strong> "
        f"{fmt(row.estimate, signed=True)}, {html.escape(row.interval)} "
        f"[{fmt(row.low, signed=True)}, {fmt(row.high, signed=True)}]"
        + (f" ({html.escape(row.inner_text)})" if row.inner_text else "")
    )
    note = html.escape(row.test)
    if row.margin:
        note = f"margin +/-{row.margin:.3g} ({html.escape(row.margin_text)}); {note}"
    return _track(label, marks, _axis(low, high, signed=True), note, row.text())


def _youden(j: LeadYouden) -> str:
    marks = [_vline(_pct(j.minimum, 0, 1), 'stroke="#555" stroke-dasharray="1 3"')]
    if j.bound is not None:
        marks += [
            _hline(_pct(j.bound, 0, 1), _pct(j.value, 0, 1), 2),
            f'<line x1="{_pct(j.bound, 0, 1)}" x2="{_pct(j.bound, 0, 1)}" y1="25%" y2="75%" '
            'stroke="#222" stroke-width="2"/>',
        ]
    marks.append(_point(_pct(j.value, 0, 1)))
    bound = (
        f", lower bound {fmt(j.bound)} ({html.escape(j.bound_text)})" if j.bound is not None else ""
    )
    label = f"<strong>{html.escape(capital(j.who))}</strong> {fmt(j.value)}{bound}"
    note = f"the gate needs the lower bound at least {j.minimum:g} (dotted): " + (
        "passed" if j.passed else "not passed"
    )
    return _track(label, marks, _axis(0.0, 1.0, signed=False), note, j.text())


def _track(label: str, marks: list[str], axis: str, note: str, described: str) -> str:
    plot = (
        f'<svg class="lf-plot" width="100%" height="{PLOT_HEIGHT}" role="img" '
        f'aria-label="{html.escape(described)}">{"".join(marks)}</svg>'
    )
    return (
        f'<div class="lf-row"><div class="lf-label">{label}</div>'
        f'<div class="lf-track">{plot}{axis}</div><div class="lf-note">{note}</div></div>'
    )


def _axis(low: float, high: float, signed: bool) -> str:
    marks = ['<line x1="0" x2="100%" y1="0.5" y2="0.5" stroke="#888"/>']
    for t in ticks(low, high):
        at = _pct(t, low, high)
        text = tick_label(t) if signed else f"{t:g}"
        marks.append(f'<line x1="{at}" x2="{at}" y1="0" y2="5" stroke="#888"/>')
        marks.append(f'<text x="{at}" y="17" text-anchor="middle">{text}</text>')
    return (
        f'<svg class="lf-axis" width="100%" height="{AXIS_HEIGHT}" aria-hidden="true">'
        f"{''.join(marks)}</svg>"
    )


def _pct(value: float, low: float, high: float) -> str:
    share = (min(max(value, low), high) - low) / (high - low)
    return f"{100 * share:.2f}%"


def _vline(at: str, style: str) -> str:
    return f'<line x1="{at}" x2="{at}" y1="0" y2="100%" {style}/>'


def _hline(start: str, end: str, width: int) -> str:
    return f'<line x1="{start}" x2="{end}" y1="50%" y2="50%" stroke="#222" stroke-width="{width}"/>'


def _point(at: str) -> str:
    return f'<circle cx="{at}" cy="50%" r="6" fill="#c0392b" stroke="#fff" stroke-width="1.5"/>'
