from __future__ import annotations

import csv
import re
import zipfile
from pathlib import Path

import pytest
from openpyxl import load_workbook

from harness.study.store import Study
from tests.judge.conftest import LONG_TEXT, MODEL, SPECIAL

HUMANS = ("ann", "ben", "cat", "dan")


def packet(study: Study, reviewer: str) -> Path:
    return study.packets_dir / reviewer / f"{reviewer}.xlsx"


def item_of(study: Study, output_id: str) -> tuple[str, str | None]:
    row = study.rows(
        "SELECT i.item_id, a.reviewer_id FROM items i LEFT JOIN assignments a "
        "ON a.item_id = i.item_id JOIN reviewers r ON r.reviewer_id = a.reviewer_id "
        "WHERE i.output_id = ? AND r.kind = 'human'",
        (output_id,),
    )
    return (row[0][0], row[0][1]) if row else (None, None)


def test_one_folder_per_human_reviewer(blinded: Study) -> None:
    folders = sorted(p.name for p in blinded.packets_dir.iterdir())
    assert folders == list(HUMANS)  # none for the automated reviewer
    for reviewer in HUMANS:
        names = sorted(p.name for p in (blinded.packets_dir / reviewer).iterdir())
        assert names == [f"{reviewer}.xlsx", "instructions.md", "items.csv", "searches.csv"]


def test_workbook_structure(blinded: Study) -> None:
    wb = load_workbook(packet(blinded, "ann"))
    assert wb.sheetnames == ["Instructions", "Items", "Searches", "Lists", "Meta"]
    states = {ws.title: ws.sheet_state for ws in wb.worksheets}
    assert states == {
        "Instructions": "visible",
        "Items": "visible",
        "Searches": "visible",
        "Lists": "hidden",
        "Meta": "veryHidden",
    }
    assert wb.security.lockStructure
    meta = dict(wb["Meta"].iter_rows(values_only=True))
    assert meta["study_id"] == blinded.study_id and meta["reviewer_id"] == "ann"
    assert all(wb[name].protection.sheet for name in wb.sheetnames)
    instructions = "\n".join(str(v) for (v,) in wb["Instructions"].iter_rows(values_only=True) if v)
    assert "Codebook" in instructions and "PRISMA-S" in instructions
    assert "Reviewer packet for ann" in instructions and "Cut-off date: none" in instructions


def test_items_in_assigned_order_with_locked_and_input_cells(blinded: Study) -> None:
    ws = load_workbook(packet(blinded, "ann"))["Items"]
    header = [c.value for c in ws[1]]
    assert header == [
        "Item id",
        "Text",
        "Core combination",
        "Verdict",
        "Confidence (1-5)",
        "Prior work (DOI or URL)",
        "Notes",
    ]
    expected = blinded.rows(
        "SELECT a.item_id, i.display_text, i.core_combination FROM assignments a JOIN items i "
        "USING (item_id) WHERE reviewer_id = 'ann' ORDER BY position"
    )
    first_rows = [r for r in range(2, ws.max_row + 1) if "continued" not in ws.cell(r, 1).value]
    assert [ws.cell(r, 1).value for r in first_rows] == [e[0] for e in expected]
    for r, (_, text, core) in zip(first_rows, expected, strict=True):
        if len(text) < 32_000:
            assert ws.cell(r, 2).value == text.replace("\x07", "\ufffd")
        assert ws.cell(r, 3).value == core
        assert all(ws.cell(r, c).protection.locked for c in (1, 2, 3))
        assert not any(ws.cell(r, c).protection.locked for c in (4, 5, 6, 7))
    validations = {
        str(dv.sqref): (dv.type, dv.formula1) for dv in ws.data_validations.dataValidation
    }
    last = ws.max_row
    assert validations[f"D2:D{last}"] == ("list", "Lists!$B$2:$B$4")
    assert validations[f"E2:E{last}"] == ("list", "Lists!$C$2:$C$6")
    lists = load_workbook(packet(blinded, "ann"))["Lists"]
    assert [lists.cell(r, 2).value for r in (2, 3, 4)] == ["published", "not_published", "unsure"]


def test_searches_sheet_has_drop_downs_and_open_rows(blinded: Study) -> None:
    wb = load_workbook(packet(blinded, "ben"))
    ws = wb["Searches"]
    assert [c.value for c in ws[1]][:5] == [
        "Item id",
        "Database",
        "Query as run",
        "Filters and limits",
        "Date (YYYY-MM-DD)",
    ]
    kinds = {dv.type: (str(dv.sqref), dv.formula1) for dv in ws.data_validations.dataValidation}
    n_ids = blinded.count("assignments", "reviewer_id = 'ben'")
    assert kinds["list"][1] in (f"Lists!$A$2:$A${n_ids + 1}", "Lists!$D$2:$D$17")
    assert "date" in kinds and "whole" in kinds
    assert not ws.cell(2, 1).protection.locked and ws.cell(1, 1).protection.locked
    assert ws.protection.insertRows is False  # more queries than rows: reviewers add rows
    ids = [wb["Lists"].cell(r, 1).value for r in range(2, n_ids + 2)]
    assert sorted(ids) == sorted(
        r[0] for r in blinded.rows("SELECT item_id FROM assignments WHERE reviewer_id = 'ben'")
    )


def _cells(study: Study, output_id: str) -> tuple[str, list]:
    item_id, reviewer = item_of(study, output_id)
    assert reviewer is not None  # k=2 and one automated reviewer: a human always has it
    ws = load_workbook(packet(study, reviewer))["Items"]
    rows = [
        [c for c in row]
        for row in ws.iter_rows(min_row=2)
        if row[0].value and row[0].value.startswith(item_id)
    ]
    return reviewer, rows


@pytest.mark.parametrize("output_id", ["O00000", "O00020", "O00100"])
def test_model_text_never_becomes_a_formula(blinded: Study, output_id: str) -> None:
    reviewer, rows = _cells(blinded, output_id)
    text_cell, core_cell = rows[0][1], rows[0][2]
    for cell in (text_cell, core_cell):
        assert cell.data_type == "s" and cell.quotePrefix  # stored as text, shown as text
    assert text_cell.value.startswith(SPECIAL[output_id][:1])
    # the raw sheet XML holds no formula element at all
    with zipfile.ZipFile(packet(blinded, reviewer)) as archive:
        sheets = [n for n in archive.namelist() if n.startswith("xl/worksheets/")]
        assert not any("<f>" in archive.read(n).decode() for n in sheets)
    header, body = _csv(blinded.packets_dir / reviewer / "items.csv")
    item_id = rows[0][0].value
    row = next(r for r in body if r[header.index("item_id")] == item_id)
    assert row[header.index("text")].startswith("'")
    assert row[header.index("core_combination")] == "'+Combines one idea with another."


def test_control_characters_are_visible_not_dropped(blinded: Study) -> None:
    _, rows = _cells(blinded, "O00020")
    assert "bell \ufffd character" in rows[0][1].value


def test_long_text_continues_on_marked_rows(blinded: Study) -> None:
    reviewer, rows = _cells(blinded, "O00010")
    item_id = rows[0][0].value
    assert [r[0].value for r in rows] == [
        item_id,
        f"{item_id} (continued 2/3)",
        f"{item_id} (continued 3/3)",
    ]
    parts = [r[1].value for r in rows]
    assert all(len(p) <= 32_767 for p in parts)
    assert parts[0].endswith("[continues in part 2/3 below]")
    assert parts[1].startswith("[part 2/3] ")
    body = "".join(
        re.sub(r"^\[part \d/3\] | \[continues in part \d/3 below\]$", "", p) for p in parts
    )
    assert body == LONG_TEXT
    assert all(r[c].protection.locked for r in rows[1:] for c in range(7))
    header, csv_rows = _csv(blinded.packets_dir / reviewer / "items.csv")
    labels = [r[header.index("item_id")] for r in csv_rows]
    assert f"{item_id} (continued 3/3)" in labels


def _csv(path: Path) -> tuple[list[str], list[list[str]]]:
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"\r\n" in data  # BOM, CRLF: Excel reads UTF-8
    with open(path, encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def test_csv_pair(blinded: Study) -> None:
    header, rows = _csv(blinded.packets_dir / "cat" / "items.csv")
    assert header == [
        "study_id",
        "reviewer_id",
        "item_id",
        "text",
        "core_combination",
        "verdict",
        "confidence",
        "prior_work",
        "notes",
    ]
    assert {(r[0], r[1]) for r in rows} == {(blinded.study_id, "cat")}
    header, rows = _csv(blinded.packets_dir / "cat" / "searches.csv")
    assert header[:3] == ["item_id", "database", "query"] and rows == []


def test_no_blinded_information_in_any_packet_file(blinded: Study) -> None:
    """Raw bytes of every part of every file: no topic id, prompt, condition or model name."""
    forbidden = [r[0] for r in blinded.rows("SELECT topic_id FROM topics")]
    forbidden += [r[0] for r in blinded.rows("SELECT text FROM prompts")]
    forbidden += [r[0] for r in blinded.rows("SELECT prompt_id FROM prompts")]
    forbidden += [r[0] for r in blinded.rows("SELECT output_id FROM outputs")]
    forbidden += ["single_a", "single_b", "cross", "condition", MODEL, "scripted-1"]
    for path in blinded.packets_dir.rglob("*"):
        if path.is_dir():
            continue
        if path.suffix == ".xlsx":
            with zipfile.ZipFile(path) as archive:
                texts = [archive.read(n).decode("utf-8") for n in archive.namelist()]
        else:
            texts = [path.read_text(encoding="utf-8-sig")]
        for text in texts:
            lowered = text.lower()
            for term in forbidden:
                assert not re.search(rf"(?<![\w-]){re.escape(term.lower())}(?![\w-])", lowered), (
                    path.name,
                    term,
                )


def test_markdown_becomes_one_paragraph_per_cell() -> None:
    from harness.judge.packets.packet_write import paragraphs

    text = (
        "# Title\n\nA paragraph broken\nacross **two** lines.\n\n- first `item`\n  continued\n"
        "- second\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    )
    assert paragraphs(text) == [
        (1, "Title"),
        (0, "A paragraph broken across two lines."),
        (0, "- first item continued"),
        (0, "- second"),
        (0, "a  |  b"),
        (0, "1  |  2"),
    ]
