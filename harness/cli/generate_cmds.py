"""`harness generate`: matched prompts and their match audit."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli._app import STUDY_HELP, app
from harness.cli._next import echo_next
from harness.cli.console import print_audit
from harness.defaults import DEFAULT_SEED
from harness.generation.generate_stage import generate as run


@app.command()
def generate(
    study: Path = typer.Option(..., "--study", help=STUDY_HELP),
    topics: Path | None = typer.Option(
        None, help="Topic bank: a YAML file or folder (default: bundled)."
    ),
    prompts: Path | None = typer.Option(None, help="Folder of prompt templates (*.j2)."),
    seed: int | None = typer.Option(
        None, min=0, help="Seed for assigning template families to topics."
    ),
    pilot: bool = typer.Option(
        False, "--pilot", help="Allow fewer than 50 topics (no verdict later)."
    ),
    limit: int | None = typer.Option(None, min=1, help="Use only the first N topics of the bank."),
    subset: int | None = typer.Option(
        None,
        "--subset",
        min=1,
        help="Use N topics chosen by the "
        "seeded rule that keeps the bank's spread (round robin over "
        "domain pairs and their field pairs; docs/curation.md).",
    ),
    subset_seed: int | None = typer.Option(
        None, "--subset-seed", min=0, help="Seed of --subset (default: --seed)."
    ),
) -> None:
    """Render matched single-field and cross-field prompts for every topic, with a match audit.

    \b
    Example: harness generate --study runs/s1 --seed 7
    Example: harness generate --study runs/s2 --subset 60 --subset-seed 1
    """
    audit = run(
        study,
        topics=topics,
        prompts=prompts,
        seed=DEFAULT_SEED if seed is None else seed,
        pilot=pilot,
        limit=limit,
        subset=subset,
        subset_seed=subset_seed,
    )
    print_audit(audit, study)
    echo_next(study)
