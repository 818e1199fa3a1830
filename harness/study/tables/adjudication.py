"""The `adjudication_sample` table: the topics drawn for adjudication (the gold subsample).

Written once, in the transaction that stores the routing; sealed in the blinding key. The item
reads here name which items are in the sample, so they serve routing and status only, never a
packet.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from harness.study.manifest_sections import Adjudication
from harness.study.store import Study


@dataclass(frozen=True)
class AdjudicationProgress:
    """Adjudicators' work on the sample: topics drawn, their items, reviews returned/assigned
    (`assigned`: their every assignment; `control_assigned` of them are of control items)."""

    topics: int
    items: int
    assigned: int
    returned: int
    control_assigned: int


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
            JOIN reviewers r ON r.reviewer_id = v.reviewer_id WHERE r.role = 'adjudicator'),
       (SELECT COUNT(*) FROM assignments a JOIN reviewers r ON r.reviewer_id = a.reviewer_id
            JOIN items i ON i.item_id = a.item_id
            WHERE r.role = 'adjudicator' AND i.control_id IS NOT NULL)
"""
    )[0]
    return AdjudicationProgress(*(int(n) for n in row))


@dataclass(frozen=True)
class AdjudicatorVote:
    """An adjudicator's assignment of a real item of the sample, with its verdict if returned."""

    item_id: str
    topic_id: str
    reviewer_id: str
    verdict: str | None


def adjudicator_votes(study: Study) -> list[AdjudicatorVote]:
    """Every adjudicator assignment of a real item (reviews stored after the unblinding left
    out), by item and reviewer."""
    return [
        AdjudicatorVote(*r)
        for r in study.rows(
            "SELECT a.item_id, p.topic_id, a.reviewer_id, rv.verdict FROM assignments a "
            "JOIN reviewers r USING (reviewer_id) JOIN items i USING (item_id) "
            "JOIN outputs o USING (output_id) JOIN prompts p USING (prompt_id) "
            "LEFT JOIN reviews rv ON rv.item_id = a.item_id AND rv.reviewer_id = a.reviewer_id "
            "AND rv.after_unblinding = 0 "
            "WHERE r.role = 'adjudicator' ORDER BY a.item_id, a.reviewer_id"
        )
    ]


CODE = {"published": 0, "not_published": 1}  # `unsure` follows the plan's outcome coding


def short_of_majority(votes: list[int | None], per_item: int) -> int:
    """Verdicts the leading one lacks for a majority of `per_item` (<= 0: settled); `votes`:
    the coded verdicts returned (None: not counted)."""
    counted = Counter(v for v in votes if v is not None)
    return per_item // 2 + 1 - max(counted.values(), default=0)


def needs(votes: list[int | None], assigned: int, per_item: int) -> int | None:
    """More adjudicators an item needs for a majority of `per_item`: None while a verdict is
    outstanding, 0 when settled or when no more may be added."""
    if len(votes) < assigned:
        return None
    return max(0, min(short_of_majority(votes, per_item), per_item - assigned))


def coded_votes(study: Study, unsure: str) -> dict[str, tuple[list[int | None], int]]:
    """item -> (its adjudicators' coded verdicts returned, adjudicators assigned)."""
    coding = {**CODE, "unsure": {"not_novel": 0, "novel": 1}.get(unsure)}
    out: dict[str, tuple[list[int | None], int]] = {}
    for v in adjudicator_votes(study):
        votes, assigned = out.get(v.item_id, ([], 0))
        if v.verdict is not None:
            votes.append(coding[v.verdict])
        out[v.item_id] = (votes, assigned + 1)
    return out


def escalation_due(
    study: Study, section: Adjudication | None, unsure: str = "not_novel"
) -> dict[str, int]:
    """Items a later round should reach now, from the manifest's `adjudication` record that
    `judge --blind` wrote (its `unsure` coding, else `unsure`); {} when the study does not
    escalate. `judge --escalate`, the next-step line and `analyze` all read it."""
    if section is None or not section.escalate or section.per_item is None:
        return {}
    coding = section.unsure if section.unsure is not None else unsure
    return items_to_escalate(study, section.per_item, coding)


def items_to_escalate(study: Study, per_item: int, unsure: str) -> dict[str, int]:
    """item -> adjudicators a later round should add (items without a majority yet)."""
    wanted = {}
    for item, (votes, assigned) in coded_votes(study, unsure).items():
        more = needs(votes, assigned, per_item)
        if more:
            wanted[item] = more
    return wanted
