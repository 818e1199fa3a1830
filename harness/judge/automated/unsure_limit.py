"""The plan's limit on an automated reviewer's `unsure` reviews (`outcome.max_unsure_share`).

A reviewer whose reviews are mostly `unsure` has failed as an instrument rather than judged: a
model that does not follow its reply protocol has every review recorded as `unsure`, which the
plan's coding counts as "not novel". When `judge --auto` has run a reviewer through its pending
items, it counts the reviewer's stored reviews (before the unblinding, calibration items
included); when the share of `unsure` passes the limit, the reviewer's reviews, their search
records and its decision rule are deleted in one transaction, the manifest records what was
discarded (section `unsure_limit`), and the run ends with one line naming the reviewer, the
count and an example reply. Its items are pending again: a rerun reviews them anew (once the
reviewer is fixed), and `analyze` does not unblind without them unless `--partial`.

A run stops a reviewer early, after its first `EARLY` reviews, when each of them broke the
reply protocol and the limit is passed: the rest would go the same way.

The user may accept such a reviewer (`judge --auto --accept-unsure ID`): its reviews are kept,
and the acceptance, with the counts and the limit, is recorded in the manifest (it holds for
later runs) and shown at the top of the report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import HarnessError
from harness.judge.automated.plan_outcome import plan_outcome
from harness.study.clock import utc_now
from harness.study.manifest import change_manifest, read_manifest
from harness.study.manifest_sections import Manifest, UnsureLimit
from harness.study.records import JsonObject
from harness.study.tables.calibrations import delete_calibration
from harness.study.tables.reviews import delete_automated_reviews, unsure_notes
from harness.study.tables.searches import delete_automated_searches

if TYPE_CHECKING:
    from harness.literature.reviewer_base import Decision
    from harness.study.store import Study

#: Manifest section: {"accepted": {reviewer_id: record}, "discarded": [record, ...]}.
SECTION = "unsure_limit"
#: Reviews after which a run stops a reviewer whose every review so far broke its protocol.
EARLY = 5
#: The plan's field, as messages name it.
FIELD = "outcome.max_unsure_share"
EXAMPLE_CHARS = 80


@dataclass(frozen=True)
class UnsureTally:
    """A reviewer's stored reviews (before the unblinding) against the plan's limit."""

    reviewer_id: str
    method: str
    reviews: int
    unsure: int
    off_protocol: int  # unsure reviews whose reply broke the reviewer's protocol
    example: str | None  # the first reply that broke it
    limit: float
    at: str = field(default_factory=utc_now, compare=False)  # when it was counted

    @property
    def share(self) -> float:
        return self.unsure / self.reviews if self.reviews else 0.0

    @property
    def over(self) -> bool:
        return self.reviews > 0 and self.share > self.limit

    def counts(self) -> str:
        """`6 of 6 reviews unsure, above the plan's limit 0.5 (outcome.max_unsure_share); 6
        broke its reply protocol, e.g. reply 'Sure! ...'`"""
        text = (
            f"{self.unsure} of {self.reviews} reviews unsure, above the plan's limit "
            f"{self.limit:g} ({FIELD})"
        )
        if self.off_protocol:
            text += f"; {self.off_protocol} broke its reply protocol"
        if self.example is not None:
            text += f", e.g. reply {_shorten(self.example)!r}"
        return text

    def discarded_line(self, discarded: int) -> str:
        return (
            f"reviewer {self.reviewer_id!r} (method: {self.method}): {self.counts()}; its "
            f"{discarded} reviews, their searches and its decision rule are discarded and do "
            "not enter the analysis: fix the reviewer and rerun, or rerun with --accept-unsure "
            f"{self.reviewer_id} to keep what it produces"
        )

    def record(self) -> JsonObject:
        return {
            "reviewer_id": self.reviewer_id,
            "method": self.method,
            "reviews": self.reviews,
            "unsure": self.unsure,
            "off_protocol": self.off_protocol,
            "example": self.example,
            "limit": self.limit,
            "at": self.at,
        }


def _shorten(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXAMPLE_CHARS else flat[: EXAMPLE_CHARS - 3] + "..."


def broke_protocol(decision: Decision) -> bool:
    """The review is `unsure` because the reviewer's reply broke its protocol."""
    return decision.verdict == "unsure" and "off_protocol" in (decision.notes or {})


def plan_limit(study: Study) -> float:
    """The limit of the preregistered plan if there is one, else of the bundled plan."""
    return plan_outcome(study).max_unsure_share


def tally(study: Study, reviewer_id: str, method: str, limit: float) -> UnsureTally:
    total, notes = unsure_notes(study, reviewer_id)
    broken = [reply for reply in (_off_protocol(n) for n in notes) if reply is not None]
    return UnsureTally(
        reviewer_id,
        method,
        total,
        len(notes),
        len(broken),
        broken[0] if broken else None,
        limit,
    )


def calibration_tally(
    reviewer_id: str, method: str, decisions: list[Decision], limit: float
) -> UnsureTally:
    """The limit over a calibration's decisions (not stored yet): the same count as `tally`."""
    unsure = [d for d in decisions if d.verdict == "unsure"]
    broken = [str((d.notes or {})["off_protocol"]) for d in unsure if broke_protocol(d)]
    return UnsureTally(
        reviewer_id,
        method,
        len(decisions),
        len(unsure),
        len(broken),
        broken[0] if broken else None,
        limit,
    )


def _off_protocol(notes: str | None) -> str | None:
    try:
        data = json.loads(notes or "{}")
    except ValueError:
        return None
    reply = data.get("off_protocol") if isinstance(data, dict) else None
    return None if reply is None else str(reply)


def accepted(study_dir: str | Path) -> dict[str, JsonObject]:
    """reviewer_id -> the record of its acceptance above the limit (manifest)."""
    section = read_manifest(study_dir).unsure_limit
    return dict(section.accepted or {}) if section is not None else {}


def check_accepted_ids(asked: tuple[str, ...], automated: list[str]) -> None:
    """`--accept-unsure` names automated reviewers of the roster, or nothing is run."""
    unknown = [name for name in asked if name not in automated]
    if unknown:
        raise HarnessError(
            f"--accept-unsure {unknown[0]}: the roster has no automated reviewer of that id "
            f"(automated reviewers: {', '.join(automated) or 'none'})",
            column="--accept-unsure",
        )


def discard(study: Study, found: UnsureTally) -> int:
    """Delete the reviewer's reviews, their searches and its rule; record it; how many
    reviews were deleted."""
    with study.transaction() as conn:
        delete_automated_searches(conn, found.reviewer_id)
        deleted = delete_automated_reviews(conn, found.reviewer_id)
        delete_calibration(conn, found.reviewer_id)

    def change(manifest: Manifest) -> None:
        section = manifest.unsure_limit = manifest.unsure_limit or UnsureLimit()
        section.discarded = [*(section.discarded or []), {**found.record(), "discarded": deleted}]
        (manifest.calibration or {}).pop(found.reviewer_id, None)

    change_manifest(study, change)
    return deleted


def accept(study: Study, found: UnsureTally, asked: bool) -> None:
    """Record (or bring up to date) the acceptance of a reviewer above the limit; `asked`:
    this run's `--accept-unsure` named it."""

    def change(manifest: Manifest) -> None:
        section = manifest.unsure_limit = manifest.unsure_limit or UnsureLimit()
        kept = section.accepted = section.accepted or {}
        earlier = kept.get(found.reviewer_id) or {}
        record = found.record()
        record["accepted_at"] = record["at"] if asked or not earlier else earlier["accepted_at"]
        record["accepted_by"] = f"harness judge --auto --accept-unsure {found.reviewer_id}"
        kept[found.reviewer_id] = record

    change_manifest(study, change)
