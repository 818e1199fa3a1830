"""The decision rule of each automated reviewer: calibrated on controls, stored, then locked.

Calibration runs a reviewer on the control items of the calibration split only (never a
held-out control, never a real item), keeps each item's score, and chooses the threshold with
the largest Youden's J (`youden.py`). The rule is stored in `calibrations` with J on the
calibration split and recorded in the manifest (section `calibration`). The calibration items'
reviews and search records are written like any other, in the same transaction; the analysis
leaves calibration-split reviews of automated reviewers out of their accuracy.

Once a reviewer has reviewed any other item its rule is locked: neither a new calibration nor
another threshold or other search settings can change how its items are decided.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Literal

from harness.errors import HarnessError
from harness.judge.automated.plan_outcome import plan_outcome
from harness.judge.automated.review_records import insert_review, item_text
from harness.judge.automated.unsure_limit import calibration_tally, plan_limit
from harness.judge.automated.youden import Observation, accuracy, best_threshold
from harness.literature.review_methods import method_of
from harness.literature.reviewer_base import Decision, Reviewer
from harness.progress import counted
from harness.study.clock import utc_now
from harness.study.manifest import change_manifest, made_section
from harness.study.manifest_sections import CalibrationRecord as CalibrationEntry
from harness.study.manifest_sections import Manifest
from harness.study.records import JsonObject
from harness.study.tables.calibrations import (
    CalibrationRecord,
    save_calibration,
    stored_calibration,
)
from harness.study.tables.controls import calibration_items
from harness.study.tables.reviews import delete_calibration_reviews, reviews_outside_calibration
from harness.study.tables.searches import delete_calibration_searches

if TYPE_CHECKING:
    from harness.study.store import Study

#: What a rule's settings hold: the sources, query budget, cut-off and backend it reviews with.
RuleSettings = dict[str, object]

log = logging.getLogger(__name__)
#: (item_id, score) of each calibration control
ScoreRow = list[object]


class UnsureCalibration(HarnessError):
    """A calibration refused because the reviewer's replies passed the plan's unsure limit."""


@dataclass
class Rule:
    """How one automated reviewer turns a score into a verdict, and how that was chosen."""

    reviewer_id: str
    method: str
    status: Literal["calibrated", "uncalibrated", "fixed"]
    threshold: float
    default_threshold: float
    settings: RuleSettings
    youden: float | None = None
    sensitivity: float | None = None
    specificity: float | None = None
    youden_default: float | None = None
    n_published: int = 0
    n_not_published: int = 0
    unsure: str | None = None
    scores: list[ScoreRow] | None = None
    note: str | None = None
    decided_at: str = ""

    def record(self) -> JsonObject:
        """The manifest entry (per-item scores stay in the store)."""
        out = {k: v for k, v in asdict(self).items() if k not in ("scores", "reviewer_id")}
        return {**out, "rule": method_of(self.method).rule}

    def describe(self) -> str:
        if self.status != "calibrated":
            why = f" ({self.note})" if self.note else ""
            return f"{self.reviewer_id}: {self.status}, threshold {self.threshold:g}{why}"
        return (
            f"{self.reviewer_id}: calibrated threshold {self.threshold:.4g} (default "
            f"{self.default_threshold:g}) on {self.n_published} published and "
            f"{self.n_not_published} unpublished calibration controls: J {self.youden:.3f} "
            f"(sensitivity {self.sensitivity:.3f}, specificity {self.specificity:.3f}; "
            f"J at the default {self.youden_default:.3f})"
        )


def other_reviews(study: Study, reviewer_id: str) -> int:
    """Reviews of items outside the calibration split: any one of them locks the rule."""
    return reviews_outside_calibration(study, reviewer_id)


def stored_rule(study: Study, reviewer_id: str) -> Rule | None:
    record = stored_calibration(study, reviewer_id)
    return None if record is None else Rule(**asdict(record))


def plan_unsure(study: Study) -> str:
    """The plan's coding of unsure: the preregistered plan if there is one, else the bundled."""
    return plan_outcome(study).unsure


Progress = Callable[[str, int, int], None]


def calibrate(
    study: Study,
    reviewer_id: str,
    method: str,
    reviewer: Reviewer,
    settings: RuleSettings,
    progress: Progress | None = None,
) -> Rule:
    """Run `reviewer` on the calibration items, choose its threshold, store everything."""
    items = calibration_items(study)
    for_model = reviewer.reads_full_text
    assessed = []
    with counted(f"calibrating {reviewer_id}", len(items)) as advance:
        for done, row in enumerate(items, start=1):
            text = item_text(row.display_text, row.core_combination, for_model=for_model)
            assessed.append((row.item_id, row.expected, reviewer.assess(text, stop_at=None)))
            advance(done)
            if progress is not None:
                progress(reviewer_id, done, len(items))
    rule = choose(
        reviewer_id,
        method,
        settings,
        plan_unsure(study),
        [(item_id, expected, a.score, a.otherwise) for item_id, expected, a in assessed],
    )
    decisions = [(item_id, a.decide(rule.threshold)) for item_id, _, a in assessed]
    found = calibration_tally(reviewer_id, method, [d for _, d in decisions], plan_limit(study))
    if found.over:  # a rule chosen on unsure replies would measure nothing: nothing is stored
        raise UnsureCalibration(
            f"reviewer {reviewer_id!r} (method: {method}): calibration: {found.counts()}; "
            "nothing of its calibration is stored"
        )
    save(study, rule, decisions)
    return rule


def choose(
    reviewer_id: str,
    method: str,
    settings: RuleSettings,
    unsure: str,
    scored: list[tuple[str, str, float | None, str]],
) -> Rule:
    """The rule from (item_id, expected, score, verdict when no score) of each control."""
    default = method_of(method).default_threshold
    observations = [
        Observation(expected, score, otherwise) for _, expected, score, otherwise in scored
    ]
    scores: list[ScoreRow] = [[item_id, score] for item_id, _, score, _ in scored]
    rule = Rule(
        reviewer_id,
        method,
        "uncalibrated",
        default,
        default,
        settings,
        unsure=unsure,
        scores=scores,
        decided_at=utc_now(),
    )
    try:
        best = best_threshold(observations, default, unsure)
    except ValueError:
        rule.note = (
            "the calibration split lacks published or unpublished controls with a "
            "verdict; default threshold kept"
        )
        return rule
    at_default = accuracy(observations, default, unsure)
    rule.status, rule.threshold = "calibrated", best.threshold
    rule.youden, rule.sensitivity, rule.specificity = (
        best.youden,
        best.sensitivity,
        best.specificity,
    )
    rule.youden_default = at_default.youden
    rule.n_published, rule.n_not_published = best.n_published, best.n_not_published
    return rule


def save(study: Study, rule: Rule, decisions: list[tuple[str, Decision]] | None) -> None:
    """Store the rule; with `decisions`, they replace the reviewer's reviews (and searches) of
    calibration items, in the same transaction. None records the rule of a locked reviewer."""
    entry = made_section(CalibrationEntry, rule.record(), study)  # refused before the store
    with study.transaction() as conn:
        if decisions is not None:
            if other_reviews(study, rule.reviewer_id):
                raise HarnessError(
                    f"reviewer {rule.reviewer_id!r}: its decision rule is "
                    "locked (it has reviewed items outside the calibration "
                    "split)"
                )
            delete_calibration_searches(conn, rule.reviewer_id)
            delete_calibration_reviews(conn, rule.reviewer_id)
            for item_id, decision in decisions:
                insert_review(conn, item_id, rule.reviewer_id, decision)
        save_calibration(conn, CalibrationRecord(**{**asdict(rule), "scores": rule.scores or []}))

    def change(manifest: Manifest) -> None:
        manifest.calibration = {**(manifest.calibration or {}), rule.reviewer_id: entry}

    change_manifest(study.path, change)


def settle(
    study: Study,
    reviewer_id: str,
    method: str,
    make: Callable[[], Reviewer],
    settings: RuleSettings,
    *,
    threshold: float | None = None,
    recalibrate: bool = False,
    progress: Progress | None = None,
) -> tuple[Rule, str | None]:
    """The rule to review with, calibrated or recorded first when needed, and what was done.

    A stored rule is kept while its settings hold; `recalibrate` (or a study that has gained
    calibration controls since a reviewer was recorded uncalibrated) calibrates again, and an
    explicit `threshold` (retrieval methods) fixes it. Nothing changes a locked rule.
    """
    stored = stored_rule(study, reviewer_id)
    locked = other_reviews(study, reviewer_id)
    found = method_of(method)
    fixed = threshold if found.user_threshold else None
    if stored is not None and locked:
        _refuse_change(stored, settings, fixed, locked)
        return stored, (
            f"{reviewer_id}: locked after {locked} reviews; {stored.describe()}"
            if recalibrate
            else None
        )
    default = found.default_threshold
    if fixed is not None:
        if stored is not None and (stored.status, stored.threshold, stored.settings) == (
            "fixed",
            fixed,
            settings,
        ):
            return stored, None
        rule = Rule(
            reviewer_id,
            method,
            "fixed",
            fixed,
            default,
            settings,
            scores=[],
            note="threshold set by the user",
            decided_at=utc_now(),
        )
        save(study, rule, None if locked else [])
        return rule, rule.describe()
    items = calibration_items(study)
    if (
        stored is not None
        and stored.settings == settings
        and not recalibrate
        and not (stored.status == "uncalibrated" and items)
    ):
        return stored, None
    if items and not locked:
        rule = calibrate(study, reviewer_id, method, make(), settings, progress)
        _say_why_again(stored, settings, recalibrate)
        return rule, rule.describe()
    note = (
        "reviews made before decision rules were stored"
        if locked
        else "no calibration controls in the study"
    )
    rule = Rule(
        reviewer_id,
        method,
        "uncalibrated",
        default,
        default,
        settings,
        scores=[],
        note=note,
        decided_at=utc_now(),
    )
    save(study, rule, None if locked else [])
    _say_why_again(stored, settings, recalibrate)
    return rule, rule.describe()


def _say_why_again(stored: Rule | None, settings: RuleSettings, asked: bool) -> None:
    """A stored rule replaced because this run's settings differ from its own is said on
    stderr: `judge --auto` with other options than `judge --calibrate` (a cut-off, a query
    budget) would otherwise replace the calibration unannounced."""
    if stored is None or asked:
        return
    changes = "; ".join(
        f"{key} {stored.settings.get(key)!r} -> {settings.get(key)!r}"
        for key in _differing(stored.settings, settings)
    )
    if not changes:
        return
    log.warning(
        "%s: its %s decision rule of %s was decided again, because this run's settings differ "
        "from the rule's: %s (give the options the rule was made with to keep it)",
        stored.reviewer_id,
        stored.status,
        stored.decided_at,
        changes,
    )


def _differing(before: RuleSettings, now: RuleSettings) -> list[str]:
    """The settings whose values differ (a key missing on one side reads as None), sorted."""
    return [key for key in sorted({*before, *now}) if before.get(key) != now.get(key)]


def check_locked(
    study: Study,
    reviewer_id: str,
    method: str,
    settings: RuleSettings,
    threshold: float | None = None,
) -> None:
    """Refuse, before anything runs, settings that a reviewer's locked rule does not allow."""
    stored = stored_rule(study, reviewer_id)
    locked = other_reviews(study, reviewer_id)
    if stored is not None and locked:
        _refuse_change(
            stored, settings, threshold if method_of(method).user_threshold else None, locked
        )


def _refuse_change(
    stored: Rule, settings: RuleSettings, threshold: float | None, reviews: int
) -> None:
    asked = []
    if threshold is not None and threshold != stored.threshold:
        asked.append(f"threshold {threshold:g} (locked: {stored.threshold:g})")
    asked += [
        f"{key} {settings.get(key)!r} (locked: {stored.settings.get(key)!r})"
        for key in _differing(stored.settings, settings)
    ]
    if asked:
        raise HarnessError(
            f"reviewer {stored.reviewer_id!r} has reviewed {reviews} items under its "
            f"{stored.status} decision rule, which is now locked; this run asks for "
            + "; ".join(asked),
            column="reviewer",
        )
