"""When a study was unblinded: the moment `analyze` joined reviews to conditions.

Before it, exports and the explorer show only what a reviewer could see. The mark lives in the
store's meta table (key `unblinded_at`, UTC), so it travels with study.sqlite and every reader
decides on the same fact.
"""

from __future__ import annotations

from harness.study.clock import utc_now
from harness.study.store import Study

UNBLINDED_KEY = "unblinded_at"


def unblinded_at(study: Study) -> str | None:
    """UTC time of the first unblinding, or None while the study is still blind."""
    return study.meta(UNBLINDED_KEY)


def mark_unblinded(study: Study) -> str:
    """Record the unblinding (first time only; later analyses keep the first time)."""
    with study.transaction() as conn:
        conn.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (UNBLINDED_KEY, utc_now()))
    return unblinded_at(study) or ""
