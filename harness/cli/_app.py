"""The typer application object. Command modules register on it; nothing heavy is imported here."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="harness",
    help=(
        "Test whether cross-field prompts make language models propose unpublished combinations "
        "more often than single-field prompts.\n\n"
        "Example: harness run --study runs/demo"
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

STUDY_HELP = "Study folder (holds study.sqlite, manifest.json, packets/, report/)."
