"""`harness export TABLE` and `harness explore`: every record of a study, as files and as a page."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli._app import STUDY_HELP, app
from harness.explore import write_explorer
from harness.export import export

export_app = typer.Typer(
    help="Export study tables. Item-keyed tables show only what reviewers saw until "
    "`harness analyze` has unblinded the study.\n\n\b\n"
    "Example: harness export judgments --study runs/s1 --format parquet",
    no_args_is_help=True,
)
app.add_typer(export_app, name="export")

# target -> what one row is (the column tables are in docs/file-formats.md)
EXPORTS = {
    "prompts": "one rendered prompt per topic and condition",
    "outputs": "one model completion (failed attempts included)",
    "items": "one blinded item as reviewers see it",
    "assignments": "one item given to one reviewer, in the reviewer's order",
    "reviews": "one reviewer's verdict on one item",
    "searches": "one literature search as run (PRISMA-S)",
    "hits": "one work retrieved by one search",
    "judgments": "one review, analysis-ready (topic, condition, model key and configuration, "
    "or a control's expected verdict, after unblinding)",
    "controls": "one judgment of a control item (expected verdict, kind, split), or a control "
    "no one judged; after unblinding only",
}


def _register(table: str, what: str) -> None:
    def command(
        study: Path = typer.Option(..., "--study", help=STUDY_HELP),
        format: str = typer.Option("csv", "--format", help="csv, jsonl, parquet or hf (datasets)."),
        out: Path | None = typer.Option(
            None, "--out", help="Output path (default: in the study's exports/)."
        ),
    ) -> None:

        typer.echo(f"wrote {export(study, table, format, out)}")

    example = f"Example: harness export {table} --study runs/s1 --format csv"
    command.__doc__ = f"Export {table}: {what}.\n\n\b\n{example}"  # \b: the line kept whole
    export_app.command(table)(command)


for _table, _what in EXPORTS.items():
    _register(_table, _what)


@app.command()
def explore(
    study: Path = typer.Option(..., "--study", help=STUDY_HELP),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="HTML file to write (default: explorer.html in the study's report/ folder).",
    ),
) -> None:
    """Write a self-contained HTML page to follow each prompt to its outputs, blinded items,
    verdicts, searches and hits (before unblinding: only what reviewers saw).

    \b
    Example: harness explore --study runs/demo --out explorer.html
    """

    typer.echo(f"wrote {write_explorer(study, out)}")
