"""`harness status` and `harness verify`: what a study holds, and whether its materials changed."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli._app import STUDY_HELP, app
from harness.status.stage_table import print_status
from harness.status.verify_report import print_verify
from harness.study.history import rebuild
from harness.study.lock import study_lock


@app.command()
def status(study: Path = typer.Option(..., "--study", help=STUDY_HELP)) -> None:
    """Show what each stage of a study holds.

    \b
    Example: harness status --study runs/demo
    """
    print_status(study)


@app.command()
def verify(
    study: Path = typer.Option(..., "--study", help=STUDY_HELP),
    rebuild_manifest: bool = typer.Option(
        False,
        "--rebuild-manifest",
        help="Start a new manifest for a study whose manifest is "
        "missing or damaged; the new one records that the history was lost. Takes the "
        "study's writer lock, as every command that writes does.",
    ),
) -> None:
    """Recompute materials hashes and report what changed since the study was made.

    \b
    Example: harness verify --study runs/demo
    """
    if rebuild_manifest:
        with study_lock(study, "harness verify --rebuild-manifest", check=False):
            path = rebuild(study)
        typer.echo(
            f"started a new manifest at {path}; it records that the earlier history was lost"
        )
    raise typer.Exit(print_verify(study))
