"""The `calibrations` table: the decision rule of each automated reviewer."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any, Literal

from harness.study.store import Study


@dataclass(frozen=True)
class CalibrationRecord:
    """One stored rule; the fields are the table's columns, JSON ones decoded."""

    reviewer_id: str
    method: str
    status: Literal["calibrated", "uncalibrated", "fixed"]
    threshold: float
    default_threshold: float
    youden: float | None
    sensitivity: float | None
    specificity: float | None
    youden_default: float | None
    n_published: int
    n_not_published: int
    unsure: str | None
    scores: list[list[Any]]  # [[item_id, score or null], ...]
    settings: dict[str, Any]
    note: str | None
    decided_at: str


def stored_calibration(study: Study, reviewer_id: str) -> CalibrationRecord | None:
    found = study.rows("SELECT * FROM calibrations WHERE reviewer_id = ?", (reviewer_id,))
    if not found:
        return None
    data = dict(found[0])
    data["settings"] = json.loads(data["settings"])
    data["scores"] = json.loads(data["scores"])
    return CalibrationRecord(**data)


def save_calibration(conn: sqlite3.Connection, record: CalibrationRecord) -> None:
    """Store a reviewer's rule, replacing the one it had."""
    conn.execute(
        "INSERT OR REPLACE INTO calibrations (reviewer_id, method, status, threshold, "
        "default_threshold, youden, sensitivity, specificity, youden_default, n_published, "
        "n_not_published, unsure, scores, settings, note, decided_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            record.reviewer_id,
            record.method,
            record.status,
            record.threshold,
            record.default_threshold,
            record.youden,
            record.sensitivity,
            record.specificity,
            record.youden_default,
            record.n_published,
            record.n_not_published,
            record.unsure,
            json.dumps(record.scores),
            json.dumps(record.settings, sort_keys=True),
            record.note,
            record.decided_at,
        ),
    )


def delete_calibration(conn: sqlite3.Connection, reviewer_id: str) -> None:
    """A reviewer's stored rule (its next run settles a new one)."""
    conn.execute("DELETE FROM calibrations WHERE reviewer_id = ?", (reviewer_id,))
