"""`harness prereg`: the preregistration document of a study's analysis plan."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.analysis.planning.preregister import prereg as write_prereg
from harness.cli._app import STUDY_HELP, app
from harness.cli._next import echo_next


@app.command()
def prereg(
    study: Path = typer.Option(..., "--study", help=STUDY_HELP),
    plan: Path | None = typer.Option(
        None, "--plan", help="Analysis plan YAML (default: the bundled analysis/plan.yaml)."
    ),
) -> None:
    """Write prereg.md (hypothesis, design, materials, plan and hash, power) and record it.

    \b
    Example: harness prereg --study runs/demo
    """
    typer.echo(write_prereg(study, plan).summary())
    echo_next(study)
