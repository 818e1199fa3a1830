"""A damaged or missing manifest stops every writing stage before it writes; rebuilding is asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.study import Study
from harness.study.manifest import MANIFEST_NAME, record_command
from tests.cli_run import run_subprocess as harness
from tests.collection.conftest import make_study


@pytest.fixture
def study(tmp_path: Path) -> Path:
    folder = make_study(tmp_path / "s", 2)
    record_command(folder, "generate", {"seed": 1})  # its history begins
    return folder


def _counts(folder: Path) -> dict[str, int]:
    with Study.open(folder) as handle:
        return {t: handle.count(t) for t in ("outputs", "items", "reviews")}


@pytest.mark.parametrize("damage", ["truncated", "deleted"])
def test_writing_stages_stop_before_writing(study: Path, damage: str) -> None:
    path = study / MANIFEST_NAME
    if damage == "truncated":
        path.write_text(path.read_text()[:40])
    else:
        path.unlink()
    before = _counts(study)
    for args in (
        ["collect", "--base-url", "http://127.0.0.1:9/v1", "--model", "openai/m"],
        ["judge", "--blind"],
        ["analyze"],
    ):
        done = harness(*args, "--study", str(study))
        assert done.returncode == 2, (args, done.stderr)
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
        assert "--rebuild-manifest" in done.stderr
    assert _counts(study) == before
    verify = harness("verify", "--study", str(study))  # never "0 changed" over a lost history
    assert verify.returncode == 2 and "--rebuild-manifest" in verify.stderr
    assert path.exists() == (damage == "truncated")  # a deleted manifest is not recreated


def test_rebuild_records_the_loss_and_keeps_the_damaged_file(study: Path) -> None:
    (study / MANIFEST_NAME).write_text("{ not json")
    done = harness("verify", "--study", str(study), "--rebuild-manifest")
    assert done.returncode == 0, done.stderr
    data = json.loads((study / MANIFEST_NAME).read_text())
    assert "damaged" in data["history_lost"]["reason"]
    assert len(list(study.glob("manifest.json.damaged-*"))) == 1
    again = harness("verify", "--study", str(study), "--rebuild-manifest")
    assert again.returncode == 2 and "intact" in again.stderr
