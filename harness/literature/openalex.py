"""OpenAlex works search: `GET /works?search=...&filter=to_publication_date:...`, cursor paging.

The API key travels as the `api_key` query parameter (OPENALEX_API_KEY). Why httpx rather than
pyalex: see docs/literature-sources.md.
"""

from __future__ import annotations

import os
from datetime import date
from typing import Any

from harness.literature._http import HttpSource, Page, clean_doi
from harness.literature.base import Hit, SearchRecord, check_limit, parse_cutoff
from harness.literature.defaults import OPENALEX, OPENALEX_KEY_ENV

PATH = "/works"


class OpenAlexSource(HttpSource):
    defaults = OPENALEX

    def secret_params(self) -> dict[str, str]:
        key = os.environ.get(OPENALEX_KEY_ENV)
        return {"api_key": key} if key else {}

    error_keys = ("message", "error")

    def search(
        self, query: str, *, cutoff: str | date | None = None, limit: int = 10
    ) -> SearchRecord:
        limit = check_limit(limit)
        until = parse_cutoff(cutoff)
        base: dict[str, str] = {"search": query}
        if until is not None:
            base["filter"] = f"to_publication_date:{until.isoformat()}"
        hits, requests, total = self.pages(
            PATH,
            limit,
            "*",
            lambda cursor, size: {**base, "per_page": str(size), "cursor": cursor},
            _page,
            _hit,
        )
        filters = {
            "cutoff": until.isoformat() if until else None,
            "limit": limit,
            "applied_as": base.get("filter"),
        }
        return self.record(
            query=query,
            path=PATH,
            settings={"paging": "cursor"},
            filters=filters,
            requests=requests,
            total=total,
            hits=hits,
        )


def _page(body: dict[str, Any], total: int | None, _count: int) -> Page:
    meta = body.get("meta") or {}
    results = body.get("results") or []
    return Page(
        results, meta.get("count", total), (meta.get("next_cursor") or None) if results else None
    )


def _hit(work: dict[str, Any], rank: int) -> Hit:
    return Hit(
        id=str(work.get("id") or ""),
        doi=clean_doi(work.get("doi")),
        title=str(work.get("display_name") or work.get("title") or ""),
        year=work.get("publication_year"),
        score=work.get("relevance_score"),
        rank=rank,
        abstract=_abstract(work.get("abstract_inverted_index")),
    )


def _abstract(inverted: dict[str, list[int]] | None) -> str | None:
    """OpenAlex ships abstracts as an inverted index {word: [positions]}; put the words back."""
    if not inverted:
        return None
    positions = [(pos, word) for word, places in inverted.items() for pos in places]
    return " ".join(word for _, word in sorted(positions))
