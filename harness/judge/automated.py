"""Automated reviewers on their assigned blinded items: `harness judge --auto`.

Reads only what a reviewer may see (items.display_text and items.core_combination; never
prompts, topics or conditions), and writes each item's review (source='automated') together
with its search records in one transaction, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError
from harness.literature.defaults import DENSE_THRESHOLD, LEXICAL_THRESHOLD
from harness.study.clock import utc_now
from harness.study.lock import writes_study

if TYPE_CHECKING:
    import pandas as pd

    from harness.literature.base import Source
    from harness.literature.reviewers import Decision
    from harness.study.store import Study

SOURCE = "automated"
Progress = Callable[[str, int, int], None]   # (reviewer_id, items done, items pending)


@writes_study
def run_automated(
    study: Study,
    *,
    sources: list[str] | None = None,
    threshold: float | None = None,
    cutoff: str | None = None,
    max_queries: int = 3,
    backend: str | None = None,
    progress: Progress | None = None,
    base_url: str | None = None,
    concurrency: int | None = None,
) -> pd.DataFrame:
    """Review every pending assignment of every automated reviewer; one row per reviewer.

    `sources`: source specs for `harness.literature.open_source` (default `["local"]`, the
    demonstration corpus); `threshold`: match score for `published` (default per method);
    `cutoff`: publication-date cut-off (YYYY-MM-DD or YYYY), by default the one `judge --blind`
    stored, and refused if it differs from it; `backend`: model backend for `llm:MODEL`
    reviewers, with `base_url` and `concurrency` for the `openai` backend.
    """
    import pandas as pd

    from harness.judge.backend import backend_options
    from harness.judge.cutoff import settle_cutoff

    cutoff = settle_cutoff(study, cutoff)
    options = backend_options(backend or "local", base_url=base_url, concurrency=concurrency)
    if max_queries < 1:
        raise HarnessError("max_queries must be at least 1", column="max_queries")
    reviewers = study.rows(
        "SELECT reviewer_id, method FROM reviewers WHERE kind = 'automated' ORDER BY reviewer_id"
    )
    pool = _SourcePool(sources or ["local"])
    makers = [(r["reviewer_id"], r["method"],
               _reviewer_factory(r["reviewer_id"], r["method"], pool, threshold=threshold,
                                 cutoff=cutoff, max_queries=max_queries, backend=backend,
                                 options=options))
              for r in reviewers]
    _record_run(study, pool.specs, reviewers, threshold, cutoff, max_queries, backend, options)
    rows = []
    try:
        for reviewer_id, method, make in makers:
            new = _review_pending(study, reviewer_id, make, progress)
            rows.append(_summary(study, reviewer_id, method, new))
    finally:
        pool.close()
    columns = ["reviewer_id", "method", "assigned", "reviewed", "new", "published",
               "not_published", "unsure"]
    return pd.DataFrame(rows, columns=columns)


def _record_run(study: Study, sources: list[str], reviewers: list[Any],
                threshold: float | None, cutoff: str | None, max_queries: int,
                backend: str | None, options: dict[str, Any]) -> None:
    """Provenance in the manifest: sources, thresholds, cut-off and query budget of this run."""
    from harness.judge.backend import public_options
    from harness.study.manifest import record_command

    def used(method: str) -> float | None:
        if threshold is not None or method.startswith("llm:"):
            return threshold
        return DENSE_THRESHOLD if method == "retrieval-dense" else LEXICAL_THRESHOLD

    record_command(study.path, "judge --auto", {
        "sources": sources, "cutoff": cutoff, "max_queries": max_queries, "backend": backend,
        "reviewers": [{"id": r["reviewer_id"], "method": r["method"],
                       "threshold": used(r["method"] or "")} for r in reviewers],
        **public_options(options),
    })


class _SourcePool:
    """Sources opened once per run (the BM25 index and embedding model load once)."""

    def __init__(self, specs: list[str]) -> None:
        self.specs = specs
        self._open: dict[tuple[str, bool], Source] = {}

    def get(self, dense: bool) -> list[Source]:
        from harness.literature import open_source

        out = []
        for spec in self.specs:
            key = (spec, dense and spec.split(":")[0].strip().lower() == "local")
            if key not in self._open:
                self._open[key] = open_source(spec, **({"dense": True} if key[1] else {}))
            out.append(self._open[key])
        return out

    def close(self) -> None:
        for source in self._open.values():
            source.close()


def _reviewer_factory(reviewer_id: str, method: str | None, pool: _SourcePool, *,
                      threshold: float | None, cutoff: str | None, max_queries: int,
                      backend: str | None, options: dict[str, Any]) -> Callable[[], Any]:
    """A function that builds the reviewer on first use (nothing loads for finished reviewers)."""
    method = (method or "").strip()
    if method in ("retrieval", "retrieval-dense"):
        dense = method == "retrieval-dense"

        def make() -> Any:
            from harness.literature.reviewers import RetrievalReviewer

            limit = threshold if threshold is not None else (
                DENSE_THRESHOLD if dense else LEXICAL_THRESHOLD)
            return RetrievalReviewer(pool.get(dense), threshold=limit, dense=dense,
                                     cutoff=cutoff, max_queries=max_queries)
        return make
    if method.startswith("llm:"):
        model = method[4:].strip()

        def make_llm() -> Any:
            from harness.literature.llm_reviewer import LlmReviewer
            from harness.models import open_backend

            chosen = None if model in ("", "embedded", "local") else model
            return LlmReviewer(open_backend(backend or "local", chosen, **options),
                               pool.get(False), cutoff=cutoff, max_queries=max_queries)
        return make_llm
    raise HarnessError(
        f"reviewer {reviewer_id!r}: unknown automated method {method!r} "
        "(use retrieval, retrieval-dense or llm:MODEL)", column="method",
    )


def _pending(study: Study, reviewer_id: str) -> list[Any]:
    return study.rows(
        "SELECT a.item_id, i.display_text, i.core_combination FROM assignments a "
        "JOIN items i ON i.item_id = a.item_id "
        "LEFT JOIN reviews r ON r.item_id = a.item_id AND r.reviewer_id = a.reviewer_id "
        "WHERE a.reviewer_id = ? AND r.item_id IS NULL ORDER BY a.position",
        (reviewer_id,),
    )


def item_text(display_text: str, core: str | None, *, for_model: bool) -> str:
    """What an automated reviewer reads: the core combination (else the text), nothing else."""
    core = (core or "").strip()
    if not for_model:
        return core or display_text
    return f"Core combination: {core}\n\n{display_text}" if core else display_text


def _review_pending(study: Study, reviewer_id: str, make: Callable[[], Any],
                    progress: Progress | None) -> int:
    pending = _pending(study, reviewer_id)
    if not pending:
        return 0
    reviewer = make()
    for_model = bool(getattr(reviewer, "reads_full_text", False))
    for done, row in enumerate(pending, start=1):
        text = item_text(row["display_text"], row["core_combination"], for_model=for_model)
        decision = reviewer.review(text)
        _write(study, row["item_id"], reviewer_id, decision)
        if progress is not None:
            progress(reviewer_id, done, len(pending))
    return len(pending)


def _write(study: Study, item_id: str, reviewer_id: str, decision: Decision) -> None:
    now = utc_now()
    with study.transaction() as conn:
        conn.execute(
            "INSERT INTO reviews (item_id, reviewer_id, verdict, confidence, prior_work, notes,"
            " source, import_id, source_sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL,"
            " NULL, ?)",
            (item_id, reviewer_id, decision.verdict, decision.confidence, decision.prior_work,
             decision.notes_json(), SOURCE, now),
        )
        for search in decision.searches:
            conn.execute(*search_row(search.record, search.relevant, item_id, reviewer_id))


def search_row(record: Any, relevant: list[str], item_id: str | None,
               reviewer_id: str | None) -> tuple[str, tuple[Any, ...]]:
    """The INSERT for one search record (also usable for records made outside a review)."""
    import json

    return (
        "INSERT INTO searches (search_id, item_id, reviewer_id, database, interface, query,"
        " parameters, filters, run_at, total_hits, hits, relevant_ids, dedup_key, source,"
        " import_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
        (uuid.uuid4().hex, item_id, reviewer_id, record.database, record.interface,
         record.query, json.dumps(record.parameters, ensure_ascii=False, sort_keys=True),
         json.dumps(record.filters, ensure_ascii=False, sort_keys=True), record.run_at,
         record.total_hits, record.hits_json(), json.dumps(relevant, ensure_ascii=False),
         record.dedup_key, SOURCE),
    )


def _summary(study: Study, reviewer_id: str, method: str, new: int) -> dict[str, Any]:
    counts = {r["verdict"]: r["n"] for r in study.rows(
        "SELECT verdict, COUNT(*) AS n FROM reviews WHERE reviewer_id = ? GROUP BY verdict",
        (reviewer_id,),
    )}
    return {
        "reviewer_id": reviewer_id, "method": method,
        "assigned": study.count("assignments", "reviewer_id = ?", (reviewer_id,)),
        "reviewed": sum(counts.values()), "new": new,
        "published": counts.get("published", 0),
        "not_published": counts.get("not_published", 0), "unsure": counts.get("unsure", 0),
    }
