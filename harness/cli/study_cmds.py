"""`harness status` and `harness verify`: what a study holds, and whether its materials changed."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli._app import STUDY_HELP, app


@app.command()
def status(study: Path = typer.Option(..., "--study", help=STUDY_HELP)) -> None:
    """Show what each stage of a study holds.

    Example: harness status --study runs/demo
    """
    from harness.status import print_status

    print_status(study)


@app.command()
def verify(study: Path = typer.Option(..., "--study", help=STUDY_HELP)) -> None:
    """Recompute materials hashes and report what changed since the study was made.

    Example: harness verify --study runs/demo
    """
    from harness.status import print_verify

    raise typer.Exit(print_verify(study))
