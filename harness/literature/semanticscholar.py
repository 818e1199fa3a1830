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

from harness.literature._http import HttpSource, clean_doi, json_body
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

    def search(self, query: str, *, cutoff: str | date | None = None,
               limit: int = 10) -> SearchRecord:
        limit = check_limit(limit)
        until = parse_cutoff(cutoff)
        base = {"query": query, "fields": FIELDS}
        if until is not None:
            base["publicationDateOrYear"] = f":{until.isoformat()}"
        hits: list[Hit] = []
        requests = []
        total: int | None = None
        offset: int | None = 0
        while offset is not None and len(hits) < limit:
            params = {**base, "offset": str(offset),
                      "limit": str(min(self.page_size, limit - len(hits)))}
            response, sent = self.get(PATH, params)
            requests.append(sent)
            body = json_body(self, response, self.base_url + PATH)
            total = body.get("total", total)
            data = body.get("data") or []
            hits += [_hit(paper, len(hits) + i + 1) for i, paper in enumerate(data)]
            offset = body.get("next") if data else None
        filters = {"cutoff": until.isoformat() if until else None, "limit": limit,
                   "applied_as": f"publicationDateOrYear={base['publicationDateOrYear']}"
                   if until else None}
        return self.record(query=query, path=PATH, settings={"paging": "offset/limit"},
                           filters=filters, requests=requests, total=total, hits=hits[:limit])


def _hit(paper: dict[str, Any], rank: int) -> Hit:
    ids = paper.get("externalIds") or {}
    return Hit(id=str(paper.get("paperId") or ""), doi=clean_doi(ids.get("DOI")),
               title=str(paper.get("title") or ""), year=paper.get("year"), score=None,
               rank=rank, abstract=paper.get("abstract"))
