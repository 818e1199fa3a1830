"""arXiv export API: `GET /query?search_query=...&start=...&max_results=...` (Atom XML).

arXiv asks for at most one request every three seconds; that is this source's default spacing.
A free-text query becomes `all:` terms joined with AND (quoted phrases stay phrases); a query
that already uses arXiv field prefixes (`ti:`, `abs:`, `all:`, ...) is sent as written. The
cut-off is a `submittedDate:[... TO ...]` range added to the query.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import date
from typing import TYPE_CHECKING

from harness.errors import HarnessError
from harness.literature._http import HttpSource, clean_doi
from harness.literature.base import Hit, SearchRecord, SourceKind, check_limit, parse_cutoff
from harness.literature.defaults import ARXIV

if TYPE_CHECKING:
    import httpx

PATH = "/query"
NS = {
    "atom": "http://www.w3.org/2005/Atom",
    "arxiv": "http://arxiv.org/schemas/atom",
    "opensearch": "http://a9.com/-/spec/opensearch/1.1/",
}
_FIELD_PREFIX = re.compile(r"\b(?:ti|au|abs|co|jr|cat|rn|id|all|submittedDate):", re.IGNORECASE)
_TERM = re.compile(r'"[^"]+"|\S+')


def arxiv_query(query: str) -> str:
    """The `search_query` for free text: every term (or quoted phrase) as `all:` AND-ed."""
    if _FIELD_PREFIX.search(query):
        return query
    terms = [t for t in _TERM.findall(query) if t.strip('"').strip()]
    return " AND ".join(f"all:{t}" for t in terms)


class ArxivSource(HttpSource):
    defaults = ARXIV

    def error_message(self, response: httpx.Response) -> str:
        try:
            feed = ET.fromstring(response.text)
            entry = feed.find("atom:entry", NS)
            if entry is not None:
                return (entry.findtext("atom:summary", "", NS) or "").strip()[:300]
        except ET.ParseError:
            pass
        return response.text[:300]

    def search(
        self, query: str, *, cutoff: str | date | None = None, limit: int = 10
    ) -> SearchRecord:
        limit = check_limit(limit)
        until = parse_cutoff(cutoff)
        sent_query = arxiv_query(query)
        if not sent_query:
            raise HarnessError("arXiv: empty query", column="query")
        date_range = f"submittedDate:[190001010000 TO {until:%Y%m%d}2359]" if until else None
        full = f"({sent_query}) AND {date_range}" if date_range else sent_query
        hits: list[Hit] = []
        requests = []
        total: int | None = None
        while len(hits) < limit:
            params = {
                "search_query": full,
                "start": str(len(hits)),
                "max_results": str(min(self.page_size, limit - len(hits))),
                "sortBy": "relevance",
                "sortOrder": "descending",
            }
            response, sent = self.get(PATH, params)
            requests.append(sent)
            page_total, entries = _parse_feed(response.body, self.base_url + PATH)
            total = page_total
            hits += [_hit(e, len(hits) + i + 1) for i, e in enumerate(entries)]
            if not entries or len(hits) >= total:
                break
        filters = {
            "cutoff": until.isoformat() if until else None,
            "limit": limit,
            "applied_as": date_range,
        }
        return self.record(
            query=sent_query,
            path=PATH,
            settings={"paging": "start/max_results", "query_given": query},
            filters=filters,
            requests=requests,
            total=total,
            hits=hits[:limit],
        )


def _parse_feed(body: str, url: str) -> tuple[int, list[ET.Element]]:
    try:
        feed = ET.fromstring(body)
    except ET.ParseError as error:
        raise HarnessError(f"arXiv: the answer from {url} is not Atom XML ({error})") from None
    first = feed.find("atom:entry", NS)
    if first is not None and "/api/errors" in (first.findtext("atom:id", "", NS) or ""):
        # arXiv reports some bad queries as a 200 feed holding one "Error" entry
        message = (first.findtext("atom:summary", "", NS) or "").strip()[:300]
        raise HarnessError(f"arXiv: error from {url}: {message}")
    total_text = feed.findtext("opensearch:totalResults", None, NS)
    try:
        total = int((total_text or "").strip())
    except ValueError:
        raise HarnessError(f"arXiv: the answer from {url} has no totalResults") from None
    return total, feed.findall("atom:entry", NS)


def _hit(entry: ET.Element, rank: int) -> Hit:
    published = entry.findtext("atom:published", "", NS) or ""
    year = int(published[:4]) if published[:4].isdigit() else None
    title = " ".join((entry.findtext("atom:title", "", NS) or "").split())
    summary = " ".join((entry.findtext("atom:summary", "", NS) or "").split())
    return Hit(
        id=(entry.findtext("atom:id", "", NS) or "").strip(),
        title=title,
        year=year,
        doi=clean_doi(entry.findtext("arxiv:doi", None, NS)),
        rank=rank,
        abstract=summary or None,
    )


SOURCE = SourceKind("arxiv", ARXIV.database, ArxivSource)
