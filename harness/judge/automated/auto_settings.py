"""Every setting of `judge --auto` / `--calibrate`, checked before the study is touched.

A refusal must come before any review is stored and before the command line reaches the
manifest (a `--base-url` with a key in it would otherwise be recorded), so these checks need
nothing but the settings themselves.
"""

from __future__ import annotations

import math
from pathlib import Path

from harness.errors import HarnessError
from harness.judge.automated.server_options import backend_options
from harness.judge.automated.unsure_limit import check_accepted_ids
from harness.judge.routing.roster import reviewer_model
from harness.literature.review_methods import split_method
from harness.literature.sources import check_source_spec
from harness.models.endpoint import check_base_url
from harness.models.providers import PROVIDERS
from harness.study.files import store_path
from harness.study.tables.reviewers import automated_ids_read_only, automated_methods_read_only

__all__ = [
    "check_accepted_reviewers",
    "check_auto_settings",
    "check_reviewer_models",
]


def check_auto_settings(
    *,
    backend: str | None = None,
    base_url: str | None = None,
    concurrency: int | None = None,
    sources: list[str] | None = None,
    threshold: float | None = None,
    max_queries: int = 3,
) -> None:
    """Raise HarnessError naming the first setting that cannot work."""
    if backend is not None and backend not in PROVIDERS:
        raise HarnessError(
            f"unknown backend {backend!r} (choose from {', '.join(PROVIDERS)}; or name each "
            "reviewer's model by a provider string in the roster, method: llm:openai/NAME)",
            column="--backend",
        )
    # without --backend, --base-url and --concurrency serve every OpenAI-compatible reviewer
    name = "openai" if backend is None else PROVIDERS[backend].backend
    backend_options(name, base_url=base_url, concurrency=concurrency)
    if base_url is not None:
        check_base_url(base_url, column="--base-url")
    if isinstance(max_queries, bool) or not isinstance(max_queries, int) or max_queries < 1:
        raise HarnessError(
            f"--max-queries must be a whole number of at least 1 (got {max_queries!r})",
            column="--max-queries",
        )
    if threshold is not None and not (
        isinstance(threshold, int | float) and math.isfinite(threshold)
    ):
        raise HarnessError(
            f"--threshold must be a finite number (got {threshold!r})", column="--threshold"
        )
    for spec in sources or []:
        check_source_spec(spec)


def check_reviewer_models(study_dir: str | Path, backend: str | None = None) -> None:
    """Every reviewer of the stored roster whose method needs a model (`llm:MODEL`) names one
    the one resolver reads (`harness.judge.routing.roster.reviewer_model`), checked before the
    study is opened for writing: the store is read without a lock, a log or a WAL file (nothing
    in the folder changes)."""
    db = store_path(study_dir)
    if not db.is_file():
        return  # opening the study says what is wrong
    for reviewer_id, method in automated_methods_read_only(db):
        named = split_method(method)
        if named is not None and named[0].needs_model:
            reviewer_model(reviewer_id, method, backend)


def check_accepted_reviewers(study_dir: str | Path, accept_unsure: tuple[str, ...]) -> None:
    """`--accept-unsure` names automated reviewers of the stored roster, checked before the
    study is opened for writing (read as `check_reviewer_models` reads)."""
    db = store_path(study_dir)
    automated = automated_ids_read_only(db) if db.is_file() and accept_unsure else None
    if automated is not None:
        check_accepted_ids(accept_unsure, automated)
