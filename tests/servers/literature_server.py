"""A loopback HTTP server speaking four literature APIs' wire formats, for tests.

Routes (base URLs to give the sources):
    {url}/openalex          OpenAlex      GET /works        JSON, cursor paging
    {url}/s2/graph/v1       Semantic Scholar GET /paper/search JSON, offset/limit paging
    {url}/arxiv/api         arXiv export  GET /query        Atom XML, start/max_results paging
    {url}/crossref          Crossref      GET /works        JSON, rows/offset paging

Every request is recorded with its arrival time (monotonic clock, taken before any work), so a
test can measure request spacing at the server. `fail_next` queues error answers (429 with
Retry-After, 503, 400, ...) carrying each API's own error body.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

APIS = ("openalex", "s2", "arxiv", "crossref")


@dataclass(frozen=True)
class Work:
    id: str
    title: str
    abstract: str
    published: date
    doi: str


def default_works(n_filler: int = 20) -> list[Work]:
    named = [
        (
            "Predictive coding models of river sediment transport",
            "We combine predictive coding from neuroscience with sediment transport equations.",
            date(2019, 5, 2),
        ),
        (
            "Sediment transport in braided rivers",
            "Field measurements of bedload.",
            date(2005, 3, 1),
        ),
        (
            "Auction theory for spectrum allocation in wireless networks",
            "Mechanism design meets radio spectrum.",
            date(2012, 7, 9),
        ),
        (
            "Enzyme kinetics as queueing networks",
            "Michaelis-Menten kinetics read as queues.",
            date(2021, 1, 15),
        ),
        (
            "Graph neural networks for crystal lattice prediction",
            "Message passing on crystal graphs.",
            date(2023, 11, 30),
        ),
    ]
    works = [
        Work(f"W{i + 1}", t, a, d, f"10.5555/test.{i + 1}") for i, (t, a, d) in enumerate(named)
    ]
    for j in range(n_filler):
        works.append(
            Work(
                f"W{100 + j}",
                f"Filler study {j} of lattice signals",
                f"Lattice signal processing, part {j}.",
                date(2000 + j % 24, 6, 1),
                f"10.5555/filler.{j}",
            )
        )
    return works


@dataclass
class Arrival:
    at: float  # time.monotonic() when the request line was read
    api: str
    path: str
    params: dict[str, str]
    headers: dict[str, str]
    raw_query: str


@dataclass
class Fault:
    status: int
    retry_after: str | None = None
    echo: bool = False  # repeat the request's query string and headers in the body


@dataclass
class State:
    works: list[Work]
    openalex_key: str | None = None
    s2_key: str | None = None
    arrivals: list[Arrival] = field(default_factory=list)
    faults: dict[str, deque[Fault]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


class LiteratureServer:
    """Start with `with LiteratureServer() as server:`; `server.url` is the loopback base."""

    def __init__(
        self,
        works: list[Work] | None = None,
        *,
        openalex_key: str | None = None,
        s2_key: str | None = None,
    ) -> None:
        self.state = State(
            works=works or default_works(),
            openalex_key=openalex_key,
            s2_key=s2_key,
            faults={api: deque() for api in APIS},
        )
        state = self.state

        class Handler(_Handler):
            shared = state

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def base(self, api: str) -> str:
        return (
            self.url
            + {
                "openalex": "/openalex",
                "s2": "/s2/graph/v1",
                "arxiv": "/arxiv/api",
                "crossref": "/crossref",
            }[api]
        )

    def fail_next(
        self,
        api: str,
        status: int,
        *,
        retry_after: str | None = None,
        times: int = 1,
        echo: bool = False,
    ) -> None:
        with self.state.lock:
            for _ in range(times):
                self.state.faults[api].append(Fault(status, retry_after, echo))

    def arrivals(self, api: str | None = None) -> list[Arrival]:
        with self.state.lock:
            return [a for a in self.state.arrivals if api is None or a.api == api]

    def count(self, api: str | None = None) -> int:
        return len(self.arrivals(api))

    def __enter__(self) -> LiteratureServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    shared: State
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        arrived = time.monotonic()
        parts = urlsplit(self.path)
        params = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        api = parts.path.strip("/").split("/")[0]
        state = self.shared
        with state.lock:
            state.arrivals.append(
                Arrival(
                    arrived,
                    api,
                    parts.path,
                    params,
                    {k.lower(): v for k, v in self.headers.items()},
                    parts.query,
                )
            )
            fault = state.faults[api].popleft() if state.faults.get(api) else None
        routes = {
            "/openalex/works": _openalex,
            "/s2/graph/v1/paper/search": _s2,
            "/arxiv/api/query": _arxiv,
            "/crossref/works": _crossref,
        }
        route = routes.get(parts.path.rstrip("/"))
        if route is None:
            return self._send(404, "application/json", json.dumps({"error": "not found"}))
        if fault is not None:
            message = "injected fault"
            if fault.echo:  # like servers that repeat the request they could not serve
                message += f" for {parts.query} with headers {dict(self.headers.items())}"
            status, ctype, body = _error(api, fault.status, message)
            return self._send(status, ctype, body, fault.retry_after)
        status, ctype, body = route(state, params, self.headers)
        self._send(status, ctype, body)

    def _send(self, status: int, ctype: str, body: str, retry_after: str | None = None) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        if retry_after is not None:
            self.send_header("Retry-After", retry_after)
        self.end_headers()
        self.wfile.write(data)


# -- matching -----------------------------------------------------------------------------------
_WORD = re.compile(r"[a-z0-9]+")
_RESERVED = {"and", "or", "not", "all", "ti", "abs", "au"}


def _terms(query: str) -> list[str]:
    return [w for w in _WORD.findall(query.lower()) if w not in _RESERVED]


def _matches(
    works: list[Work], terms: list[str], until: date | None, require_all: bool = False
) -> list[tuple[int, Work]]:
    scored = []
    for work in works:
        if until is not None and work.published > until:
            continue
        words = set(_WORD.findall(f"{work.title} {work.abstract}".lower()))
        hits = sum(t in words for t in terms)
        if hits and (not require_all or hits == len(terms)):
            scored.append((hits, work))
    return sorted(scored, key=lambda s: (-s[0], s[1].id))


def _date(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


# -- error bodies in each API's format ----------------------------------------------------------
def _error(api: str, status: int, message: str) -> tuple[int, str, str]:
    if api == "openalex":
        return status, "application/json", json.dumps({"error": "Error", "message": message})
    if api == "s2":
        return status, "application/json", json.dumps({"error": message})
    if api == "crossref":
        return (
            status,
            "application/json",
            json.dumps(
                {
                    "status": "failed",
                    "message-type": "validation-failure",
                    "message": [{"type": "validation", "value": "", "message": message}],
                }
            ),
        )
    feed = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom" '
        'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">'
        "<title>arXiv Query</title><opensearch:totalResults>1</opensearch:totalResults>"
        "<entry><id>http://arxiv.org/api/errors</id><title>Error</title>"
        f"<summary>{escape(message)}</summary></entry></feed>"
    )
    return status, "application/atom+xml; charset=utf-8", feed


# -- OpenAlex -----------------------------------------------------------------------------------
def _openalex(state: State, params: dict[str, str], headers: Any) -> tuple[int, str, str]:
    if state.openalex_key and params.get("api_key") != state.openalex_key:
        return _error("openalex", 401, "Invalid or missing API key.")
    until = None
    if "filter" in params:
        name, _, value = params["filter"].partition(":")
        until = _date(value)
        if name != "to_publication_date" or until is None:
            return _error("openalex", 400, f"Invalid query parameters error: {params['filter']}")
    try:
        per_page = int(params.get("per_page", "25"))
        if not 1 <= per_page <= 100:
            raise ValueError
    except ValueError:
        return _error("openalex", 400, "per_page must be an integer between 1 and 100")
    cursor = params.get("cursor", "*")
    start = 0 if cursor == "*" else int(base64.b64decode(cursor).decode())
    found = _matches(state.works, _terms(params.get("search", "")), until)
    page = found[start : start + per_page]
    more = start + per_page < len(found)
    body = {
        "meta": {
            "count": len(found),
            "per_page": per_page,
            "page": None,
            "next_cursor": base64.b64encode(str(start + per_page).encode()).decode()
            if more
            else None,
        },
        "results": [
            {
                "id": f"https://openalex.org/{w.id}",
                "doi": f"https://doi.org/{w.doi}",
                "display_name": w.title,
                "title": w.title,
                "publication_year": w.published.year,
                "publication_date": w.published.isoformat(),
                "relevance_score": float(score),
                "abstract_inverted_index": _inverted(w.abstract),
            }
            for score, w in page
        ],
    }
    return 200, "application/json", json.dumps(body)


def _inverted(text: str) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for pos, word in enumerate(text.split()):
        index.setdefault(word, []).append(pos)
    return index


# -- Semantic Scholar ---------------------------------------------------------------------------
def _s2(state: State, params: dict[str, str], headers: Any) -> tuple[int, str, str]:
    if state.s2_key and headers.get("x-api-key") != state.s2_key:
        return _error("s2", 403, "Forbidden")
    if not params.get("query"):
        return _error("s2", 400, "Missing required parameter: 'query'")
    offset, limit = int(params.get("offset", "0")), int(params.get("limit", "100"))
    if not 1 <= limit <= 100:
        return _error("s2", 400, "Requested limit exceeds the maximum of 100")
    until = None
    if "publicationDateOrYear" in params:
        until = _date(params["publicationDateOrYear"].lstrip(":"))
    found = _matches(state.works, _terms(params["query"]), until)
    page = found[offset : offset + limit]
    body: dict[str, Any] = {
        "total": len(found),
        "offset": offset,
        "data": [
            {
                "paperId": f"s2{w.id}",
                "title": w.title,
                "year": w.published.year,
                "abstract": w.abstract,
                "publicationDate": w.published.isoformat(),
                "externalIds": {"DOI": w.doi},
            }
            for _, w in page
        ],
    }
    if offset + limit < len(found):
        body["next"] = offset + limit
    return 200, "application/json", json.dumps(body)


# -- arXiv --------------------------------------------------------------------------------------
_RANGE = re.compile(r"submittedDate:\[(\d{8})\d{4} TO (\d{8})\d{4}\]")


def _arxiv(state: State, params: dict[str, str], headers: Any) -> tuple[int, str, str]:
    query = params.get("search_query", "")
    until = None
    match = _RANGE.search(query)
    if match:
        end = match.group(2)
        until = date(int(end[:4]), int(end[4:6]), int(end[6:]))
        query = _RANGE.sub("", query)
    terms = _terms(query)
    if not terms:
        return _error("arxiv", 400, "malformed query: search_query is empty")
    start, size = int(params.get("start", "0")), int(params.get("max_results", "10"))
    found = _matches(state.works, terms, until, require_all=True)
    entries = "".join(
        f"<entry><id>http://arxiv.org/abs/{w.id}v1</id>"
        f"<published>{w.published.isoformat()}T00:00:00Z</published>"
        f"<updated>{w.published.isoformat()}T00:00:00Z</updated>"
        f"<title>{escape(w.title)}</title><summary>{escape(w.abstract)}</summary>"
        f"<author><name>A. Author</name></author><arxiv:doi>{w.doi}</arxiv:doi></entry>"
        for _, w in found[start : start + size]
    )
    feed = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom" '
        'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
        'xmlns:arxiv="http://arxiv.org/schemas/atom">'
        f"<title>arXiv Query: {escape(params.get('search_query', ''))}</title>"
        f"<opensearch:totalResults>{len(found)}</opensearch:totalResults>"
        f"<opensearch:startIndex>{start}</opensearch:startIndex>"
        f"<opensearch:itemsPerPage>{size}</opensearch:itemsPerPage>{entries}</feed>"
    )
    return 200, "application/atom+xml; charset=utf-8", feed


# -- Crossref -----------------------------------------------------------------------------------
def _crossref(state: State, params: dict[str, str], headers: Any) -> tuple[int, str, str]:
    until = None
    if "filter" in params:
        name, _, value = params["filter"].partition(":")
        until = _date(value)
        if name != "until-pub-date" or until is None:
            return _error("crossref", 400, f"Filter {name} specified but there is no such filter")
    rows, offset = int(params.get("rows", "20")), int(params.get("offset", "0"))
    if not 0 <= rows <= 1000:
        return _error("crossref", 400, "Integer specified as rows must be <= 1000")
    found = _matches(state.works, _terms(params.get("query", "")), until)
    items = [
        {
            "DOI": w.doi,
            "title": [w.title],
            "score": float(score),
            "issued": {"date-parts": [[w.published.year, w.published.month, w.published.day]]},
            "abstract": f"<jats:p>{escape(w.abstract)}</jats:p>",
        }
        for score, w in found[offset : offset + rows]
    ]
    body = {
        "status": "ok",
        "message-type": "work-list",
        "message-version": "1.0.0",
        "message": {
            "total-results": len(found),
            "items-per-page": rows,
            "items": items,
            "query": {"start-index": offset, "search-terms": params.get("query")},
        },
    }
    return 200, "application/json", json.dumps(body)
