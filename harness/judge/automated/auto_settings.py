"""The checks of `judge --auto` / `--calibrate` that read the stored roster, made before the
study is opened for writing (the settings' own checks, which need nothing but the settings, are
in `harness.judge.settings_checks`).
"""

from __future__ import annotations

from pathlib import Path

from harness.judge.automated.unsure_limit import check_accepted_ids
from harness.judge.routing.roster import reviewer_model
from harness.literature.review_methods import split_method
from harness.study.files import store_path
from harness.study.tables.reviewers import automated_ids_read_only, automated_methods_read_only

__all__ = ["check_accepted_reviewers", "check_reviewer_models"]


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
