"""The explorer as one self-contained HTML file: inline CSS and script, the data embedded.

Nothing is fetched: a Content-Security-Policy allows no network at all and only the page's own
script (by hash). The core data is a JSON block, escaped so that no text can close it; long texts
are gzip-compressed JSON chunks in base64 (no markup characters at all), which the page decodes
with the browser's DecompressionStream when it needs them. The script writes every text with
textContent, never as HTML.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import html
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import cast

from harness.study.records import JsonObject

# Characters that could end the JSON block or break it as a script: HTML markup and the two
# line separators JavaScript once treated as newlines. Escaped forms are still valid JSON.
_JSON_ESCAPES: dict[str, str | int | None] = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def embed_json(data: object) -> str:
    """JSON that is safe inside <script type="application/json">."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.translate(str.maketrans(_JSON_ESCAPES))


def _asset(name: str) -> str:
    return resources.files("harness.explore").joinpath(name).read_text(encoding="utf-8")


def text_chunks(texts: Mapping[str, Sequence[object]], size: int) -> str:
    """One base64 block of gzip-compressed JSON per `size` rows of each kind of long text."""
    blocks = []
    for kind, rows in texts.items():
        for k, start in enumerate(range(0, len(rows), size)):
            raw = json.dumps(
                rows[start : start + size],
                ensure_ascii=False,
                separators=(",", ":"),
                allow_nan=False,
            ).encode("utf-8")
            data = base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")
            blocks.append(
                f'<script type="application/octet-stream" id="text-{kind}-{k}">{data}</script>'
            )
    return "\n".join(blocks)


def render_page(core: JsonObject, texts: Mapping[str, Sequence[object]]) -> str:
    script = _asset("explorer.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    policy = (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    title = "Study explorer" + (f": {core['study_id']}" if core.get("study_id") else "")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{html.escape(title)}</title><style>{_asset('explorer.css')}</style></head>\n"
        f"<body>{_asset('explorer.html')}\n"
        f'<script type="application/json" id="explorer-data">{embed_json(core)}</script>\n'
        f"{text_chunks(texts, cast('int', core['chunk']))}\n"
        f"<script>{script}</script>\n</body></html>\n"
    )
