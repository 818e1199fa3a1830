"""Ctrl-C during routing: the solver (HiGHS, which does not look at signals while it solves)
runs in a worker thread, so `harness judge --blind` answers at once with its one-line
`interrupted` message, exit code 130, no assignment stored and the study unlocked. (Before, the
command went on until HiGHS finished: here tens of seconds, past the bound below.)"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness import progress
from harness.cli import INTERRUPTED
from tests.cli_run import CLI
from tests.judge.conftest import FIELDS, fill_study
from tests.plans import primary_only_plan

# A routing that takes HiGHS tens of seconds on a 2-core machine (1,500 items, 24 people with
# one item per topic each and 2 automated reviewers): long enough to be interrupted in.
TOPICS, HUMANS = 500, 24
#: a generous bound on how long the interrupted command may take to exit (the goal is 2 s)
EXIT_WITHIN_S = 30.0
#: seconds into the routing step when Ctrl-C is sent: the programme is built (about a second),
#: HiGHS is solving it
SOLVING_AT = 5


def roster() -> str:
    humans = "".join(
        f"  - {{id: h{i:02d}, kind: human, expertise: [{FIELDS[i % len(FIELDS)][0]!r}], "
        f"capacity: {TOPICS}}}\n"
        for i in range(HUMANS)
    )
    automated = "".join(
        f"  - {{id: a{i}, kind: automated, method: retrieval, capacity: 100000}}\n"
        for i in range(2)
    )
    return "reviewers:\n" + humans + automated


def wait_for(stream: list[str], text: str, process: subprocess.Popen[str], limit: float) -> None:
    """Until a line of `stream` (the child's stderr) holds `text`."""
    end = time.monotonic() + limit
    while not any(text in line for line in stream):
        if process.poll() is not None or time.monotonic() > end:
            raise AssertionError(f"never saw {text!r}; stderr so far:\n{''.join(stream)}")
        time.sleep(0.05)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_during_routing_exits_at_once_and_stores_nothing(tmp_path: Path) -> None:
    fill_study(tmp_path / "study", n_topics=TOPICS).close()
    (tmp_path / "roster.yaml").write_text(roster(), encoding="utf-8")
    args = ["judge", "--blind", "--study", str(tmp_path / "study")]
    args += ["--reviewers", str(tmp_path / "roster.yaml"), "--no-extract", "--no-normalise"]
    args += ["--plan", str(primary_only_plan(tmp_path))]
    env = {**os.environ, progress.EVERY_ENV: "0.5"}  # "routing ... N s" lines every 0.5 s
    child = subprocess.Popen(
        [*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(child.stderr.readline, "")))
    reader.start()
    try:
        routing = f"routing {3 * TOPICS} items to {HUMANS + 2} reviewers"
        wait_for(lines, f"{routing}, k=2 (HiGHS MILP) ... {SOLVING_AT} s", child, 300)
        child.send_signal(signal.SIGINT)
        code = child.wait(timeout=EXIT_WITHIN_S)  # TimeoutExpired: Ctrl-C was not answered
    finally:
        if child.poll() is None:
            child.kill()
        reader.join()
    assert code == 130, "".join(lines)
    assert lines[-1].rstrip("\n") == INTERRUPTED
    assert not any("Traceback" in line for line in lines)
    with sqlite3.connect(tmp_path / "study" / "study.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM assignments").fetchone() == (0,)
    assert not (tmp_path / "study" / ".study.lock.json").exists()
