"""OpenAlex works search: `GET /works?search=...&filter=to_publication_date:...`, cursor paging.

The API key travels as the `api_key` query parameter (OPENALEX_API_KEY). Why httpx rather than
pyalex: see docs/literature-sources.md.
"""

from __future__ import annotations

import os
from datetime import date
from typing import Any

from harness.literature._http import Page, clean_doi
from harness.literature._json_api import JsonApiSource
from harness.literature.base import Hit, SourceKind
from harness.literature.defaults import OPENALEX, OPENALEX_KEY_ENV


class OpenAlexSource(JsonApiSource):
    defaults = OPENALEX
    path = "/works"
    paging = "cursor"
    first_token = "*"
    error_keys = ("message", "error")

    def secret_params(self) -> dict[str, str]:
        key = os.environ.get(OPENALEX_KEY_ENV)
        return {"api_key": key} if key else {}

    def query_params(self, query: str) -> dict[str, str]:
        return {"search": query}

    def cutoff_params(self, until: date) -> tuple[dict[str, str], str]:
        value = f"to_publication_date:{until.isoformat()}"
        return {"filter": value}, value

    def page_params(self, token: str, size: int) -> dict[str, str]:
        return {"per_page": str(size), "cursor": token}

    def read_page(self, body: dict[str, Any], total: int | None, count: int) -> Page:
        meta = body.get("meta") or {}
        results = body.get("results") or []
        following = (meta.get("next_cursor") or None) if results else None
        return Page(results, meta.get("count", total), following)

    def read_hit(self, work: dict[str, Any], rank: int) -> Hit:
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


SOURCE = SourceKind("openalex", OPENALEX.database, OpenAlexSource)
