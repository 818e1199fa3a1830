"""The `adjudication_sample` table: the topics drawn for adjudication (the gold subsample).

Written once, in the transaction that stores the routing; sealed in the blinding key. The item
reads here name which items are in the sample, so they serve routing and status only, never a
packet.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from harness.study.store import Study


@dataclass(frozen=True)
class AdjudicationProgress:
    """Adjudicators' work on the sample: topics drawn, their items, reviews returned/assigned."""

    topics: int
    items: int
    assigned: int
    returned: int


def has_sample_table(conn: sqlite3.Connection) -> bool:
    """False for a store opened raw before its schema-5 migration (key reads of old stores)."""
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'adjudication_sample'")
    return found.fetchone() is not None


def store_sample(conn: sqlite3.Connection, rows: Iterable[tuple[str, str]]) -> None:
    """(topic_id, stratum) rows, inside the caller's transaction."""
    conn.executemany(
        "INSERT INTO adjudication_sample (topic_id, stratum) VALUES (?, ?)",
        [(topic_id, stratum) for topic_id, stratum in rows],
    )


def sample_topics(study: Study) -> list[tuple[str, str]]:
    """(topic_id, stratum) of every drawn topic, by topic id."""
    return [
        (r[0], r[1])
        for r in study.rows("SELECT topic_id, stratum FROM adjudication_sample ORDER BY topic_id")
    ]


def count_sample(study: Study) -> int:
    return study.count("adjudication_sample")


def sample_item_ids(study: Study) -> set[str]:
    """Items of model outputs whose topic is in the sample (all conditions, all models)."""
    return {
        r[0]
        for r in study.rows(
            "SELECT i.item_id FROM items i JOIN outputs o ON o.output_id = i.output_id "
            "JOIN prompts p ON p.prompt_id = o.prompt_id "
            "JOIN adjudication_sample s ON s.topic_id = p.topic_id"
        )
    }


def adjudication_progress(study: Study) -> AdjudicationProgress:
    """Counts for `judge --status`; assignments and reviews of adjudicators only."""
    row = study.rows(
        """
SELECT (SELECT COUNT(*) FROM adjudication_sample),
       (SELECT COUNT(*) FROM items i JOIN outputs o ON o.output_id = i.output_id
            JOIN prompts p ON p.prompt_id = o.prompt_id
            JOIN adjudication_sample s ON s.topic_id = p.topic_id),
       (SELECT COUNT(*) FROM assignments a JOIN reviewers r ON r.reviewer_id = a.reviewer_id
            WHERE r.role = 'adjudicator'),
       (SELECT COUNT(*) FROM reviews v JOIN assignments a
            ON a.item_id = v.item_id AND a.reviewer_id = v.reviewer_id
            JOIN reviewers r ON r.reviewer_id = v.reviewer_id WHERE r.role = 'adjudicator')
"""
    )[0]
    return AdjudicationProgress(*(int(n) for n in row))
