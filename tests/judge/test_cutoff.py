"""The cut-off given to `judge --blind` is stored and is the one `judge --auto` uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import HarnessError
from harness.judge.automated.auto_review import run_automated
from harness.judge.blinding.blind_stage import blind
from harness.judge.cutoff import normalise_cutoff, stored_cutoff
from harness.study.manifest import read_manifest
from harness.study.store import Study
from tests.judge.blinding.test_blind_stage import roster_file
from tests.judge.conftest import fill_study
from tests.plans import primary_only_plan


@pytest.mark.parametrize(
    ("given", "expected"), [("2023", "2023-12-31"), (" 2024-06-30 ", "2024-06-30"), (None, None)]
)
def test_year_or_date_normalised(given: str | None, expected: str | None) -> None:
    assert normalise_cutoff(given) == expected


@pytest.mark.parametrize("given", ["20240630", "2024-W01", "2024-6-30", "2024-02-30", "last year"])
def test_other_formats_refused(given: str) -> None:
    with pytest.raises(HarnessError, match="not a date"):
        normalise_cutoff(given)


def packet_cutoff(study: Path, reviewer: str) -> list[str]:
    """The cut-off lines on a reviewer's Instructions sheet."""
    from openpyxl import load_workbook

    sheet = load_workbook(study / "packets" / reviewer / f"{reviewer}.xlsx")["Instructions"]
    return [
        str(c)
        for row in sheet.iter_rows(values_only=True)
        for c in row
        if str(c).startswith("Cut-off date:")
    ]


@pytest.fixture(scope="module")
def year_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A study blinded with the bare year `--cutoff 2023` (human and automated reviewers)."""
    root = tmp_path_factory.mktemp("year")
    fill_study(root / "s", n_topics=6).close()
    blind(
        root / "s",
        reviewers=roster_file(root),
        plan=primary_only_plan(root),
        extract=False,
        normalise=False,
        seed=5,
        cutoff="2023",
    )
    return root / "s"


@pytest.fixture
def year_study(year_template: Path, tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(year_template, tmp_path / "s"))


def test_blind_stores_the_cutoff_it_prints_on_packets(year_study: Path) -> None:
    with Study.open(year_study) as study:
        assert stored_cutoff(study) == (True, "2023-12-31")
        assert study.meta("cutoff") == "2023-12-31"
    assert read_manifest(year_study).record()["cutoff"]["date"] == "2023-12-31"
    assert packet_cutoff(year_study, "ann") == ["Cut-off date: 2023-12-31"]


def test_auto_uses_the_stored_cutoff_by_default(year_study: Path) -> None:
    with Study.open(year_study) as study:
        run_automated(study)
        filters = [json.loads(r["filters"]) for r in study.rows("SELECT filters FROM searches")]
    assert filters and all(f["cutoff"] == "2023-12-31" for f in filters)
    auto = [
        c for c in read_manifest(year_study).record()["commands"] if c["stage"] == "judge --auto"
    ]
    assert auto[-1]["params"]["cutoff"] == "2023-12-31"


def test_auto_refuses_another_cutoff_and_accepts_the_same_one(year_study: Path) -> None:
    with Study.open(year_study) as study:
        with pytest.raises(HarnessError, match=r"stored .*\(2023-12-31\)"):
            run_automated(study, cutoff="2024-06-30")
        assert study.count("reviews") == 0
        run_automated(study, cutoff="2023-12-31")
        run_automated(study, cutoff="2023")  # the same date, written as a year
        assert study.count("reviews") > 0


def test_blind_rerun_keeps_the_stored_cutoff(year_study: Path) -> None:
    with pytest.raises(HarnessError, match=r"stored .*\(2023-12-31\)"):
        blind(year_study, extract=False, normalise=False, cutoff="2025-01-01")
    (year_study / "packets" / "ben" / "ben.xlsx").unlink()
    blind(year_study, extract=False, normalise=False)  # packets rewritten with the stored date
    assert packet_cutoff(year_study, "ben") == ["Cut-off date: 2023-12-31"]


def test_packets_without_cutoff_fix_none(blinded: Study) -> None:
    assert stored_cutoff(blinded) == (True, None)
    with pytest.raises(HarnessError, match=r"stored .*\(none\)"):
        run_automated(blinded, cutoff="2024-01-01")


def test_cli_auto_cutoff_mismatch_is_one_line(year_study: Path, capsys) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["judge", "--auto", "--study", str(year_study), "--cutoff", "2020"])
    assert caught.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "2020-12-31" in err and "2023-12-31" in err
