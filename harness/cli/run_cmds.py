"""`harness run`: the whole study pipeline on the embedded defaults, or as a study file says."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli._app import STUDY_HELP, app
from harness.cli._next import echo_next
from harness.pipeline.run_settings import settings
from harness.pipeline.runner import run_study


@app.command()
def run(
    ctx: typer.Context,
    study: Path = typer.Option(..., "--study", help=STUDY_HELP),
    config: Path | None = typer.Option(
        None,
        "--config",
        help="Study file (study.yaml) with every setting; the flags below override it.",
    ),
    pilot: bool | None = typer.Option(
        None, "--pilot", help="Allow fewer than 50 topics (no verdict)."
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Use only the first N topics."),
    subset: int | None = typer.Option(
        None,
        "--subset",
        min=1,
        help="Use N topics chosen by the "
        "seeded rule that keeps the bank's spread "
        "(docs/curation.md).",
    ),
    subset_seed: int | None = typer.Option(
        None, "--subset-seed", min=0, help="Seed of --subset (default: --seed)."
    ),
    topics: Path | None = typer.Option(None, "--topics", help="Topic bank (default: bundled)."),
    seed: int | None = typer.Option(None, "--seed", min=0, help="Seed of every seeded stage."),
    model: str | None = typer.Option(
        None,
        "--model",
        help="Local model folder or .gguf (default: the embedded SmolLM2-135M-Instruct).",
    ),
    configurations: bool | None = typer.Option(
        None,
        "--configurations/--one-configuration",
        help="Collect the local model at two configurations, local#sampled (default "
        "sampling) and local#greedy (temperature 0), analysed and reported as configurations "
        "of one model (default); --one-configuration: once, at the default sampling. A study "
        "file lists its own models (a label per entry names a configuration).",
    ),
    samples: int | None = typer.Option(
        None, "--samples", min=1, help="Completions per prompt (default 1)."
    ),
    max_tokens: int | None = typer.Option(
        None, "--max-tokens", min=1, help="Tokens per completion."
    ),
    extract: bool | None = typer.Option(
        None, "--extract/--no-extract", help="Extract each output's core combination (blind)."
    ),
    normalise: bool | None = typer.Option(
        None, "--normalise/--no-normalise", help="Rewrite outputs in a neutral style (blind)."
    ),
    reviewers: Path | None = typer.Option(
        None,
        "--reviewers",
        help="Roster of automated reviewers (default: judging/roster.demo.yaml).",
    ),
    probe: bool | None = typer.Option(None, "--probe/--no-probe", help="Run the attention probe."),
    cutoff: str | None = typer.Option(
        None,
        "--cutoff",
        help="Publication-date cut-off "
        "(default 1985-01-01: it splits the bank's known links "
        "into published and unpublished controls).",
    ),
    controls: bool | None = typer.Option(
        None,
        "--controls/--no-controls",
        help="Mix control items with known answers into the blinded stream.",
    ),
) -> None:
    """Run every stage in order and print the verdict; resumes a stopped study.

    \b
    Example: harness run --study runs/demo
    Example: harness run --study runs/s1 --config study.yaml
    """
    # every flag but the two paths is a RunSettings field of the same name (None: not given)
    flags = {k: v for k, v in ctx.params.items() if k not in ("study", "config")}
    result = run_study(study, settings(config, flags), echo=typer.echo)
    typer.echo(result.summary())
    echo_next(study)
