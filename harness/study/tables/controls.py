"""The `controls` table: combinations with a known answer, each shown through one item."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.study.store import Study
from harness.study.text import storable

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
    writer_model: str | None = None  # the study's model that wrote `text`; None: the file's own


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
    """Store controls; their texts as the store holds any text (lone surrogates escaped)."""
    conn.executemany(
        "INSERT INTO controls (control_id, statement, text, expected, kind, "
        "source, topic_id, evidence, split, writer_model) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                c.control_id,
                storable(c.statement),
                storable(c.text),
                c.expected,
                c.kind,
                c.source,
                c.topic_id,
                json.dumps(c.evidence),
                c.split,
                c.writer_model,
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


@dataclass(frozen=True)
class TopicSlots:
    """What a topic's prompts are made of: fields, concepts, relation, and per condition the
    template family and system message its prompt used."""

    topic_id: str
    field_a: str
    field_b: str
    concepts_a: list[str]
    concepts_b: list[str]
    relation: str
    family: dict[str, str]  # condition -> family name
    template_sha256: dict[str, str]  # condition -> the template's SHA-256 at generate
    system: dict[str, str | None]  # condition -> system message


def topic_slots(study: Study) -> dict[str, TopicSlots]:
    """Every topic's slots and its prompts' family, template hash and system message."""
    prompts: dict[str, list[Any]] = {}
    for r in study.rows("SELECT topic_id, condition, family, template_sha256, system FROM prompts"):
        prompts.setdefault(r[0], []).append(r)
    out = {}
    for r in study.rows(
        "SELECT topic_id, field_a, field_b, concepts_a, concepts_b, relation FROM topics "
        "ORDER BY topic_id"
    ):
        rows = prompts.get(r[0], [])
        out[r[0]] = TopicSlots(
            r[0],
            r[1],
            r[2],
            json.loads(r[3]),
            json.loads(r[4]),
            r[5],
            {p[1]: p[2] for p in rows},
            {p[1]: p[3] for p in rows},
            {p[1]: p[4] for p in rows},
        )
    return out


def ok_output_model_keys(study: Study) -> list[str]:
    """The model keys (provider strings, with labels) of the study's ok outputs, sorted."""
    return [
        r[0]
        for r in study.rows(
            "SELECT DISTINCT model_key FROM outputs WHERE status = 'ok' ORDER BY model_key"
        )
    ]
