"""The `reviewers` table: the roster that items are routed to."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from harness.study.store import SqlValue, Study

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class ReviewerRow:
    reviewer_id: str
    kind: Literal["human", "automated"]
    method: str | None
    expertise: list[str]
    capacity: int
    role: Literal["primary", "adjudicator"] = "primary"


def roster_rows(study: Study) -> list[ReviewerRow]:
    """The stored roster in the order it was written."""
    return [
        ReviewerRow(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5])
        for r in study.rows(
            "SELECT reviewer_id, kind, method, expertise, capacity, role FROM reviewers "
            "ORDER BY rowid"
        )
    ]


def automated_reviewers(study: Study) -> list[ReviewerRow]:
    """The automated reviewers, by id."""
    return [
        ReviewerRow(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5])
        for r in study.rows(
            "SELECT reviewer_id, kind, method, expertise, capacity, role FROM reviewers "
            "WHERE kind = 'automated' ORDER BY reviewer_id"
        )
    ]


def reviewer_kind(study: Study, reviewer_id: str) -> str | None:
    """'human' or 'automated'; None for a reviewer not on the roster."""
    found = study.rows("SELECT kind FROM reviewers WHERE reviewer_id = ?", (reviewer_id,))
    return str(found[0][0]) if found else None


def replace_reviewers(conn: sqlite3.Connection, roster: Sequence[ReviewerRow]) -> None:
    """The stored roster becomes `roster`, in its order."""
    conn.execute("DELETE FROM reviewers")
    conn.executemany(
        "INSERT INTO reviewers (reviewer_id, kind, method, expertise, capacity, role) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [
            (r.reviewer_id, r.kind, r.method, json.dumps(r.expertise), r.capacity, r.role)
            for r in roster
        ],
    )


def review_progress(study: Study) -> pd.DataFrame:
    """Per reviewer (humans first, then by id): reviewer, kind, role, assigned, returned,
    searches, last_import ('FILE (UTC time)' of the import in force, else null)."""
    return study.frame(
        """
SELECT r.reviewer_id AS reviewer, r.kind, r.role,
       (SELECT COUNT(*) FROM assignments a WHERE a.reviewer_id = r.reviewer_id) AS assigned,
       (SELECT COUNT(*) FROM reviews v JOIN assignments a
            ON a.item_id = v.item_id AND a.reviewer_id = v.reviewer_id
        WHERE v.reviewer_id = r.reviewer_id) AS returned,
       (SELECT COUNT(*) FROM searches s WHERE s.reviewer_id = r.reviewer_id) AS searches,
       (SELECT i.file_name || ' (' || i.imported_at || ')' FROM imports i
        WHERE i.reviewer_id = r.reviewer_id AND i.replaced_by IS NULL) AS last_import
FROM reviewers r ORDER BY r.kind DESC, r.reviewer_id
"""
    )


def automated_methods_read_only(db: Path) -> list[tuple[str, str]]:
    """(reviewer_id, method) of every automated reviewer, read without a lock, a log or a WAL
    file (nothing in the study folder changes); [] when the store cannot be read this way (an
    older or damaged store: opening it says what is wrong)."""
    rows = _read_only(
        db,
        "SELECT reviewer_id, method FROM reviewers WHERE kind = 'automated' ORDER BY reviewer_id",
    )
    return [(str(r[0]), str(r[1] or "")) for r in rows or []]


def automated_ids_read_only(db: Path) -> list[str] | None:
    """The ids of the automated reviewers, read as `automated_methods_read_only` reads; None when
    the store cannot be read this way."""
    rows = _read_only(
        db, "SELECT reviewer_id FROM reviewers WHERE kind = 'automated' ORDER BY reviewer_id"
    )
    return None if rows is None else [str(r[0]) for r in rows]


def _read_only(db: Path, sql: str) -> list[tuple[SqlValue, ...]] | None:
    wal = db.with_name(db.name + "-wal")
    mode = "mode=ro" if wal.exists() and wal.stat().st_size else "immutable=1"
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?{mode}", uri=True)
        try:
            return conn.execute(sql).fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
