"""The models a study holds: their collect settings as the meta table keeps them, by key, and
their ok outputs. Here, in the store, because `collect`, `status`, the judge and the store's own
reads (`judge_reads.pending_outputs`) all read them, and none of them may load the backends to.
"""

from __future__ import annotations

import json

from harness.study.records import JsonObject
from harness.study.store import Study
from harness.study.tables.outputs import outputs_by_model

MODELS_KEY = "collect_models"
#: A model's settings as the study's meta table keeps them (JSON under `MODELS_KEY`, by key):
#: backend, model, the sampling settings, its identity keys (`extra.NAME` fields included),
#: `id_suffix` and `run_options`. Keys vary with the model, so it stays a JSON object.
ModelSettings = JsonObject


def stored_models(study: Study) -> dict[str, ModelSettings]:
    """Each model's stored settings, by key."""
    models: dict[str, ModelSettings] = json.loads(study.meta(MODELS_KEY) or "{}")
    return models


def model_counts(study: Study) -> dict[str, int]:
    """Ok outputs per model key, for every model of the study (its collect settings' models and
    any other key its outputs carry)."""
    counts = outputs_by_model(study)
    stored = stored_models(study)
    keys = [*stored, *sorted(k for k in counts if k not in stored)]
    return {k: counts[k].ok if k in counts else 0 for k in keys}


def _samples_of(settings: ModelSettings) -> int:
    """Samples per prompt a model's stored settings ask for (1 when they do not say)."""
    samples = settings.get("samples")
    if isinstance(samples, bool) or not isinstance(samples, int | float) or samples < 1:
        return 1
    return int(samples)


def wanted_samples(study: Study) -> dict[str, int]:
    """Samples per prompt each of the study's models asks for, by key (1 where not stored)."""
    return {key: _samples_of(settings) for key, settings in stored_models(study).items()}
