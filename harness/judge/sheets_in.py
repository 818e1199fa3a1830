"""Importing returned packets: validate everything, report every problem, store all or nothing.

`import_reviews(study, files)` reads each .xlsx (or items.csv with its searches.csv), checks it
against the study (its id, the reviewer, the reviewer's assignments) and the rules of the codebook
and search protocol, and only when no file has a problem stores the reviews and search records in
one transaction. The same file again changes nothing; a different file for a reviewer who already
has one replaces it only with `replace=True`. Every import's file hash is kept in `imports`.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from harness.errors import HarnessError
from harness.study.clock import utc_now
from harness.study.lock import writes_study
from harness.study.store import Study

if TYPE_CHECKING:
    from harness.judge.sheets_read import Problem, Source, Table
    from harness.study.tables.searches import NewSearch

_DOI = re.compile(r"^(?:doi:|https?://(?:dx\.)?doi\.org/)?10\.\d{4,9}/\S+$", re.I)
_URL = re.compile(r"^https?://[^\s/$.?#][^\s]*$", re.I)
_OTHER_ID = re.compile(r"^(?:arxiv:\S+|pmid:\d+|pmcid:pmc\d+)$", re.I)
_ISO_DATE = re.compile(
    r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
    r"(?:Z|[+-]\d{2}:?\d{2})?)?$"
)
_SERIAL = re.compile(r"^\d{5}(?:\.\d+)?$")
_COUNT = re.compile(r"^\d{1,3}(?:[, ]\d{3})+$|^\d+$")


class ImportProblems(HarnessError):
    """Every problem found in the files of one import; nothing was stored."""

    def __init__(self, problems: list[Problem]) -> None:
        files = sorted({p.file for p in problems})
        super().__init__(
            f"{len(problems)} problem(s) in {', '.join(files)}; nothing was "
            f"imported. First: {problems[0]}"
        )
        self.problems = problems


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


# -- public entry point ---------------------------------------------------------------------------
@writes_study
def import_reviews(study: Study, files: Sequence[str | Path], *, replace: bool = False) -> Any:
    """Validate and store returned packets; returns one row per file (status, counts, hash).

    Raises ImportProblems (a HarnessError listing every problem) when anything is wrong.
    """
    import pandas as pd

    from harness.judge.sheets_read import Problem

    if not files:
        raise HarnessError(
            "give at least one returned packet (.xlsx, or items.csv with searches.csv)",
            column="--import",
        )
    sources, problems = group_sources([Path(f) for f in files])
    checked = []
    for source in sources:
        result = check_source(study, source)
        problems.extend(source.problems)
        if result is not None:
            checked.append(result)
    seen: dict[str, str] = {}
    for c in checked:
        if c.reviewer_id in seen:
            problems.append(
                Problem(
                    c.source.name,
                    f"a second file for reviewer {c.reviewer_id} "
                    f"in one import (also {seen[c.reviewer_id]})",
                )
            )
        seen[c.reviewer_id] = c.source.name
    plan = [] if problems else [(c, _decide(study, c, replace, problems)) for c in checked]
    if problems:
        raise ImportProblems(problems)
    rows = []
    with study.transaction() as conn:
        for c, (status, previous) in plan:
            if status != "unchanged":
                _store(conn, c, previous)
            rows.append(
                {
                    "file": c.source.name,
                    "reviewer": c.reviewer_id,
                    "status": status,
                    "reviews": len(c.reviews),
                    "searches": len(c.searches),
                    "sha256": c.source.sha256,
                }
            )
    if any(r["status"] != "unchanged" for r in rows):
        from harness.study.manifest import record_command

        record_command(study.path, "judge.import", {"replace": replace, "files": rows})
    return pd.DataFrame(rows)


def group_sources(paths: list[Path]) -> tuple[list[Source], list[Problem]]:
    """Each .xlsx is a source; an items CSV pairs with the searches CSV beside it (or the only
    one given)."""
    from harness.judge.sheets_read import Problem, csv_kind, read_csv_pair, read_xlsx

    sources: list[Source] = []
    problems: list[Problem] = []
    items_csv: list[Path] = []
    searches_csv: list[Path] = []
    for path in paths:
        suffix = path.suffix.lower()
        if not path.is_file():
            problems.append(Problem(str(path), "file not found"))
        elif suffix == ".xlsx":
            sources.append(read_xlsx(path))
        elif suffix == ".csv":
            kind = csv_kind(path)
            if kind is None:
                problems.append(
                    Problem(
                        path.name,
                        "not an items or searches CSV of a reviewer "
                        "packet (header row not recognised, or not UTF-8)",
                    )
                )
            (items_csv if kind == "items" else searches_csv if kind else []).append(path)
        else:
            problems.append(
                Problem(path.name, "not an .xlsx or .csv file (save the workbook as Excel .xlsx)")
            )
    lone = len(items_csv) == 1 and len(searches_csv) == 1
    for items_path in items_csv:
        partner = _partner(items_path, searches_csv, lone)
        if isinstance(partner, str):  # "ambiguous"
            problems.append(
                Problem(
                    items_path.name,
                    "several searches CSVs could belong to this "
                    "items CSV; name them alike (alice-items.csv, "
                    "alice-searches.csv) or import each pair on its own",
                )
            )
            continue
        if partner is not None:
            searches_csv.remove(partner)
        sources.append(read_csv_pair(items_path, partner))
    for orphan in searches_csv:
        problems.append(Problem(orphan.name, "searches CSV without its items CSV"))
    return sources, problems


def _partner(
    items_path: Path, searches: list[Path], lone: bool
) -> Path | Literal["ambiguous"] | None:
    """The searches CSV of an items CSV: the one beside it, or the one named alike."""
    beside = [s for s in searches if s.parent == items_path.parent]
    if len(beside) == 1:
        return beside[0]
    named = [s for s in beside if s.name == items_path.name.replace("items", "searches")]
    if named:
        return named[0]
    if beside:
        return "ambiguous"
    return searches[0] if lone else None


# -- checking -------------------------------------------------------------------------------------
def check_source(study: Study, source: Source) -> Checked | None:
    """Check one source against the study; problems are added to `source.problems`."""
    from harness.judge import sheets_format as F
    from harness.study.tables.assignments import assigned_item_ids
    from harness.study.tables.items import item_ids
    from harness.study.tables.reviewers import reviewer_kind

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
    assigned = assigned_item_ids(study, reviewer_id)
    known = item_ids(study)
    reviews = _check_items(source, source.items, assigned, known, reviewer_id)
    searches = _check_searches(source, source.searches, assigned, known, reviewer_id)
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
    return Checked(source, reviewer_id, [r for r, _ in reviews.values()], searches)


def _text(value: Any) -> str:
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
    from harness.judge import sheets_format as F

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
    from harness.judge import sheets_format as F

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


def _check_searches(
    source: Source, table: Table, assigned: set[str], known: set[str], reviewer_id: str
) -> list[Search]:
    from harness.judge import sheets_format as F

    searches: list[Search] = []
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
    return searches


def parse_date(value: Any, now: datetime) -> str | ValueError:
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


def parse_count(value: Any) -> int | ValueError:
    text = _text(value)
    if not text:
        return ValueError("total hits missing (write 0 when the database found nothing)")
    if isinstance(value, float) and not value.is_integer():
        return ValueError(f"total hits {value!r} is not a whole number")
    if not _COUNT.match(text):
        return ValueError(f"total hits {text!r} is not a whole number")
    return int(re.sub(r"[, ]", "", text))


# -- storing --------------------------------------------------------------------------------------
def _decide(study: Study, c: Checked, replace: bool, problems: list[Problem]) -> tuple[str, Any]:
    """('imported' | 'replaced' | 'unchanged', previous import id or None)."""
    from harness.judge.sheets_read import Problem
    from harness.study.tables.imports import current_import

    current = current_import(study, c.reviewer_id)
    if current is None:
        return "imported", None
    if current.file_sha256 == c.source.sha256:
        return "unchanged", current.import_id
    if not replace:
        problems.append(
            Problem(
                c.source.name,
                f"reviewer {c.reviewer_id} already has an "
                f"import ({current.file_name}, {current.imported_at}); use --replace to replace it",
            )
        )
        return "refused", current.import_id
    return "replaced", current.import_id


def _store(conn: sqlite3.Connection, c: Checked, previous: str | None) -> None:
    """One checked file's import record, reviews and searches, replacing `previous`."""
    from harness.study.tables.imports import ImportRecord, insert_import, mark_replaced
    from harness.study.tables.reviews import NewReview, delete_imported_reviews, insert_reviews
    from harness.study.tables.searches import delete_imported_searches, insert_searches

    import_id = uuid.uuid4().hex
    now = utc_now()
    if previous is not None:
        delete_imported_reviews(conn, previous)
        delete_imported_searches(conn, previous)
    insert_import(
        conn,
        ImportRecord(
            import_id,
            c.reviewer_id,
            c.source.name,
            c.source.sha256,
            now,
            len(c.reviews),
            len(c.searches),
        ),
    )
    if previous is not None:
        mark_replaced(conn, previous, by=import_id)
    insert_reviews(
        conn,
        [
            NewReview(
                r.item_id,
                c.reviewer_id,
                r.verdict,
                r.confidence,
                r.prior_work,
                r.notes,
                c.source.kind,
                import_id,
                c.source.sha256,
                now,
            )
            for r in c.reviews
        ],
    )
    insert_searches(conn, [_search_record(s, c, import_id) for s in c.searches])


def _search_record(s: Search, c: Checked, import_id: str) -> NewSearch:
    """A returned search row as stored: no interface, parameters or hits (reviewers give ids)."""
    from harness.study.tables.searches import NewSearch

    return NewSearch(
        uuid.uuid4().hex,
        s.item_id,
        c.reviewer_id,
        s.database,
        None,
        s.query,
        None,
        json.dumps({"limits": s.filters}) if s.filters else None,
        s.run_at,
        s.total_hits,
        "[]",
        json.dumps(s.relevant_ids),
        dedup_key(s),
        c.source.kind,
        import_id,
    )


def dedup_key(search: Search) -> str:
    """Same database, query and limits -> same key (reviewers often rerun a query)."""
    text = "\n".join(
        [search.database.casefold(), " ".join(search.query.split()), search.filters or ""]
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def problems_by_file(problems: list[Problem]) -> dict[str, list[Problem]]:
    grouped: dict[str, list[Problem]] = defaultdict(list)
    for p in problems:
        grouped[p.file].append(p)
    return dict(grouped)
