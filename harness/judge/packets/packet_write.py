"""Reviewer packets: one workbook and one CSV pair per human reviewer, in `packets/<reviewer>/`.

A packet holds only what reviewers may see: random item ids, the displayed text, the core
combination, and the instructions from `judging/`. Model text is untrusted: it never becomes a
formula, illegal characters show as U+FFFD, and text longer than a cell holds continues on
further rows that say so.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO, cast

from harness.defaults import materials_dir
from harness.errors import HarnessError
from harness.judge.judge_defaults import (
    CHUNK_CHARS,
    DATABASES,
    JUDGING_FILES,
    SEARCH_ROWS_MIN,
    SEARCH_ROWS_PER_ITEM,
)
from harness.judge.packets import packet_format as F
from harness.study.store import Study
from harness.study.tables.assignments import assigned_items, reviewer_rounds

if TYPE_CHECKING:
    from _csv import Writer

    from openpyxl.cell.cell import Cell, MergedCell
    from openpyxl.styles import Alignment, Protection
    from openpyxl.worksheet.worksheet import Worksheet

EXCEL_1990 = 32874  # Excel serial number of 1990-01-01: earliest accepted search date


@dataclass(frozen=True)
class PacketRow:
    """One row of the Items sheet: an item's first row or one of its continuation rows."""

    label: str
    text: str
    core: str
    first: bool


@dataclass(frozen=True)
class Packet:
    study_id: str
    reviewer_id: str
    made_at: str
    cutoff: str | None
    items: list[tuple[str, str, str]]  # (item_id, display_text, core_combination), in order
    round_: int = 1  # 2, 3, ...: the items of a later adjudication round, in a packet of their own

    @property
    def name(self) -> str:
        """The file stem: the reviewer, and the round after the first."""
        return self.reviewer_id if self.round_ == 1 else f"{self.reviewer_id}-round-{self.round_}"

    def rows(self) -> list[PacketRow]:
        out = []
        for item_id, text, core in self.items:
            texts = F.split_text(F.clean_text(text), CHUNK_CHARS)
            cores = F.split_text(F.clean_text(core), CHUNK_CHARS)
            n = max(len(texts), len(cores))
            for part in range(n):
                label = item_id if part == 0 else F.continued_label(item_id, part + 1, n)
                out.append(
                    PacketRow(
                        label,
                        texts[part] if part < len(texts) else "",
                        cores[part] if part < len(cores) else "",
                        part == 0,
                    )
                )
        return out

    @property
    def meta(self) -> dict[str, str]:
        return {
            "format": F.FORMAT,
            "format_version": F.FORMAT_VERSION,
            "study_id": self.study_id,
            "reviewer_id": self.reviewer_id,
            "made_at": self.made_at,
            "n_items": str(len(self.items)),
            "round": str(self.round_),
        }


def load_packets(
    study: Study, made_at: str, cutoff: str | None = None, round_: int | None = None
) -> list[Packet]:
    """The packet of every human reviewer with assignments, one per round (or of `round_`
    only), items in assigned order."""
    packets = []
    for reviewer_id, r in reviewer_rounds(study):
        if round_ is not None and r != round_:
            continue
        items = [
            (a.item_id, a.display_text, a.core_combination or "")
            for a in assigned_items(study, reviewer_id, r)
        ]
        packets.append(Packet(study.study_id, reviewer_id, made_at, cutoff, items, r))
    return packets


def write_packets(
    study: Study,
    *,
    made_at: str,
    cutoff: str | None = None,
    judging_dir: Path | None = None,
    round_: int | None = None,
) -> list[Path]:
    """Write `packets/<reviewer>/` (xlsx, CSV pair, instructions) for every human reviewer, a
    later round's in `packets/<reviewer>/round-<r>/` (`round_`: that round's only)."""
    judging = judging_dir or materials_dir("judging")
    for name in JUDGING_FILES:
        if not (judging / name).is_file():
            raise HarnessError("reviewer instructions file missing", file=judging / name)
    texts = [(name, (judging / name).read_text(encoding="utf-8")) for name in JUDGING_FILES]
    written = []
    for packet in load_packets(study, made_at, cutoff, round_):
        folder = study.packets_dir / packet.reviewer_id
        if packet.round_ > 1:
            folder = folder / f"round-{packet.round_}"
        folder.mkdir(parents=True, exist_ok=True)
        header = _header_lines(packet)
        written.append(
            _atomic(
                folder / f"{packet.name}.xlsx",
                partial(write_workbook, packet, header, texts),
            )
        )
        written.append(_atomic(folder / F.ITEMS_CSV, partial(_items_csv, packet)))
        written.append(_atomic(folder / F.SEARCHES_CSV, _searches_csv))
        body = "\n".join(header) + "\n\n" + "\n\n".join(t for _, t in texts)
        written.append(_atomic(folder / F.INSTRUCTIONS_TXT, partial(_write_text, body)))
    return written


def _header_lines(packet: Packet) -> list[str]:
    cutoff = packet.cutoff or "none: every work available on the day you search counts"
    again = f" (packet {packet.round_})"
    return [
        f"Reviewer packet for {packet.reviewer_id}: {len(packet.items)} items"
        + (again if packet.round_ > 1 else ""),
        f"Cut-off date: {cutoff}",
        f"Packet made {packet.made_at}; study {packet.study_id}",
    ]


def _write_text(text: str, path: Path) -> None:
    path.write_text(text, encoding="utf-8")


def _atomic(path: Path, write: Callable[[Path], None]) -> Path:
    tmp = path.with_name(path.name + ".tmp")
    write(tmp)
    os.replace(tmp, path)
    return path


# -- CSV ------------------------------------------------------------------------------------------
def _csv_writer(handle: TextIO) -> Writer:
    return csv.writer(handle, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)


def _items_csv(packet: Packet, path: Path) -> None:
    with open(path, "w", encoding="utf-8-sig", newline="") as handle:
        writer = _csv_writer(handle)
        writer.writerow([*F.CSV_ID_COLUMNS, *(c.key for c in F.ITEM_COLUMNS)])
        for row in packet.rows():
            writer.writerow(
                [
                    packet.study_id,
                    packet.reviewer_id,
                    row.label,
                    F.csv_safe(row.text),
                    F.csv_safe(row.core),
                    "",
                    "",
                    "",
                    "",
                ]
            )


def _searches_csv(path: Path) -> None:
    with open(path, "w", encoding="utf-8-sig", newline="") as handle:
        _csv_writer(handle).writerow([c.key for c in F.SEARCH_COLUMNS])


# -- workbook -------------------------------------------------------------------------------------
def write_workbook(
    packet: Packet, header: list[str], texts: list[tuple[str, str]], path: Path
) -> None:
    from openpyxl import Workbook
    from openpyxl.workbook.protection import WorkbookProtection

    wb = Workbook()
    _instructions(cast("Worksheet", wb.active), header, texts)
    items_ws = wb.create_sheet(F.ITEMS_SHEET)
    searches_ws = wb.create_sheet(F.SEARCHES_SHEET)
    lists_ws = wb.create_sheet(F.LISTS_SHEET)
    meta_ws = wb.create_sheet(F.META_SHEET)
    n_ids = _lists(lists_ws, [i for i, _, _ in packet.items])
    _items(items_ws, packet.rows())
    _searches(searches_ws, n_ids, max(SEARCH_ROWS_MIN, SEARCH_ROWS_PER_ITEM * len(packet.items)))
    for key, value in packet.meta.items():
        meta_ws.append([key, value])
    lists_ws.sheet_state = "hidden"
    meta_ws.sheet_state = "veryHidden"
    for ws in (lists_ws, meta_ws):
        _protect(ws)
    wb.security = WorkbookProtection(lockStructure=True)  # sheets cannot be renamed or removed
    wb.save(path)


def put(
    ws: Worksheet, row: int, col: int, value: str | int | None, *, editable: bool = False
) -> Cell | MergedCell:
    """Write one cell; strings are always stored as text (never as a formula)."""
    wrapped, unlocked = _cell_styles()
    cell = ws.cell(row=row, column=col)
    if isinstance(value, str):
        value = F.clean_text(value)
        cell.value = value
        cell.data_type = "s"
        if F.needs_quote(value):
            cell.quotePrefix = True
    else:
        cell.value = value
    cell.alignment = wrapped
    if editable:
        cell.protection = unlocked
    return cell


@cache
def _cell_styles() -> tuple[Alignment, Protection]:
    """Every cell's wrapped, top-aligned text and an answer cell's unlocked state, made once: a
    workbook keeps a cell's style by value, so cells share them (a packet has thousands)."""
    from openpyxl.styles import Alignment, Protection

    return Alignment(wrap_text=True, vertical="top"), Protection(locked=False)


def _protect(ws: Worksheet) -> None:
    """Protect a sheet (no password: this guards against slips, not against the reviewer)."""
    p = ws.protection
    p.sheet = True
    p.formatColumns = p.formatRows = p.formatCells = False  # allowed: resizing, colours
    p.selectLockedCells = p.selectUnlockedCells = False


def _headers(ws: Worksheet, columns: tuple[F.Column, ...]) -> None:
    from openpyxl.styles import Font, PatternFill
    from openpyxl.utils import get_column_letter

    for col, column in enumerate(columns, start=1):
        cell = put(ws, 1, col, column.title)
        cell.font = Font(bold=True)
        cell.fill = PatternFill("solid", fgColor="DDEBF7" if column.editable else "EEEEEE")
        ws.column_dimensions[get_column_letter(col)].width = column.width
    ws.freeze_panes = "A2"


def _instructions(ws: Worksheet, header: list[str], texts: list[tuple[str, str]]) -> None:
    from openpyxl.styles import Font

    ws.title = F.INSTRUCTIONS_SHEET
    ws.column_dimensions["A"].width = 120
    row = 1
    for line in header:
        put(ws, row, 1, line).font = Font(bold=True)
        row += 1
    for _, text in texts:
        row += 1
        for level, paragraph in paragraphs(text):
            cell = put(ws, row, 1, paragraph)
            if level:
                cell.font = Font(bold=True, size=14 if level == 1 else 12)
                row += 1
            row += 1
    _protect(ws)


_LIST_ITEM = re.compile(r"^\s*(?:[-*]|\d+\.)\s+")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")


def paragraphs(markdown: str) -> list[tuple[int, str]]:
    """Markdown as (heading level or 0, text) paragraphs for one cell each; hard line breaks
    inside a paragraph or list item are joined, emphasis marks dropped, table rows kept apart."""
    out: list[tuple[int, str]] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            out.append((0, " ".join(current)))
            current.clear()

    for raw in markdown.splitlines():
        line = re.sub(r"\*\*|`", "", raw).rstrip()
        if not line.strip() or _TABLE_RULE.match(line):
            flush()
        elif line.startswith("#"):
            flush()
            out.append((len(line) - len(line.lstrip("#")), line.lstrip("#").strip()))
        elif line.lstrip().startswith("|"):
            flush()
            out.append((0, "  |  ".join(c.strip() for c in line.strip().strip("|").split("|"))))
        elif _LIST_ITEM.match(line):
            flush()
            current.append(line.strip())
        else:
            current.append(line.strip())
    flush()
    return out


def _lists(ws: Worksheet, item_ids: list[str]) -> int:
    """Hidden sheet with the drop-down values: item ids, verdicts, confidence, databases."""
    lists: list[tuple[str, Sequence[str | int]]] = [
        ("item_id", item_ids),
        ("verdict", F.VERDICTS),
        ("confidence", F.CONFIDENCE),
        ("database", DATABASES),
    ]
    for col, (title, values) in enumerate(lists, start=1):
        put(ws, 1, col, title)
        for row, value in enumerate(values, start=2):
            put(ws, row, col, value)
    return len(item_ids)


def _validation(
    ws: Worksheet,
    kind: Literal["list", "whole", "date"],
    formula: str,
    cells: str,
    *,
    prompt: str,
    strict: bool = True,
    **extra: Any,
) -> None:
    from openpyxl.worksheet.datavalidation import DataValidation

    dv = DataValidation(
        type=kind,
        formula1=formula,
        allow_blank=True,
        showDropDown=False,
        showErrorMessage=True,
        errorStyle="stop" if strict else "warning",
        error=prompt,
        promptTitle=None,
        prompt=prompt,
        showInputMessage=True,
        **extra,
    )
    dv.add(cells)
    ws.add_data_validation(dv)


def _items(ws: Worksheet, rows: list[PacketRow]) -> None:
    _headers(ws, F.ITEM_COLUMNS)
    first_rows = []
    for r, row in enumerate(rows, start=2):
        for col, value in enumerate((row.label, row.text, row.core), start=1):
            put(ws, r, col, value)
        for col in range(4, len(F.ITEM_COLUMNS) + 1):
            put(ws, r, col, None, editable=row.first)  # continuation rows take no answers
        if row.first:
            first_rows.append(r)
    last = len(rows) + 1
    if rows:
        verdicts = f"{F.LISTS_SHEET}!$B$2:$B${len(F.VERDICTS) + 1}"
        scores = f"{F.LISTS_SHEET}!$C$2:$C${len(F.CONFIDENCE) + 1}"
        _validation(
            ws, "list", verdicts, f"D2:D{last}", prompt="published, not_published or unsure"
        )
        _validation(ws, "list", scores, f"E2:E{last}", prompt="1 (a guess) to 5 (certain)")
    _protect(ws)


def _searches(ws: Worksheet, n_ids: int, n_rows: int) -> None:
    _headers(ws, F.SEARCH_COLUMNS)
    for r in range(2, n_rows + 2):
        for col in range(1, len(F.SEARCH_COLUMNS) + 1):
            cell = put(ws, r, col, None, editable=True)
            if col == 5:
                cell.number_format = "yyyy-mm-dd"
    last = n_rows + 1
    if n_ids:
        _validation(
            ws,
            "list",
            f"{F.LISTS_SHEET}!$A$2:$A${n_ids + 1}",
            f"A2:A{last}",
            prompt="pick the item this query was run for",
        )
    _validation(
        ws,
        "list",
        f"{F.LISTS_SHEET}!$D$2:$D${len(DATABASES) + 1}",
        f"B2:B{last}",
        prompt="database searched (pick or type another)",
        strict=False,
    )
    _validation(
        ws,
        "date",
        str(EXCEL_1990),
        f"E2:E{last}",
        prompt="date of the search, YYYY-MM-DD",
        operator="greaterThanOrEqual",
    )
    _validation(
        ws,
        "whole",
        "0",
        f"F2:F{last}",
        prompt="number of results the database reported",
        operator="greaterThanOrEqual",
    )
    _protect(ws)
    ws.protection.insertRows = False  # reviewers may add rows for more queries
    ws.protection.deleteRows = False
