"""The `controls` table: combinations with a known answer, each shown through one item."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.study.store import Study

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class NewControl:
    control_id: str
    statement: str
    text: str
    expected: str
    kind: str
    source: str
    topic_id: str | None
    evidence: dict[str, Any]
    split: str | None


@dataclass(frozen=True)
class ControlLabels:
    """What a control item is, as counted in the manifest (never per item)."""

    expected: str
    kind: str
    source: str
    split: str  # 'none' when the control has no split


@dataclass(frozen=True)
class ControlShown:
    """A control's statement beside what reviewers see of it."""

    statement: str
    display_text: str
    core_combination: str  # '' when none was extracted


@dataclass(frozen=True)
class CalibrationItem:
    """A control item of the calibration split, as an automated reviewer reads it."""

    item_id: str
    display_text: str
    core_combination: str | None
    expected: str


def insert_controls(conn: sqlite3.Connection, controls: Sequence[NewControl]) -> None:
    conn.executemany(
        "INSERT INTO controls (control_id, statement, text, expected, kind, "
        "source, topic_id, evidence, split) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                c.control_id,
                c.statement,
                c.text,
                c.expected,
                c.kind,
                c.source,
                c.topic_id,
                json.dumps(c.evidence),
                c.split,
            )
            for c in controls
        ],
    )


def count_controls(study: Study) -> int:
    return study.count("controls")


def control_ids(study: Study) -> list[str]:
    return [r[0] for r in study.rows("SELECT control_id FROM controls")]


def control_labels(study: Study) -> list[ControlLabels]:
    """Expected verdict, kind, source and split of every control item."""
    return [
        ControlLabels(*r)
        for r in study.rows(
            "SELECT c.expected, c.kind, c.source, COALESCE(c.split, 'none') "
            "FROM controls c JOIN items i ON i.control_id = c.control_id"
        )
    ]


def controls_shown(study: Study) -> list[ControlShown]:
    """Every control item's statement beside its display text and core combination."""
    return [
        ControlShown(*r)
        for r in study.rows(
            "SELECT c.statement, i.display_text, COALESCE(i.core_combination, '') FROM items i "
            "JOIN controls c ON c.control_id = i.control_id"
        )
    ]


def control_items_frame(study: Study) -> pd.DataFrame:
    """One row per control item: item_id, control_id, topic_id, expected, kind."""
    return study.frame(
        "SELECT i.item_id, i.control_id, c.topic_id, c.expected, c.kind "
        "FROM items i JOIN controls c ON c.control_id = i.control_id ORDER BY i.control_id"
    )


def calibration_items(study: Study) -> list[CalibrationItem]:
    """The control items that calibrate automated reviewers (and nothing else), by item id."""
    return [
        CalibrationItem(*r)
        for r in study.rows(
            "SELECT i.item_id, i.display_text, i.core_combination, c.expected FROM items i "
            "JOIN controls c ON c.control_id = i.control_id WHERE c.split = 'calibration' "
            "ORDER BY i.item_id"
        )
    ]
