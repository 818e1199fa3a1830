"""Checking one returned packet against the study, the codebook and the search protocol.

`check_source` turns a read packet (`harness.judge.packets.packet_read.Source`) into the reviews and search
records it holds, adding every problem it finds to the source; `harness.judge.packets.packet_import` stores
them only when no file of an import has a problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING

from harness.judge.packets import packet_format as F
from harness.study.manifest import read_manifest
from harness.study.tables.assignments import assigned_item_ids, assignment_rounds
from harness.study.tables.items import item_ids
from harness.study.tables.reviewers import reviewer_kind

if TYPE_CHECKING:
    from harness.judge.packets.packet_read import Cell, Source, Table
    from harness.study.store import Study

_DOI = re.compile(r"^(?:doi:|https?://(?:dx\.)?doi\.org/)?10\.\d{4,9}/\S+$", re.I)
_URL = re.compile(r"^https?://[^\s/$.?#][^\s]*$", re.I)
_OTHER_ID = re.compile(r"^(?:arxiv:\S+|pmid:\d+|pmcid:pmc\d+)$", re.I)
_ISO_DATE = re.compile(
    r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
    r"(?:Z|[+-]\d{2}:?\d{2})?)?$"
)
_SERIAL = re.compile(r"^\d{5}(?:\.\d+)?$")
_COUNT = re.compile(r"^\d{1,3}(?:[, ]\d{3})+$|^\d+$")


@dataclass
class Review:
    item_id: str
    verdict: str
    confidence: int | None
    prior_work: str | None
    notes: str | None


@dataclass
class Search:
    item_id: str
    database: str
    query: str
    filters: str | None
    run_at: str
    total_hits: int
    relevant_ids: list[str]


@dataclass
class Checked:
    source: Source
    reviewer_id: str
    reviews: list[Review]
    searches: list[Search]
    early: list[int] = field(default_factory=list)  # search rows dated before the packet
    round_: int = 1  # the packet's round (one import per reviewer and round in force)

    @property
    def listed(self) -> int:
        """The assigned items the file lists."""
        return len(self.reviews)

    @property
    def unfilled(self) -> bool:
        """No listed item has a verdict: the packet as sent, most likely."""
        return bool(self.reviews) and not any(r.verdict for r in self.reviews)


def check_source(study: Study, source: Source) -> Checked | None:
    """Check one source against the study; problems are added to `source.problems`."""

    meta = source.meta
    if not meta:
        return None
    if meta.get("format", F.FORMAT) != F.FORMAT or meta.get("format_version") != F.FORMAT_VERSION:
        source.problem(
            f"packet format {meta.get('format')} {meta.get('format_version')} is not "
            f"{F.FORMAT} {F.FORMAT_VERSION}"
        )
        return None
    if meta.get("study_id") != study.study_id:
        source.problem(
            f"this file belongs to another study (study id {meta.get('study_id')!r}; "
            f"this study is {study.study_id!r})",
            source.items,
            None,
            "study_id" if source.kind == "csv" else None,
        )
        return None
    reviewer_id = meta.get("reviewer_id", "")
    kind = reviewer_kind(study, reviewer_id)
    if kind is None:
        source.problem(f"reviewer {reviewer_id!r} is not on this study's roster")
        return None
    if kind != "human":
        source.problem(
            f"reviewer {reviewer_id!r} is automated; its reviews come from `harness judge --auto`"
        )
        return None
    if source.items is None or source.searches is None:
        return None
    round_ = _round(study, source, reviewer_id)
    if round_ is None:
        return None
    assigned = assigned_item_ids(study, reviewer_id, round_)
    known = item_ids(study)
    reviews = _check_items(source, source.items, assigned, known, reviewer_id)
    made = _made_day(study, meta)
    searches, early = _check_searches(source, source.searches, assigned, known, reviewer_id, made)
    # a search row with its own problems still counts as recorded: one problem, not two
    searched = {_text(r.values.get("item_id")) for r in source.searches.rows}
    for item_id, (review, number) in reviews.items():
        if review.verdict and item_id not in searched:
            source.problem(
                f"item {item_id} has a verdict but no search recorded in {source.searches.sheet}",
                source.items,
                number,
                "verdict",
            )
    return Checked(source, reviewer_id, [r for r, _ in reviews.values()], searches, early, round_)


def _round(study: Study, source: Source, reviewer_id: str) -> int | None:
    """The packet's round, read off its items (a later adjudication round has a packet of its
    own); None, with a problem, when one file mixes the items of several rounds."""

    assert source.items is not None
    rounds = assignment_rounds(study, reviewer_id)
    listed = {_text(r.values.get("item_id")) for r in source.items.rows}
    found = sorted({rounds[i] for i in listed if i in rounds})
    if len(found) > 1:
        source.problem(
            f"the file holds items of rounds {', '.join(map(str, found))}; each round has a "
            "packet of its own: return each as it came"
        )
        return None
    return found[0] if found else 1


def _text(value: Cell) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def _item_id(
    source: Source,
    table: Table,
    number: int,
    raw: str,
    assigned: set[str],
    known: set[str],
    reviewer_id: str,
) -> bool:
    if raw in assigned:
        return True
    if raw in known:
        source.problem(
            f"item {raw} is not assigned to reviewer {reviewer_id}", table, number, "item_id"
        )
    else:
        source.problem(f"unknown item id {raw!r}", table, number, "item_id")
    return False


def _check_items(
    source: Source, table: Table, assigned: set[str], known: set[str], reviewer_id: str
) -> dict[str, tuple[Review, int]]:
    inputs = [c.key for c in F.ITEM_COLUMNS if c.editable]
    reviews: dict[str, tuple[Review, int]] = {}
    for row in table.rows:
        label = _text(row.values.get("item_id"))
        answers = {k: _text(row.values.get(k)) for k in inputs}
        if not label:
            if any(answers.values()):
                source.problem("answers on a row without an item id", table, row.number, "item_id")
            continue
        if F.parse_continued(label):
            if any(answers.values()):
                source.problem(
                    "answers belong on the item's first row, not a continuation row",
                    table,
                    row.number,
                    next(k for k in inputs if answers[k]),
                )
            continue
        if label in reviews:
            source.problem(
                f"duplicate row for item {label} (first on row {reviews[label][1]})",
                table,
                row.number,
                "item_id",
            )
            continue
        if not _item_id(source, table, row.number, label, assigned, known, reviewer_id):
            continue
        review = _review(source, table, row.number, label, answers)
        reviews[label] = (review, row.number)
    for missing in sorted(assigned - set(reviews)):
        source.problem(f"assigned item {missing} is missing from the sheet", table, None, "item_id")
    return reviews


def _review(
    source: Source, table: Table, number: int, item_id: str, answers: dict[str, str]
) -> Review:
    verdict = answers["verdict"].casefold().replace(" ", "_").replace("-", "_")
    if not verdict:
        source.problem(f"missing verdict for item {item_id}", table, number, "verdict")
    elif verdict not in F.VERDICTS:
        source.problem(
            f"verdict {answers['verdict']!r} is not one of {', '.join(F.VERDICTS)}",
            table,
            number,
            "verdict",
        )
        verdict = ""
    confidence = None
    if answers["confidence"]:
        try:
            confidence = int(float(answers["confidence"]))
            if confidence != float(answers["confidence"]) or confidence not in F.CONFIDENCE:
                raise ValueError
        except (ValueError, OverflowError):
            source.problem(
                f"confidence {answers['confidence']!r} is not a whole number from 1 to 5",
                table,
                number,
                "confidence",
            )
            confidence = None
    prior = answers["prior_work"]
    if verdict == "published" and not prior:
        source.problem(
            "a published verdict must cite the prior work (DOI or URL)", table, number, "prior_work"
        )
    for bad in bad_references(prior):
        source.problem(f"{bad!r} is not a DOI or URL", table, number, "prior_work")
    return Review(item_id, verdict, confidence, prior or None, answers["notes"] or None)


def references(text: str) -> list[str]:
    """DOIs, URLs and other ids in a cell, separated by `;`, spaces or new lines."""
    text = re.sub(r"(?i)\b(doi|arxiv|pmid|pmcid):\s+", r"\1:", text)
    return [t.rstrip(",.") for t in re.split(r"[;\s]+", text) if t.rstrip(",.")]


def bad_references(text: str) -> list[str]:
    return [
        t for t in references(text) if not (_DOI.match(t) or _URL.match(t) or _OTHER_ID.match(t))
    ]


def _made_day(study: Study, meta: dict[str, str]) -> str | None:
    """The day the packets were made (YYYY-MM-DD): the workbook's own record, else the study's
    blinding commitment (a CSV pair carries none); None when neither says."""

    blinding = read_manifest(study).blinding
    made = meta.get("made_at") or (blinding.made_at if blinding is not None else None)
    return str(made)[:10] if made else None


def _check_searches(
    source: Source,
    table: Table,
    assigned: set[str],
    known: set[str],
    reviewer_id: str,
    made: str | None = None,
) -> tuple[list[Search], list[int]]:
    """The valid searches, and the rows dated before the packet was made (`made`)."""

    searches: list[Search] = []
    early: list[int] = []
    seen: dict[tuple[str, ...], int] = {}
    now = datetime.now(UTC)
    for row in table.rows:
        v = row.values
        if all(_text(v.get(c.key)) == "" for c in F.SEARCH_COLUMNS):
            continue
        n = row.number
        item_id = _text(v.get("item_id"))
        ok = bool(item_id) and _item_id(source, table, n, item_id, assigned, known, reviewer_id)
        if not item_id:
            source.problem("which item was this query for? item id missing", table, n, "item_id")
        fields = {k: _text(v.get(k)) for k in ("database", "query", "filters", "relevant_ids")}
        for key, what in (("database", "database"), ("query", "query as run")):
            if not fields[key]:
                source.problem(f"{what} missing", table, n, key)
                ok = False
        run_at = parse_date(v.get("date"), now)
        if isinstance(run_at, str) and made is not None and run_at[:10] < made:
            early.append(n)  # kept as given, and said: a reviewer may have searched ahead
        if isinstance(run_at, Exception):
            source.problem(str(run_at), table, n, "date")
        hits = parse_count(v.get("total_hits"))
        if isinstance(hits, Exception):
            source.problem(str(hits), table, n, "total_hits")
        for bad in bad_references(fields["relevant_ids"]):
            source.problem(f"{bad!r} is not a DOI or URL", table, n, "relevant_ids")
        query_key = (
            item_id,
            fields["database"].casefold(),
            fields["query"],
            fields["filters"],
            run_at if isinstance(run_at, str) else "",
        )
        if query_key in seen:
            source.problem(f"duplicate of the query on row {seen[query_key]}", table, n, "query")
            continue
        seen[query_key] = n
        if ok and isinstance(run_at, str) and isinstance(hits, int):
            searches.append(
                Search(
                    item_id,
                    fields["database"],
                    fields["query"],
                    fields["filters"] or None,
                    run_at,
                    hits,
                    references(fields["relevant_ids"]),
                )
            )
    return searches, early


def parse_date(value: Cell, now: datetime) -> str | ValueError:
    """An Excel date or an ISO 8601 string -> ISO text (date, or UTC date-time); else the error."""
    parsed: date | datetime
    if value is None or _text(value) == "":
        return ValueError("date of the search missing (YYYY-MM-DD)")
    if isinstance(value, datetime | date):
        parsed = value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        from openpyxl.utils.datetime import from_excel

        if not 32874 <= value <= 2958465:
            return ValueError(f"{value!r} is not a date (use YYYY-MM-DD)")
        parsed = from_excel(value)
    else:
        text = _text(value)
        if _SERIAL.match(text):  # a date cell saved to CSV with a number format
            return ValueError(
                f"{text!r} is a spreadsheet's day number, not a date; format "
                "the cell as a date (YYYY-MM-DD) before saving"
            )
        if not _ISO_DATE.match(text):
            return ValueError(f"malformed date {text!r} (use YYYY-MM-DD)")
        try:
            parsed = datetime.fromisoformat(text) if len(text) > 10 else date.fromisoformat(text)
        except ValueError:
            return ValueError(f"malformed date {text!r} (no such day; use YYYY-MM-DD)")
    return _iso(parsed, now)


def _iso(parsed: date | datetime, now: datetime) -> str | ValueError:
    if isinstance(parsed, datetime):
        moment = parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
        day = moment.date()
        text = (
            day.isoformat()
            if moment.time() == datetime.min.time()
            else moment.strftime("%Y-%m-%dT%H:%M:%SZ")
        )
    else:
        day, text = parsed, parsed.isoformat()
    if day > (now + timedelta(days=1)).date():
        return ValueError(f"date {text} is in the future")
    if day.year < 1990:
        return ValueError(f"date {text} is before 1990; give the day the query was run")
    return text


def parse_count(value: Cell) -> int | ValueError:
    text = _text(value)
    if not text:
        return ValueError("total hits missing (write 0 when the database found nothing)")
    if isinstance(value, float) and not value.is_integer():
        return ValueError(f"total hits {value!r} is not a whole number")
    if not _COUNT.match(text):
        return ValueError(f"total hits {text!r} is not a whole number")
    return int(re.sub(r"[, ]", "", text))
