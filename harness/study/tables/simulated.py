"""Rows of a simulated study (topics, prompts, outputs, items, reviewers, assignments, reviews,
control items) with fixed placeholder texts, written in the caller's transaction. Only
`harness.analysis.simulation.study_folder` writes these (dry runs of `analyze` and its benchmarks)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from harness.study.store import Study
from harness.study.tables.outputs import OutputRecord, store_outputs
from harness.study.tables.prompts import PromptRecord, insert_prompts
from harness.study.tables.topics import TopicRecord, insert_topics

_EVIDENCE = '{"title": "simulated", "year": 2020, "doi": null}'


def insert_simulated_prompts(
    conn: sqlite3.Connection, topics: Sequence[tuple[str, float]], conditions: Sequence[str]
) -> None:
    """Topics (id, embedding distance) between two placeholder fields, and one prompt
    `TOPIC:CONDITION` per topic and condition."""
    insert_topics(
        conn,
        (
            TopicRecord(
                t,
                "Field A",
                1,
                "Domain A",
                "Field B",
                2,
                "Domain B",
                '["a1", "a2"]',
                '["b1", "b2"]',
                "relation",
                3,
                d,
                "{}",
            )
            for t, d in topics
        ),
    )
    insert_prompts(
        conn,
        (
            PromptRecord(f"{t}:{c}", t, c, "simulated", "", None, "simulated prompt", 10, "{}")
            for t, _ in topics
            for c in conditions
        ),
    )


def insert_simulated_outputs(
    conn: sqlite3.Connection, outputs: Sequence[tuple[str, str, int]], created_at: str
) -> None:
    """Ok outputs (output id, prompt id, sample) of a placeholder model."""
    store_outputs(
        conn,
        (
            OutputRecord(
                o,
                p,
                n,
                "ok",
                "simulated",
                "simulated",
                "simulated",
                None,
                None,
                "{}",
                "simulated output",
                None,
                None,
                None,
                None,
                None,
                1,
                None,
                created_at,
                created_at,
            )
            for o, p, n in outputs
        ),
    )


def insert_judged_items(
    conn: sqlite3.Connection,
    items: Sequence[tuple[str, str]],
    reviewers: Sequence[tuple[str, str]],
    reviews: Sequence[tuple[str, str, str]],
    created_at: str,
) -> None:
    """Items (item id, output id), automated-method reviewers (id, kind) with unbounded capacity,
    and reviews (item id, reviewer id, verdict), each review also an assignment in that order."""
    conn.executemany(
        "INSERT INTO items (item_id, output_id, original_text, core_combination, display_text, "
        "steps) VALUES (?, ?, 'simulated output', NULL, 'simulated output', '{}')",
        items,
    )
    conn.executemany(
        "INSERT INTO reviewers (reviewer_id, kind, method, expertise, capacity) "
        "VALUES (?, ?, 'retrieval', '[]', 1000000)",
        reviewers,
    )
    conn.executemany(
        "INSERT INTO assignments (item_id, reviewer_id, position) VALUES (?, ?, ?)",
        [(i, r, n) for n, (i, r, _) in enumerate(reviews)],
    )
    _insert_reviews(conn, reviews, created_at)


def insert_control_items(
    conn: sqlite3.Connection,
    controls: Sequence[tuple[str, str, str, str]],
    items: Sequence[tuple[str, str]],
    reviews: Sequence[tuple[str, str, str]],
    created_at: str,
) -> None:
    """Held-out bank controls (id, statement, expected, kind), their items (item id, control
    id) and reviews (item id, reviewer id, verdict), each review also an assignment."""
    conn.executemany(
        "INSERT INTO controls (control_id, statement, text, expected, kind, source, topic_id, "
        "evidence, split) VALUES (?, ?, 'simulated control', ?, ?, 'bank', NULL, ?, 'held_out')",
        [(*c, _EVIDENCE) for c in controls],
    )
    conn.executemany(
        "INSERT INTO items (item_id, control_id, original_text, core_combination, display_text, "
        "steps) VALUES (?, ?, 'simulated control', NULL, 'simulated control', '{}')",
        items,
    )
    conn.executemany(
        "INSERT INTO assignments (item_id, reviewer_id, position) VALUES (?, ?, 0)",
        [(i, r) for i, r, _ in reviews],
    )
    _insert_reviews(conn, reviews, created_at)


def _insert_reviews(
    conn: sqlite3.Connection, reviews: Sequence[tuple[str, str, str]], created_at: str
) -> None:
    conn.executemany(
        "INSERT INTO reviews (item_id, reviewer_id, verdict, source, created_at) "
        "VALUES (?, ?, ?, 'automated', ?)",
        [(i, r, v, created_at) for i, r, v in reviews],
    )


def output_items(study: Study) -> dict[str, str]:
    """output id -> item id of every item that shows a model output."""
    return {
        r[0]: r[1]
        for r in study.rows("SELECT output_id, item_id FROM items WHERE output_id IS NOT NULL")
    }


def insert_adjudication(
    conn: sqlite3.Connection,
    sample: Sequence[tuple[str, str]],
    adjudicators: Sequence[str],
    reviews: Sequence[tuple[str, str, str]],
    created_at: str,
) -> None:
    """The drawn topics (topic id, stratum), automated adjudicators and their reviews (item id,
    reviewer id, verdict), each review also an assignment."""
    conn.executemany("INSERT INTO adjudication_sample (topic_id, stratum) VALUES (?, ?)", sample)
    conn.executemany(
        "INSERT INTO reviewers (reviewer_id, kind, method, expertise, capacity, role) "
        "VALUES (?, 'automated', 'retrieval', '[]', 1000000, 'adjudicator')",
        [(a,) for a in adjudicators],
    )
    conn.executemany(
        "INSERT INTO assignments (item_id, reviewer_id, position) VALUES (?, ?, 0)",
        [(i, r) for i, r, _ in reviews],
    )
    _insert_reviews(conn, reviews, created_at)
