"""Literature sources behind one interface: a query in, an auditable `SearchRecord` out.

    >>> from harness.literature import search
    >>> record = search("predictive coding sediment transport", source="local", limit=5)
    >>> [hit.title for hit in record.hits]

Sources: `local` (BM25 over a JSONL/Parquet/datasets corpus; the demonstration corpus when no
corpus is given), `openalex`, `arxiv`, `semanticscholar`, `crossref`.

The record types (`Hit`, `SearchRecord`, `SentRequest`, `Source`, `dedup_key`) are pydantic
models: they are imported from `harness.literature.base`, so that `import harness` stays light.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError
from harness.literature.defaults import DEFAULT_LIMIT, SOURCE_NAMES

if TYPE_CHECKING:
    from harness.literature.base import SearchRecord, Source

__all__ = ["SOURCE_NAMES", "open_source", "search"]


def open_source(name: str, **options: Any) -> Source:
    """Open a source by name. `local:PATH` is shorthand for `local` with `corpus=PATH`.

    Options: local - corpus, dense, rerank_depth, k1, b; remote - base_url, interval,
    page_size, cache (True, False or a folder), max_retries, backoff, timeout.
    """
    name, _, argument = name.partition(":")
    name = name.strip().lower()
    if name == "local":
        from harness.literature.local import LocalSource

        if argument:
            options.setdefault("corpus", argument)
        return LocalSource(**options)
    if argument:
        raise HarnessError(f"source {name!r} takes no ':' argument", column="source")
    cls: type[Source]
    if name == "openalex":
        from harness.literature.openalex import OpenAlexSource

        cls = OpenAlexSource
    elif name == "arxiv":
        from harness.literature.arxiv import ArxivSource

        cls = ArxivSource
    elif name == "semanticscholar":
        from harness.literature.semanticscholar import SemanticScholarSource

        cls = SemanticScholarSource
    elif name == "crossref":
        from harness.literature.crossref import CrossrefSource

        cls = CrossrefSource
    else:
        raise HarnessError(
            f"unknown literature source {name!r} (choose from {', '.join(SOURCE_NAMES)})",
            column="source",
        )
    return cls(**options)


def search(
    query: str,
    source: str = "local",
    *,
    cutoff: str | date | None = None,
    limit: int = DEFAULT_LIMIT,
    **options: Any,
) -> SearchRecord:
    """Run one search on one source and return its record."""
    if not query or not query.strip():
        raise HarnessError("the query is empty", column="query")
    with open_source(source, **options) as opened:
        return opened.search(query.strip(), cutoff=cutoff, limit=limit)
