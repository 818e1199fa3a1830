"""Command-line interface: `harness COMMAND --study DIR ...`.

Each `*_cmds` module registers its commands on the shared app and imports the stages it runs at its
top; `harness.cli._commands.COMMANDS` names the module of each command, which is imported only
when that command runs, so `harness --help` loads no stage. `load_commands()` imports them all.

Exit codes: 0 done, 1 partial or failed work (one summary line), 2 usage or user error (one line,
no traceback), 130 interrupted.
"""

from __future__ import annotations

import importlib
import io
import logging
import sys
import time

from harness.cli._app import app, invoked
from harness.cli._commands import COMMANDS
from harness.cli._group import build_group
from harness.defaults import quiet_libraries
from harness.errors import HarnessError, PartialWork
from harness.logs import reset as reset_logging
from harness.progress import enable

__all__ = ["app", "load_commands", "main"]

PARTIAL_EXIT = 1
INTERRUPTED = "interrupted: work done so far is kept in the study store"
INTERRUPTED_NO_STUDY = "interrupted"
USAGE_EXIT = 2


def _kind(error: BaseException) -> str | None:
    """'usage' or 'abort' for the parser's own exceptions, else None.

    typer up to 0.2x raises click's exceptions, later typer its own copies (`typer._click`); click
    is not a dependency, so both families are recognised by their class names.
    """
    names = {cls.__name__ for cls in type(error).__mro__}
    if "ClickException" in names and callable(getattr(error, "show", None)):
        return "usage"
    if "Abort" in names:
        return "abort"
    return None


def load_commands() -> None:
    """Register every command on `app` (what `typer.main.get_group(app)` needs to see them all)."""
    for entry in COMMANDS.values():
        importlib.import_module(f"harness.cli.{entry.module}")


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `harness` console script: user errors become one line and exit code 2."""
    quiet_libraries()
    enable()  # long steps show progress on stderr: bars on a terminal, timed lines in a log
    started = time.monotonic()
    interrupted = _interrupted(sys.argv[1:] if argv is None else argv)
    try:
        code = build_group(app).main(args=argv, prog_name="harness", standalone_mode=False)
    except HarnessError as error:
        sys.stderr.write(f"error: {error}\n")
        raise SystemExit(PARTIAL_EXIT if isinstance(error, PartialWork) else USAGE_EXIT) from None
    except KeyboardInterrupt:
        sys.stderr.write(f"{interrupted}\n")
        raise SystemExit(130) from None
    except SystemExit:
        raise
    except Exception as error:
        kind = _kind(error)
        if kind == "usage":
            sys.stderr.write(_usage_text(error))
            raise SystemExit(USAGE_EXIT) from None
        if kind == "abort":  # the parser turned Ctrl-C into its Abort
            sys.stderr.write(f"{interrupted}\n")
            raise SystemExit(130) from None
        raise
    finally:
        _log_finished(started)
        reset_logging()
    if code == 130:  # later typer returns 130 for a Ctrl-C it caught itself
        sys.stderr.write(f"{interrupted}\n")
    if isinstance(code, int) and code:
        raise SystemExit(code)


def _usage_text(error: BaseException) -> str:
    """The parser's usage line and help hint, then `error: ...` as every other error is
    spelled (the parser writes `Error:` after a blank line)."""
    buffer = io.StringIO()
    error.show(file=buffer)  # type: ignore[attr-defined]  # usage line, help hint, "Error: ..."
    text = buffer.getvalue().replace("\n\nError: ", "\nerror: ")
    return "error: " + text[len("Error: ") :] if text.startswith("Error: ") else text


def _interrupted(argv: list[str]) -> str:
    """The Ctrl-C line: only a command given a study has a study store to keep its work in."""
    has_study = any(arg == "--study" or arg.startswith("--study=") for arg in argv)
    return INTERRUPTED if has_study else INTERRUPTED_NO_STUDY


def _log_finished(started: float) -> None:
    if invoked:  # options were parsed and a command ran
        logging.getLogger("harness.cli").info(
            "command %s finished in %.2f s", invoked[0], time.monotonic() - started
        )
        invoked.clear()
