"""Terminal rendering shared by commands (rich tables); no computation happens here."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from harness.generation.match_audit import MatchAudit
from harness.study.files import store_path

console = Console()


def print_audit(audit: MatchAudit, study: Path) -> None:
    table = Table(title=f"Match audit: {audit.n_topics} topics x 3 conditions")
    table.add_column("check")
    table.add_column("value", justify="right")
    for cond, value in audit.tokens_mean.items():
        table.add_row(f"mean tokens, {cond}", f"{value:.2f}")
    for name, d in audit.diff.items():
        table.add_row(
            f"paired diff {name} (mean / sd / max |d|)",
            f"{d['mean']:+.2f} / {d['sd']:.2f} / {d['max_abs']}",
        )
    table.add_row("worst topic (token range)", f"{audit.worst_topic} ({audit.worst_range})")
    table.add_row(
        "structure identical outside slots",
        "yes" if audit.structure_ok else f"NO: {len(audit.structure_failures)} topics",
    )
    console.print(table)
    for failure in audit.structure_failures:
        console.print(f"[red]structure:[/red] {failure}")
    console.print(f"prompts stored in {store_path(study)}")
