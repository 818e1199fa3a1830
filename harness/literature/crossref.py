"""Crossref REST API: `GET /works?query=...&rows=...&offset=...&filter=until-pub-date:...`.

With CROSSREF_MAILTO set, requests carry `mailto=` and join the polite pool (10 requests/s);
without it the public pool allows 5/s. The mailto address is treated as a secret: it never
reaches a record, the cache or an error message.
"""

from __future__ import annotations

import os
import re
from datetime import date
from typing import Any

from harness.literature._http import HttpSource, Page, clean_doi
from harness.literature.base import Hit, SearchRecord, check_limit, parse_cutoff
from harness.literature.defaults import CROSSREF, CROSSREF_MAILTO_ENV, CROSSREF_PUBLIC_INTERVAL_S

PATH = "/works"
SELECT = "DOI,title,issued,abstract,score"
_TAG = re.compile(r"<[^>]+>")


class CrossrefSource(HttpSource):
    defaults = CROSSREF

    def default_interval(self) -> float:
        polite = bool(os.environ.get(CROSSREF_MAILTO_ENV))
        return self.defaults.interval_s if polite else CROSSREF_PUBLIC_INTERVAL_S

    def secret_params(self) -> dict[str, str]:
        mailto = os.environ.get(CROSSREF_MAILTO_ENV)
        return {"mailto": mailto} if mailto else {}

    def error_message(self, response: Any) -> str:
        try:
            body = response.json()
        except ValueError:
            result: str = response.text[:300]
            return result
        message = body.get("message") if isinstance(body, dict) else body
        if isinstance(message, list):
            message = "; ".join(str(m.get("message", m)) for m in message if isinstance(m, dict))
        return str(message)[:300]

    def search(
        self, query: str, *, cutoff: str | date | None = None, limit: int = 10
    ) -> SearchRecord:
        limit = check_limit(limit)
        until = parse_cutoff(cutoff)
        base = {"query": query, "select": SELECT}
        if until is not None:
            base["filter"] = f"until-pub-date:{until.isoformat()}"
        hits, requests, total = self.pages(
            PATH,
            limit,
            "0",
            lambda offset, size: {**base, "rows": str(size), "offset": offset},
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
            settings={"paging": "rows/offset"},
            filters=filters,
            requests=requests,
            total=total,
            hits=hits,
        )


def _page(body: dict[str, Any], total: int | None, count: int) -> Page:
    message = body.get("message") or {}
    total = message.get("total-results", total)
    items = message.get("items") or []
    seen = count + len(items)
    last = not items or (total is not None and seen >= total)
    return Page(items, total, None if last else str(seen))


def _hit(work: dict[str, Any], rank: int) -> Hit:
    titles = work.get("title") or [""]
    parts = ((work.get("issued") or {}).get("date-parts") or [[None]])[0]
    year = parts[0] if parts and isinstance(parts[0], int) else None
    abstract = work.get("abstract")
    if abstract:
        abstract = " ".join(_TAG.sub(" ", abstract).split())
    doi = clean_doi(work.get("DOI"))
    return Hit(
        id=f"https://doi.org/{doi}" if doi else "",
        doi=doi,
        title=str(titles[0]),
        year=year,
        score=work.get("score"),
        rank=rank,
        abstract=abstract or None,
    )
