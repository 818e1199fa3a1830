"""`generate` and `analyze` say what they are doing while they do it (harness.progress): a
spinner row per step on a terminal, timed lines in a log, nothing on stdout."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from harness import progress
from harness.analysis.plan.plan_file import Design
from harness.analysis.simulation.study_folder import write_simulated_study
from harness.defaults import materials_dir
from harness.generation import field_distance
from tests.cli_run import CLI, run_cli
from tests.generation.conftest import write_bank


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The label of every step the progress display is told about, in order."""
    seen: list[str] = []
    update = progress.Tracker.update

    def record(self, label, done=0, total=None, info=""):
        if label not in seen:
            seen.append(label)
        update(self, label, done, total, info)

    monkeypatch.setattr(progress.Tracker, "update", record)
    return seen


def test_generate_names_each_step(tmp_path, capsys, monkeypatch, steps) -> None:
    """A taxonomy whose description of a field is new to every table: its distances are
    computed (by a stand-in for the sentence model), and that step is shown too."""
    bank = tmp_path / "bank"
    write_bank(bank, 6)
    taxonomy = (materials_dir("topics") / "taxonomy.yaml").read_text(encoding="utf-8")
    (bank / "taxonomy.yaml").write_text(
        taxonomy.replace('"Matter, energy, forces', '"Matter and energy, forces'),
        encoding="utf-8",
    )
    # the distances' cache in tmp_path (the test cache keeps the tokenizer's cached form)
    monkeypatch.setattr(field_distance, "cache_file", lambda kind, name: tmp_path / name)
    monkeypatch.setattr(
        field_distance,
        "cosine_distances",
        lambda texts: {(a, b): 0.5 * (a != b) for a in texts for b in texts},
    )
    code, out, err = run_cli(
        capsys, "generate", "--study", str(tmp_path / "s"), "--topics", str(bank), "--pilot"
    )
    assert code == 0, err
    wanted = [
        "reading the topic bank",
        "rendering 18 prompts and counting tokens",
        f"embedding 2 field descriptions ({field_distance.EMBEDDING_MODEL})",
        "storing the prompts and the match audit",
    ]
    assert [s for s in steps if s in wanted] == wanted
    assert not any(step in out for step in wanted)  # stdout keeps the results


def simulated(folder: Path) -> Path:
    return write_simulated_study(
        folder, Design(samples=1, reviewers=2), topics=20, effect=0.1, seed=3
    )


def test_analyze_names_each_step(tmp_path, capsys, steps) -> None:
    code, out, err = run_cli(capsys, "analyze", "--study", str(simulated(tmp_path / "s")))
    assert code == 0, err
    assert steps == [
        "loading the reviews and checking the blinding key",
        "computing the preregistered analysis",
        "writing the report and its figures",
        "writing the study explorer",
    ]


def test_analyze_writes_timed_lines_to_a_log(tmp_path) -> None:
    """Through the real entry point, stderr a pipe: a line within the first seconds of each
    step that lasts (computing the analysis takes more than a second), none on stdout."""
    env = {**os.environ, progress.EVERY_ENV: "0.05"}
    study = simulated(tmp_path / "s")
    done = subprocess.run(
        [*CLI, "analyze", "--study", str(study)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "computing the preregistered analysis ... " in done.stderr
    assert "computing the preregistered analysis: done in" in done.stderr
    assert "computing" not in done.stdout
