"""`analyze`: verify, unblind, run the preregistered plan, decide, write the report.

Importing this module loads the statistics (numpy, scipy, pandas): `import harness` loads it on
the first use of `harness.analyze`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from harness.analysis.blinded_steps import blinded_steps
from harness.analysis.compute import compute
from harness.analysis.data import load_study
from harness.analysis.plan.plan_file import LoadedPlan, bundled_plan_path, load_plan
from harness.analysis.report.results import AnalysisResult
from harness.analysis.report.writer import write_report as write
from harness.errors import HarnessError
from harness.explore import write_explorer
from harness.progress import status
from harness.study.lock import writes_study
from harness.study.manifest import made_section, read_manifest, record_command, record_section
from harness.study.manifest_sections import Adjudication, Analysis, Prereg, UnsureLimit
from harness.study.store import Study
from harness.study.tables.adjudication import escalation_due
from harness.study.tables.assignments import count_assignments, outstanding_reviews
from harness.study.tables.judge_reads import step_records_frame
from harness.study.tables.reviews import late_reviews
from harness.study.unblinding import mark_unblinded


class Outstanding(TypedDict):
    """Assigned reviews not yet in, as the manifest's `analysis.partial` records them."""

    outstanding: int
    assigned: int
    text: str
    by_reviewer: dict[str, int]


@writes_study
def analyze(
    study_dir: str | Path,
    plan: str | Path | None = None,
    allow_deviation: bool = False,
    *,
    write_report: bool = True,
    partial: bool = False,
) -> AnalysisResult:
    """Run the preregistered analysis of a study and write `report/` (md, html, json, png).

    Refused while assigned reviews are outstanding: unblinding cannot be undone. `partial`
    analyses what has come in, recorded as a deviation in the manifest and the report.
    """
    folder = Path(study_dir)
    with Study.open(folder) as study:
        manifest = read_manifest(folder)
        loaded, deviations = resolve_plan(manifest.prereg, plan, allow_deviation)
        missing = outstanding(study, partial)
        if missing is not None:
            deviations.append(
                f"analysed with --partial: {missing['outstanding']} of {missing['assigned']} "
                f"assigned reviews were outstanding ({missing['text']})"
            )
        disputed = unescalated(study, manifest.adjudication, loaded.plan.outcome.unsure, partial)
        if disputed:
            deviations.append(
                f"analysed with --partial: {disputed} item(s) the adjudicators disagree on had "
                "not been routed to another adjudicator (harness judge --escalate)"
            )
        with status("loading the reviews and checking the blinding key"):
            data = load_study(study, manifest, allow_missing_commitment=allow_deviation)
        if data.blinding.status == "missing":
            deviations.append(
                "the blinding key could not be verified: the manifest holds no blinding commitment"
            )
        with status("computing the preregistered analysis"):
            result = compute(data, loaded, manifest, deviations, folder)
        mark_unblinded(study)
        result = _with_late_reviews(study, result)
        result = _with_accepted_unsure(manifest.unsure_limit, result)
        result = _with_blinded_steps(study, result)
        if write_report:
            with status("writing the report and its figures"):
                result = write(result, study.report_dir, loaded.plan, loaded.text)
            with status("writing the study explorer"):
                write_explorer(study, result.report_files["explorer"])
    analysed = {
        "at": result.analysed_at,
        "plan_sha256": loaded.sha256,
        "verdict": result.verdict.label,
        "deviations": deviations,
        "partial": missing,
        "reviews_after_unblinding": result.design.reviews_after_unblinding,
        "report": result.report_files,
    }
    record_section(folder, "analysis", made_section(Analysis, analysed, folder))
    record_command(
        folder,
        "analyze",
        {"plan": loaded.path, "allow_deviation": allow_deviation, "partial": partial},
    )
    return result


def unescalated(study: Study, adjudication: Adjudication | None, unsure: str, partial: bool) -> int:
    """Items the adjudicators disagree on that a later round should reach first (plan
    `adjudication.escalate`): refused unless `partial`, else their number."""
    disputed = len(escalation_due(study, adjudication, unsure))
    if disputed and not partial:
        raise HarnessError(
            f"{disputed} item(s) the adjudicators disagree on need another adjudicator; "
            "analyze unblinds the study, which cannot be undone: run harness judge --escalate "
            "and import or run their reviews first, or rerun with --partial to analyse what "
            "has come in, recorded as a deviation",
            file=study.path,
        )
    return disputed


def outstanding(study: Study, partial: bool) -> Outstanding | None:
    """Assigned reviews not yet in (primary reviewers and adjudicators alike): None when every
    one is in; refused unless `partial`, else what is missing, for the manifest."""
    rows = outstanding_reviews(study)
    if not rows:
        return None
    total = sum(r.outstanding for r in rows)
    assigned = count_assignments(study)
    shown = ", ".join(
        f"{r.reviewer_id}{' (adjudicator)' if r.role == 'adjudicator' else ''} {r.outstanding}"
        for r in rows[:3]
    )
    if len(rows) > 3:
        shown += f" and {len(rows) - 3} more reviewers"
    if not partial:
        raise HarnessError(
            f"{total} of {assigned} assigned reviews are outstanding ({shown}); analyze "
            "unblinds the study, which cannot be undone: import or run the missing reviews "
            "first (harness judge --status lists them), or rerun with --partial to analyse "
            "what has come in, recorded as a deviation",
            file=study.path,
        )
    return {
        "outstanding": total,
        "assigned": assigned,
        "text": shown,
        "by_reviewer": {r.reviewer_id: r.outstanding for r in rows},
    }


def _with_late_reviews(study: Study, result: AnalysisResult) -> AnalysisResult:
    """The result with the count of reviews stored after the unblinding, and a note on them."""
    late = late_reviews(study)
    design = result.design.model_copy(update={"reviews_after_unblinding": late.count})
    if not late.count:
        return result.model_copy(update={"design": design})
    note = (
        f"AFTER UNBLINDING: {late.count} review(s) from {late.reviewers} reviewer(s) came in "
        f"after the study was unblinded ({late.first_at} to {late.last_at}); they are stored "
        "apart and are not part of this analysis."
    )
    return result.model_copy(update={"design": design, "notes": [*result.notes, note]})


def _with_blinded_steps(study: Study, result: AnalysisResult) -> AnalysisResult:
    """The result with the blinded steps' models and fidelity per condition."""
    return result.model_copy(update={"blinded_steps": blinded_steps(step_records_frame(study))})


def _with_accepted_unsure(limit: UnsureLimit | None, result: AnalysisResult) -> AnalysisResult:
    """The result with a note per automated reviewer whose reviews passed the plan's unsure
    limit and are analysed because the user accepted them (`judge --auto --accept-unsure`,
    manifest section `unsure_limit` written by `harness.judge.automated.unsure_limit`)."""
    accepted = (limit.accepted if limit is not None else None) or {}
    notes = []
    for reviewer_id, r in sorted(accepted.items()):
        broken = (
            f", {r['off_protocol']} of them off its reply protocol" if r["off_protocol"] else ""
        )
        notes.append(
            f"UNSURE LIMIT PASSED: automated reviewer {reviewer_id!r} ({r['method']}) had "
            f"{r['unsure']} of {r['reviews']} reviews unsure{broken}, above the plan's limit "
            f"{r['limit']:g} (outcome.max_unsure_share); its reviews are in this analysis "
            f"because they were accepted ({r['accepted_by']}, {r['accepted_at']})."
        )
    return result.model_copy(update={"notes": [*result.notes, *notes]}) if notes else result


def resolve_plan(
    prereg: Prereg | None, plan: str | Path | None, allow_deviation: bool
) -> tuple[LoadedPlan, list[str]]:
    """Load the plan (given, else the preregistered one, else bundled); compare with prereg."""
    prereg = prereg or Prereg()
    if plan is None:
        registered = prereg.plan_path
        plan = registered if registered and Path(registered).exists() else bundled_plan_path()
    loaded = load_plan(plan)
    deviations: list[str] = []
    expected = prereg.plan_sha256
    if expected and expected != loaded.sha256:
        message = (
            f"the analysis plan (sha256 {loaded.sha256}) differs from the plan "
            f"preregistered {_or_unknown(prereg.at)} (sha256 {expected}, "
            f"{_or_unknown(prereg.plan_path)})"
        )
        if not allow_deviation:
            raise HarnessError(
                message + "; rerun with --allow-deviation to analyse with it, "
                "reported as a deviation",
                file=loaded.path,
            )
        deviations.append(message)
    return loaded, deviations


def _or_unknown(value: str | None) -> str:
    return "?" if value is None else value
