"""The models `collect --model` names, checked before the study is opened: a refused name must
leave the study folder as it was, and opening a study starts its command log."""

from __future__ import annotations

import json
from pathlib import Path

from harness.errors import HarnessError
from harness.models.providers import resolve_model
from harness.study.tables.collect_models import MODELS_KEY
from harness.study.tables.meta import peek_meta


def check_model_names(study: Path, models: list[str] | None, backend: str | None) -> None:
    """Refuse a `--model` the resolver refuses, unless it is the older habit that `collect`
    still reads: a bare NAME that resumes the study's own model of that name."""

    for text in models or []:
        try:
            resolve_model(text, backend)
        except HarnessError:
            if backend is None and "/" not in text and text in _stored_names(study):
                continue
            raise


def _stored_names(study: Path) -> set[str]:
    """The model names (as requested) of the study's collected models, read without writing."""

    try:
        stored = json.loads(peek_meta(study, MODELS_KEY) or "{}")
    except ValueError:
        return set()  # `collect` reports a damaged store in its own words
    return {str(s.get("model")) for s in stored.values() if isinstance(s, dict)}
