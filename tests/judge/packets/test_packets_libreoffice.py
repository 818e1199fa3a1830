"""Packets that went through LibreOffice Calc 7.4 (files in `fixtures/`, made by
`tests/judge/libreoffice_fixtures.py`) read and import exactly as the reviewer filled them.

The workbooks are LibreOffice's own output (its sheet XML, shared strings, styles, date cells as
serial numbers with a `yyyy\\-mm\\-dd` format, Meta sheet only "hidden"), not openpyxl's. Their
item ids and study id are random, so the import tests rebuild a study of the same shape (two
topics, six items, all routed to `ann`) and give it the fixture's ids (`adopt_ids`): the files
are read byte for byte as LibreOffice wrote them.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from harness.judge.packets.packet_check import parse_count, parse_date
from harness.judge.packets.packet_import import ImportProblems, import_reviews
from harness.judge.packets.packet_read import read_csv_pair, read_xlsx
from harness.study.store import Study
from tests.judge.libreoffice_fixtures import (
    CSV_DIR,
    FILLED,
    FIXTURES,
    UNFILLED,
    adopt_ids,
    answers,
    build_study,
    search,
)

STUDY_ID = "b5c4cf46b073462d8381b2892ae30bfc"
IDS = [
    "I-SPEOTUPJ53",
    "I-HO7PHG6SN4",
    "I-3NWY32KXPP",
    "I-PJXYS3WI64",
    "I-FJCZRQHECG",
    "I-VIOVLVBSDH",
]
ITEM_ROWS = [2, 5, 6, 7, 8, 9]  # rows 3 and 4 continue the long text of the first item
RUN_AT = [
    "2026-01-05",
    "2026-01-06",
    "2026-01-07",
    "2026-01-08T14:30:00Z",
    "2026-01-09",
    "2026-01-10",
]
NOW = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("libreoffice")
    with build_study(root / "study") as study:
        adopt_ids(study, STUDY_ID, IDS)
    return root / "study"


@pytest.fixture
def study(template: Path, tmp_path: Path) -> Study:
    shutil.copytree(template, tmp_path / "study")
    with Study.open(tmp_path / "study") as opened:
        yield opened


def test_workbook_reads_back_as_filled() -> None:
    source = read_xlsx(FIXTURES / FILLED)
    assert source.problems == []
    assert {k: source.meta[k] for k in ("format", "study_id", "reviewer_id", "n_items")} == {
        "format": "harness-reviewer-packet",
        "study_id": STUDY_ID,
        "reviewer_id": "ann",
        "n_items": "6",
    }
    rows = {r.number: r.values for r in source.items.rows}
    assert sorted(rows) == list(range(2, 10))
    for n, (item_id, number) in enumerate(zip(IDS, ITEM_ROWS, strict=True)):
        assert rows[number]["item_id"] == item_id
        assert {k: rows[number][k] for k in answers(n)} == answers(n)
    assert [rows[r]["item_id"] for r in (3, 4)] == [f"{IDS[0]} (continued {k}/3)" for k in (2, 3)]
    assert rows[8]["text"].startswith('=HYPERLINK("http://evil.example"')  # text, not formula
    assert rows[2]["core_combination"] == "+Combines one method with another."
    searches = [r.values for r in source.searches.rows]
    assert len(searches) == 100 and not any(any(v.values()) for v in searches[6:])
    for n, item_id in enumerate(IDS):
        expected = search(n, item_id)
        got = searches[n]
        assert {k: got[k] for k in expected if k != "date"} == {
            k: v for k, v in expected.items() if k != "date"
        }
        assert parse_date(got["date"], NOW) == RUN_AT[n]
        assert parse_count(got["total_hits"]) == expected["total_hits"]
    assert isinstance(searches[0]["date"], datetime)  # a date cell stays a date
    assert searches[2]["date"] == "2026-01-07"  # ISO text stays text


def test_workbook_imports_as_filled(study: Study) -> None:
    frame = import_reviews(study, [FIXTURES / FILLED])
    assert frame[["status", "reviews", "searches"]].to_dict("records") == [
        {"status": "imported", "reviews": 6, "searches": 6}
    ]
    reviews = {r["item_id"]: r for r in study.rows("SELECT * FROM reviews")}
    for n, item_id in enumerate(IDS):
        row = reviews[item_id]
        assert {k: row[k] for k in answers(n)} == answers(n) and row["source"] == "xlsx"
    searches = {r["item_id"]: r for r in study.rows("SELECT * FROM searches")}
    for n, item_id in enumerate(IDS):
        s, expected = searches[item_id], search(n, item_id)
        assert (s["database"], s["query"], s["run_at"], s["total_hits"]) == (
            expected["database"],
            expected["query"],
            RUN_AT[n],
            expected["total_hits"],
        )
        assert json.loads(s["filters"] or "{}") == (
            {"limits": expected["filters"]} if expected["filters"] else {}
        )
        ids = expected["relevant_ids"].split("; ") if expected["relevant_ids"] else []
        assert json.loads(s["relevant_ids"]) == ids


def test_unchanged_packet_saved_by_libreoffice_is_refused(study: Study) -> None:
    with pytest.raises(ImportProblems) as caught:
        import_reviews(study, [FIXTURES / UNFILLED])
    assert [str(p) for p in caught.value.problems] == [
        f"{UNFILLED}: sheet Items, row {row}, column D (Verdict): missing verdict for item {i}"
        for i, row in zip(IDS, ITEM_ROWS, strict=True)
    ]
    assert study.count("reviews") == study.count("imports") == 0


def test_csv_pair_saved_by_libreoffice_imports(study: Study) -> None:
    folder = FIXTURES / CSV_DIR
    source = read_csv_pair(folder / "items.csv", folder / "searches.csv")
    assert source.problems == [] and source.meta["study_id"] == STUDY_ID
    assert [s.values["date"] for s in source.searches.rows] == [d[:10] for d in RUN_AT]
    frame = import_reviews(study, [folder / "items.csv", folder / "searches.csv"])
    assert frame[["status", "reviews", "searches"]].to_dict("records") == [
        {"status": "imported", "reviews": 6, "searches": 6}
    ]
    reviews = {r["item_id"]: r for r in study.rows("SELECT * FROM reviews")}
    for n, item_id in enumerate(IDS):
        assert {k: reviews[item_id][k] for k in answers(n)} == answers(n)
    # a CSV holds the date as the cell shows it: the time of day is gone
    assert sorted(r[0] for r in study.rows("SELECT run_at FROM searches")) == [
        d[:10] for d in RUN_AT
    ]


# -- problems found with LibreOffice's files ------------------------------------------------------
def _csv_pair(tmp_path: Path, edit_items=None, edit_searches=None) -> list[Path]:
    out = []
    for name, edit in (("items.csv", edit_items), ("searches.csv", edit_searches)):
        text = (FIXTURES / CSV_DIR / name).read_text(encoding="utf-8")
        (tmp_path / name).write_text(edit(text) if edit else text, encoding="utf-8")
        out.append(tmp_path / name)
    return out


def _problems(study: Study, files: list[Path]) -> list[str]:
    with pytest.raises(ImportProblems) as caught:
        import_reviews(study, files)
    return [str(p) for p in caught.value.problems]


def test_items_sheet_saved_as_csv_names_only_the_missing_columns(
    study: Study, tmp_path: Path
) -> None:
    """Calc's "save sheet as CSV" of the workbook's Items sheet has no id columns; the import
    said so, then added that the file belonged to another study (study id '')."""

    def drop_ids(text: str) -> str:
        return "\n".join(line.split(",", 2)[2] for line in text.splitlines()) + "\n"

    found = _problems(study, _csv_pair(tmp_path, edit_items=drop_ids))
    assert len(found) == 2 and all("is missing from the header row" in p for p in found)
    assert "'study_id'" in found[0] and "'reviewer_id'" in found[1]


def test_blank_id_columns_are_named(study: Study, tmp_path: Path) -> None:
    found = _problems(
        study, _csv_pair(tmp_path, edit_items=lambda text: text.replace(f'"{STUDY_ID}"', '""'))
    )
    assert found == [
        "items.csv + searches.csv: sheet items.csv, column study_id: study_id or "
        "reviewer_id is blank; keep these columns as they came in the packet"
    ]


def test_day_number_in_csv_is_one_clear_problem(study: Study, tmp_path: Path) -> None:
    """A date cell formatted as a number saves to CSV as its day number (46027); that row's
    problem is the only one: its item's verdict is not also reported as having no search."""
    found = _problems(
        study,
        _csv_pair(tmp_path, edit_searches=lambda text: text.replace(",2026-01-05,", ",46027,")),
    )
    assert found == [
        "items.csv + searches.csv: sheet searches.csv, row 2, column date: '46027' "
        "is a spreadsheet's day number, not a date; format the cell as a date "
        "(YYYY-MM-DD) before saving"
    ]
