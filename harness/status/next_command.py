"""The next command a study needs, and why, as the one line every stage ends with."""

from __future__ import annotations

from pathlib import Path

from harness.collection.stopped_models import stop_line, stopped_models
from harness.judge.automated.auto_failures import recorded
from harness.judge.blinding.steps_model import served_models
from harness.study import Study
from harness.study.manifest import read_manifest
from harness.study.manifest_sections import AutoFailure
from harness.study.tables.adjudication import escalation_due
from harness.study.tables.assignments import count_assignments, outstanding_reviews
from harness.study.tables.judge_reads import pending_outputs
from harness.study.tables.reviews import late_reviews
from harness.study.tables.views import store_counts
from harness.study.unblinding import unblinded_at


def next_step(path: str | Path) -> str:
    """Which stage comes next and why, as one line."""
    manifest = read_manifest(path)
    flag = f"--study {path}"
    with Study.open(path) as s:
        counts = store_counts(s)
        prompts, ok = counts.prompts, counts.outputs_ok
        pending = pending_outputs(s)
        assigned = count_assignments(s)
        outstanding = {r.reviewer_id: r.outstanding for r in outstanding_reviews(s)}
        missing = sum(outstanding.values())
        unblinded = unblinded_at(s)
        late = late_reviews(s).count
        served = [] if assigned else served_models(s)  # the blinded steps' advice needs them
        disputed = (
            len(escalation_due(s, manifest.adjudication)) if assigned and not unblinded else 0
        )
    if not prompts:
        return f"Next: harness generate {flag} (the study has no prompts yet)"
    stopped = [] if assigned else stopped_models(manifest.collect)
    if stopped:  # another plain rerun would meet the same failures
        return "Next: " + "; ".join(stop_line(path, m) for m in stopped)
    if not assigned and (pending or not ok):
        n = sum(pending.values()) if pending else prompts
        return f"Next: harness collect {flag} ({n} output(s) pending)"
    if not assigned:
        steps = (
            f" --model PROVIDER/NAME (a capable model for the blinded steps; the study tests "
            f"{', '.join(served[:3])}, the default is the embedded 135M model)"
            if served
            else ""
        )
        return (
            f"Next: harness judge --blind {flag} --reviewers ROSTER{steps} (every output is "
            "collected; nothing is blinded yet)"
        )
    if manifest.prereg is None:
        return (
            f"Next: harness prereg {flag} (register the analysis plan before the reviews are "
            "analysed)"
        )
    made = str(manifest.blinding.made_at or "") if manifest.blinding else ""
    if not unblinded and made and str(manifest.prereg.at or "") < made:
        return (
            f"Next: harness prereg {flag} (rerun it: the plan was registered at "
            f"{manifest.prereg.at}, before the blinding of {made}, so prereg.md does "
            "not record the blinding commitment)"
        )
    if unblinded:
        report = Path(path) / "report"
        return (
            f"Done: unblinded {unblinded} by harness analyze; read {report / 'report.html'}, "
            f"follow the items in {report / 'explorer.html'} (harness explore {flag} rewrites "
            f"it), or write the tables with harness export judgments {flag}"
            + (f"; {late} review(s) came in after the unblinding (not analysed)" if late else "")
        )
    escalate = (
        f"harness judge --escalate {flag} ({disputed} item(s) the adjudicators disagree on "
        "need another adjudicator)"
    )
    if missing and disputed:
        return f"Next: {escalate}; {missing} of {assigned} assigned reviews are outstanding"
    if disputed:
        return f"Next: {escalate}"
    failed = recorded(manifest, outstanding)
    if failed:
        return _failed_step(failed, missing, assigned)
    if missing:
        return (
            f"Next: reviews: {missing} of {assigned} assigned reviews outstanding (harness judge "
            f"--status {flag} lists them; harness judge --import or --auto adds them); "
            "harness analyze waits for them"
        )
    return f"Next: harness analyze {flag} (every assigned review is in)"


def _failed_step(failed: list[tuple[str, AutoFailure]], missing: int, assigned: int) -> str:
    """The way out of the failure of the automated reviewer with most reviews outstanding (not
    the command that failed)."""
    reviewer_id, failure = failed[0]
    more = f" (and {len(failed) - 1} more automated reviewer(s) failed)" if len(failed) > 1 else ""
    return (
        f"Next: automated reviewer {reviewer_id} failed in its last run ({failure.at}): "
        f"{_short(failure.message or '')}; {failure.fix}{more}; {missing} of {assigned} assigned "
        "reviews are outstanding"
    )


def _short(text: str, width: int = 240) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."
