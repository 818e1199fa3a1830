"""The line every stage ends with: which command comes next and why (`harness.status.next_command`,
the same line `harness status` prints), so a researcher never has to guess the study's order."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.status.next_command import next_step


def echo_next(study: Path) -> None:

    typer.echo(next_step(study))
