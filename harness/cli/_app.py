"""The typer application object. Command modules register on it; nothing heavy is imported here."""

from __future__ import annotations

import sys

import typer

from harness._version import __version__
from harness.logs import LEVELS, configure
from harness.study.files import MANIFEST_NAME, STORE_NAME
from harness.study.running import set_command

app = typer.Typer(
    name="harness",
    help=(
        "Test whether cross-field prompts make language models propose unpublished combinations "
        "more often than single-field prompts.\n\n\b\n"
        "Example: harness run --study runs/demo"
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

STUDY_HELP = f"Study folder (holds {STORE_NAME}, {MANIFEST_NAME}, packets/, report/)."


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"harness {__version__}")
        raise typer.Exit()


def _check_level(value: str) -> str:
    if value.lower() not in LEVELS:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(LEVELS)}")
    return value.lower()


#: the command being run (set once options are parsed), for the closing log line
invoked: list[str] = []


@app.callback()
def _options(
    ctx: typer.Context,
    version: bool = typer.Option(
        False,
        "--version",
        callback=_show_version,
        is_eager=True,
        help="Print the harness version and exit.",
    ),
    log_level: str = typer.Option(
        "warning",
        "--log-level",
        callback=_check_level,
        help="debug, info, warning or error: what goes to stderr; "
        "a study's logs/harness.log gets info and above.",
    ),
) -> None:
    configure(log_level)
    invoked[:] = [ctx.invoked_subcommand or "harness"]
    set_command(_command_words(ctx.invoked_subcommand))


def _command_words(sub: str | None) -> str:
    """`harness judge`, `harness geometry probe`: the command as typed, without its options
    (what a study's lock names as its holder)."""

    if sub is None:
        return "harness"
    argv = sys.argv[1:]
    words = [sub]
    if sub in argv:
        for arg in argv[argv.index(sub) + 1 :]:
            if arg.startswith("-"):
                break
            words.append(arg)
            break  # one nested command at most (geometry probe, topics check)
    return " ".join(["harness", *words])
