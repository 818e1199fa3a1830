"""Command-line interface: `harness COMMAND --study DIR ...`.

Each module below registers its commands on the shared app. Command functions import the package
API lazily so that `harness --help` never loads torch, transformers, datasets or statsmodels.
"""

from __future__ import annotations

import importlib
import sys

from harness.cli._app import app
from harness.defaults import quiet_libraries
from harness.errors import HarnessError

# Importing a command module registers its commands; `--help` lists them in this order.
COMMAND_MODULES = ("generate_cmds", "collect_cmds", "judge_cmds", "analyze_cmds", "search_cmds",
                   "run_cmds", "study_cmds", "records_cmds", "geometry_cmds", "topics_cmds")
for _name in COMMAND_MODULES:
    importlib.import_module(f"harness.cli.{_name}")


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `harness` console script: user errors become one line and exit code 2."""
    quiet_libraries()
    try:
        code = app(args=argv, standalone_mode=False)
    except HarnessError as error:
        sys.stderr.write(f"error: {error}\n")
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        sys.stderr.write("interrupted: work done so far is kept in the study store\n")
        raise SystemExit(130) from None
    except SystemExit:
        raise
    except Exception as error:  # click usage errors arrive here in non-standalone mode
        import click

        if isinstance(error, click.exceptions.ClickException):
            error.show()
            raise SystemExit(2) from None
        if isinstance(error, click.exceptions.Abort):
            raise SystemExit(130) from None
        raise
    if isinstance(code, int) and code:
        raise SystemExit(code)
