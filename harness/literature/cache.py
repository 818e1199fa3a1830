"""On-disk response cache keyed by the exact request (secrets removed before hashing or storing).

One JSON file per request under `<cache>/<source>/<key[:2]>/<key>.json`, written atomically.
Only successful responses are cached, so a retry after an error always asks the server again.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.defaults import cache_dir
from harness.literature.defaults import CACHE_ENV
from harness.study.scrub import scrub


@dataclass(frozen=True)
class CachedResponse:
    status: int
    content_type: str
    body: str
    fetched_at: str


def request_key(method: str, url: str, params: dict[str, str], headers: dict[str, str]) -> str:
    """SHA-256 of the request as sent, with secret values already replaced by the caller."""
    canonical = json.dumps(
        {
            "method": method.upper(),
            "url": url,
            "params": sorted(params.items()),
            "headers": sorted((k.lower(), v) for k, v in headers.items()),
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def default_cache_root() -> Path:
    override = os.environ.get(CACHE_ENV)
    if override:
        path = Path(override)
        path.mkdir(parents=True, exist_ok=True)
        return path
    return cache_dir("literature")


class ResponseCache:
    """Responses of one source, stored as JSON files."""

    def __init__(self, source: str, root: str | Path | None = None) -> None:
        self.folder = Path(root) if root is not None else default_cache_root()
        self.folder = self.folder / source

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedResponse | None:
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return CachedResponse(
                status=int(data["status"]),
                content_type=str(data["content_type"]),
                body=str(data["body"]),
                fetched_at=str(data["fetched_at"]),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing or unreadable entries are simply fetched again

    def put(self, key: str, request: Mapping[str, object], response: CachedResponse) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        # a server may echo a key back: the cache file passes the same secret scan as the study
        payload = scrub(
            {
                "request": request,
                "status": response.status,
                "content_type": response.content_type,
                "body": response.body,
                "fetched_at": response.fetched_at,
            }
        )
        handle, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(payload, out, ensure_ascii=False)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
