"""`harness search`: one literature search from the command line, hits printed as a table."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from harness.cli._app import app
from harness.cli._cutoff import check_cutoff
from harness.errors import HarnessError
from harness.literature import search
from harness.literature.sources import SOURCES

if TYPE_CHECKING:
    from rich.console import JustifyMethod


@app.command("search")
def search_command(
    query: str = typer.Argument(..., help="The query, exactly as it should be sent."),
    source: str = typer.Option(
        "local", "--source", help=", ".join(list(SOURCES)[:-1]) + f" or {list(SOURCES)[-1]}."
    ),
    corpus: Path | None = typer.Option(
        None,
        "--corpus",
        help="Local corpus (.jsonl, .parquet or a datasets folder); default: the "
        "demonstration corpus built from the topic bank.",
    ),
    cutoff: str | None = typer.Option(
        None,
        "--cutoff",
        callback=check_cutoff,
        help="Publication-date cut-off, YYYY-MM-DD (works after it are left out).",
    ),
    limit: int = typer.Option(10, "--limit", min=1, max=1000, help="Hits to retrieve (1-1000)."),
    dense: bool = typer.Option(
        False, "--dense", help="Local corpus only: re-rank hits with the offline embedding model."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the whole search record as JSON."),
) -> None:
    """Run one literature search and print the hits.

    \b
    Example: harness search "predictive coding sediment transport" --source local --limit 5
    """

    options: dict[str, object] = {}
    if source.strip().lower() == "local":
        if corpus is not None:
            options["corpus"] = corpus
        options["dense"] = dense
    elif corpus is not None or dense:
        raise HarnessError("--corpus and --dense apply to --source local only", column="source")
    record = search(query, source, cutoff=cutoff, limit=limit, **options)
    if as_json:
        typer.echo(record.model_dump_json(indent=2))
        return
    _print_table(record)


def _print_table(record: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{record.database}: {record.query}", title_justify="left")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("#", "right"),
        ("score", "right"),
        ("year", "right"),
        ("title", "left"),
        ("doi / id", "left"),
    )
    for column, justify in columns:
        table.add_column(column, justify=justify, overflow="fold")
    for hit in record.hits:
        score = "" if hit.score is None else f"{hit.score:.3f}"
        table.add_row(str(hit.rank), score, str(hit.year or ""), hit.title, hit.doi or hit.id)
    console = Console()
    console.print(table)
    total = "unknown" if record.total_hits is None else str(record.total_hits)
    cutoff = record.filters.get("cutoff") or "none"
    console.print(
        f"total hits {total}; shown {len(record.hits)}; cut-off {cutoff}; "
        f"run {record.run_at}; dedup key {record.dedup_key[:16]}"
    )
