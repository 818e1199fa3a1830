"""The one search routine of the JSON literature APIs (OpenAlex, Crossref, Semantic Scholar).

Each source states only what differs: its path and paging, the query's parameters, how the
cut-off is sent, and how a page and a record are read. `JsonApiSource.search` pages through
the answers and writes the search record the same way for all of them.
"""

from __future__ import annotations

from abc import abstractmethod
from datetime import date
from typing import Any, ClassVar

from harness.literature._http import HttpSource, Page
from harness.literature.base import Hit, SearchRecord, check_limit, parse_cutoff


class JsonApiSource(HttpSource):
    """A remote source whose search answers are paged JSON."""

    #: the search endpoint, relative to the base URL
    path: ClassVar[str]
    #: the paging parameters, as the record names them (`cursor`, `rows/offset`)
    paging: ClassVar[str]
    #: the first page's token (a cursor or an offset)
    first_token: ClassVar[str] = "0"

    @abstractmethod
    def query_params(self, query: str) -> dict[str, str]:
        """The parameters that carry the query (and the fields asked for)."""

    @abstractmethod
    def cutoff_params(self, until: date) -> tuple[dict[str, str], str]:
        """The parameters that apply a publication-date cut-off, and how the record states it."""

    @abstractmethod
    def page_params(self, token: str, size: int) -> dict[str, str]:
        """The parameters of one page: its size and its token."""

    @abstractmethod
    def read_page(self, body: dict[str, Any], total: int | None, count: int) -> Page:
        """A page's items, the total so far and the next token (`count`: hits read before)."""

    @abstractmethod
    def read_hit(self, item: dict[str, Any], rank: int) -> Hit:
        """One item of a page as a hit."""

    def search(
        self, query: str, *, cutoff: str | date | None = None, limit: int = 10
    ) -> SearchRecord:
        limit = check_limit(limit)
        until = parse_cutoff(cutoff)
        base = self.query_params(query)
        applied_as = None
        if until is not None:
            params, applied_as = self.cutoff_params(until)
            base.update(params)
        hits, requests, total = self.pages(
            self.path,
            limit,
            self.first_token,
            lambda token, size: {**base, **self.page_params(token, size)},
            self.read_page,
            self.read_hit,
        )
        filters = {
            "cutoff": until.isoformat() if until else None,
            "limit": limit,
            "applied_as": applied_as,
        }
        return self.record(
            query=query,
            path=self.path,
            settings={"paging": self.paging},
            filters=filters,
            requests=requests,
            total=total,
            hits=hits,
        )
