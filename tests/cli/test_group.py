"""The lazily converted command group parses and prints exactly what typer's own group does."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import pytest
import typer.main

import harness.cli  # noqa: F401  (registers every command on the app)
from harness.cli._app import app
from harness.cli._group import LazyGroup, build_group


def _run(group: typer.core.TyperGroup, args: list[str]) -> tuple[str, str, object]:
    out, err = io.StringIO(), io.StringIO()
    code: object = 0
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = group.main(args=args, prog_name="harness", standalone_mode=True)
        except SystemExit as stop:
            code = stop.code
    return out.getvalue(), err.getvalue(), code


def _pages() -> list[list[str]]:
    """Every help page: the group's, each command's and each sub-group's commands'."""
    eager = typer.main.get_group(app)
    pages: list[list[str]] = [["--help"], []]
    for name, command in eager.commands.items():
        pages.append([name, "--help"])
        for sub in getattr(command, "commands", {}):
            pages.append([name, sub, "--help"])
    return pages


@pytest.mark.parametrize("args", _pages(), ids=lambda a: " ".join(a) or "(none)")
def test_help_pages_match_typer(args: list[str]) -> None:
    assert _run(build_group(app), args) == _run(typer.main.get_group(app), args)


@pytest.mark.parametrize(
    "args",
    [["colect"], ["collect", "--no-such-option"], ["geometry", "scalng"], ["--log-level", "loud"]],
)
def test_usage_errors_match_typer(args: list[str]) -> None:
    lazy = _run(build_group(app), args)
    assert lazy == _run(typer.main.get_group(app), args)
    assert lazy[2] == 2 and "Error" in lazy[1]


def test_help_converts_no_command() -> None:
    group = build_group(app)
    assert isinstance(group, LazyGroup)
    text, _, code = _run(group, ["--help"])
    assert code == 0 and "collect" in text
    assert not any(group.commands.built(name) for name in group.commands)


def test_running_a_command_converts_only_that_command() -> None:
    group = build_group(app)
    _run(group, ["power", "--help"])
    assert [name for name in group.commands if group.commands.built(name)] == ["power"]


def test_commands_keep_registration_order() -> None:
    assert list(build_group(app).commands) == list(typer.main.get_group(app).commands)
