"""What the remote sources share: one GET with spacing, retries, the cache and secret removal.

Secrets (API keys, the Crossref mailto) are added to a request at the moment it is sent and are
replaced by a marker everywhere else: in the cache key, the cache file, the search record and
every error message (`scrub`).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import quote, quote_plus, urlsplit

from harness._version import __version__
from harness.errors import HarnessError, PartialWork
from harness.literature.base import Hit, SearchRecord, SentRequest, Source, dedup_key
from harness.literature.cache import CachedResponse, ResponseCache, request_key
from harness.literature.defaults import (
    BACKOFF_S,
    MAX_RETRIES,
    MAX_RETRY_AFTER_S,
    REDACTED,
    TIMEOUT_S,
    SourceDefaults,
)
from harness.literature.ratelimit import (
    RETRY_STATUSES,
    backoff_seconds,
    retry_after_seconds,
    shared_limiter,
)
from harness.study.clock import utc_now

if TYPE_CHECKING:
    import httpx

USER_AGENT = f"cross-field-harness/{__version__} (literature search; httpx)"

log = logging.getLogger(__name__)


class Page(NamedTuple):
    """One page of a paged search: its items, the total the server reports, the next token."""

    items: list[Any]
    total: int | None
    next: str | None  # None: this was the last page


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise HarnessError(f"{name}={raw!r} is not a number of seconds", column=name) from None


class HttpSource(Source):
    """Base of the OpenAlex, arXiv, Semantic Scholar and Crossref sources."""

    defaults: SourceDefaults

    def __init__(
        self,
        *,
        base_url: str | None = None,
        interval: float | None = None,
        page_size: int | None = None,
        cache: bool | str | Path = True,
        max_retries: int = MAX_RETRIES,
        backoff: float = BACKOFF_S,
        timeout: float = TIMEOUT_S,
    ) -> None:
        d = self.defaults
        self.name = d.name
        self.database = d.database
        self.base_url = (base_url or os.environ.get(d.url_env) or d.base_url).rstrip("/")
        self.interval = (
            interval if interval is not None else env_float(d.interval_env, self.default_interval())
        )
        self.page_size = max(1, min(page_size or d.page_size, d.max_page_size))
        self.max_retries = max_retries
        self.backoff = backoff
        self._limiter = shared_limiter(self.base_url, self.interval)
        self._cache = (
            None if cache is False else ResponseCache(d.name, None if cache is True else cache)
        )
        import httpx  # loaded with the first remote source, not with the registry of sources

        self._client = httpx.Client(
            timeout=timeout, headers={"User-Agent": USER_AGENT}, follow_redirects=True
        )

    # -- what subclasses provide ---------------------------------------------------------------
    def default_interval(self) -> float:
        return self.defaults.interval_s

    def secret_params(self) -> dict[str, str]:
        """Query parameters that carry secrets (added only when sending)."""
        return {}

    def secret_headers(self) -> dict[str, str]:
        return {}

    #: keys of a JSON error body that hold the server's explanation, in order of preference
    error_keys: tuple[str, ...] = ()

    def error_message(self, response: httpx.Response) -> str:
        """The server's own explanation from an error body (format differs per API)."""
        if self.error_keys:
            try:
                body = response.json()
            except ValueError:
                return response.text[:300]
            if isinstance(body, dict):
                return str(next((body[k] for k in self.error_keys if body.get(k)), body))[:300]
        return response.text[:300]

    # -- secrets ---------------------------------------------------------------------------------
    def _secret_values(self) -> list[str]:
        values = [*self.secret_params().values(), *self.secret_headers().values()]
        out: list[str] = []
        for value in values:
            if value:
                out += [value, quote_plus(value), quote(value, safe="")]
        return sorted(set(out), key=len, reverse=True)

    def scrub(self, text: str) -> str:
        """`text` with every secret value (plain or URL-encoded) replaced."""
        for value in self._secret_values():
            text = text.replace(value, REDACTED)
        return text

    # -- one GET ---------------------------------------------------------------------------------
    def get(self, path: str, params: dict[str, str]) -> tuple[CachedResponse, SentRequest]:
        """GET `path` with `params`: from the cache, or from the server within its limits."""
        url = self.base_url + path
        shown_params = {**params, **{k: REDACTED for k in self.secret_params()}}
        shown_headers = {k: REDACTED for k in self.secret_headers()}
        key = request_key("GET", url, shown_params, shown_headers)
        cached = self._cache.get(key) if self._cache else None
        if cached is not None:
            log.debug("%s cache hit: GET %s", self.name, _where(url))
            return cached, self._sent(url, shown_params, shown_headers, cached, True)
        if self._cache:
            log.debug("%s cache miss: GET %s", self.name, _where(url))
        response = self._fetch(url, {**params, **self.secret_params()})
        if self._cache:
            request = {
                "method": "GET",
                "url": url,
                "params": shown_params,
                "headers": shown_headers,
            }
            self._cache.put(key, request, response)
        return response, self._sent(url, shown_params, shown_headers, response, False)

    @staticmethod
    def _sent(
        url: str,
        params: dict[str, str],
        headers: dict[str, str],
        response: CachedResponse,
        from_cache: bool,
    ) -> SentRequest:
        return SentRequest(
            url=url,
            params=params,
            headers=headers,
            status=response.status,
            fetched_at=response.fetched_at,
            from_cache=from_cache,
        )

    def _fetch(self, url: str, params: dict[str, str]) -> CachedResponse:
        import httpx

        attempt = 0
        while True:
            attempt += 1
            waited = self._limiter.wait()
            if waited > 0:
                log.debug("%s rate limit: waited %.2f s", self.name, waited)
            started = time.monotonic()
            try:
                response = self._client.get(url, params=params, headers=self.secret_headers())
            except httpx.TransportError as error:
                self._limiter.done()
                log.info(
                    "%s GET %s failed (%s), attempt %d",
                    self.name,
                    _where(url),
                    type(error).__name__,
                    attempt,
                )
                if attempt > self.max_retries:
                    raise PartialWork(
                        self.scrub(
                            f"{self.database}: no answer from {url} after {attempt} tries "
                            f"({type(error).__name__}: {error})"
                        )
                    ) from None
                delay = backoff_seconds(attempt, None, self.backoff)
                log.info(
                    "%s retry %d in %.1f s (%s)",
                    self.database,
                    attempt,
                    delay,
                    type(error).__name__,
                )
                self._limiter.defer(delay)
                continue
            self._limiter.done()
            log.info(
                "GET %s -> %d in %.2f s",
                _where(url),
                response.status_code,
                time.monotonic() - started,
            )
            if response.status_code in RETRY_STATUSES and attempt <= self.max_retries:
                self._defer_for(response, attempt, url)
                continue
            if response.status_code >= 400:
                # the server's failure (5xx, 429) is failed work (exit 1); a refused key or
                # query (other 4xx) is an input error (exit 2)
                failure = (
                    PartialWork if response.status_code in (429, *range(500, 600)) else HarnessError
                )
                raise failure(
                    self.scrub(
                        f"{self.database}: HTTP {response.status_code} from {url}: "
                        f"{self.error_message(response)}"
                    )
                )
            return CachedResponse(
                status=response.status_code,
                content_type=response.headers.get("content-type", ""),
                body=response.text,
                fetched_at=utc_now(),
            )

    def _defer_for(self, response: httpx.Response, attempt: int, url: str) -> None:
        asked = retry_after_seconds(response.headers.get("retry-after"))
        if asked is not None and asked > MAX_RETRY_AFTER_S:
            raise PartialWork(
                self.scrub(
                    f"{self.database}: HTTP {response.status_code} from {url}: the server asks to "
                    f"wait {asked:.0f} s before retrying (daily limit reached?); try again later"
                )
            )
        delay = backoff_seconds(attempt, asked, self.backoff)
        log.info(
            "%s HTTP %d, retry %d in %.1f s (%s)",
            self.database,
            response.status_code,
            attempt,
            delay,
            "Retry-After" if asked is not None else "backoff",
        )
        self._limiter.defer(delay)

    # -- records ---------------------------------------------------------------------------------
    def pages(
        self,
        path: str,
        limit: int,
        first: str,
        params: Callable[[str, int], dict[str, str]],
        parse: Callable[[Any, int | None, int], Page],
        to_hit: Callable[[Any, int], Hit],
    ) -> tuple[list[Hit], list[SentRequest], int | None]:
        """The paging loop of the JSON sources: GET `path` page by page, from token `first`, until
        `limit` hits or no next page. `params(token, size)` gives a page's query; `parse(body,
        total so far, hits so far)` reads its items, the total and the next token."""
        hits: list[Hit] = []
        requests: list[SentRequest] = []
        total: int | None = None
        token: str | None = first
        while token is not None and len(hits) < limit:
            response, sent = self.get(path, params(token, min(self.page_size, limit - len(hits))))
            requests.append(sent)
            page = parse(json_body(self, response, self.base_url + path), total, len(hits))
            total = page.total
            hits += [to_hit(item, len(hits) + i + 1) for i, item in enumerate(page.items)]
            token = page.next
        return hits[:limit], requests, total

    def interface(self, path: str) -> str:
        return f"{self.database} API, GET {self.base_url}{path}, via {USER_AGENT}"

    def record(
        self,
        *,
        query: str,
        path: str,
        settings: Mapping[str, object],
        filters: Mapping[str, object],
        requests: list[SentRequest],
        total: int | None,
        hits: list[Hit],
    ) -> SearchRecord:
        run_at = min((r.fetched_at for r in requests), default=utc_now())
        return SearchRecord(
            database=self.database,
            interface=self.interface(path),
            query=query,
            parameters={**settings, "requests": [r.model_dump() for r in requests]},
            filters=dict(filters),
            run_at=run_at,
            total_hits=total,
            hits=hits,
            dedup_key=dedup_key(self.database, query, filters),
        )

    def close(self) -> None:
        self._client.close()


def _where(url: str) -> str:
    """Host and path of a URL: never its query string, which may carry a key or an email."""
    parts = urlsplit(url)
    return f"{parts.netloc}{parts.path}"


def json_body(source: HttpSource, response: CachedResponse, url: str) -> Any:
    try:
        return json.loads(response.body)
    except ValueError:
        raise PartialWork(
            f"{source.database}: the answer from {url} is not JSON "
            f"(content type {response.content_type!r})"
        ) from None


def clean_doi(doi: str | None) -> str | None:
    """A bare DOI (`10.xxx/yyy`), without the resolver prefix some APIs add."""
    if not doi:
        return None
    doi = doi.strip()
    for prefix in ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "doi:"):
        if doi.lower().startswith(prefix):
            doi = doi[len(prefix) :]
    return doi or None
