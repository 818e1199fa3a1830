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
    round_: int = 1  # the packet's round: each round's file is imported (and replaced) apart


def current_import(study: Study, reviewer_id: str, round_: int = 1) -> ImportRecord | None:
    """The reviewer's import of a round in force (not replaced), if any."""
    found = study.rows(
        "SELECT import_id, reviewer_id, file_name, file_sha256, imported_at, n_reviews, "
        "n_searches, round FROM imports WHERE reviewer_id = ? AND round = ? "
        "AND replaced_by IS NULL",
        (reviewer_id, round_),
    )
    return ImportRecord(*found[0]) if found else None


def insert_import(conn: sqlite3.Connection, record: ImportRecord) -> None:
    conn.execute(
        "INSERT INTO imports (import_id, reviewer_id, file_name, file_sha256, imported_at, "
        "replaced_by, n_reviews, n_searches, round) VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?)",
        (
            record.import_id,
            record.reviewer_id,
            record.file_name,
            record.file_sha256,
            record.imported_at,
            record.n_reviews,
            record.n_searches,
            record.round_,
        ),
    )


def mark_replaced(conn: sqlite3.Connection, previous: str, by: str) -> None:
    """Import `previous` is superseded by import `by` (--replace)."""
    conn.execute("UPDATE imports SET replaced_by = ? WHERE import_id = ?", (by, previous))
