"""The `topics` table: one row per topic of the study, copied from the bank at generate time."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import TYPE_CHECKING

from harness.study.store import Study

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class TopicRecord:
    topic_id: str
    field_a: str
    field_a_id: int
    domain_a: str
    field_b: str
    field_b_id: int
    domain_b: str
    concepts_a: str  # JSON list of 2 strings
    concepts_b: str
    relation: str
    taxonomy_distance: int  # 0 same subfield, 1 same field, 2 same domain, 3 other
    embedding_distance: float | None
    data: str  # JSON of the whole bank entry


_COLUMNS = tuple(f.name for f in fields(TopicRecord))
_INSERT = f"INSERT INTO topics ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"


def insert_topics(conn: sqlite3.Connection, topics: Iterable[TopicRecord]) -> None:
    """Add topics inside the caller's transaction."""
    values = attrgetter(*_COLUMNS)
    conn.executemany(_INSERT, (values(t) for t in topics))


def topic_frame(study: Study) -> pd.DataFrame:
    """Fields, domains and distances of every topic, ordered by topic id (for the analysis)."""
    return study.frame(
        "SELECT topic_id, field_a, field_b, domain_a, domain_b, taxonomy_distance, "
        "embedding_distance FROM topics ORDER BY topic_id"
    )
