"""Automated reviewers on their assigned blinded items: `harness judge --auto`.

Reads only what a reviewer may see (items.display_text and items.core_combination; never
prompts, topics or conditions), and writes each item's review (source='automated') together
with its search records in one transaction, so an interrupted run resumes where it stopped.
Each reviewer decides by the rule `auto_calibration.py` settles (calibrated on the calibration-split
controls, fixed by the user, or the default), before any other item is reviewed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from harness.errors import HarnessError
from harness.judge.automated.auto_calibration import (
    Rule,
    RuleSettings,
    UnsureCalibration,
    check_locked,
    settle,
)
from harness.judge.automated.auto_failures import Failed, Stage, record_outcome, way_out
from harness.judge.automated.review_records import insert_review, item_text
from harness.judge.automated.unsure_limit import (
    EARLY,
    UnsureTally,
    accept,
    accepted,
    broke_protocol,
    check_accepted_ids,
    discard,
    plan_limit,
    tally,
)
from harness.judge.cutoff import settle_cutoff
from harness.judge.judge_settings import AutoSettings, settings_or_options
from harness.judge.routing.roster import reviewer_model
from harness.literature import open_source
from harness.literature.base import Source
from harness.literature.review_methods import choices, split_method
from harness.literature.reviewer_base import Decision, Reviewer, ReviewerContext
from harness.models.throughput import Meter, record_decoding
from harness.progress import counted
from harness.study.lock import writes_study
from harness.study.manifest import record_command
from harness.study.scrub import scrub
from harness.study.tables.assignments import (
    AssignedItem,
    count_assignments,
    pending_assignments,
)
from harness.study.tables.reviewers import automated_reviewers
from harness.study.tables.reviews import verdict_counts
from harness.study.unblinding import unblinded_at

if TYPE_CHECKING:
    import pandas as pd

    from harness.models.providers import ModelSpec
    from harness.study.records import JsonObject
from harness.study.store import Study

Progress = Callable[[str, int, int], None]  # (reviewer_id, items done, items pending)


@writes_study
def run_automated(
    study: Study,
    settings: AutoSettings | None = None,
    *,
    progress: Progress | None = None,
    **options: object,
) -> pd.DataFrame:
    """Review every pending assignment of every automated reviewer; one row per reviewer.

    `settings` (`harness.judge.judge_settings.AutoSettings`), or its fields as keyword options:
    `sources`, source specs for `harness.literature.open_source` (default `["local"]`, the
    demonstration corpus); `threshold`, match score for `published` of the retrieval reviewers,
    fixed by the user instead of calibrated; `cutoff`, publication-date cut-off (YYYY-MM-DD or
    YYYY), by default the one `judge --blind` stored, and refused if it differs from it;
    `max_queries`; `backend`, the provider of the roster's bare `llm:` model names; `base_url`
    and `concurrency` for OpenAI-compatible models. Each reviewer's decision rule is settled
    first (`calibration.settle`): calibrated on the calibration-split controls when the study
    has them and the reviewer is not calibrated yet, else the stored one, else the documented
    default ("uncalibrated").

    After `analyze` unblinded the study, new reviews are refused unless `after_unblinding`:
    they are then stored as post-unblinding reviews, which the analysis never reads.

    A reviewer whose share of `unsure` reviews passes the plan's limit once it has run through
    its pending items (`unsure_limit.py`) has its reviews, searches and rule discarded, unless
    `accept_unsure` names it; its row then says so (`discarded`, and the line in `failed`). A
    reviewer whose calibration failed has no rule and reviews nothing (its line, with the way out,
    in `failed`). Each failure is kept in the manifest (`auto_failures.py`) for `harness status`
    until a run of the reviewer finishes without one. A study that `judge --blind` has not routed
    is refused.
    """
    import pandas as pd

    settings = settings_or_options(AutoSettings, settings, options)
    threshold = settings.threshold
    refuse_unrouted(study)
    refuse_after_unblinding(study, settings.after_unblinding)
    run = _Run(study, settings)
    rows = []
    try:
        run.check_locked(threshold)
        run.prepare()
        rules: dict[str, Rule] = {}
        failed: dict[str, Failed] = {}
        discarded: dict[str, int] = {}
        for reviewer_id, method, make in run.makers:
            try:
                rules[reviewer_id], _ = settle(
                    study,
                    reviewer_id,
                    method,
                    make,
                    run.settings(method),
                    threshold=threshold,
                    progress=progress,
                )
            except HarnessError as error:  # a server or source failed while calibrating
                failed[reviewer_id] = run.calibration_failed(reviewer_id, method, error)
        _record_run(study, run, rules, failed)
        for reviewer_id, method, make in run.makers:
            rule = rules.get(reviewer_id)
            new = 0
            if rule is not None:
                limit = run.limit(reviewer_id, method)
                try:
                    new = _review_pending(study, reviewer_id, make, rule.threshold, progress, limit)
                except _Stopped as stop:
                    new = stop.done
                    failed[reviewer_id] = run.failed(reviewer_id, method, "stopped", stop.reason)
                if reviewer_id not in failed and (held := limit.settle()) is not None:
                    discarded[reviewer_id], line = held
                    failed[reviewer_id] = run.failed(reviewer_id, method, "discarded", line)
            rows.append(
                {
                    **_summary(study, reviewer_id, method, new),
                    "rule": rule.status if rule else None,
                    "threshold": rule.threshold if rule else None,
                    "failed": failed[reviewer_id].line if reviewer_id in failed else "",
                    "discarded": discarded.get(reviewer_id, 0),
                }
            )
        record_outcome(study.path, failed.values(), [r for r in rules if r not in failed])
    finally:
        run.close()
    columns = [
        "reviewer_id",
        "method",
        "rule",
        "threshold",
        "assigned",
        "reviewed",
        "pending",
        "new",
        "published",
        "not_published",
        "unsure",
        "failed",
        "discarded",
    ]
    return pd.DataFrame(rows, columns=columns)


def refuse_after_unblinding(study: Study, allowed: bool) -> None:
    """Reviews made after the unblinding cannot enter the preregistered analysis: refused
    before any search runs, unless asked for (they are then stored marked)."""

    when = unblinded_at(study)
    if when is None or allowed:
        return
    pending = sum(
        len(pending_assignments(study, r.reviewer_id)) for r in automated_reviewers(study)
    )
    if pending:
        raise HarnessError(
            f"the study was unblinded {when}: {pending} automated review(s) made now cannot enter "
            "the preregistered analysis; rerun with --after-unblinding to store them as "
            "post-unblinding reviews (counted in the report, never analysed)",
            file=study.path,
        )


def refuse_unrouted(study: Study) -> None:
    """Automated reviewers review the items `judge --blind` routed to them: a study without any
    is refused in one line, before anything is opened or stored."""
    if not count_assignments(study):
        raise HarnessError(
            "no items are routed to reviewers yet: run `harness judge --blind --study "
            f"{study.path} --reviewers ROSTER` first (it makes the blinded items and routes "
            "them to the roster's reviewers, automated ones included)",
            file=study.path,
        )


def unfinished(frame: pd.DataFrame) -> str | None:
    """The summary line of a `run_automated` frame whose reviewers left work, else None: the
    reviewers whose work was discarded for passing the unsure limit first, then every failed
    reviewer's line (a reviewer without a rule failed its calibration)."""
    if frame.empty:
        return None
    left = int(frame["pending"].sum())
    held = frame[frame["discarded"] > 0] if "discarded" in frame else frame.iloc[:0]
    failed = frame[(frame["failed"] != "") & ~frame.index.isin(held.index)]
    if not left and failed.empty and held.empty:
        return None
    said = "".join(f"; {row.reviewer_id}: {row.failed}" for row in failed.itertuples())
    # a rerun resumes what a server stopped; a failed calibration (no rule) needs its fix first
    calibrations = not failed.empty and "rule" in failed and bool(failed["rule"].isna().all())
    resume = "" if calibrations else ", rerun to resume"
    summary = (
        f"{left} of {int(frame['assigned'].sum())} assigned items are not reviewed yet, "
        f"{len(failed)} reviewer(s) stopped by a failure{said}; finished reviews are "
        f"kept{resume}"
    )
    if held.empty:
        return summary
    lines = [str(line) for line in held["failed"]]
    if not failed.empty:
        lines.append(summary)
    return "; ".join(lines)


@writes_study
def calibrate_automated(
    study: Study,
    settings: AutoSettings | None = None,
    *,
    progress: Progress | None = None,
    **options: object,
) -> tuple[pd.DataFrame, list[str]]:
    """Calibrate every automated reviewer whose rule is not locked (`judge --calibrate`).

    `settings` or its keyword options as `run_automated` takes them, but for `threshold` (which
    calibration chooses) and `after_unblinding`. Returns one row per reviewer (rule, threshold,
    default, J and its parts on the calibration split; `rule` "failed" with the line and the way
    out in `failed` where a server, a source or the unsure limit stopped its calibration) and one
    line per reviewer saying what was done (or that its rule is locked).
    """
    import pandas as pd

    settings = settings_or_options(AutoSettings, settings, options)
    _refuse_review_only(settings)
    refuse_unrouted(study)
    run = _Run(study, settings)
    rows: list[dict[str, object]] = []
    lines: list[str] = []
    failed: list[Failed] = []
    try:
        run.check_locked(None)
        run.prepare()
        record_command(study.path, "judge --calibrate", run.provenance())
        for reviewer_id, method, make in run.makers:
            try:
                rule, said = settle(
                    study,
                    reviewer_id,
                    method,
                    make,
                    run.settings(method),
                    recalibrate=True,
                    progress=progress,
                )
            except HarnessError as error:  # a server or source failed: nothing stored for it
                failed.append(run.calibration_failed(reviewer_id, method, error))
                lines.append(f"{reviewer_id}: calibration failed: {failed[-1].line}")
                rows.append(
                    {
                        "reviewer_id": reviewer_id,
                        "method": method,
                        "rule": "failed",
                        "failed": failed[-1].line,
                    }
                )
                continue
            lines.append(said or rule.describe())
            rows.append(
                {
                    "reviewer_id": reviewer_id,
                    "method": method,
                    "rule": rule.status,
                    "threshold": rule.threshold,
                    "default": rule.default_threshold,
                    "youden": rule.youden,
                    "sensitivity": rule.sensitivity,
                    "specificity": rule.specificity,
                    "youden_default": rule.youden_default,
                    "n_published": rule.n_published,
                    "n_not_published": rule.n_not_published,
                }
            )
        # a calibration is no run through the items: it clears only a failed calibration
        calibrated = [str(row["reviewer_id"]) for row in rows if row["rule"] != "failed"]
        record_outcome(study.path, failed, calibrated, clears=("calibration",))
    finally:
        run.close()
    return pd.DataFrame(rows), lines


class _Run:
    """What one run of the automated reviewers shares: cut-off, sources, reviewers."""

    def __init__(self, study: Study, settings: AutoSettings) -> None:
        self.study = study
        # the settings as this run uses them: the cut-off settled against the stored one
        self.used = replace(settings, cutoff=settle_cutoff(study, settings.cutoff))
        self.cutoff, self.max_queries = self.used.cutoff, self.used.max_queries
        backend = self.used.backend
        self.options = self.used.server.given()  # checked when the settings were built
        self.reviewers = automated_reviewers(study)
        # the model of every method that needs one, resolved before anything opens or is stored
        self.models = {
            r.method or "": reviewer_model(r.reviewer_id, r.method or "", backend)
            for r in self.reviewers
            if _needs_model(r.method or "")
        }
        if self.options and not any(m.backend == "openai" for m in self.models.values()):
            flag = "--" + next(iter(self.options)).replace("_", "-")
            raise HarnessError(
                f"{flag} applies to OpenAI-compatible models only, and no llm: reviewer of the "
                "roster names one (e.g. method: llm:vllm/NAME)",
                column=flag,
            )
        self.accept_unsure = self.used.accept_unsure
        check_accepted_ids(
            self.accept_unsure,
            [r.reviewer_id for r in self.reviewers],
        )
        self.pool = _SourcePool(list(self.used.sources))
        self.makers = [
            (
                r.reviewer_id,
                r.method or "",
                _once(
                    _reviewer_factory(
                        r.reviewer_id,
                        r.method,
                        self.pool,
                        cutoff=self.cutoff,
                        max_queries=self.max_queries,
                        model=self.models.get(r.method or ""),
                        options=self.options,
                    )
                ),
            )
            for r in self.reviewers
        ]

    def settings(self, method: str) -> RuleSettings:
        """What a reviewer's scores depend on besides the item: part of its locked rule."""
        return {
            "sources": self.pool.specs,
            "max_queries": self.max_queries,
            "cutoff": self.cutoff,
            "backend": self.models[method].backend if method in self.models else None,
        }

    def check_locked(self, threshold: float | None) -> None:
        for reviewer_id, method, _ in self.makers:
            check_locked(self.study, reviewer_id, method, self.settings(method), threshold)

    def provenance(self) -> JsonObject:
        return self.used.record()

    def limit(self, reviewer_id: str, method: str) -> _UnsureWatch:
        """How the plan's unsure limit applies to this run of the reviewer."""
        if not hasattr(self, "_limit"):
            self._limit = plan_limit(self.study)
            self._accepted = accepted(self.study.path)
        return _UnsureWatch(
            self.study,
            reviewer_id,
            method,
            self._limit,
            asked=reviewer_id in self.accept_unsure,
            accepted=reviewer_id in self._accepted,
            # reviews stored after the unblinding never enter the analysis
            applies=unblinded_at(self.study) is None,
        )

    def failed(self, reviewer_id: str, method: str, stage: Stage, line: str) -> Failed:
        """A reviewer's failure in this run, with the way out of it (`auto_failures.way_out`)."""
        fix = way_out(
            self.study.path,
            reviewer_id,
            self.models.get(method),
            protocol=stage == "discarded",
            discarded=stage == "discarded",
        )
        return Failed(reviewer_id, method, stage, scrub(line), fix)

    def calibration_failed(self, reviewer_id: str, method: str, error: HarnessError) -> Failed:
        """A calibration that failed: the server's words, and the way out, in one line (no rule
        is settled, so none of the reviewer's items is reviewed)."""
        protocol = isinstance(error, UnsureCalibration)
        fix = way_out(self.study.path, reviewer_id, self.models.get(method), protocol=protocol)
        accepted = (
            f"; --accept-unsure {reviewer_id} keeps reviews above the limit, not a calibration "
            "(a threshold chosen on unsure replies measures nothing)"
            if protocol and reviewer_id in self.accept_unsure
            else ""
        )
        return Failed(reviewer_id, method, "calibration", scrub(f"{error}{accepted}"), fix)

    def prepare(self) -> None:
        """Build every reviewer that has work, before anything is stored: a missing key, an
        unreachable corpus or a refused server URL stops the run while the study is untouched."""
        for reviewer_id, _, make in self.makers:
            if pending_assignments(self.study, reviewer_id):
                make()

    def close(self) -> None:
        self.pool.close()


def _needs_model(method: str) -> bool:
    """True when the roster's method names a model (`llm:MODEL`) that must be resolved."""
    found = split_method(method.strip())
    return found is not None and found[0].needs_model


def _once(make: Callable[[], Reviewer]) -> Callable[[], Reviewer]:
    """`make` called at most once (calibration and review share one reviewer)."""
    built: list[Reviewer] = []

    def get() -> Reviewer:
        if not built:
            built.append(make())
        return built[0]

    return get


def _record_run(
    study: Study, run: _Run, rules: dict[str, Rule], failed: Mapping[str, Failed]
) -> None:
    """Provenance in the manifest: sources, rules, cut-off and query budget of this run (a
    reviewer whose calibration failed has no rule: its failure instead)."""
    record_command(
        study.path,
        "judge --auto",
        {
            **run.provenance(),
            **({"accept_unsure": list(run.accept_unsure)} if run.accept_unsure else {}),
            "reviewers": [
                _reviewer_record(r.reviewer_id, r.method, rules, failed) for r in run.reviewers
            ],
        },
    )


def _reviewer_record(
    reviewer_id: str, method: str | None, rules: dict[str, Rule], failed: Mapping[str, Failed]
) -> JsonObject:
    rule = rules.get(reviewer_id)
    if rule is None:
        return {
            "id": reviewer_id,
            "method": method,
            "threshold": None,
            "rule": None,
            "failed": failed[reviewer_id].line if reviewer_id in failed else None,
        }
    return {"id": reviewer_id, "method": method, "threshold": rule.threshold, "rule": rule.status}


class _SourcePool:
    """Sources opened once per run (the BM25 index and embedding model load once)."""

    def __init__(self, specs: list[str]) -> None:
        self.specs = specs
        self._open: dict[tuple[str, bool], Source] = {}

    def get(self, dense: bool) -> list[Source]:
        out = []
        for spec in self.specs:
            key = (spec, dense and spec.split(":")[0].strip().lower() == "local")
            if key not in self._open:
                self._open[key] = open_source(spec, **({"dense": True} if key[1] else {}))
            out.append(self._open[key])
        return out

    def close(self) -> None:
        for source in self._open.values():
            source.close()


def _refuse_review_only(settings: AutoSettings) -> None:
    """Settings of reviewing that calibration has no use for are refused, not ignored."""
    if settings.threshold is not None:
        raise HarnessError(
            "--threshold fixes the threshold and --calibrate chooses it; use one",
            column="--threshold",
        )
    if settings.after_unblinding:
        raise HarnessError(
            "calibration stores no reviews of assigned items: after_unblinding does not apply",
            column="--after-unblinding",
        )
    if settings.accept_unsure:
        raise HarnessError(
            "calibration keeps or discards nothing by the unsure limit: accept_unsure applies "
            "to judge --auto",
            column="--accept-unsure",
        )


def _reviewer_factory(
    reviewer_id: str,
    method: str | None,
    pool: _SourcePool,
    *,
    cutoff: str | None,
    max_queries: int,
    model: ModelSpec | None,
    options: Mapping[str, object],
) -> Callable[[], Reviewer]:
    """A function that builds the reviewer on first use (nothing loads for finished reviewers),
    by its method's record in the registry (`harness.literature.review_methods`).

    It is built with the method's default threshold; the settled rule sets the one it reviews
    with.
    """
    method = (method or "").strip()
    found = split_method(method)
    if found is None:
        raise HarnessError(
            f"reviewer {reviewer_id!r}: unknown automated method {method!r} (use {choices()})",
            column="method",
        )
    record, argument = found
    context = ReviewerContext(
        reviewer_id,
        method,
        argument,
        pool.get,
        cutoff,
        max_queries,
        record.default_threshold,
        model=model,
        server=options,
    )
    return lambda: record.build(context)


def _review_pending(
    study: Study,
    reviewer_id: str,
    make: Callable[[], Reviewer],
    threshold: float,
    progress: Progress | None,
    limit: _UnsureWatch | None = None,
) -> int:
    pending = pending_assignments(study, reviewer_id)
    if not pending:
        return 0
    reviewer = make()
    reviewer.threshold = threshold  # the settled decision rule
    # a reviewer that calls a model counts this call's replies, and its decoding is recorded
    meter = Meter(reviewer_id) if reviewer.meter is not None else None
    if meter is not None:
        reviewer.meter = meter
    try:
        return _review_each(study, reviewer_id, reviewer, pending, progress, limit)
    finally:  # also when a failure stopped the reviewer
        if meter is not None:
            record_decoding(study.path, "judge.auto", meter)


def _review_each(
    study: Study,
    reviewer_id: str,
    reviewer: Reviewer,
    pending: list[AssignedItem],
    progress: Progress | None,
    limit: _UnsureWatch | None = None,
) -> int:
    """Review the pending items in turn; how many were reviewed (fewer when the unsure limit
    stops a reviewer that breaks its protocol early)."""
    with counted(f"automated reviews by {reviewer_id}", len(pending)) as advance:
        for done, row in enumerate(pending, start=1):
            text = item_text(
                row.display_text, row.core_combination, for_model=reviewer.reads_full_text
            )
            try:
                decision = reviewer.review(text)
            except HarnessError as error:  # the server or a source failed: the rest stays
                raise _Stopped(done - 1, str(error)) from None
            _write(study, row.item_id, reviewer_id, decision)
            advance(done)
            if progress is not None:
                progress(reviewer_id, done, len(pending))
            if limit is not None and limit.stops_early(decision):
                return done
    return len(pending)


class _UnsureWatch:
    """The plan's unsure limit over one reviewer's run (`unsure_limit.py`)."""

    def __init__(
        self,
        study: Study,
        reviewer_id: str,
        method: str,
        limit: float,
        *,
        asked: bool,
        accepted: bool,
        applies: bool,
    ) -> None:
        self.study, self.reviewer_id, self.method, self.limit = study, reviewer_id, method, limit
        self.asked, self.accepted, self.applies = asked, accepted, applies
        self.seen = self.broken = 0

    def stops_early(self, decision: Decision) -> bool:
        """After the run's first few reviews, each of them off the reviewer's protocol: stop
        when the limit would discard the reviewer's work anyway."""
        self.seen += 1
        self.broken += broke_protocol(decision)
        if self.seen != EARLY or self.broken != EARLY or not self.applies:
            return False
        return not (self.asked or self.accepted) and self._tally().over

    def settle(self) -> tuple[int, str] | None:
        """After the run: (reviews discarded, the line saying why) when the reviewer passes
        the limit unaccepted; an accepted one above it is recorded as such. None otherwise."""
        if not self.applies:
            return None
        found = self._tally()
        if not found.over:
            return None
        if self.asked or self.accepted:
            accept(self.study, found, self.asked)
            return None
        deleted = discard(self.study, found)
        return deleted, found.discarded_line(deleted)

    def _tally(self) -> UnsureTally:
        return tally(self.study, self.reviewer_id, self.method, self.limit)


class _Stopped(Exception):
    """A reviewer stopped by a failure after `done` reviews."""

    def __init__(self, done: int, reason: str) -> None:
        super().__init__(reason)
        self.done, self.reason = done, scrub(reason)


def _write(study: Study, item_id: str, reviewer_id: str, decision: Decision) -> None:
    with study.transaction() as conn:
        insert_review(conn, item_id, reviewer_id, decision)


def _summary(study: Study, reviewer_id: str, method: str, new: int) -> dict[str, object]:
    counts = verdict_counts(study, reviewer_id)
    return {
        "reviewer_id": reviewer_id,
        "method": method,
        "assigned": count_assignments(study, reviewer_id),
        "reviewed": sum(counts.values()),
        # assigned items without a review: calibration also reviews controls not assigned to the
        # reviewer (every one of an adjudicator's), so reviewed can exceed assigned
        "pending": len(pending_assignments(study, reviewer_id)),
        "new": new,
        "published": counts.get("published", 0),
        "not_published": counts.get("not_published", 0),
        "unsure": counts.get("unsure", 0),
    }
