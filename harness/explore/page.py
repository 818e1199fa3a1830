"""The explorer as one self-contained HTML file: inline CSS and script, the data as JSON.

Nothing is fetched: a Content-Security-Policy allows no network at all and only the page's own
script (by hash). Text from models and reviewers reaches the page only inside the JSON block,
escaped so it cannot close the block, and the script writes it with textContent, never as HTML.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from importlib import resources
from typing import Any

# Characters that could end the JSON block or break it as a script: HTML markup and the two
# line separators JavaScript once treated as newlines. Escaped forms are still valid JSON.
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                 "\u2029": "\\u2029"}


def embed_json(data: Any) -> str:
    """JSON that is safe inside <script type="application/json">."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.translate(str.maketrans(_JSON_ESCAPES))


def _asset(name: str) -> str:
    return resources.files("harness.explore").joinpath(name).read_text(encoding="utf-8")


def render_page(data: dict[str, Any]) -> str:
    script = _asset("explorer.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    policy = (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
              "img-src data:; base-uri 'none'; form-action 'none'")
    title = "Study explorer" + (f": {data['study_id']}" if data.get("study_id") else "")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<link rel=\"icon\" href=\"data:,\">"
        f"<title>{html.escape(title)}</title><style>{_asset('explorer.css')}</style></head>\n"
        f"<body>{_asset('explorer.html')}\n"
        f"<script type=\"application/json\" id=\"explorer-data\">{embed_json(data)}</script>\n"
        f"<script>{script}</script>\n</body></html>\n"
    )
