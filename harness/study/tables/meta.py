"""The `meta` table inside a stage's own transaction (`Study.set_meta` opens one of its own)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from harness.study import files


def write_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    """Set one meta value inside the caller's transaction."""
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))


def delete_meta(conn: sqlite3.Connection, key: str) -> None:
    """Remove one meta value inside the caller's transaction (none there: nothing happens)."""
    conn.execute("DELETE FROM meta WHERE key = ?", (key,))


def peek_meta(folder: Path, key: str) -> str | None:
    """One meta value of the study in `folder`, read without writing anything there (a check made
    before a stage opens the study must leave the folder as it was): immutable, so SQLite makes
    no shared-memory file, unless a write-ahead log holds data. None when there is no store or it
    cannot be read (the stage reports a damaged store in its own words)."""
    db = files.store_path(folder)  # a bare `store_...` call would read as a writer
    if not db.exists():
        return None
    wal = db.with_name(db.name + "-wal")
    mode = "mode=ro" if wal.exists() and wal.stat().st_size else "immutable=1"
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?{mode}", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return None
    return str(row[0]) if row and row[0] is not None else None
