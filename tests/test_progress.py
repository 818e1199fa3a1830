"""The one progress helper: timed plain lines in a log, nothing for quick steps, one display."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from harness import progress
from tests.cli_run import CLI, run_subprocess


@pytest.fixture
def fast(monkeypatch):
    monkeypatch.setenv(progress.EVERY_ENV, "0.1")


def test_a_long_step_writes_timed_lines_to_a_log(fast, capsys):
    with progress.tracker(plain=True) as bars:
        for done in range(1, 6):
            bars.update("extract", done, 5)
            time.sleep(0.1)
        bars.finish("extract")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 3 and all(line.startswith("extract: ") for line in lines)
    assert lines[-1].startswith("extract: 5/5 (100%)") and "so far" not in lines[-1]


def test_a_finished_step_stops_repeating_while_another_runs(fast, capsys):
    with progress.tracker(plain=True) as bars:
        for done in range(1, 4):
            bars.update("extract", done, 3)
            bars.update("normalise", done, 10)
            time.sleep(0.15)
        for done in range(4, 8):  # extract is done; told again at 3/3, it writes nothing
            bars.update("extract", 3, 3)
            bars.update("normalise", done, 10)
            time.sleep(0.15)
    lines = capsys.readouterr().err.splitlines()
    extract = [line for line in lines if line.startswith("extract: ")]
    assert extract[-1].startswith("extract: 3/3 (100%)") and "so far" not in extract[-1]
    assert sum(line.startswith("extract: 3/3") for line in extract) == 1
    after = lines[lines.index(extract[-1]) + 1 :]
    assert after and all(line.startswith("normalise: ") for line in after)


def test_a_quick_step_writes_nothing(capsys):
    with progress.tracker(plain=True) as bars:
        bars.update("quick", 1, 1)
    assert capsys.readouterr().err == ""


def test_status_joins_the_open_display_and_is_quiet_outside_the_cli(fast, capsys):
    progress.enable(False)
    with progress.status("loading nothing"):
        time.sleep(0.3)
    assert capsys.readouterr().err == ""  # library use without a display: quiet
    with progress.tracker(plain=True) as bars, progress.status("loading SmolLM2-135M-Instruct"):
        assert progress._state["active"] is bars
        time.sleep(0.3)
    err = capsys.readouterr().err
    assert "loading SmolLM2-135M-Instruct ... " in err
    assert "loading SmolLM2-135M-Instruct: done in" in err


def test_counted_moves_on_where_enabled(fast, capsys):
    progress.enable(True)
    try:
        with progress.counted("embedding 3 texts", 3) as advance:
            for n in range(1, 4):
                time.sleep(0.1)
                advance(n)
    finally:
        progress.enable(False)
    assert "embedding 3 texts: 3/3 (100%)" in capsys.readouterr().err


def test_power_bank_shows_progress_in_a_log():
    """`power --bank` through the real entry point, stderr a pipe: plain progress lines (no
    adjudicated sample: its design search is not what this checks)."""
    env = {**os.environ, progress.EVERY_ENV: "0.2"}
    args = ["power", "--bank", "--bank-reps", "20", "--adjudicated", "0"]
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert "simulating the bank's equivalence test (20 studies per figure)" in done.stderr
    assert "simulating" not in done.stdout  # stdout keeps the results only


def test_interrupted_without_a_study_does_not_mention_a_study_store():
    from harness.cli import INTERRUPTED, _interrupted

    assert _interrupted(["power", "--bank"]) == "interrupted"
    assert _interrupted(["collect", "--study", "runs/x"]) == INTERRUPTED
    assert _interrupted(["collect", "--study=runs/x"]) == INTERRUPTED


def test_usage_errors_say_error_in_lower_case():
    done = run_subprocess("generate", "--no-such-option")
    assert done.returncode == 2
    assert "error: No such option: --no-such-option" in done.stderr
    assert "Error:" not in done.stderr and "\n\n" not in done.stderr


def test_output_does_not_start_with_a_blank_line():
    done = run_subprocess("power", "--topics", "50")
    assert done.returncode == 0 and done.stdout.strip() and not done.stdout.startswith("\n")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_lock_names_the_command_not_a_function(tmp_path):
    from harness.study.running import _command, set_command

    saved = list(_command)
    try:
        _command.clear()
        from harness.study.lock import writes_study

        seen: list[str] = []

        @writes_study
        def collect_models(study):
            seen.append((study / ".study.lock.json").read_text())

        collect_models(tmp_path)
        assert "harness.collect_models() in Python" in seen[0]
        set_command("harness collect")
        collect_models(tmp_path)
        assert '"harness collect"' in seen[1]
    finally:
        _command[:] = saved
