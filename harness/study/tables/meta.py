"""The `meta` table inside a stage's own transaction (`Study.set_meta` opens one of its own)."""

from __future__ import annotations

from harness.study.store import Study


def write_meta(study: Study, key: str, value: str) -> None:
    """Set one meta value; the caller holds the transaction it belongs to."""
    study.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
