"""A tiny document model rendered to Markdown and to self-contained HTML.

The report is built once as a list of blocks; both renderings come from the same blocks, so the
Markdown and the HTML cannot say different things.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class Block:
    kind: Literal["h1", "h2", "p", "banner", "list", "table", "figure", "pre", "link"]
    text: str = ""
    items: list[str] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    name: str = ""  # figure file stem; link: relative target


def markdown(blocks: list[Block], figure_dir: str = "figures") -> str:
    out: list[str] = []
    for b in blocks:
        if b.kind == "h1":
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


CSS = """
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
"""


def html_page(blocks: list[Block], figures: dict[str, bytes], title: str) -> str:
    body: list[str] = []
    for b in blocks:
        if b.kind in ("h1", "h2"):
            body.append(f"<{b.kind}>{html.escape(b.text)}</{b.kind}>")
        elif b.kind == "p":
            body.append(f"<p>{_inline(b.text)}</p>")
        elif b.kind == "banner":
            body.append(f'<div class="banner">{_inline(b.text)}</div>')
        elif b.kind == "list":
            body.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in b.items) + "</ul>")
        elif b.kind == "pre":
            body.append(f"<pre>{html.escape(b.text)}</pre>")
        elif b.kind == "link":
            body.append(f'<p><a href="{html.escape(b.name)}">{html.escape(b.text)}</a></p>')
        elif b.kind == "table":
            head = "".join(f"<th>{html.escape(h)}</th>" for h in b.header)
            rows = "".join(
                "<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in b.rows
            )
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        elif b.kind == "figure" and b.name in figures:
            data = base64.b64encode(figures[b.name]).decode("ascii")
            body.append(
                f'<figure><img alt="{html.escape(b.text)}" '
                f'src="data:image/png;base64,{data}"><figcaption>'
                f"{html.escape(b.text)}</figcaption></figure>"
            )
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
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
