"""Every command's help has a one-line summary and an example."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from harness.cli._app import app

COMMANDS = [
    [],
    ["generate"],
    ["collect"],
    ["judge"],
    ["analyze"],
    ["prereg"],
    ["power"],
    ["search"],
    ["status"],
    ["verify"],
    ["run"],
    ["export"],
    ["export", "prompts"],
    ["geometry"],
    ["geometry", "scaling"],
    ["geometry", "fields"],
    ["geometry", "heatmap"],
    ["geometry", "probe"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "harness")
def test_help_has_summary_and_example(command):
    from harness.cli import load_commands

    load_commands()  # registers every command on `app`, whatever ran before in this process
    result = CliRunner().invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    body = result.output.split("Usage:", 1)[1].split("\n\n", 1)[1]
    assert body.strip().splitlines()[0].strip()  # a summary line
    assert "Example: harness" in " ".join(result.output.split())


def _every_command() -> list[list[str]]:
    """Every command and group of the real parser, sub-commands included."""
    import typer

    import harness.cli  # noqa: F401  (registers every command)
    from harness.cli._group import build_group

    def walk(command: Any, path: list[str]) -> list[list[str]]:
        found = [path]
        if hasattr(command, "list_commands"):
            ctx = typer.Context(command)
            for name in command.list_commands(ctx):
                found += walk(command.get_command(ctx, name), [*path, name])
        return found

    return walk(build_group(app), [])


def test_every_example_is_a_line_of_its_own_in_the_rendered_help(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`harness CMD --help` in a child process at 80 columns (one for all of them): each
    `Example:` starts a line, holds one command, and the line after it is another example or
    blank (nothing wrapped)."""
    from tests.cli_run import run_subprocesses

    commands = _every_command()
    assert len(commands) > 25 and ["topics", "draft"] in commands and ["export", "hits"] in commands
    monkeypatch.setenv("COLUMNS", "80")  # the child process's terminal width
    pages = run_subprocesses(*([*c, "--help"] for c in commands))
    for command, done in zip(commands, pages, strict=True):
        name = " ".join(["harness", *command])
        assert done.returncode == 0, (name, done.stderr)
        lines = done.stdout.splitlines()
        at = [n for n, line in enumerate(lines) if "Example:" in line]
        assert at, name
        for n in at:
            line = lines[n].strip()
            assert line.startswith("Example: harness ") and line.count("Example:") == 1, (
                name,
                line,
            )
            following = lines[n + 1].strip()
            assert following == "" or following.startswith("Example: "), (name, line, following)
