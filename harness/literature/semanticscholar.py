"""Semantic Scholar Academic Graph: `GET /paper/search?query=...&offset=...&limit=...`.

The key travels in the `x-api-key` header (SEMANTIC_SCHOLAR_API_KEY); with a key the published
limit is one request per second, which is this source's default spacing. The cut-off is the
`publicationDateOrYear=:YYYY-MM-DD` parameter. The search ranks by relevance but reports no
score, so hits carry their rank only.
"""

from __future__ import annotations

import os
from datetime import date
from typing import Any

from harness.literature._http import Page, clean_doi
from harness.literature._json_api import JsonApiSource
from harness.literature.base import Hit, SourceKind
from harness.literature.defaults import SEMANTIC_SCHOLAR, SEMANTIC_SCHOLAR_KEY_ENV

FIELDS = "title,year,externalIds,abstract,publicationDate"


class SemanticScholarSource(JsonApiSource):
    defaults = SEMANTIC_SCHOLAR
    path = "/paper/search"
    paging = "offset/limit"
    error_keys = ("error", "message")

    def secret_headers(self) -> dict[str, str]:
        key = os.environ.get(SEMANTIC_SCHOLAR_KEY_ENV)
        return {"x-api-key": key} if key else {}

    def query_params(self, query: str) -> dict[str, str]:
        return {"query": query, "fields": FIELDS}

    def cutoff_params(self, until: date) -> tuple[dict[str, str], str]:
        value = f":{until.isoformat()}"
        return {"publicationDateOrYear": value}, f"publicationDateOrYear={value}"

    def page_params(self, token: str, size: int) -> dict[str, str]:
        return {"offset": token, "limit": str(size)}

    def read_page(self, body: dict[str, Any], total: int | None, count: int) -> Page:
        data = body.get("data") or []
        offset = body.get("next") if data else None
        return Page(data, body.get("total", total), None if offset is None else str(offset))

    def read_hit(self, paper: dict[str, Any], rank: int) -> Hit:
        ids = paper.get("externalIds") or {}
        return Hit(
            id=str(paper.get("paperId") or ""),
            doi=clean_doi(ids.get("DOI")),
            title=str(paper.get("title") or ""),
            year=paper.get("year"),
            score=None,
            rank=rank,
            abstract=paper.get("abstract"),
        )


SOURCE = SourceKind(
    "semanticscholar",
    SEMANTIC_SCHOLAR.database,
    SemanticScholarSource,
)
