"""Reading a local collection of works: JSON Lines, Parquet, or a `datasets` collection.

Every record needs `id` and `title`; `abstract`, `year`, `doi` and `date` (YYYY-MM-DD) are
optional; other fields are kept but not searched. A bad record stops loading with its file,
row and field named. A sidecar `<file>.meta.json` (if present) describes the corpus (for example
that it is a demonstration corpus) and that description travels into every search record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Protocol, cast, runtime_checkable

from harness.errors import HarnessError
from harness.study.records import JsonObject

#: One record of a corpus as read (JSON Lines, Parquet, `datasets`): fields of any kind, checked
#: by `_work`.
Row = dict[str, object]


@runtime_checkable
class DatasetRows(Protocol):
    """What `load_corpus` reads from a `datasets.Dataset`."""

    @property
    def column_names(self) -> list[str]: ...

    def to_list(self) -> list[Row]: ...


@dataclass(frozen=True)
class Work:
    id: str
    title: str
    abstract: str | None = None
    year: int | None = None
    doi: str | None = None
    published: date | None = None  # full date when known, else None (year only)

    def text(self) -> str:
        return f"{self.title}. {self.abstract or ''}".strip()


@dataclass
class Corpus:
    works: list[Work]
    name: str  # file name or given label (never a full local path)
    sha256: str  # hash of the file bytes, or of the records as JSON
    meta: JsonObject = field(default_factory=dict)

    @property
    def demonstration(self) -> bool:
        return bool(self.meta.get("demonstration"))


def load_corpus(source: object, *, name: str | None = None) -> Corpus:
    """A corpus from a path (.jsonl/.json/.parquet file, or a folder saved by `datasets`),
    a `datasets.Dataset`, or a list of dicts."""
    if isinstance(source, str | Path):
        return _from_path(Path(source), name)
    if isinstance(source, list):
        return _from_rows(source, name or "records", where=None, digest=_rows_digest(source))
    if isinstance(source, DatasetRows):
        rows = source.to_list()
        fingerprint = getattr(source, "_fingerprint", None)
        digest = (
            hashlib.sha256(str(fingerprint).encode()).hexdigest()
            if fingerprint
            else _rows_digest(rows)
        )
        return _from_rows(rows, name or "dataset", where=None, digest=digest)
    raise HarnessError(f"cannot read a corpus from {type(source).__name__}")


def _from_path(path: Path, name: str | None) -> Corpus:
    if not path.exists():
        raise HarnessError("corpus not found", file=path)
    meta = _sidecar(path)
    if path.is_dir():
        rows, digest = _dataset_dir(path)
    elif path.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        rows, digest = _jsonl(path), _file_digest(path)
    elif path.suffix.lower() == ".parquet":
        rows, digest = _parquet(path), _file_digest(path)
    else:
        raise HarnessError("corpus must be .jsonl, .parquet or a datasets folder", file=path)
    corpus = _from_rows(rows, name or path.name, where=path, digest=digest)
    corpus.meta = meta
    return corpus


def _sidecar(path: Path) -> JsonObject:
    side = path.with_name(path.name + ".meta.json")
    if not side.exists():
        return {}
    try:
        data = json.loads(side.read_text(encoding="utf-8"))
    except ValueError as error:
        raise HarnessError(f"not valid JSON ({error})", file=side) from None
    if not isinstance(data, dict):
        raise HarnessError("expected a JSON object", file=side)
    return cast("JsonObject", data)


def _jsonl(path: Path) -> list[Row]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as error:
                raise HarnessError(
                    f"not valid JSON ({error.args[0]})", file=path, row=number
                ) from None
            if not isinstance(row, dict):
                raise HarnessError("expected a JSON object per line", file=path, row=number)
            row["__line__"] = number
            rows.append(row)
    return rows


def _parquet(path: Path) -> list[Row]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as error:  # pyarrow raises several types for unreadable files
        raise HarnessError(f"cannot read Parquet ({error})", file=path) from None
    return table.to_pylist()


def _dataset_dir(path: Path) -> tuple[list[Row], str]:
    import datasets

    try:
        data = datasets.load_from_disk(str(path))
    except Exception as error:  # datasets raises FileNotFoundError and its own types
        raise HarnessError(f"not a folder saved by datasets ({error})", file=path) from None
    if isinstance(data, datasets.DatasetDict):
        data = data[next(iter(data))]
    digest = hashlib.sha256(str(data._fingerprint).encode()).hexdigest()
    return data.to_list(), digest


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _rows_digest(rows: list[Row]) -> str:
    text = json.dumps(rows, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _from_rows(rows: list[Row], name: str, *, where: Path | None, digest: str) -> Corpus:
    works: list[Work] = []
    seen: dict[str, int] = {}
    for index, row in enumerate(rows, start=1):
        line = cast("int", row.pop("__line__", index)) if isinstance(row, dict) else index
        work = _work(row, where, line)
        if work.id in seen:
            raise HarnessError(
                f"duplicate id {work.id!r} (first at row {seen[work.id]})",
                file=where,
                row=line,
                column="id",
            )
        seen[work.id] = line
        works.append(work)
    if not works:
        raise HarnessError("the corpus has no records", file=where)
    return Corpus(works=works, name=name, sha256=digest)


def _work(row: object, where: Path | None, line: int) -> Work:
    if not isinstance(row, dict):
        raise HarnessError("a record must be a mapping", file=where, row=line)

    def fail(column: str, message: str) -> HarnessError:
        return HarnessError(message, file=where, row=line, column=column)

    ident = row.get("id")
    if ident is None or (isinstance(ident, str) and not ident.strip()):
        raise fail("id", "missing id")
    title = row.get("title")
    if not isinstance(title, str) or not title.strip():
        raise fail("title", "missing title (a non-empty string is required)")
    abstract = row.get("abstract")
    if abstract is not None and not isinstance(abstract, str):
        raise fail("abstract", "abstract must be text")
    year = row.get("year")
    if year is not None:
        if isinstance(year, float) and year.is_integer():
            year = int(year)
        if isinstance(year, str) and year.strip().isdigit():
            year = int(year)
        if not isinstance(year, int) or isinstance(year, bool) or not 1000 <= year <= 2100:
            raise fail("year", f"year must be a whole number between 1000 and 2100, got {year!r}")
    doi = row.get("doi")
    if doi is not None and not isinstance(doi, str):
        raise fail("doi", "doi must be text")
    published = _date(row.get("date"), fail)
    if published is not None and year is None:
        year = published.year
    return Work(
        id=str(ident).strip(),
        title=" ".join(title.split()),
        abstract=abstract or None,
        year=year,
        doi=(doi or "").strip() or None,
        published=published,
    )


def _date(value: object, fail: Callable[[str, str], HarnessError]) -> date | None:
    if value is None or value == "":
        return None
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        raise fail("date", f"date must be YYYY-MM-DD, got {value!r}") from None
