from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from openpyxl import load_workbook

from harness.cli import main
from harness.defaults import materials_dir
from harness.errors import HarnessError, PartialWork
from harness.judge.blinding.blind_stage import blind
from harness.judge.routing.roster import demo_roster_path
from harness.study.blinding import commitment
from harness.study.manifest import read_manifest
from harness.study.store import Study
from tests.judge.conftest import ROSTER, fill_study
from tests.judge.fakes import ScriptedBackend
from tests.plans import primary_only_plan


def roster_file(tmp_path: Path) -> Path:
    path = tmp_path / "roster.yaml"
    path.write_text(ROSTER, encoding="utf-8")
    return path


def items_sheet(study: Path, reviewer: str) -> list[tuple]:
    wb = load_workbook(study / "packets" / reviewer / f"{reviewer}.xlsx")
    return list(wb["Items"].iter_rows(values_only=True))


def test_commitment_and_manifest_sections(blinded: Study) -> None:
    manifest = read_manifest(blinded.path).record()
    assert manifest["blinding"]["sha256"] == commitment(blinded.conn)
    assert manifest["blinding"]["n_items"] == blinded.count("items") == 18
    assert manifest["routing"]["k"] == 2 and manifest["routing"]["seed"] == 11
    assert {r["reviewer"] for r in manifest["routing"]["balance"]} == {
        "ann",
        "ben",
        "cat",
        "dan",
        "auto",
    }
    assert manifest["blinded_steps"]["extract"]["items"] == 18
    assert "normalise" not in manifest["blinded_steps"]
    assert manifest["leak_audit"]["n_items"] == 18
    assert set(manifest["materials"]["judge"]) >= {
        "codebook.md",
        "instructions.md",
        "search-protocol.md",
        "roster",
        "prompt:extract",
    }
    assert manifest["commands"][-1]["stage"] == "judge.blind"


def test_rerun_keeps_items_assignment_and_commitment(blinded: Study) -> None:
    before = read_manifest(blinded.path).record()["blinding"]
    sheet = items_sheet(blinded.path, "ann")
    assignments = blinded.rows("SELECT * FROM assignments ORDER BY item_id, reviewer_id")
    backend = ScriptedBackend()
    result = blind(blinded.path, normalise=True, backend=backend)  # stored roster is used
    assert result.items.frozen and backend.seen == []
    assert read_manifest(blinded.path).record()["blinding"] == before
    assert items_sheet(blinded.path, "ann") == sheet
    assert [
        tuple(r) for r in blinded.rows("SELECT * FROM assignments ORDER BY item_id, reviewer_id")
    ] == [tuple(r) for r in assignments]
    assert "already routed" in result.summary() and before["sha256"] in result.summary()


def test_changed_key_is_detected(blinded: Study) -> None:
    with blinded.transaction() as conn:  # an item re-pointed after the commitment
        conn.execute(
            "UPDATE items SET output_id = 'Ofailed' WHERE item_id = (SELECT MIN(item_id)"
            " FROM items)"
        )
    with pytest.raises(HarnessError, match="differs from the commitment"):
        blind(blinded.path, extract=False, normalise=False)


def test_leaky_instructions_are_refused(blinded_template: Path, tmp_path: Path) -> None:
    study = tmp_path / "s"
    fill_study(study, n_topics=6).close()
    judging = tmp_path / "judging"
    shutil.copytree(materials_dir("judging"), judging)
    with open(judging / "codebook.md", "a", encoding="utf-8") as handle:
        handle.write("\nSome items come from the cross condition.\n")
    with pytest.raises(HarnessError, match="outside item texts, packets removed") as caught:
        blind(
            study,
            reviewers=roster_file(tmp_path),
            plan=primary_only_plan(tmp_path),
            extract=False,
            normalise=False,
            judging=judging,
        )
    assert "condition name 'cross'" in str(caught.value)
    assert not list((study / "packets").rglob("*.xlsx"))
    assert "blinding" not in read_manifest(study).record()


def test_prompt_echo_in_item_text_is_a_warning(tmp_path: Path) -> None:
    study = tmp_path / "s"
    opened = fill_study(study, n_topics=6)
    prompt = opened.rows("SELECT text FROM prompts WHERE prompt_id = 'P0010'")[0][0]
    with opened.transaction() as conn:
        conn.execute(
            "UPDATE outputs SET text = ? WHERE output_id = 'O00100'",
            (f"You asked: {prompt} Here is my idea.",),
        )
    opened.close()
    result = blind(
        study,
        reviewers=roster_file(tmp_path),
        plan=primary_only_plan(tmp_path),
        extract=False,
        normalise=False,
    )
    assert result.warnings and all(w.in_item_text for w in result.warnings)
    assert "warning:" in result.summary() and "prompt text" in result.summary()


def test_failed_steps_stop_before_routing(tmp_path: Path) -> None:
    study = tmp_path / "s"
    fill_study(study, n_topics=6).close()

    class Down(ScriptedBackend):
        def complete(self, requests, params):
            self.fail = {r.key for r in requests}
            return super().complete(requests, params)

    with pytest.raises(PartialWork, match="18 blinded step.s. failed; finished work is kept"):
        blind(
            study,
            reviewers=roster_file(tmp_path),
            plan=primary_only_plan(tmp_path),
            backend=Down(),
            normalise=False,
        )
    with Study.open(study) as opened:
        assert opened.count("assignments") == 0 and opened.count("items") == 18


def test_each_items_step_keeps_the_backend_settings_it_ran_with(tmp_path: Path) -> None:
    """A step resumed on another thread count: both runs are in the manifest, each item has its."""
    study = tmp_path / "s"
    fill_study(study, n_topics=6).close()

    class Threads(ScriptedBackend):
        def __init__(self, threads: int, fail_every: int = 0) -> None:
            super().__init__()
            self.threads, self.fail_every = threads, fail_every

        def complete(self, requests, params):
            if self.fail_every:
                self.fail = {r.key for r in requests[:: self.fail_every]}
            return super().complete(requests, params)

        def run_settings(self) -> dict[str, object]:
            return {"threads_used": self.threads}

    with pytest.raises(PartialWork):
        blind(
            study,
            reviewers=roster_file(tmp_path),
            plan=primary_only_plan(tmp_path),
            backend=Threads(2, 2),
            normalise=False,
        )
    blind(
        study,
        reviewers=roster_file(tmp_path),
        plan=primary_only_plan(tmp_path),
        backend=Threads(1),
        normalise=False,
    )
    runs = read_manifest(study).record()["blinded_steps"]["extract"]["runs"]
    threads_of_runs = sorted(run["run_settings"]["threads_used"] for run in runs)
    assert threads_of_runs == [1, 2]  # runs are listed in store order, not in time order
    with Study.open(study) as opened:
        from harness.study.tables.items import recorded_steps

        threads = [steps[0]["run_settings"]["threads_used"] for steps in recorded_steps(opened)]
    assert sorted(threads) == [1] * 9 + [2] * 9


def test_routing_problems_surface_before_any_model_runs(tmp_path: Path) -> None:
    study = tmp_path / "s"
    fill_study(study, n_topics=6).close()
    backend = ScriptedBackend()
    with pytest.raises(HarnessError, match="short by"):
        blind(
            study,
            reviewers=roster_file(tmp_path),
            plan=primary_only_plan(tmp_path),
            k=5,
            backend=backend,
        )
    assert backend.seen == []


def test_errors_without_outputs_roster_or_good_cutoff(tmp_path: Path) -> None:
    Study.open(tmp_path / "empty", create=True).close()
    with pytest.raises(HarnessError, match="no model outputs"):
        blind(tmp_path / "empty", reviewers=demo_roster_path())
    fill_study(tmp_path / "s", n_topics=2).close()
    with pytest.raises(HarnessError, match="no reviewer roster"):
        blind(tmp_path / "s", extract=False, normalise=False)
    with pytest.raises(HarnessError, match="not a date"):
        blind(tmp_path / "s", reviewers=demo_roster_path(), cutoff="last year")


def test_cli_blind_and_status(tmp_path: Path, capsys) -> None:
    study = tmp_path / "s"
    fill_study(study, n_topics=4).close()
    main(
        [
            "judge",
            "--blind",
            "--study",
            str(study),
            "--reviewers",
            str(demo_roster_path()),
            "--no-extract",
            "--no-normalise",
            "--seed",
            "3",
            "--cutoff",
            "2025-06-30",
        ]
    )
    out = capsys.readouterr().out
    assert "Blinding commitment" in out and "retrieval-dense" in out and "AUC" in out
    main(["judge", "--status", "--study", str(study)])
    out = capsys.readouterr().out
    assert "retrieval" in out and "0 of 36 assigned reviews returned" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["judge"],
        ["judge", "--blind", "--status"],
        ["judge", "--status", "stray.xlsx"],
    ],
)
def test_cli_needs_exactly_one_mode(tmp_path: Path, capsys, argv: list[str]) -> None:
    fill_study(tmp_path / "s", n_topics=1).close()
    with pytest.raises(SystemExit) as caught:
        main([*argv, "--study", str(tmp_path / "s")])
    assert caught.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_rerun_with_other_routing_settings_says_they_are_not_applied(blinded: Study) -> None:
    result = blind(blinded.path, k=3, seed=99, extract=False, normalise=False)
    assert (
        "routing was made earlier and stays: k=2 (asked 3), seed=11 (asked 99)" in result.summary()
    )


def test_progress_callback_and_bar(tmp_path: Path) -> None:
    calls: list[tuple] = []
    for name, progress in (("a", calls.append), ("b", True)):
        study = tmp_path / name
        fill_study(study, n_topics=2).close()
        wrapped = (lambda *a, f=progress: f(a)) if callable(progress) else progress
        result = blind(
            study, reviewers=demo_roster_path(), backend=ScriptedBackend(), progress=wrapped
        )
        assert result.items.steps["normalise"]["done"] == 6
    assert ("extract", 6, 6) in calls and ("normalise", 6, 6) in calls
