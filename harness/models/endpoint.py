"""The server URL of an OpenAI-compatible backend, checked before anything is stored.

A URL is refused when it cannot name a server (no http/https scheme, no host, a port that is
not a number) or when it carries a credential: command lines are recorded in the manifest, so a
key belongs in OPENAI_API_KEY, never in `--base-url`.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from harness.errors import HarnessError
from harness.models._redact import secret_in_url


def check_base_url(url: str, *, column: str = "base_url") -> str:
    """`url` without a trailing slash, or HarnessError saying what is wrong with it."""
    if (found := secret_in_url(url)) is not None:
        raise HarnessError(
            f"the base URL carries a credential ({found}); put the key in OPENAI_API_KEY instead",
            column=column,
        )
    shown = url if len(url) <= 80 else url[:77] + "..."
    if any(c.isspace() or not c.isprintable() for c in url):
        raise HarnessError(
            f"the base URL {shown!r} contains spaces or control characters", column=column
        )
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise HarnessError(
            f"the base URL {shown!r} is not an http:// or https:// URL", column=column
        )
    try:
        port = parts.port
    except ValueError:
        port = -1
    if not parts.hostname or port == -1:
        raise HarnessError(f"the base URL {shown!r} names no server (host[:port])", column=column)
    return url.rstrip("/")
