"""The lazily converted command group parses and prints exactly what typer's own group does."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest
import typer.main

from harness.cli import load_commands
from harness.cli._app import app
from harness.cli._commands import COMMANDS, Entry
from harness.cli._group import LazyGroup, build_group, command_name, command_summary


def _in_table_order(typer_app: typer.Typer, table: dict[str, Entry]) -> None:
    """Another test file run earlier in this process may have imported a command module first,
    which registers its command first: the in-process reference takes the table's order.
    `test_a_fresh_process_registers_in_table_order` checks the order itself."""
    rank = {name: i for i, name in enumerate(table)}
    typer_app.registered_commands.sort(key=lambda c: rank[command_name(c)])
    typer_app.registered_groups.sort(key=lambda g: rank[g.name or ""])
    for sub in typer_app.registered_groups:
        inner = table[sub.name or ""].commands
        if inner is not None and sub.typer_instance is not None:
            _in_table_order(sub.typer_instance, inner)


load_commands()  # typer's own group, the reference, sees only registered commands
_in_table_order(app, COMMANDS)


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


def test_geometry_scaling_loads_no_model_command() -> None:
    code = (
        "import sys\n"
        "from harness.cli import main\n"
        "try:\n    main(['geometry', 'scaling', '--trials', '2', '--dims', '4'])\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('harness.cli.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = out.stdout.strip().splitlines()[-1]
    assert "geometry_cmds" in loaded and "geometry_model_cmds" not in loaded


def test_a_fresh_process_registers_in_table_order() -> None:
    """Loading the commands registers them in the table's order, so typer's own group, the
    lazy group and `--help` list them alike (groups' commands included)."""
    code = (
        "import json\n"
        "import typer.main\n"
        "from harness.cli import load_commands\n"
        "from harness.cli._app import app\n"
        "from harness.cli._group import build_group\n"
        "load_commands()\n"
        "eager = typer.main.get_group(app)\n"
        "print(json.dumps(list(eager.commands)))\n"
        "print(json.dumps(list(build_group(app).commands)))\n"
        "print(json.dumps({n: list(getattr(c, 'commands', [])) for n, c in eager.commands.items()}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    eager, lazy, groups = (json.loads(line) for line in out.stdout.strip().splitlines()[-3:])
    assert eager == lazy == list(COMMANDS)
    inner = {n: list(e.commands) for n, e in COMMANDS.items() if e.commands is not None}
    assert {n: v for n, v in groups.items() if n in inner} == inner


def _first_paragraph(text: str) -> str:
    return text.split("\n\n")[0]


def _declared(typer_app: typer.Typer) -> dict[str, tuple[str, str, bool]]:
    """name -> (module, first paragraph of help, is a group) of what `typer_app` registers."""
    declared: dict[str, tuple[str, str, bool]] = {}
    for command in typer_app.registered_commands:
        help_text, short, hidden, deprecated = command_summary(command)
        assert short is None and not hidden and not deprecated
        module = command.callback.__module__.rpartition(".")[2]  # type: ignore[union-attr]
        declared[command_name(command)] = (module, _first_paragraph(help_text), False)
    for sub in typer_app.registered_groups:
        solved = typer.main.solve_typer_info_defaults(sub)
        assert solved.short_help is None and not solved.hidden and not solved.deprecated
        module = sub.typer_instance.registered_commands[0].callback.__module__  # type: ignore[union-attr]
        declared[solved.name or ""] = (
            module.rpartition(".")[2],
            _first_paragraph(solved.help or ""),
            True,
        )
    return declared


def test_table_matches_the_commands() -> None:
    """COMMANDS (what `--help` lists without importing) says what the command modules declare:
    the module, the first paragraph of the help, the order; no command is hidden or deprecated.
    A group whose commands the table lists is checked command by command."""
    table = {name: (e.module, e.summary, e.group) for name, e in COMMANDS.items()}
    assert table == _declared(app)
    for sub in app.registered_groups:
        entry = COMMANDS[sub.name or ""]
        if entry.commands is not None:
            assert sub.typer_instance is not None
            inner = {name: (e.module, e.summary, e.group) for name, e in entry.commands.items()}
            assert inner == _declared(sub.typer_instance)
            assert list(inner) == [command_name(c) for c in sub.typer_instance.registered_commands]


def test_help_imports_no_command_module() -> None:
    code = (
        "import sys\n"
        "from harness.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print([m for m in sys.modules if m.endswith('_cmds')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
