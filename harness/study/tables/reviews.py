"""The `reviews` table: one verdict per item and reviewer, imported or automated."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.study.store import Study

if TYPE_CHECKING:
    import pandas as pd

#: Items that show a control of the calibration split (the only items that calibrate).
CALIBRATION_ITEM_IDS = (
    "SELECT i.item_id FROM items i JOIN controls c "
    "ON c.control_id = i.control_id WHERE c.split = 'calibration'"
)


@dataclass(frozen=True)
class NewReview:
    item_id: str
    reviewer_id: str
    verdict: str
    confidence: int | None
    prior_work: str | None
    notes: str | None
    source: str  # 'xlsx', 'csv' or 'automated'
    import_id: str | None
    source_sha256: str | None
    created_at: str


#: 1 once the study is unblinded: every review stored from then on is a post-unblinding review.
_AFTER_UNBLINDING = "EXISTS (SELECT 1 FROM meta WHERE key = 'unblinded_at')"


def insert_reviews(conn: sqlite3.Connection, reviews: Sequence[NewReview]) -> None:
    """Store reviews; after the study's unblinding they are marked post-unblinding (kept apart
    from the analysis), whichever path stores them."""
    conn.executemany(
        "INSERT INTO reviews (item_id, reviewer_id, verdict, confidence, prior_work, notes, "
        "source, import_id, source_sha256, created_at, after_unblinding) "
        f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {_AFTER_UNBLINDING})",
        [
            (
                r.item_id,
                r.reviewer_id,
                r.verdict,
                r.confidence,
                r.prior_work,
                r.notes,
                r.source,
                r.import_id,
                r.source_sha256,
                r.created_at,
            )
            for r in reviews
        ],
    )


def delete_imported_reviews(
    conn: sqlite3.Connection, import_id: str, *, after_unblinding_only: bool = False
) -> None:
    """An import's reviews (only its post-unblinding ones with `after_unblinding_only`)."""
    extra = " AND after_unblinding = 1" if after_unblinding_only else ""
    conn.execute(f"DELETE FROM reviews WHERE import_id = ?{extra}", (import_id,))


def verdicts_before_unblinding(study: Study, reviewer_id: str) -> dict[str, str]:
    """item_id -> verdict of a reviewer's reviews stored before the study was unblinded."""
    return {
        r[0]: r[1]
        for r in study.rows(
            "SELECT item_id, verdict FROM reviews WHERE reviewer_id = ? AND after_unblinding = 0",
            (reviewer_id,),
        )
    }


@dataclass(frozen=True)
class LateReviews:
    """Reviews stored after the study was unblinded: how many, from whom, and when."""

    count: int
    reviewers: int
    first_at: str | None
    last_at: str | None


def late_reviews(study: Study) -> LateReviews:
    row = study.rows(
        "SELECT COUNT(*), COUNT(DISTINCT reviewer_id), MIN(created_at), MAX(created_at) "
        "FROM reviews WHERE after_unblinding = 1"
    )[0]
    return LateReviews(int(row[0]), int(row[1]), row[2], row[3])


def delete_calibration_reviews(conn: sqlite3.Connection, reviewer_id: str) -> None:
    """A reviewer's reviews of calibration-split control items."""
    conn.execute(
        f"DELETE FROM reviews WHERE reviewer_id = ? AND item_id IN ({CALIBRATION_ITEM_IDS})",
        (reviewer_id,),
    )


def verdict_counts(study: Study, reviewer_id: str) -> dict[str, int]:
    """verdict -> number of a reviewer's reviews (verdicts never given left out)."""
    return {
        r[0]: int(r[1])
        for r in study.rows(
            "SELECT verdict, COUNT(*) FROM reviews WHERE reviewer_id = ? GROUP BY verdict",
            (reviewer_id,),
        )
    }


def reviews_outside_calibration(study: Study, reviewer_id: str) -> int:
    """A reviewer's reviews of items other than calibration-split controls."""
    return int(
        study.rows(
            "SELECT COUNT(*) FROM reviews r JOIN items i ON i.item_id = r.item_id "
            "LEFT JOIN controls c ON c.control_id = i.control_id "
            "WHERE r.reviewer_id = ? AND (c.split IS NULL OR c.split <> 'calibration')",
            (reviewer_id,),
        )[0][0]
    )


def control_verdict_counts(study: Study) -> pd.DataFrame:
    """reviewer, expected, verdict, n over control items, leaving out automated reviewers'
    reviews of calibration-split controls (those chose their rule, they do not measure it)."""
    return study.frame(
        "SELECT r.reviewer_id AS reviewer, c.expected, r.verdict, COUNT(*) AS n "
        "FROM reviews r JOIN items i ON i.item_id = r.item_id "
        "JOIN controls c ON c.control_id = i.control_id "
        "JOIN reviewers rv ON rv.reviewer_id = r.reviewer_id "
        "WHERE NOT (rv.kind = 'automated' AND c.split = 'calibration') "
        "GROUP BY r.reviewer_id, c.expected, r.verdict"
    )


def unsure_notes(study: Study, reviewer_id: str) -> tuple[int, list[str | None]]:
    """(number of a reviewer's reviews stored before the unblinding, the notes of those of
    them that are `unsure`, oldest first)."""
    total = study.rows(
        "SELECT COUNT(*) FROM reviews WHERE reviewer_id = ? AND after_unblinding = 0",
        (reviewer_id,),
    )[0][0]
    notes = study.rows(
        "SELECT notes FROM reviews WHERE reviewer_id = ? AND after_unblinding = 0 "
        "AND verdict = 'unsure' ORDER BY created_at, item_id",
        (reviewer_id,),
    )
    return int(total), [row[0] for row in notes]


#: The items of an automated reviewer's reviews that may enter the analysis (stored before the
#: unblinding); the one parameter is the reviewer's id.
AUTOMATED_ITEM_IDS = (
    "SELECT item_id FROM reviews WHERE reviewer_id = ? AND source = 'automated' "
    "AND after_unblinding = 0"
)


def delete_automated_reviews(conn: sqlite3.Connection, reviewer_id: str) -> int:
    """An automated reviewer's reviews stored before the unblinding (calibration items'
    included); how many were deleted. Delete their search records first
    (`searches.delete_automated_searches`)."""
    deleted = conn.execute(
        "DELETE FROM reviews WHERE reviewer_id = ? AND source = 'automated' "
        "AND after_unblinding = 0",
        (reviewer_id,),
    ).rowcount
    return int(deleted)
