"""Keep secrets out of everything we record: error messages, logs, manifests."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit, urlunsplit

_SECRET_PARAM = re.compile(r"(?i)key|token|secret|sig|pass")

_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")
_KEYLIKE = re.compile(r"\bsk-[A-Za-z0-9_-]{8,}")


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Replace every known secret, bearer token and sk-... key in `text` with `***`."""
    for secret in secrets:
        if secret and len(secret) >= 6:
            text = text.replace(secret, "***")
    text = _BEARER.sub(r"\1***", text)
    return _KEYLIKE.sub("***", text)


def public_url(url: str | None) -> str | None:
    """A URL without user:password and without query string (which may carry keys)."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def secret_in_url(url: str) -> str | None:
    """What in `url` looks like a credential (user:password, a key in the query), if anything."""
    parts = urlsplit(url)
    if parts.username or parts.password:
        return "user:password"
    for name, _ in parse_qsl(parts.query, keep_blank_values=True):
        if _SECRET_PARAM.search(name):
            return f"query parameter {name!r}"
    return None
