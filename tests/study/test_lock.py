"""One writer per study: a second writer is refused at once, readers are not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.study.lock import HOLDER_NAME, study_lock, writes_study
from tests.cli_run import run_subprocess as harness
from tests.collection.conftest import make_study

HOLD = """
import sys, time
from harness.study.lock import study_lock
with study_lock(sys.argv[1], "harness collect --model x"):
    print("held", flush=True)
    time.sleep(60)
"""


@pytest.fixture
def holder(tmp_path: Path):
    """A second process that holds the lock of a small study."""
    folder = make_study(tmp_path / "s", 2)
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        yield folder, proc
    finally:
        proc.kill()
        proc.wait()


def test_second_writer_is_refused_naming_the_holder_and_readers_work(holder) -> None:
    folder, proc = holder
    done = harness(
        "collect",
        "--study",
        str(folder),
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "openai/m",
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1
    assert f"pid {proc.pid}" in line and "harness collect --model x" in line
    status = harness("status", "--study", str(folder))
    assert status.returncode == 0, status.stderr


def test_lock_of_a_dead_holder_is_taken_over(holder) -> None:
    folder, proc = holder
    proc.kill()
    proc.wait()
    assert (folder / HOLDER_NAME).exists()  # the crash left its note behind
    with study_lock(folder, "harness judge"):
        assert "harness judge" in (folder / HOLDER_NAME).read_text()
    assert not (folder / HOLDER_NAME).exists()


def test_lock_is_reentrant_in_one_process_and_released_after_errors(tmp_path: Path) -> None:
    folder = make_study(tmp_path / "s", 1)

    @writes_study
    def stage(study: Path, fail: bool) -> str:
        with study_lock(study):  # a stage calling another stage
            if fail:
                raise HarnessError("bad input")
            return "done"

    with pytest.raises(HarnessError):
        stage(folder, True)
    assert stage(folder, False) == "done"


def test_no_folder_is_made_for_a_study_that_does_not_exist(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    done = harness("collect", "--study", str(missing))
    assert done.returncode == 2 and "no study here" in done.stderr
    assert not missing.exists()
