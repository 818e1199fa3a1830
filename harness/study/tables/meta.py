"""The `meta` table inside a stage's own transaction (`Study.set_meta` opens one of its own)."""

from __future__ import annotations

import sqlite3


def write_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    """Set one meta value inside the caller's transaction."""
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
