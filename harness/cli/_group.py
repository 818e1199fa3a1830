"""The top-level command group, built so that a command is turned into its parser only when used.

typer builds a command's options by evaluating its function's annotations, about 14 ms for all of
harness's commands; `harness --help` needs only their names and first lines, and `harness collect
...` only collect's options. `build_group(app)` gives the same parser as `typer.main.get_group(app)`
(a test compares every help page), with the conversion deferred per command, and each command's
module imported only then: `harness --help` reads the names and first lines from
`harness.cli._commands.COMMANDS`.
"""

from __future__ import annotations

import copy
import functools
import importlib
import inspect
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

import typer.main
from typer.core import TyperCommand, TyperGroup

from harness.cli._commands import COMMANDS, Entry

if TYPE_CHECKING:
    from typer.models import CommandInfo, TyperInfo

__all__ = ["LazyGroup", "build_group", "command_name", "command_summary"]


class _Commands(MutableMapping[str, Any]):
    """Name -> command, in registration order; a pending command is converted when first read.

    Reading the names (`keys`, `in`, `len`) converts nothing, so the parser's "did you mean"
    suggestions and `list_commands` stay cheap.
    """

    def __init__(self, pending: dict[str, Callable[[], Any]]) -> None:
        self._pending = pending
        self._built: dict[str, Any] = {}
        self._order = list(pending)

    def built(self, name: str) -> Any | None:
        return self._built.get(name)

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            self._built[name] = self._pending.pop(name)()  # KeyError for an unknown name
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._pending.pop(name, None)
        self._built[name] = command
        if name not in self._order:
            self._order.append(name)

    def __delitem__(self, name: str) -> None:
        if name not in self._built and name not in self._pending:
            raise KeyError(name)
        self._built.pop(name, None)
        self._pending.pop(name, None)
        self._order.remove(name)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._order))

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, name: object) -> bool:
        return name in self._order


class LazyGroup(TyperGroup):
    """A TyperGroup whose commands are `_Commands`; help lists them from their registration."""

    #: name -> (help, short_help, hidden, deprecated) of each registered command, as typer
    #: would give them to the converted command
    summaries: dict[str, tuple[str, str | None, bool, bool]]

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The group's "Commands" section, from each command's summary (converting none)."""
        shown = []
        for name in self.list_commands(ctx):
            built = self.commands.built(name) if isinstance(self.commands, _Commands) else None
            if built is None:
                help_text, short, hidden, deprecated = self.summaries[name]
                built = TyperCommand(
                    name, help=help_text, short_help=short, hidden=hidden, deprecated=deprecated
                )
            if not built.hidden:
                shown.append((name, built))
        if shown:
            limit = formatter.width - 6 - max(len(name) for name, _ in shown)
            rows = [(name, command.get_short_help_str(limit)) for name, command in shown]
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def build_group(app: typer.Typer, table: Mapping[str, Entry] = COMMANDS) -> LazyGroup:
    """The click group for `app` (a typer app with a callback), each command's module imported
    and the command converted when the command is first used; `table` names the modules."""
    shell = copy.copy(app)  # the app without commands: only its own callback is converted
    shell.registered_commands, shell.registered_groups = [], []
    shell.info = copy.copy(app.info)
    shell.info.cls = LazyGroup
    group = typer.main.get_group(shell)
    assert isinstance(group, LazyGroup)
    group.summaries = {name: (entry.summary, None, False, False) for name, entry in table.items()}
    pending = {name: functools.partial(_convert, app, name, entry) for name, entry in table.items()}
    group.commands = _Commands(dict(pending))
    return group


def _convert(app: typer.Typer, name: str, entry: Entry) -> Any:
    """Import the module that registers `name` on `app`, then convert that command or group."""
    importlib.import_module(f"harness.cli.{entry.module}")
    settings: dict[str, Any] = {
        "pretty_exceptions_short": app.pretty_exceptions_short,
        "rich_markup_mode": app.rich_markup_mode,
    }
    if entry.group:
        # newer typer passes its "did you mean" setting to sub-groups; 0.15 has no such parameter
        if "suggest_commands" in inspect.signature(typer.main.get_group_from_info).parameters:
            settings["suggest_commands"] = app.suggest_commands
        sub = next(g for g in app.registered_groups if _group_name(g) == name)
        return typer.main.get_group_from_info(sub, **settings)
    command = next(c for c in app.registered_commands if command_name(c) == name)
    return typer.main.get_command_from_info(command, **settings)


def command_name(command: CommandInfo) -> str:
    """The name typer gives a registered command."""
    return command.name or typer.main.get_command_name(command.callback.__name__)  # type: ignore[union-attr]


def _group_name(sub: TyperInfo) -> str:
    return typer.main.solve_typer_info_defaults(sub).name or ""


def command_summary(command: CommandInfo) -> tuple[str, str | None, bool, bool]:
    """What typer's `get_command_from_info` passes to the command as help and flags."""
    if command.help is None:
        help_text = inspect.getdoc(command.callback) or ""
    else:
        help_text = inspect.cleandoc(command.help)
    return help_text, command.short_help, bool(command.hidden), bool(command.deprecated)
