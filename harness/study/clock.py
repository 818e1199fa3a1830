"""UTC timestamps in one format everywhere (ISO 8601, seconds, 'Z')."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
