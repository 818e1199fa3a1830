"""The one interface every literature source implements: a query in, a `SearchRecord` out.

A record holds what PRISMA-S asks of each search: the database and interface, the exact query
and the parameters as sent (secrets removed), filters and limits (including a publication-date
cut-off), when it ran (UTC), how many hits the database reported, the hits retrieved, and a key
that identifies repeated searches.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from pydantic import BaseModel, Field

from harness.errors import HarnessError
from harness.literature.text import normalise_query


class Hit(BaseModel):
    """One retrieved work. `abstract` is kept for readers in memory but never stored."""

    id: str
    doi: str | None = None
    title: str
    year: int | None = None
    score: float | None = None  # the database's own relevance score, where it reports one
    rank: int  # 1 = first in the database's order
    abstract: str | None = Field(default=None, exclude=True)

    def text(self) -> str:
        return f"{self.title}. {self.abstract or ''}".strip()

    def cite(self) -> str:
        """How a review cites this work as prior work."""
        year = f" ({self.year})" if self.year else ""
        ref = f" doi:{self.doi}" if self.doi else ""
        return f"{self.title}{year}{ref} [{self.id}]"


class SentRequest(BaseModel):
    """One HTTP request as sent (secret values replaced) and what came back."""

    method: str = "GET"
    url: str  # scheme, host and path; parameters are in `params`
    params: dict[str, str] = {}
    headers: dict[str, str] = {}  # headers the harness set, secret values replaced
    status: int
    fetched_at: str  # UTC time the database answered (earlier when cached)
    from_cache: bool = False


class SearchRecord(BaseModel):
    database: str
    interface: str
    query: str  # the query exactly as given to the database's search field
    parameters: dict[str, Any]  # requests as sent (secrets removed) and source settings
    filters: dict[str, Any]  # cut-off, limit and how the database applied them
    run_at: str  # UTC, when the database was searched
    total_hits: int | None
    hits: list[Hit]
    dedup_key: str

    def hits_json(self) -> str:
        return json.dumps([h.model_dump() for h in self.hits], ensure_ascii=False)


def dedup_key(database: str, query: str, filters: Mapping[str, object]) -> str:
    """SHA-256 of the normalised database, query and filters: equal keys mean a repeated search."""
    canonical = json.dumps(
        [normalise_query(database), normalise_query(query), filters],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def parse_cutoff(cutoff: str | date | None) -> date | None:
    """A publication-date cut-off as a date (`YYYY-MM-DD`, or `YYYY` = end of that year)."""
    if cutoff is None or cutoff == "":
        return None
    if isinstance(cutoff, date):
        return cutoff
    text = str(cutoff).strip()
    try:
        if len(text) == 4 and text.isdigit():
            return date(int(text), 12, 31)
        return date.fromisoformat(text)
    except ValueError:
        raise HarnessError(
            f"cut-off {text!r} is not a date (use YYYY-MM-DD or YYYY)", column="cutoff"
        ) from None


def check_limit(limit: int) -> int:
    if not isinstance(limit, int) or limit < 1 or limit > 1000:
        raise HarnessError(f"limit must be between 1 and 1000, got {limit!r}", column="limit")
    return limit


class Source(ABC):
    """A searchable literature database."""

    name: str
    database: str

    @abstractmethod
    def search(
        self, query: str, *, cutoff: str | date | None = None, limit: int = 10
    ) -> SearchRecord:
        """Run one search and return its record (hits in the database's order)."""

    def close(self) -> None:  # noqa: B027  (sources without resources need not override)
        """Release connections."""

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class SourceKind:
    """One literature source as the registry (`harness.literature.sources`) lists it."""

    name: str  # as a source spec names it (`--source NAME`)
    label: str  # the database, in a few words
    open: Callable[..., Source]  # the source, from its keyword options
    #: the option that `NAME:PATH` sets to a file (`corpus` for `local:PATH`); None: no `:`
    argument: str | None = None
