"""Reading returned packets: a workbook, or a CSV pair, into plain tables with cell positions.

Nothing is judged here beyond the file's shape (sheets, headers, encoding); `sheets_in` checks
the content. Every problem keeps the sheet, row and column a reviewer would look at.
"""

from __future__ import annotations

import csv
import hashlib
import io
import zipfile
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from harness.judge.packets import packet_format as F
from harness.judge.packets import packet_limits as L


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a returned file, where a reviewer would look for it."""

    file: str
    message: str
    sheet: str | None = None
    row: int | None = None
    column: str | None = None

    def __str__(self) -> str:
        place = [
            p
            for p in (
                f"sheet {self.sheet}" if self.sheet else "",
                f"row {self.row}" if self.row is not None else "",
                f"column {self.column}" if self.column else "",
            )
            if p
        ]
        return (
            f"{self.file}: {', '.join(place)}: {self.message}"
            if place
            else f"{self.file}: {self.message}"
        )


#: A cell's value as read: text from a CSV file; from a workbook also numbers, booleans, dates
#: and times (openpyxl's values); None when empty.
Cell = str | int | float | bool | datetime | date | time | timedelta | None


@dataclass
class Row:
    number: int  # as a spreadsheet shows it: header is row 1
    values: dict[str, Cell]


@dataclass
class Table:
    sheet: str
    labels: dict[str, str]  # key -> column label for messages, e.g. "D (Verdict)"
    rows: list[Row] = field(default_factory=list)

    def where(self, key: str) -> str:
        return self.labels.get(key, key)


@dataclass
class Source:
    """One returned packet: an .xlsx file, or items.csv with its searches.csv."""

    kind: str  # 'xlsx' or 'csv'
    name: str
    paths: list[Path]
    sha256: str
    meta: dict[str, str] = field(default_factory=dict)
    items: Table | None = None
    searches: Table | None = None
    problems: list[Problem] = field(default_factory=list)

    def problem(
        self,
        message: str,
        table: Table | None = None,
        row: int | None = None,
        key: str | None = None,
    ) -> None:
        self.problems.append(
            Problem(
                self.name,
                message,
                table.sheet if table else None,
                row,
                table.where(key) if table and key else key,
            )
        )


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _norm(header: Any) -> str:
    return " ".join(str(header or "").split()).casefold()


def _header_map(headers: list[Any], columns: tuple[F.Column, ...]) -> dict[str, int]:
    """Column key -> index, matching titles or keys, ignoring case and spacing."""
    wanted = {}
    for column in columns:
        wanted[_norm(column.title)] = column.key
        wanted[_norm(column.key)] = column.key
    wanted.update({_norm(k): k for k in F.CSV_ID_COLUMNS})
    found: dict[str, int] = {}
    for index, header in enumerate(headers):
        key = wanted.get(_norm(header))
        if key is not None and key not in found:
            found[key] = index
    return found


# -- xlsx -----------------------------------------------------------------------------------------
def read_xlsx(path: Path) -> Source:
    from openpyxl import load_workbook
    from openpyxl.utils.exceptions import InvalidFileException

    source = Source("xlsx", path.name, [path], file_sha256(path))
    oversized = _oversized_archive(path)
    if oversized:
        source.problem(oversized)
        return source
    try:
        wb = load_workbook(path, read_only=True, data_only=False)
    except (InvalidFileException, zipfile.BadZipFile, OSError, KeyError, ValueError) as error:
        source.problem(f"not a readable .xlsx workbook ({error.__class__.__name__})")
        return source
    try:
        _read_sheets(source, wb)
    except Exception as error:  # damaged XML inside a valid zip: lxml, ElementTree, zipfile ...
        source.problem(
            f"the workbook is damaged and cannot be read ({error.__class__.__name__}); "
            "save it again from the spreadsheet program, or return the packet's CSVs"
        )
    finally:
        wb.close()
    return source


def _oversized_archive(path: Path) -> str | None:
    """Why the file is too large to read safely, judged from the zip directory without inflating.

    zipfile never inflates a member beyond the size its directory declares, so bounding the
    declared sizes bounds memory, zip bombs included.
    """

    if path.stat().st_size > L.MAX_FILE_BYTES:
        return (
            f"the file is {path.stat().st_size / 1e6:.0f} MB; a reviewer packet is far "
            f"smaller (limit {L.MAX_FILE_BYTES / 1e6:.0f} MB)"
        )
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError):
        return None  # load_workbook reports it
    total = sum(m.file_size for m in members)
    biggest = max(members, key=lambda m: m.file_size, default=None)
    if biggest is not None and biggest.file_size > L.MAX_PART_BYTES:
        return (
            f"part {biggest.filename!r} would inflate to {biggest.file_size / 1e6:.0f} MB "
            f"(limit {L.MAX_PART_BYTES / 1e6:.0f} MB): not a reviewer packet"
        )
    if total > L.MAX_INFLATED_BYTES:
        return (
            f"the workbook would inflate to {total / 1e6:.0f} MB (limit "
            f"{L.MAX_INFLATED_BYTES / 1e6:.0f} MB): not a reviewer packet"
        )
    return None


def _read_sheets(source: Source, wb: Any) -> None:
    names = wb.sheetnames
    if F.META_SHEET not in names:
        source.problem(
            "not a reviewer packet of this harness (its hidden Meta sheet is "
            "missing); return the workbook you received"
        )
        return
    source.meta = {
        str(r[0]).strip(): "" if r[1] is None else str(r[1]).strip()
        for r in wb[F.META_SHEET].iter_rows(values_only=True)
        if r and r[0]
    }
    for sheet, columns, attr in (
        (F.ITEMS_SHEET, F.ITEM_COLUMNS, "items"),
        (F.SEARCHES_SHEET, F.SEARCH_COLUMNS, "searches"),
    ):
        if sheet not in names:
            source.problem(f"sheet {sheet!r} is missing")
            continue
        setattr(source, attr, _sheet_table(source, wb[sheet], sheet, columns))


def _sheet_table(source: Source, ws: Any, sheet: str, columns: tuple[F.Column, ...]) -> Table:
    from openpyxl.utils import get_column_letter

    if hasattr(ws, "reset_dimensions"):  # some writers record a wrong sheet size
        ws.reset_dimensions()
    rows = ws.iter_rows()
    header = next(rows, ())
    index = _header_map([c.value for c in header], columns)
    labels = {
        c.key: f"{get_column_letter(index[c.key] + 1)} ({c.title})" if c.key in index else c.title
        for c in columns
    }
    table = Table(sheet, labels)
    _require_columns(source, table, index, columns)
    editable = {c.key for c in columns if c.editable}
    for number, cells in enumerate(rows, start=2):
        values: dict[str, Cell] = {}
        for key, col in index.items():
            cell = cells[col] if col < len(cells) else None
            value = getattr(cell, "value", None)
            if getattr(cell, "data_type", None) == "f" and key in editable:
                source.problem("holds a formula; type the value itself", table, number, key)
                value = None
            values[key] = value
        table.rows.append(Row(number, values))
    return table


def _require_columns(
    source: Source, table: Table, index: dict[str, int], columns: tuple[F.Column, ...]
) -> None:
    needed = [c for c in columns if c.editable or c.key == "item_id"]
    for column in needed:
        if column.key not in index:
            source.problem(f"column {column.title!r} is missing from the header row", table, 1)


# -- CSV ------------------------------------------------------------------------------------------
def csv_kind(path: Path) -> str | None:
    """'items' or 'searches' by the header row, None when neither."""
    try:
        header = _decode(path.read_bytes()).splitlines()[0]
    except (UnicodeDecodeError, IndexError, OSError):
        return None
    fields = {_norm(f) for f in next(csv.reader([header], delimiter=_delimiter(header)), [])}
    if {"verdict", "item_id"} <= fields or {"verdict", "item id"} <= fields:
        return "items"
    if "query" in fields or "query as run" in fields:
        return "searches"
    return None


def _decode(data: bytes) -> str:
    return data.decode("utf-8-sig")  # Excel's "CSV UTF-8" starts with a byte-order mark


def _delimiter(header_line: str) -> str:
    """Comma, or the semicolon / tab some locales of LibreOffice and Excel write."""
    counts = {d: header_line.count(d) for d in (",", ";", "\t")}
    return max(counts, key=lambda d: counts[d]) if any(counts.values()) else ","


def read_csv_pair(items_path: Path, searches_path: Path | None) -> Source:
    paths = [items_path] + ([searches_path] if searches_path else [])
    digest = hashlib.sha256("".join(file_sha256(p) for p in paths).encode()).hexdigest()
    name = " + ".join(p.name for p in paths)
    source = Source("csv", name, paths, digest)
    source.items = _csv_table(source, items_path, F.ITEM_COLUMNS)
    if searches_path is None:
        source.problem("no searches CSV given: import items.csv together with its searches.csv")
    else:
        source.searches = _csv_table(source, searches_path, F.SEARCH_COLUMNS)
    if source.items is not None:
        _csv_identity(source, source.items)
    return source


def _csv_table(source: Source, path: Path, columns: tuple[F.Column, ...]) -> Table | None:
    try:
        if path.stat().st_size > L.MAX_FILE_BYTES:
            source.problem(
                f"{path.name} is {path.stat().st_size / 1e6:.0f} MB; a reviewer "
                f"packet is far smaller (limit {L.MAX_FILE_BYTES / 1e6:.0f} MB)"
            )
            return None
        text = _decode(path.read_bytes())
    except UnicodeDecodeError:
        source.problem(f'{path.name} is not UTF-8 text; save it as "CSV UTF-8"')
        return None
    except OSError as error:
        source.problem(f"cannot read {path.name} ({error.strerror})")
        return None
    lines = text.splitlines()
    delimiter = _delimiter(lines[0]) if lines else ","
    try:
        records = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as error:  # e.g. a field over the csv module's limit (131,072 characters)
        source.problem(f"{path.name} cannot be read as CSV ({error})")
        return None
    header = records[0] if records else []
    index = _header_map(header, columns)
    table = Table(path.name, {c.key: c.key for c in columns} | {k: k for k in F.CSV_ID_COLUMNS})
    _require_columns(source, table, index, columns)
    if columns is F.ITEM_COLUMNS:
        for key in F.CSV_ID_COLUMNS:
            if key not in index:
                source.problem(
                    f"column {key!r} is missing from the header row (return the "
                    "packet's items.csv, or the .xlsx workbook)",
                    table,
                    1,
                )
    for number, record in enumerate(records[1:], start=2):
        values: dict[str, Cell] = {
            key: (record[col] if col < len(record) else "") for key, col in index.items()
        }
        table.rows.append(Row(number, values))
    return table


def _csv_identity(source: Source, table: Table) -> None:
    """The packet's study and reviewer, from the id columns on every row of items.csv."""
    rows = [r for r in table.rows if any(r.values.values())]
    if not rows or any(k not in rows[0].values for k in F.CSV_ID_COLUMNS):
        return  # no identity: the missing columns are reported, nothing more can be checked
    ids = {tuple(str(r.values[k] or "").strip() for k in F.CSV_ID_COLUMNS) for r in rows}
    if len(ids) > 1:
        source.problem(
            "rows name different study_id / reviewer_id values; one file per reviewer",
            table,
            None,
            "study_id",
        )
    study_id, reviewer_id = sorted(ids)[0]
    if not (study_id and reviewer_id):
        source.problem(
            "study_id or reviewer_id is blank; keep these columns as they came in the packet",
            table,
            None,
            "study_id",
        )
        return
    source.meta = {
        "format": F.FORMAT,
        "format_version": F.FORMAT_VERSION,
        "study_id": study_id,
        "reviewer_id": reviewer_id,
    }
