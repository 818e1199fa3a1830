"""What an automated review writes and reads, shared by the review loop (`auto_review.py`) and the
calibration of its rule (`auto_calibration.py`): the text a reviewer reads, one review with its
search records, and a search record as stored."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING

from harness.study.clock import utc_now
from harness.study.scrub import scrub
from harness.study.tables.reviews import NewReview, insert_reviews
from harness.study.tables.searches import NewSearch, insert_searches

if TYPE_CHECKING:
    import sqlite3

    from harness.literature.base import SearchRecord
    from harness.literature.reviewer_base import Decision

#: `reviews.source` and `searches.source` of everything an automated reviewer writes.
SOURCE = "automated"


def item_text(display_text: str, core: str | None, *, for_model: bool) -> str:
    """What an automated reviewer reads: the core combination (else the text), nothing else."""
    core = (core or "").strip()
    if not for_model:
        return core or display_text
    return f"Core combination: {core}\n\n{display_text}" if core else display_text


def insert_review(
    conn: sqlite3.Connection, item_id: str, reviewer_id: str, decision: Decision
) -> None:
    """One automated review and its search records, inside the caller's transaction."""
    review = NewReview(
        item_id,
        reviewer_id,
        decision.verdict,
        decision.confidence,
        decision.prior_work,
        decision.notes_json(),
        SOURCE,
        None,
        None,
        utc_now(),
    )
    insert_reviews(conn, [review])
    insert_searches(
        conn,
        [search_record(s.record, s.relevant, item_id, reviewer_id) for s in decision.searches],
    )


def search_record(
    record: SearchRecord, relevant: list[str], item_id: str | None, reviewer_id: str | None
) -> NewSearch:
    """One search record as stored (also usable for records made outside a review)."""
    values = (
        uuid.uuid4().hex,
        item_id,
        reviewer_id,
        record.database,
        record.interface,
        record.query,
        json.dumps(record.parameters, ensure_ascii=False, sort_keys=True),
        json.dumps(record.filters, ensure_ascii=False, sort_keys=True),
        record.run_at,
        record.total_hits,
        record.hits_json(),
        json.dumps(relevant, ensure_ascii=False),
        record.dedup_key,
        SOURCE,
    )
    # whatever a server echoed, no key reaches the store; no import (None) made it
    return NewSearch(*scrub([*values, None]))
