"""A cut-off that leaves controls of one expected verdict only: `judge --blind` says so in one
line, names a cut-off that splits the study's known links, and keeps the warning in the
manifest. Through the real entry point, the control texts written by the study's model on the
loopback server."""

from __future__ import annotations

import json
from pathlib import Path

from harness.collection.collect_stage import collect
from harness.judge.controls import control_sources as K
from harness.judge.controls.control_plan import one_kind_warning
from harness.study.manifest import read_manifest
from harness.study.store import Study
from tests.cli_run import run_subprocess
from tests.collection.conftest import make_study
from tests.judge.controls_study import ROSTER, model_reply, small_plan
from tests.models.conftest import serve  # noqa: F401  (fixture)


def test_the_split_cutoff_is_the_most_even_one() -> None:
    assert K.splitting_cutoff([1990, 1990, 2010]) == ("1990-12-31", 2, 1)
    assert K.splitting_cutoff([1950, 1960, 1970, 1980]) == ("1960-12-31", 2, 2)
    assert K.splitting_cutoff([2001, 2001]) is None and K.splitting_cutoff([]) is None
    assert one_kind_warning({"published": 2, "not_published": 1}, "2000-01-01", [1]) is None
    assert one_kind_warning({}, None, []) is None
    line = one_kind_warning({"not_published": 4}, "1900-01-01", [2001])
    assert line is not None and "no published controls at cut-off 1900-01-01" in line
    assert "sensitivity" in line and "--controls FILE" in line


def _study(root: Path, server) -> Path:
    """Three topics collected from the loopback server, each with a known link from 1990 and
    one from 2010, naming one concept of each field."""
    study = make_study(root / "study", topics=3)
    with Study.open(study) as handle, handle.transaction() as conn:
        for i in range(3):
            links = [
                {"title": f"Early {i}", "year": 1990, "summary": f"Linked wave {i} to market {i}."},
                {"title": f"Late {i}", "year": 2010, "summary": "Joined resonance and auction."},
            ]
            conn.execute(
                "UPDATE topics SET data = ? WHERE topic_id = ?",
                (json.dumps({"known_links": links}), f"t{i:03d}"),
            )
    collect(study, backend="openai", model="gpt-4o-mini", base_url=server.base_url, max_tokens=80)
    (root / "roster.yaml").write_text(ROSTER, encoding="utf-8")
    return study


def _blind(root: Path, study: Path, cutoff: str):
    return run_subprocess(
        "judge", "--blind", "--study", str(study), "--reviewers", str(root / "roster.yaml"),
        "--no-extract", "--no-normalise", "--cutoff", cutoff, "--plan", str(small_plan(root)),
    )  # fmt: skip


def test_blind_warns_when_the_cutoff_leaves_no_unpublished_controls(
    tmp_path: Path,
    serve,  # noqa: F811
    monkeypatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-controls")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    server = serve()
    server.reply_text = lambda body: model_reply(body["messages"][-1]["content"])

    late = _study(tmp_path / "late", server)
    done = _blind(tmp_path / "late", late, "2024-06-01")
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stdout.splitlines() if "no unpublished controls" in line]
    assert warned == [
        "warning: no unpublished controls at cut-off 2024-06-01 (6 published): reviewers' "
        "specificity, and so their J, cannot be measured, and the verdict cannot be `refuted`; "
        "--cutoff 1990-12-31 would split the study's known links 3 published, 3 unpublished"
    ]
    section = read_manifest(late).record()["controls"]
    assert section["counts"]["expected"] == {"published": 6}
    assert section["warning"] == warned[0].removeprefix("warning: ")
    # a rerun (packets rewritten from the stored routing) still says it
    again = _blind(tmp_path / "late", late, "2024-06-01")
    assert again.returncode == 0, again.stderr
    assert warned[0] in again.stdout.splitlines()

    split = _study(tmp_path / "split", server)
    done = _blind(tmp_path / "split", split, "1990-12-31")
    assert done.returncode == 0, done.stderr
    assert "controls at cut-off" not in done.stdout
    section = read_manifest(split).record()["controls"]
    assert section["counts"]["expected"] == {"published": 3, "not_published": 3}
    assert section["warning"] is None
