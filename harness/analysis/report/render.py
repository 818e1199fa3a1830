"""A tiny document model rendered to Markdown and to self-contained HTML.

The report is built once as a list of blocks; both renderings come from the same blocks, so the
Markdown and the HTML cannot say different things.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from typing import Literal

from harness.analysis.report.lead import Lead
from harness.analysis.report.lead_html import CSS as LEAD_CSS
from harness.analysis.report.lead_html import figure_html


@dataclass(frozen=True)
class Block:
    kind: Literal["h1", "h2", "p", "banner", "list", "table", "figure", "pre", "link", "lead"]
    text: str = ""
    items: list[str] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    name: str = ""  # figure file stem; link: relative target
    # lead: heading `text`, then the verdict's blocks beside the figure of `lead` (whose text
    # the Markdown gives in words), their banners last
    children: list[Block] = field(default_factory=list)
    lead: Lead | None = None


def markdown(blocks: list[Block], figure_dir: str = "figures") -> str:
    out: list[str] = []
    for b in blocks:
        if b.kind == "lead":
            out.append(_lead_markdown(b, figure_dir))
        elif b.kind == "h1":
            out.append(f"# {b.text}")
        elif b.kind == "h2":
            out.append(f"## {b.text}")
        elif b.kind == "p":
            out.append(b.text)
        elif b.kind == "banner":
            out.append(f"> **{b.text}**")
        elif b.kind == "list":
            out.append("\n".join(f"- {item}" for item in b.items))
        elif b.kind == "pre":
            out.append(f"```\n{b.text}\n```")
        elif b.kind == "table":
            lines = [
                "| " + " | ".join(b.header) + " |",
                "|" + "|".join("---" for _ in b.header) + "|",
            ]
            lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in b.rows]
            out.append("\n".join(lines))
        elif b.kind == "figure":
            out.append(f"![{b.text}]({figure_dir}/{b.name}.png)\n\n*{b.text}*")
        elif b.kind == "link":
            out.append(f"[{b.text}]({b.name})")
    return "\n\n".join(out) + "\n"


LEAD_ALT = "The verdict's estimate, its interval and margin"


def _lead_markdown(b: Block, figure_dir: str) -> str:
    """The verdict, the estimate in words, the notes, then the figure."""
    words = [x for x in b.children if x.kind != "banner"]
    notes = [x for x in b.children if x.kind == "banner"]
    head = [Block("h2", b.text), words[0]] if words else [Block("h2", b.text)]
    estimate = [Block("p", b.lead.text())] if b.lead is not None else []
    out = markdown([*head, *estimate, *words[1:], *notes], figure_dir).rstrip("\n")
    if b.lead is not None and b.lead.rows:
        caption = b.lead.caption
        out += f"\n\n![{LEAD_ALT}]({figure_dir}/{b.name}.png)\n\n*{caption}*"
    return out


CSS = (
    """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:980px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ddd;padding-bottom:.2em;
margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
td,th{border:1px solid #ccc;padding:.25em .55em;text-align:left;vertical-align:top}
th{background:#f3f3f3}.banner{background:#fff4d6;border-left:5px solid #e0a800;
padding:.6em 1em;font-weight:600;margin:.6em 0}
pre{background:#f6f6f6;padding:.8em;overflow-x:auto;font-size:.85em}
figure{margin:1em 0}figure img{max-width:100%}figcaption{font-style:italic;color:#555}
p,li,.banner{overflow-wrap:break-word}
.table{overflow-x:auto;max-width:100%}
@media (max-width:760px){table{font-size:.8em}td,th{padding:.2em .35em}}
"""
    + LEAD_CSS
)


def html_page(blocks: list[Block], figures: dict[str, bytes], title: str) -> str:
    body = [_html(b, figures) for b in blocks]
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(x for x in body if x)
        + "\n</body></html>\n"
    )


def _html(b: Block, figures: dict[str, bytes]) -> str:
    if b.kind in ("h1", "h2"):
        return f"<{b.kind}>{html.escape(b.text)}</{b.kind}>"
    if b.kind == "p":
        return f"<p>{_inline(b.text)}</p>"
    if b.kind == "banner":
        return f'<div class="banner">{_inline(b.text)}</div>'
    if b.kind == "list":
        return "<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in b.items) + "</ul>"
    if b.kind == "pre":
        return f"<pre>{html.escape(b.text)}</pre>"
    if b.kind == "link":
        return f'<p><a href="{html.escape(b.name)}">{html.escape(b.text)}</a></p>'
    if b.kind == "table":
        head = "".join(f"<th>{html.escape(h)}</th>" for h in b.header)
        rows = "".join(
            "<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in b.rows
        )
        # a table wider than a phone scrolls inside its own box, never the page
        return (
            f'<div class="table"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table></div>"
        )
    if b.kind == "figure" and b.name in figures:
        data = base64.b64encode(figures[b.name]).decode("ascii")
        return (
            f'<figure><img alt="{html.escape(b.text)}" '
            f'src="data:image/png;base64,{data}"><figcaption>'
            f"{html.escape(b.text)}</figcaption></figure>"
        )
    if b.kind == "lead":
        return _lead_html(b, figures)
    return ""


def _lead_html(b: Block, figures: dict[str, bytes]) -> str:
    """The verdict's words beside its figure (which carries the estimate's words), its banners
    below the words (the figure comes between them where the page is too narrow for two
    columns)."""
    words = f"<h2>{html.escape(b.text)}</h2>" + "".join(
        _html(c, figures) for c in b.children if c.kind != "banner"
    )
    notes = "".join(_html(c, figures) for c in b.children if c.kind == "banner")
    figure = figure_html(b.lead) if b.lead is not None and b.lead.rows else ""
    return (
        f'<section class="lead"><div class="lead-text">{words}</div>{figure}'
        f'<div class="lead-notes">{notes}</div></section>'
    )


def _inline(text: str) -> str:
    """Escape, then render `code` spans and **bold** as in the Markdown."""
    escaped = html.escape(text)
    parts = escaped.split("`")
    for i in range(1, len(parts), 2):
        parts[i] = f"<code>{parts[i]}</code>"
    joined = "".join(parts)
    pieces = joined.split("**")
    for i in range(1, len(pieces), 2):
        pieces[i] = f"<strong>{pieces[i]}</strong>"
    return "".join(pieces)
