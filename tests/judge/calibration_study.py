"""A small study with control items of both splits, for the calibration of automated reviewers.

Built on `tests/literature/study.py` (six real items, every one assigned to every reviewer) with
control rows per the schema (items.control_id set, output_id NULL; controls with a split).
Lexical match scores against `tests/literature/conftest.CORPUS` are given beside each control.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.study.store import Study
from tests.literature.study import ITEMS, build_study

# (control_id, statement, expected, split)
CALIBRATION = [
    ("C-pub-1", "Predictive coding models of river sediment transport", "published"),  # 1.0
    ("C-pub-2", "Enzyme kinetics read through queueing theory", "published"),  # 1.0
    (
        "C-pub-3",
        "Auction theory for spectrum allocation in coral reef tourism permits",
        "published",
    ),  # 0.5
    (
        "C-unp-1",
        "Origami folding rules for central bank monetary policy",
        "not_published",
    ),  # no hit
    (
        "C-unp-2",
        "Sediment transport of glacier ice cores in bird migration",
        "not_published",
    ),  # 0.29
]
HELD_OUT = [
    (
        "H-pub-1",
        "Auction theory for spectrum allocation in desert water rights",
        "published",
    ),  # 0.57
    ("H-unp-1", "Jazz improvisation rules for hospital nurse shifts", "not_published"),  # no hit
]
#: The threshold with the largest J on CALIBRATION (J = 1 for any threshold in (0.29, 0.5]).
CALIBRATED = 0.5


def add_controls(
    study: Study, rows: list[tuple[str, str, str]], split: str | None, reviewers: list[str]
) -> list[str]:
    """Controls and their items (assigned to `reviewers`); returns the item ids."""
    item_ids = []
    with study.transaction() as conn:
        start = study.count("assignments")
        for n, (control_id, statement, expected) in enumerate(rows):
            conn.execute(
                "INSERT INTO controls VALUES (?, ?, ?, ?, 'cross', 'file:test.yaml', NULL, ?, ?, NULL)",
                (
                    control_id,
                    statement,
                    f"{statement}.",
                    expected,
                    json.dumps({"title": statement, "year": 2020, "doi": None}),
                    split,
                ),
            )
            item_id = f"I-{control_id}"
            conn.execute(
                "INSERT INTO items (item_id, control_id, original_text, core_combination, "
                "display_text, steps) VALUES (?, ?, ?, ?, ?, '[]')",
                (item_id, control_id, f"{statement}.", statement, f"{statement}."),
            )
            for reviewer_id in reviewers:
                conn.execute(
                    "INSERT INTO assignments (item_id, reviewer_id, position) VALUES (?, ?, ?)",
                    (item_id, reviewer_id, start + n),
                )
            item_ids.append(item_id)
    return item_ids


def controls_study(
    path: Path, reviewers: list[tuple[str, str]] | None = None, calibration: bool = True
) -> Study:
    """The six real items plus CALIBRATION (split 'calibration', or 'held_out' when not
    `calibration`) and HELD_OUT controls, all assigned to every automated reviewer."""
    reviewers = reviewers or [("lex", "retrieval")]
    study = build_study(path, reviewers)
    ids = [r for r, _ in reviewers]
    add_controls(study, CALIBRATION, "calibration" if calibration else "held_out", ids)
    add_controls(study, HELD_OUT, "held_out", ids)
    return study


def texts(rows: list[tuple[str, str, str]]) -> set[str]:
    return {statement for _, statement, _ in rows}


REAL_TEXTS = {core or display for core, display in ITEMS}
