"""The `assignments` table: which reviewer sees which item, in the reviewer's random order."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.study.store import Study

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class AssignedItem:
    """An assigned item as its reviewer sees it."""

    item_id: str
    display_text: str
    core_combination: str | None


@dataclass(frozen=True)
class PositionFlag:
    """Whether the item at a position of a reviewer's order is a control item."""

    reviewer_id: str
    position: int
    is_control: bool


def insert_assignments(
    conn: sqlite3.Connection, rows: Iterable[tuple[str, str, int]], round_: int = 1
) -> None:
    """(item_id, reviewer_id, position) rows, of the first routing or a later round."""
    conn.executemany(
        "INSERT INTO assignments (item_id, reviewer_id, position, round) VALUES (?, ?, ?, ?)",
        [(item_id, reviewer_id, int(position), round_) for item_id, reviewer_id, position in rows],
    )


def count_assignments(study: Study, reviewer_id: str | None = None) -> int:
    """All assignments, or those of one reviewer."""
    if reviewer_id is None:
        return study.count("assignments")
    return study.count("assignments", "reviewer_id = ?", (reviewer_id,))


def assignments_frame(study: Study) -> pd.DataFrame:
    """item_id, reviewer_id, position of every assignment, by reviewer and position."""
    return study.frame(
        "SELECT item_id, reviewer_id, position FROM assignments ORDER BY reviewer_id, position"
    )


def assigned_item_ids(study: Study, reviewer_id: str, round_: int | None = None) -> set[str]:
    """A reviewer's items, of every round or of one."""
    if round_ is None:
        rows = study.rows("SELECT item_id FROM assignments WHERE reviewer_id = ?", (reviewer_id,))
    else:
        rows = study.rows(
            "SELECT item_id FROM assignments WHERE reviewer_id = ? AND round = ?",
            (reviewer_id, round_),
        )
    return {r[0] for r in rows}


def assignment_rounds(study: Study, reviewer_id: str) -> dict[str, int]:
    """item_id -> round of a reviewer's assignments."""
    return {
        r[0]: int(r[1])
        for r in study.rows(
            "SELECT item_id, round FROM assignments WHERE reviewer_id = ?", (reviewer_id,)
        )
    }


def reviewer_rounds(study: Study) -> list[tuple[str, int]]:
    """(human reviewer, round) of every packet there is to write, by reviewer and round."""
    return [
        (r[0], int(r[1]))
        for r in study.rows(
            "SELECT DISTINCT a.reviewer_id, a.round FROM assignments a JOIN reviewers r "
            "USING (reviewer_id) WHERE r.kind = 'human' ORDER BY a.reviewer_id, a.round"
        )
    ]


def last_round(study: Study) -> int:
    found = study.rows("SELECT MAX(round) FROM assignments")
    return int(found[0][0] or 0)


def last_positions(study: Study) -> dict[str, int]:
    """reviewer_id -> the last position of their order."""
    return {
        r[0]: int(r[1])
        for r in study.rows("SELECT reviewer_id, MAX(position) FROM assignments GROUP BY 1")
    }


def assigned_items(study: Study, reviewer_id: str, round_: int = 1) -> list[AssignedItem]:
    """A reviewer's items of one round (one packet) in assigned order."""
    return [
        AssignedItem(*r)
        for r in study.rows(
            "SELECT a.item_id, i.display_text, i.core_combination FROM assignments a "
            "JOIN items i USING (item_id) WHERE a.reviewer_id = ? AND a.round = ? "
            "ORDER BY a.position",
            (reviewer_id, round_),
        )
    ]


def pending_assignments(study: Study, reviewer_id: str) -> list[AssignedItem]:
    """A reviewer's items without its review yet, in assigned order."""
    return [
        AssignedItem(*r)
        for r in study.rows(
            "SELECT a.item_id, i.display_text, i.core_combination FROM assignments a "
            "JOIN items i ON i.item_id = a.item_id "
            "LEFT JOIN reviews r ON r.item_id = a.item_id AND r.reviewer_id = a.reviewer_id "
            "WHERE a.reviewer_id = ? AND r.item_id IS NULL ORDER BY a.position",
            (reviewer_id,),
        )
    ]


def control_assignments_per_reviewer(study: Study) -> dict[str, int]:
    """reviewer_id -> control items assigned (reviewers without any left out)."""
    return {
        r[0]: r[1]
        for r in study.rows(
            "SELECT a.reviewer_id, COUNT(*) FROM assignments a JOIN items i USING (item_id) "
            "WHERE i.control_id IS NOT NULL GROUP BY a.reviewer_id"
        )
    }


def calibration_controls_per_automated(study: Study) -> dict[str, int]:
    """Automated reviewer_id -> its assigned control items of the calibration split (they
    calibrate its rule and are not scored; its other controls are held out and scored)."""
    return {
        r[0]: r[1]
        for r in study.rows(
            "SELECT a.reviewer_id, SUM(c.split = 'calibration') FROM assignments a "
            "JOIN items i USING (item_id) JOIN controls c USING (control_id) "
            "JOIN reviewers r USING (reviewer_id) WHERE r.kind = 'automated' "
            "GROUP BY a.reviewer_id"
        )
    }


def control_positions(study: Study) -> list[PositionFlag]:
    """Every assignment, by reviewer and position, flagged when its item is a control."""
    return [
        PositionFlag(r[0], r[1], bool(r[2]))
        for r in study.rows(
            "SELECT a.reviewer_id, a.position, i.control_id IS NOT NULL "
            "FROM assignments a JOIN items i USING (item_id) ORDER BY a.reviewer_id, a.position"
        )
    ]


@dataclass(frozen=True)
class Outstanding:
    """A reviewer's assigned items without a review stored before the unblinding."""

    reviewer_id: str
    role: str
    assigned: int
    outstanding: int


def outstanding_reviews(study: Study) -> list[Outstanding]:
    """Reviewers (primary and adjudicators) with assigned reviews outstanding, most first."""
    return [
        Outstanding(r[0], r[1], int(r[2]), int(r[3]))
        for r in study.rows(
            "SELECT a.reviewer_id, COALESCE(v.role, 'primary'), COUNT(*), "
            "SUM(r.item_id IS NULL) FROM assignments a "
            "LEFT JOIN reviewers v ON v.reviewer_id = a.reviewer_id "
            "LEFT JOIN reviews r ON r.item_id = a.item_id AND r.reviewer_id = a.reviewer_id "
            "AND r.after_unblinding = 0 "
            "GROUP BY a.reviewer_id HAVING SUM(r.item_id IS NULL) > 0 "
            "ORDER BY SUM(r.item_id IS NULL) DESC, a.reviewer_id"
        )
    ]
