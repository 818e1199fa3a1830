"""The top-level command group, built so that a command is turned into its parser only when used.

typer builds a command's options by evaluating its function's annotations, about 14 ms for all of
harness's commands; `harness --help` needs only their names and first lines, and `harness collect
...` only collect's options. `build_group(app)` gives the same parser as `typer.main.get_group(app)`
(a test compares every help page), with the conversion deferred per command.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Iterator, MutableMapping
from typing import TYPE_CHECKING, Any

import typer.main
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:
    from typer.models import CommandInfo

__all__ = ["LazyGroup", "build_group"]


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


def build_group(app: typer.Typer) -> LazyGroup:
    """The click group for `app` (a typer app with a callback), its commands converted lazily."""
    settings: dict[str, Any] = {
        "pretty_exceptions_short": app.pretty_exceptions_short,
        "rich_markup_mode": app.rich_markup_mode,
    }
    shell = copy.copy(app)  # the app without commands: only its own callback is converted
    shell.registered_commands, shell.registered_groups = [], []
    shell.info = copy.copy(app.info)
    shell.info.cls = LazyGroup
    group = typer.main.get_group(shell)
    assert isinstance(group, LazyGroup)
    pending: dict[str, Callable[[], Any]] = {}
    group.summaries = {}
    for command in app.registered_commands:
        name = command.name or typer.main.get_command_name(command.callback.__name__)  # type: ignore[union-attr]
        pending[name] = functools.partial(typer.main.get_command_from_info, command, **settings)
        group.summaries[name] = _command_summary(command)
    groups = dict(settings)
    # newer typer passes its "did you mean" setting to sub-groups; 0.15 has no such parameter
    if "suggest_commands" in inspect.signature(typer.main.get_group_from_info).parameters:
        groups["suggest_commands"] = app.suggest_commands
    for sub in app.registered_groups:
        solved = typer.main.solve_typer_info_defaults(sub)
        name = solved.name or ""
        pending[name] = functools.partial(typer.main.get_group_from_info, sub, **groups)
        group.summaries[name] = (
            solved.help or "",
            solved.short_help,
            bool(solved.hidden),
            bool(solved.deprecated),
        )
    group.commands = _Commands(pending)
    return group


def _command_summary(command: CommandInfo) -> tuple[str, str | None, bool, bool]:
    """What typer's `get_command_from_info` passes to the command as help and flags."""
    if command.help is None:
        help_text = inspect.getdoc(command.callback) or ""
    else:
        help_text = inspect.cleandoc(command.help)
    return help_text, command.short_help, bool(command.hidden), bool(command.deprecated)
