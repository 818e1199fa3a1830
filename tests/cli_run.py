"""Run the `harness` CLI in-process as a user would, and keep its exit code and output."""

from __future__ import annotations

import subprocess
import sys

from harness.cli import main


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `harness ARGS`; a normal return is exit code 0."""
    code = 0
    try:
        main(list(args))
    except SystemExit as stop:
        code = int(stop.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


#: The real entry point in a child process, as a shell would start it.
CLI = [sys.executable, "-c", "from harness.cli import main; main()"]


def run_subprocess(*args: str) -> subprocess.CompletedProcess[str]:
    """`harness ARGS` in a child process: exit code, stdout and stderr as text."""
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)
