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

from harness.literature._http import HttpSource, Page, clean_doi
from harness.literature.base import Hit, SearchRecord, check_limit, parse_cutoff
from harness.literature.defaults import SEMANTIC_SCHOLAR, SEMANTIC_SCHOLAR_KEY_ENV

PATH = "/paper/search"
FIELDS = "title,year,externalIds,abstract,publicationDate"


class SemanticScholarSource(HttpSource):
    defaults = SEMANTIC_SCHOLAR

    def secret_headers(self) -> dict[str, str]:
        key = os.environ.get(SEMANTIC_SCHOLAR_KEY_ENV)
        return {"x-api-key": key} if key else {}

    error_keys = ("error", "message")

    def search(
        self, query: str, *, cutoff: str | date | None = None, limit: int = 10
    ) -> SearchRecord:
        limit = check_limit(limit)
        until = parse_cutoff(cutoff)
        base = {"query": query, "fields": FIELDS}
        if until is not None:
            base["publicationDateOrYear"] = f":{until.isoformat()}"
        hits, requests, total = self.pages(
            PATH,
            limit,
            "0",
            lambda offset, size: {**base, "offset": offset, "limit": str(size)},
            _page,
            _hit,
        )
        filters = {
            "cutoff": until.isoformat() if until else None,
            "limit": limit,
            "applied_as": f"publicationDateOrYear={base['publicationDateOrYear']}"
            if until
            else None,
        }
        return self.record(
            query=query,
            path=PATH,
            settings={"paging": "offset/limit"},
            filters=filters,
            requests=requests,
            total=total,
            hits=hits,
        )


def _page(body: dict[str, Any], total: int | None, _count: int) -> Page:
    data = body.get("data") or []
    offset = body.get("next") if data else None
    return Page(data, body.get("total", total), None if offset is None else str(offset))


def _hit(paper: dict[str, Any], rank: int) -> Hit:
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
