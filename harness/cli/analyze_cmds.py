"""`harness analyze`: the preregistered test. Its planning commands have their own modules
(`prereg_cmds`, `power_cmds`), so that each loads only the statistics it runs."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.analysis.run import analyze as run_analysis
from harness.cli._app import STUDY_HELP, app
from harness.cli._next import echo_next

PLAN_HELP = (
    "Analysis plan YAML (default: the preregistered plan, else the bundled analysis/plan.yaml)."
)


@app.command()
def analyze(
    study: Path = typer.Option(..., "--study", help=STUDY_HELP),
    plan: Path | None = typer.Option(None, "--plan", help=PLAN_HELP),
    allow_deviation: bool = typer.Option(
        False,
        "--allow-deviation",
        help="Run although the plan differs from the preregistered "
        "one or the blinding commitment is missing; the report lists the deviation at the top.",
    ),
    partial: bool = typer.Option(
        False,
        "--partial",
        help="Unblind and analyse although assigned reviews are outstanding (refused "
        "without it); recorded in the manifest and shown at the top of the report.",
    ),
) -> None:
    """Verify the blinding key and the plan, unblind, run the preregistered analysis, report.

    \b
    Example: harness analyze --study runs/demo
    """

    result = run_analysis(study, plan, allow_deviation, partial=partial)
    typer.echo(result.summary())
    typer.echo(f"Report: {result.report_files.get('html', '')}")
    typer.echo(f"Explorer: {result.report_files.get('explorer', '')}")
    echo_next(study)
