"""Crossref REST API: `GET /works?query=...&rows=...&offset=...&filter=until-pub-date:...`.

With CROSSREF_MAILTO set, requests carry `mailto=` and join the polite pool (10 requests/s);
without it the public pool allows 5/s. The mailto address is treated as a secret: it never
reaches a record, the cache or an error message.
"""

from __future__ import annotations

import os
import re
from datetime import date
from typing import TYPE_CHECKING, Any

from harness.literature._http import Page, clean_doi
from harness.literature._json_api import JsonApiSource
from harness.literature.base import Hit, SourceKind
from harness.literature.defaults import CROSSREF, CROSSREF_MAILTO_ENV, CROSSREF_PUBLIC_INTERVAL_S

if TYPE_CHECKING:
    import httpx

SELECT = "DOI,title,issued,abstract,score"
_TAG = re.compile(r"<[^>]+>")


class CrossrefSource(JsonApiSource):
    defaults = CROSSREF
    path = "/works"
    paging = "rows/offset"

    def default_interval(self) -> float:
        polite = bool(os.environ.get(CROSSREF_MAILTO_ENV))
        return self.defaults.interval_s if polite else CROSSREF_PUBLIC_INTERVAL_S

    def secret_params(self) -> dict[str, str]:
        mailto = os.environ.get(CROSSREF_MAILTO_ENV)
        return {"mailto": mailto} if mailto else {}

    def error_message(self, response: httpx.Response) -> str:
        try:
            body = response.json()
        except ValueError:
            return response.text[:300]
        message = body.get("message") if isinstance(body, dict) else body
        if isinstance(message, list):
            message = "; ".join(str(m.get("message", m)) for m in message if isinstance(m, dict))
        return str(message)[:300]

    def query_params(self, query: str) -> dict[str, str]:
        return {"query": query, "select": SELECT}

    def cutoff_params(self, until: date) -> tuple[dict[str, str], str]:
        value = f"until-pub-date:{until.isoformat()}"
        return {"filter": value}, value

    def page_params(self, token: str, size: int) -> dict[str, str]:
        return {"rows": str(size), "offset": token}

    def read_page(self, body: dict[str, Any], total: int | None, count: int) -> Page:
        message = body.get("message") or {}
        total = message.get("total-results", total)
        items = message.get("items") or []
        seen = count + len(items)
        last = not items or (total is not None and seen >= total)
        return Page(items, total, None if last else str(seen))

    def read_hit(self, work: dict[str, Any], rank: int) -> Hit:
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


SOURCE = SourceKind("crossref", CROSSREF.database, CrossrefSource)
