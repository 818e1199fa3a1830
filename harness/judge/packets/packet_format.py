"""The reviewer packet format, shared by export and import: sheets, columns, markers, safe text."""

from __future__ import annotations

import re
from dataclasses import dataclass

FORMAT = "harness-reviewer-packet"
FORMAT_VERSION = "1"

INSTRUCTIONS_SHEET, ITEMS_SHEET, SEARCHES_SHEET = "Instructions", "Items", "Searches"
LISTS_SHEET, META_SHEET = "Lists", "Meta"

ITEMS_CSV, SEARCHES_CSV, INSTRUCTIONS_TXT = "items.csv", "searches.csv", "instructions.md"

VERDICTS = ("published", "not_published", "unsure")
CONFIDENCE = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class Column:
    key: str  # CSV header and internal name
    title: str  # header on the xlsx sheet
    width: float
    editable: bool


ITEM_COLUMNS = (
    Column("item_id", "Item id", 15, False),
    Column("text", "Text", 70, False),
    Column("core_combination", "Core combination", 40, False),
    Column("verdict", "Verdict", 16, True),
    Column("confidence", "Confidence (1-5)", 12, True),
    Column("prior_work", "Prior work (DOI or URL)", 34, True),
    Column("notes", "Notes", 40, True),
)
SEARCH_COLUMNS = (
    Column("item_id", "Item id", 15, True),
    Column("database", "Database", 20, True),
    Column("query", "Query as run", 50, True),
    Column("filters", "Filters and limits", 24, True),
    Column("date", "Date (YYYY-MM-DD)", 14, True),
    Column("total_hits", "Total hits", 11, True),
    Column("relevant_ids", "Relevant hit ids (DOI or URL; separated by ;)", 40, True),
)
#: The CSV of items carries the packet's identity on every row (a CSV has no hidden sheet).
CSV_ID_COLUMNS = ("study_id", "reviewer_id")

_CONTINUED = re.compile(r"^\s*(I-[A-Z2-7]+)\s+\(continued (\d+)/(\d+)\)\s*$")
# What XML 1.0 (so xlsx) cannot carry: C0 controls other than tab/newline/CR, lone surrogates and
# the non-characters U+FFFE / U+FFFF.
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def continued_label(item_id: str, part: int, total: int) -> str:
    return f"{item_id} (continued {part}/{total})"


def parse_continued(value: str) -> str | None:
    """Item id of a continuation row's label, else None."""
    match = _CONTINUED.match(value)
    return match.group(1) if match else None


def clean_text(text: str) -> str:
    """Characters a spreadsheet cannot hold become U+FFFD, visibly, not dropped; line breaks
    become "\n" (an XML reader turns a raw carriage return into one anyway, so a packet shows the
    same text whichever program reads it)."""
    return _ILLEGAL.sub("\ufffd", text).replace("\r\n", "\n").replace("\r", "\n")


def needs_quote(text: str) -> bool:
    """True when a spreadsheet program could read the text as a formula."""
    return text.startswith(_FORMULA_START)


def csv_safe(text: str) -> str:
    """CSV cell text that no spreadsheet program turns into a formula: a leading `'`."""
    text = clean_text(text)
    return "'" + text if needs_quote(text) else text


def split_text(text: str, size: int) -> list[str]:
    """Chunks of at most `size` characters, each marked so that a reader sees the split."""
    if len(text) <= size:
        return [text]
    body = [text[i : i + size] for i in range(0, len(text), size)]
    n = len(body)
    return [
        (f"[part {k + 1}/{n}] " if k else "")
        + chunk
        + (f" [continues in part {k + 2}/{n} below]" if k + 1 < n else "")
        for k, chunk in enumerate(body)
    ]
