from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from openpyxl import Workbook, load_workbook

from harness.judge.packets.packet_import import ImportProblems, import_reviews
from harness.study.manifest import read_manifest
from harness.study.store import Study
from tests.judge.fakes import default_verdict, fill_csv_pair, fill_workbook


def filled(
    study: Study, tmp_path: Path, reviewer: str = "ann", name: str = "back.xlsx", **kwargs
) -> tuple[Path, list[str]]:
    out = tmp_path / name
    ids = fill_workbook(study.packets_dir / reviewer / f"{reviewer}.xlsx", out, **kwargs)
    return out, ids


def edited(path: Path, change: Callable[..., None], name: str = "edited.xlsx") -> Path:
    wb = load_workbook(path)
    change(wb)
    out = path.with_name(name)
    wb.save(out)
    return out


def problems(study: Study, files: list[Path], **kwargs) -> list[str]:
    before = {t: study.count(t) for t in ("reviews", "searches", "imports")}
    with pytest.raises(ImportProblems) as caught:
        import_reviews(study, files, **kwargs)
    assert {t: study.count(t) for t in before} == before  # nothing stored
    return [str(p) for p in caught.value.problems]


def first_item_row(wb, item_id: str | None = None) -> int:
    ws = wb["Items"]
    return next(
        r
        for r in range(2, ws.max_row + 1)
        if ws.cell(r, 1).value and (item_id is None or ws.cell(r, 1).value == item_id)
    )


# -- round trips ----------------------------------------------------------------------------------
def test_xlsx_round_trip(blinded: Study, tmp_path: Path) -> None:
    back, ids = filled(blinded, tmp_path)
    frame = import_reviews(blinded, [back])
    assert frame.to_dict("records")[0] | {"sha256": ""} == {
        "file": "back.xlsx",
        "reviewer": "ann",
        "status": "imported",
        "reviews": len(ids),
        "searches": 2 * len(ids),
        "searches_before_packet": 2 * len(ids),  # dated 2026-01-05 and -06: said, and kept
        "sha256": "",
    }
    stored = {
        r["item_id"]: dict(r)
        for r in blinded.rows("SELECT * FROM reviews WHERE reviewer_id = 'ann'")
    }
    assert sorted(stored) == sorted(ids)
    for item_id in ids:
        verdict, confidence, prior = default_verdict(item_id)
        row = stored[item_id]
        assert (row["verdict"], row["confidence"], row["prior_work"] or "") == (
            verdict,
            confidence,
            prior,
        )
        assert row["source"] == "xlsx" and row["notes"] == "checked two databases"
    searches = blinded.rows("SELECT * FROM searches WHERE reviewer_id = 'ann' ORDER BY run_at")
    assert {s["run_at"] for s in searches} == {"2026-01-05", "2026-01-06"}
    assert {s["database"] for s in searches} == {"Google Scholar", "PubMed"}
    first = next(s for s in searches if s["run_at"] == "2026-01-05")
    assert json.loads(first["relevant_ids"]) == [f"10.1234/{first['item_id'].lower()}"]
    assert json.loads(first["filters"]) == {"limits": "2000-2024"} and first["total_hits"] == 120
    (imp,) = blinded.rows("SELECT * FROM imports")
    assert imp["reviewer_id"] == "ann" and imp["n_reviews"] == len(ids)
    from harness.study.manifest import sha256_file

    assert imp["file_sha256"] == sha256_file(back)

    command = read_manifest(blinded.path).record()["commands"][-1]
    assert command["stage"] == "judge.import"
    assert command["params"]["files"][0]["sha256"] == sha256_file(back)


def test_reimport_same_file_changes_nothing(blinded: Study, tmp_path: Path) -> None:
    back, _ = filled(blinded, tmp_path)
    import_reviews(blinded, [back])
    snapshot = [list(r) for r in blinded.rows("SELECT * FROM reviews ORDER BY item_id")]
    n_commands = len(read_manifest(blinded.path).record()["commands"])
    frame = import_reviews(blinded, [back])
    assert frame.status.tolist() == ["unchanged"]
    assert len(read_manifest(blinded.path).record()["commands"]) == n_commands
    assert [list(r) for r in blinded.rows("SELECT * FROM reviews ORDER BY item_id")] == snapshot
    assert blinded.count("imports") == 1


def test_different_file_needs_replace(blinded: Study, tmp_path: Path) -> None:
    back, ids = filled(blinded, tmp_path)
    import_reviews(blinded, [back])
    corrected, _ = filled(
        blinded,
        tmp_path,
        name="corrected.xlsx",
        verdict=lambda i: ("unsure", 2, "https://example.org/paper"),
        searches_per_item=1,
    )
    found = problems(blinded, [corrected])
    assert "already has an import (back.xlsx" in found[0] and "--replace" in found[0]
    frame = import_reviews(blinded, [corrected], replace=True)
    assert frame.status.tolist() == ["replaced"]
    assert {r[0] for r in blinded.rows("SELECT verdict FROM reviews")} == {"unsure"}
    assert blinded.count("searches") == len(ids)  # the old searches went with the old file
    imports = blinded.rows("SELECT file_name, replaced_by FROM imports ORDER BY imported_at")
    assert imports[0][0] == "back.xlsx" and imports[0][1] is not None
    assert imports[1][0] == "corrected.xlsx" and imports[1][1] is None


def test_several_reviewers_in_one_call(blinded: Study, tmp_path: Path) -> None:
    a, _ = filled(blinded, tmp_path, "ann", "a.xlsx")
    b, _ = filled(blinded, tmp_path, "ben", "b.xlsx")
    frame = import_reviews(blinded, [a, b])
    assert sorted(frame.reviewer) == ["ann", "ben"]
    assert blinded.count("imports") == 2


@pytest.mark.parametrize(
    "variant",
    [
        {"bom": True, "newline": "\r\n"},  # Excel "CSV UTF-8"
        {"bom": False, "newline": "\r\n"},  # Google Sheets download
        {"bom": False, "newline": "\n", "quote_all": True},  # LibreOffice, quote all text cells
        {"bom": True, "newline": "\r\n", "delimiter": ";"},  # a locale with ';' as separator
    ],
)
def test_csv_round_trip(blinded: Study, tmp_path: Path, variant: dict) -> None:
    ids = fill_csv_pair(blinded.packets_dir / "cat", tmp_path / "back", **variant)
    frame = import_reviews(
        blinded, [tmp_path / "back" / "items.csv", tmp_path / "back" / "searches.csv"]
    )
    assert frame.status.tolist() == ["imported"] and frame.reviews[0] == len(ids)
    rows = blinded.rows("SELECT source, verdict, confidence FROM reviews WHERE reviewer_id='cat'")
    assert {r[0] for r in rows} == {"csv"} and len(rows) == len(ids)
    totals = {r[0] for r in blinded.rows("SELECT total_hits FROM searches")}
    assert totals == {1204}


def test_csv_without_its_searches_file(blinded: Study, tmp_path: Path) -> None:
    fill_csv_pair(blinded.packets_dir / "cat", tmp_path / "back")
    found = problems(blinded, [tmp_path / "back" / "items.csv"])
    assert any("no searches CSV given" in p for p in found)


def test_csv_not_utf8(blinded: Study, tmp_path: Path) -> None:
    fill_csv_pair(blinded.packets_dir / "cat", tmp_path / "back")
    items = tmp_path / "back" / "items.csv"
    items.write_bytes(items.read_bytes().decode("utf-8-sig").encode("utf-16"))
    found = problems(blinded, [items, tmp_path / "back" / "searches.csv"])
    assert any("not an items or searches CSV" in p for p in found)


@pytest.mark.parametrize(
    "value", [datetime(2026, 2, 1, 9, 30), "2026-02-01", 46054, "2026-02-01T09:30:00Z"]
)
def test_dates_as_excel_dates_or_iso_text(blinded: Study, tmp_path: Path, value) -> None:
    back, _ = filled(blinded, tmp_path)
    out = edited(back, lambda wb: setattr(wb["Searches"].cell(2, 5), "value", value))
    import_reviews(blinded, [out])
    dates = {r[0] for r in blinded.rows("SELECT run_at FROM searches")}
    assert dates & {"2026-02-01", "2026-02-01T09:30:00Z"}


# -- every bad input, each with sheet, row and column ----------------------------------------------
def _set(sheet: str, row: int, col: int, value) -> Callable:
    return lambda wb: setattr(wb[sheet].cell(row, col), "value", value)


def _other_reviewers_item(study: Study) -> str:
    return study.rows(
        "SELECT item_id FROM assignments WHERE reviewer_id = 'ben' AND item_id "
        "NOT IN (SELECT item_id FROM assignments WHERE reviewer_id = 'ann')"
    )[0][0]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (_set("Items", 2, 4, None), "sheet Items, row 2, column D (Verdict): missing verdict"),
        (_set("Items", 2, 4, "maybe"), "column D (Verdict): verdict 'maybe' is not one of"),
        (_set("Items", 2, 5, 9), "column E (Confidence (1-5)): confidence '9' is not a whole"),
        (_set("Items", 2, 6, "see Smith 2019"), "column F (Prior work (DOI or URL)): 'see' is not"),
        (
            _set("Items", 2, 1, "I-ZZZZZZZZZZ"),
            "row 2, column A (Item id): unknown item id 'I-ZZZZZZZZZZ'",
        ),
        (_set("Items", 2, 7, "=1+1"), "row 2, column G (Notes): holds a formula"),
        (
            _set("Searches", 2, 5, "05/01/2026"),
            "sheet Searches, row 2, column E (Date (YYYY-MM-DD)):"
            " malformed date '05/01/2026' (use YYYY-MM-DD)",
        ),
        (_set("Searches", 2, 5, "2026-02-30"), "malformed date '2026-02-30' (no such day"),
        (_set("Searches", 2, 5, "2099-01-01"), "date 2099-01-01 is in the future"),
        (_set("Searches", 2, 6, "about 20"), "column F (Total hits): total hits 'about 20' is not"),
        (_set("Searches", 2, 6, None), "total hits missing"),
        (_set("Searches", 2, 3, None), "column C (Query as run): query as run missing"),
        (_set("Searches", 2, 2, None), "column B (Database): database missing"),
        (_set("Searches", 2, 1, None), "column A (Item id): which item was this query for?"),
        (
            _set("Searches", 2, 7, "not-an-id"),
            "column G (Relevant hit ids (DOI or URL; separated "
            "by ;)): 'not-an-id' is not a DOI or URL",
        ),
        (
            _set("Meta", 3, 2, "another-study"),
            "this file belongs to another study (study id 'another-study'",
        ),
        (_set("Meta", 4, 2, "auto"), "reviewer 'auto' is automated"),
        (_set("Meta", 4, 2, "zed"), "reviewer 'zed' is not on this study's roster"),
    ],
)
def test_bad_workbook(blinded: Study, tmp_path: Path, change, expected: str) -> None:
    back, _ = filled(blinded, tmp_path)
    found = problems(blinded, [edited(back, change)])
    assert any(expected in p for p in found), found


def test_published_without_prior_work(blinded: Study, tmp_path: Path) -> None:
    back, _ = filled(blinded, tmp_path, verdict=lambda i: ("published", 5, ""))
    found = problems(blinded, [back])
    assert "column F (Prior work (DOI or URL)): a published verdict must cite" in found[0]
    assert len(found) == blinded.count("assignments", "reviewer_id = 'ann'")


def test_verdict_without_search(blinded: Study, tmp_path: Path) -> None:
    back, ids = filled(blinded, tmp_path)

    def drop_searches_of_first(wb):
        ws = wb["Searches"]
        for r in range(2, ws.max_row + 1):
            if ws.cell(r, 1).value == ids[0]:
                for c in range(1, 8):
                    ws.cell(r, c).value = None

    found = problems(blinded, [edited(back, drop_searches_of_first)])
    row = first_item_row(load_workbook(back), ids[0])
    assert found == [
        f"edited.xlsx: sheet Items, row {row}, column D (Verdict): item {ids[0]} "
        "has a verdict but no search recorded in Searches"
    ]


def test_item_of_another_reviewer(blinded: Study, tmp_path: Path) -> None:
    other = _other_reviewers_item(blinded)
    back, _ = filled(blinded, tmp_path)
    found = problems(blinded, [edited(back, _set("Searches", 3, 1, other))])
    assert any(
        f"sheet Searches, row 3, column A (Item id): item {other} is not assigned to "
        "reviewer ann" in p
        for p in found
    )
    found = problems(blinded, [edited(back, _set("Items", 2, 1, other))])
    assert any(f"item {other} is not assigned to reviewer ann" in p for p in found)
    assert any("is missing from the sheet" in p for p in found)  # the overwritten one


def test_duplicate_rows(blinded: Study, tmp_path: Path) -> None:
    back, ids = filled(blinded, tmp_path)

    def duplicate(wb):
        items, searches = wb["Items"], wb["Searches"]
        last = items.max_row + 1
        for c in range(1, 8):
            items.cell(last, c).value = items.cell(2, c).value
            searches.cell(40, c).value = searches.cell(2, c).value

    found = problems(blinded, [edited(back, duplicate)])
    assert any(
        "column A (Item id): duplicate row for item" in p and "first on row 2" in p for p in found
    )
    assert any(
        "sheet Searches, row 40, column C (Query as run): duplicate of the query on row 2" in p
        for p in found
    )


def test_all_problems_reported_together(blinded: Study, tmp_path: Path) -> None:
    back, _ = filled(blinded, tmp_path)

    def three(wb):
        _set("Items", 2, 4, None)(wb)
        _set("Items", 3, 5, "high")(wb)
        _set("Searches", 4, 5, "yesterday")(wb)

    found = problems(blinded, [edited(back, three)])
    assert len(found) >= 3
    assert any("row 2, column D" in p for p in found)
    assert any("row 3, column E" in p for p in found)
    assert any("sheet Searches, row 4, column E" in p for p in found)


def test_answers_on_a_continuation_row(blinded: Study, tmp_path: Path) -> None:
    holder = next(
        r
        for r in ("ann", "ben", "cat", "dan")
        if any(
            "continued" in str(c.value)
            for c in load_workbook(blinded.packets_dir / r / f"{r}.xlsx")["Items"]["A"]
        )
    )
    back, _ = filled(blinded, tmp_path, holder)
    wb = load_workbook(back)
    row = next(
        r for r in range(2, wb["Items"].max_row + 1) if "continued" in wb["Items"].cell(r, 1).value
    )
    found = problems(blinded, [edited(back, _set("Items", row, 4, "published"))])
    assert any(
        f"row {row}, column D (Verdict): answers belong on the item's first row" in p for p in found
    )


def test_not_a_packet(blinded: Study, tmp_path: Path) -> None:
    plain = tmp_path / "plain.xlsx"
    Workbook().save(plain)
    junk = tmp_path / "junk.xlsx"
    junk.write_bytes(b"not a zip")
    ods = tmp_path / "back.ods"
    ods.write_bytes(b"x")
    found = problems(blinded, [plain, junk, ods, tmp_path / "absent.xlsx"])
    assert any("plain.xlsx: not a reviewer packet" in p for p in found)
    assert any("junk.xlsx: not a readable .xlsx" in p for p in found)
    assert any("back.ods: not an .xlsx or .csv file" in p for p in found)
    assert any("absent.xlsx: file not found" in p for p in found)


def test_one_bad_file_blocks_the_whole_import(blinded: Study, tmp_path: Path) -> None:
    good, _ = filled(blinded, tmp_path, "ann", "good.xlsx")
    bad, _ = filled(blinded, tmp_path, "ben", "bad.xlsx")
    bad = edited(bad, _set("Items", 2, 4, None))
    found = problems(blinded, [good, bad])
    assert all(p.startswith("edited.xlsx") for p in found)


def test_searches_dated_before_the_packet_are_said_and_kept(
    blinded: Study, tmp_path: Path, capsys
) -> None:
    from harness.cli import main

    made = datetime.fromisoformat(read_manifest(blinded.path).record()["blinding"]["made_at"][:10])
    back, ids = filled(blinded, tmp_path, searched=made - timedelta(days=1))
    main(["judge", "--import", str(back), "--study", str(blinded.path)])
    captured = capsys.readouterr()
    # each item's first search is dated the day before the packets were made
    assert captured.err.strip() == (
        f"warning: back.xlsx: {len(ids)} search row(s) dated before the packet was made; a "
        "search for an item is run after its packet arrives: check the Date column (the rows "
        "are stored as given)"
    )
    assert blinded.count("searches", "reviewer_id = 'ann'") == 2 * len(ids)
    again, _ = filled(blinded, tmp_path, "ben", "ben.xlsx", searched=made)
    assert import_reviews(blinded, [again]).loc[0, "searches_before_packet"] == 0


def test_cli_prints_every_problem_and_exits_2(blinded: Study, tmp_path: Path, capsys) -> None:
    from harness.cli import main

    back, _ = filled(blinded, tmp_path)
    bad = edited(back, lambda wb: (_set("Items", 2, 4, None)(wb), _set("Items", 3, 4, None)(wb)))
    with pytest.raises(SystemExit) as caught:
        main(["judge", "--import", str(bad), "--study", str(blinded.path)])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    # each problem once, then the count once
    assert err.count("row 2, column D (Verdict): missing verdict") == 1
    assert err.count("row 3, column D (Verdict): missing verdict") == 1
    assert err.splitlines()[-1].endswith("; nothing was imported (listed above)")
    main(["judge", "--import", str(back), "--study", str(blinded.path)])
    assert "imported" in capsys.readouterr().out
    main(["judge", "--status", "--study", str(blinded.path)])
    out = capsys.readouterr().out
    assert "ann" in out and "returned" in out


def test_csv_pairs_of_two_reviewers_in_one_folder(blinded: Study, tmp_path: Path) -> None:
    returned = tmp_path / "returned"
    for reviewer in ("cat", "dan"):
        fill_csv_pair(blinded.packets_dir / reviewer, tmp_path / reviewer)
        returned.mkdir(exist_ok=True)
        for kind in ("items", "searches"):
            (tmp_path / reviewer / f"{kind}.csv").rename(returned / f"{reviewer}-{kind}.csv")
    files = sorted(returned.iterdir())
    frame = import_reviews(blinded, files)
    assert sorted(frame.reviewer) == ["cat", "dan"]
    (returned / "dan-searches.csv").rename(returned / "x.csv")
    (returned / "cat-searches.csv").rename(returned / "y.csv")
    found = problems(
        blinded,
        [
            returned / "cat-items.csv",
            returned / "dan-items.csv",
            returned / "x.csv",
            returned / "y.csv",
        ],
        replace=True,
    )
    assert any("several searches CSVs could belong" in p for p in found)


def test_status_counts_returned_and_missing(blinded: Study, tmp_path: Path) -> None:
    from harness.judge.review_status import review_status, status_summary

    back, ids = filled(blinded, tmp_path)
    import_reviews(blinded, [back])
    frame = review_status(blinded).set_index("reviewer")
    assert frame.loc["ann", ["assigned", "returned", "missing"]].tolist() == [len(ids), len(ids), 0]
    assert frame.loc["ann", "searches"] == 2 * len(ids)
    assert "back.xlsx" in frame.loc["ann", "last_import"]
    ben = frame.loc["ben"]
    assert ben.returned == 0 and ben.missing == ben.assigned > 0
    total = int(frame.assigned.sum())
    assert status_summary(review_status(blinded)).startswith(f"{len(ids)} of {total} assigned")
