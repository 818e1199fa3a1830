"""`analyze`: verify, unblind, run the preregistered plan, decide, write the report.

The statistics load inside `analyze`, so importing this module (and `harness`) stays light.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError
from harness.study.lock import writes_study
from harness.study.store import Study

if TYPE_CHECKING:
    from harness.analysis.planning.plan_file import LoadedPlan
    from harness.analysis.report.results import AnalysisResult


@writes_study
def analyze(
    study_dir: str | Path,
    plan: str | Path | None = None,
    allow_deviation: bool = False,
    *,
    write_report: bool = True,
) -> AnalysisResult:
    """Run the preregistered analysis of a study and write `report/` (md, html, json, png)."""
    from harness.analysis.compute import compute
    from harness.analysis.data import load_study
    from harness.study.manifest import load_manifest, record_command, record_section
    from harness.study.unblinding import mark_unblinded

    folder = Path(study_dir)
    with Study.open(folder) as study:
        manifest = load_manifest(folder)
        loaded, deviations = resolve_plan(manifest, plan, allow_deviation)
        data = load_study(study, manifest, allow_missing_commitment=allow_deviation)
        if data.blinding.status == "missing":
            deviations.append(
                "the blinding key could not be verified: the manifest holds no blinding commitment"
            )
        result = compute(data, loaded, manifest, deviations, folder)
        mark_unblinded(study)
        if write_report:
            from harness.analysis.report.writer import write_report as write
            from harness.explore import write_explorer

            result = write(result, study.report_dir, loaded.plan, loaded.text)
            write_explorer(study, result.report_files["explorer"])
    record_section(
        folder,
        "analysis",
        {
            "at": result.analysed_at,
            "plan_sha256": loaded.sha256,
            "verdict": result.verdict.label,
            "deviations": deviations,
            "report": result.report_files,
        },
    )
    record_command(folder, "analyze", {"plan": loaded.path, "allow_deviation": allow_deviation})
    return result


def resolve_plan(
    manifest: dict[str, Any], plan: str | Path | None, allow_deviation: bool
) -> tuple[LoadedPlan, list[str]]:
    """Load the plan (given, else the preregistered one, else bundled); compare with prereg."""
    from harness.analysis.planning.plan_file import bundled_plan_path, load_plan

    prereg = manifest.get("prereg") or {}
    if plan is None:
        registered = prereg.get("plan_path")
        plan = registered if registered and Path(registered).exists() else bundled_plan_path()
    loaded = load_plan(plan)
    deviations: list[str] = []
    expected = prereg.get("plan_sha256")
    if expected and expected != loaded.sha256:
        message = (
            f"the analysis plan (sha256 {loaded.sha256}) differs from the plan "
            f"preregistered {prereg.get('at', '?')} (sha256 {expected}, "
            f"{prereg.get('plan_path', '?')})"
        )
        if not allow_deviation:
            raise HarnessError(
                message + "; rerun with --allow-deviation to analyse with it, "
                "reported as a deviation",
                file=loaded.path,
            )
        deviations.append(message)
    return loaded, deviations
