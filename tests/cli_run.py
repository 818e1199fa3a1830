"""Run the `harness` CLI in-process as a user would, and keep its exit code and output."""

from __future__ import annotations

import json
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


#: The child of `run_subprocesses`: `main` once per argument list read from stdin (JSON); each
#: run's exit code (as Python's own exit would give it, 1 with the traceback for an uncaught
#: error), stdout and stderr written back as one JSON line, the last of its stdout.
_MANY = """
import contextlib, io, json, sys, traceback
from harness.cli import main
runs = []
for args in json.load(sys.stdin):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
            if not isinstance(stop.code, int | None):
                print(stop.code, file=sys.stderr)
        except Exception:
            traceback.print_exc()
            code = 1
    runs.append([code, out.getvalue(), err.getvalue()])
print(json.dumps(runs), file=sys.__stdout__)
"""


def run_subprocesses(*commands: list[str]) -> list[subprocess.CompletedProcess[str]]:
    """`harness ARGS` for each argument list, all in one child process (one start-up, not one
    per command), one after the other: for many runs that stop before they change anything,
    such as refused options or `--help`."""
    done = subprocess.run(
        [sys.executable, "-c", _MANY],
        input=json.dumps(commands),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout.splitlines()[-1])
    return [
        subprocess.CompletedProcess([*CLI, *args], code, out, err)
        for args, (code, out, err) in zip(commands, runs, strict=True)
    ]
