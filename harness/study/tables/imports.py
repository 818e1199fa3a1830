"""The `imports` table: every returned reviewer file read in, with its hash."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from harness.study.store import Study


@dataclass(frozen=True)
class ImportRecord:
    import_id: str
    reviewer_id: str
    file_name: str
    file_sha256: str
    imported_at: str
    n_reviews: int
    n_searches: int


def current_import(study: Study, reviewer_id: str) -> ImportRecord | None:
    """The reviewer's import in force (not replaced), if any."""
    found = study.rows(
        "SELECT import_id, reviewer_id, file_name, file_sha256, imported_at, n_reviews, "
        "n_searches FROM imports WHERE reviewer_id = ? AND replaced_by IS NULL",
        (reviewer_id,),
    )
    return ImportRecord(*found[0]) if found else None


def insert_import(conn: sqlite3.Connection, record: ImportRecord) -> None:
    conn.execute(
        "INSERT INTO imports (import_id, reviewer_id, file_name, file_sha256, imported_at, "
        "replaced_by, n_reviews, n_searches) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)",
        (
            record.import_id,
            record.reviewer_id,
            record.file_name,
            record.file_sha256,
            record.imported_at,
            record.n_reviews,
            record.n_searches,
        ),
    )


def mark_replaced(conn: sqlite3.Connection, previous: str, by: str) -> None:
    """Import `previous` is superseded by import `by` (--replace)."""
    conn.execute("UPDATE imports SET replaced_by = ? WHERE import_id = ?", (by, previous))
