"""The study's judgments split by model for the across-models analysis (harness.analysis.
across_models): each model's topic table as the primary analysis builds it, on the topics that
are complete in every model."""

from __future__ import annotations

import numpy as np

from harness.analysis.plan.plan_file import Plan
from harness.analysis.statistics.across_models import AcrossModels, across_models
from harness.analysis.statistics.consensus import Judgments
from harness.analysis.statistics.primary import table_for


def models_of(j: Judgments) -> list[str]:
    if j.item_model is None:
        return []
    return sorted({str(m) for m in j.item_model[np.unique(j.item)]})


def study_across_models(j: Judgments, plan: Plan) -> AcrossModels | None:
    """None for a study with one model or without a topic complete in every model."""
    models = models_of(j)
    if len(models) < 2 or j.item_model is None:
        return None
    tables = [table_for(j.subset(j.item_model[j.item] == m), plan) for m in models]
    complete = np.logical_and.reduce([t.complete for t in tables])
    if complete.sum() < 2:
        return None
    p = np.stack([t.p[complete] for t in tables], axis=1)  # (T, M, 3)
    return across_models(
        p,
        models,
        single=plan.single,
        alpha=plan.primary.alpha,
        mid_p=plan.primary.p_value == "mid",
        permutations=plan.primary.permutations,
        seed=plan.primary.seed,
    )
