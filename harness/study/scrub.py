"""A last scan for secrets before anything reaches a study file.

Keys come from the environment and are never meant to be stored; this scan is the net under that
rule, for what a command line, a URL or a server's reply may carry anyway: the value of every
environment variable whose name says it is a credential, `user:password@` in URLs, and query
parameters named like keys.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"
_SECRET_NAME = re.compile(r"(?i)key|token|secret|passw|authorization|credential|signature|\bsig\b")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s\"'<>]+", re.IGNORECASE)
_MIN_SECRET = 8  # shorter values would mask ordinary words


def known_secrets() -> list[str]:
    """Values of credential-like environment variables, longest first."""
    values = {
        v
        for k, v in os.environ.items()
        if _SECRET_NAME.search(k) and not k.startswith("HARNESS_") and len(v) >= _MIN_SECRET
    }
    return sorted(values, key=len, reverse=True)


def scrub_url(url: str) -> str:
    """`url` without user:password and with key-like query parameters masked."""
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if not (parts.username or parts.password or any(_SECRET_NAME.search(k) for k, _ in pairs)):
        return url  # nothing to hide: the URL stays exactly as it was
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    query = [(k, MASK if _SECRET_NAME.search(k) else v) for k, v in pairs]
    return urlunsplit((parts.scheme, host, parts.path, urlencode(query, safe="*"), parts.fragment))


def scrub(value: Any, secrets: list[str] | None = None) -> Any:
    """`value` (str, list, dict, nested) with every secret masked; other types unchanged."""
    secrets = known_secrets() if secrets is None else secrets
    if isinstance(value, str):
        return _scrub_text(value, secrets)
    if isinstance(value, dict):
        return {k: scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v, secrets) for v in value]
    return value


def _scrub_text(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    if "://" in text:
        text = _URL.sub(lambda m: scrub_url(m.group()), text)
    return text
