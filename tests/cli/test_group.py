"""The lazily converted command group parses and prints exactly what typer's own group does."""

from __future__ import annotations

import io
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest
import typer.main

from harness.cli import load_commands
from harness.cli._app import app
from harness.cli._commands import COMMANDS
from harness.cli._group import LazyGroup, build_group, command_name, command_summary

load_commands()  # typer's own group, the reference, sees only registered commands


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


def _first_paragraph(text: str) -> str:
    return text.split("\n\n")[0]


def test_table_matches_the_commands() -> None:
    """COMMANDS (what `--help` lists without importing) says what the command modules declare:
    the module, the first paragraph of the help, the order; no command is hidden or deprecated."""
    declared: dict[str, tuple[str, str, bool]] = {}
    for command in app.registered_commands:
        help_text, short, hidden, deprecated = command_summary(command)
        assert short is None and not hidden and not deprecated
        module = command.callback.__module__.rpartition(".")[2]  # type: ignore[union-attr]
        declared[command_name(command)] = (module, _first_paragraph(help_text), False)
    for sub in app.registered_groups:
        solved = typer.main.solve_typer_info_defaults(sub)
        assert solved.short_help is None and not solved.hidden and not solved.deprecated
        module = sub.typer_instance.registered_commands[0].callback.__module__  # type: ignore[union-attr]
        declared[solved.name or ""] = (
            module.rpartition(".")[2],
            _first_paragraph(solved.help or ""),
            True,
        )
    table = {name: (e.module, e.summary, e.group) for name, e in COMMANDS.items()}
    assert table == declared
    assert list(table) == list(typer.main.get_group(app).commands)


def test_help_imports_no_command_module() -> None:
    code = (
        "import sys\n"
        "from harness.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print([m for m in sys.modules if m.endswith('_cmds')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
