"""The `searches` table: one literature query as run (PRISMA-S), from any reviewer."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import astuple, dataclass

from harness.study.tables.reviews import AUTOMATED_ITEM_IDS, CALIBRATION_ITEM_IDS


@dataclass(frozen=True)
class NewSearch:
    """One search record; the JSON fields are stored as given (already serialised)."""

    search_id: str
    item_id: str | None
    reviewer_id: str | None
    database: str
    interface: str | None
    query: str
    parameters: str | None  # JSON of the request as sent, secrets removed
    filters: str | None  # JSON: date cut-off, limits
    run_at: str
    total_hits: int | None
    hits: str  # JSON list
    relevant_ids: str | None  # JSON list
    dedup_key: str
    source: str  # 'xlsx', 'csv' or 'automated'
    import_id: str | None


def insert_searches(conn: sqlite3.Connection, searches: Sequence[NewSearch]) -> None:
    conn.executemany(
        "INSERT INTO searches (search_id, item_id, reviewer_id, database, interface, query, "
        "parameters, filters, run_at, total_hits, hits, relevant_ids, dedup_key, source, "
        "import_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [astuple(s) for s in searches],
    )


def delete_imported_searches(
    conn: sqlite3.Connection, import_id: str, *, items: set[str] | None = None
) -> None:
    """An import's search records (only those of `items` when given)."""
    if items is None:
        conn.execute("DELETE FROM searches WHERE import_id = ?", (import_id,))
        return
    conn.executemany(
        "DELETE FROM searches WHERE import_id = ? AND item_id = ?",
        [(import_id, item) for item in sorted(items)],
    )


def delete_calibration_searches(conn: sqlite3.Connection, reviewer_id: str) -> None:
    """A reviewer's search records for calibration-split control items."""
    conn.execute(
        f"DELETE FROM searches WHERE reviewer_id = ? AND item_id IN ({CALIBRATION_ITEM_IDS})",
        (reviewer_id,),
    )


def delete_automated_searches(conn: sqlite3.Connection, reviewer_id: str) -> None:
    """The search records of an automated reviewer's reviews stored before the unblinding."""
    conn.execute(
        "DELETE FROM searches WHERE reviewer_id = ? AND source = 'automated' "
        f"AND item_id IN ({AUTOMATED_ITEM_IDS})",
        (reviewer_id, reviewer_id),
    )
