"""Power and topics needed with several models answering the same prompts (`harness power
--models`), normal approximation like the one-model paired figure.

Pooled: the primary test runs on each topic's difference averaged over the N models. With each
model's d_t of SD sigma and a correlation r between two models' d_t of one topic (they share the
topic and each prompt's own effect), the average has SD sigma * sqrt((1 + (N - 1) r) / N): more
models help only as far as they disagree. An effect in every model keeps its size; an effect in
one model of N is diluted to effect / N.

Per model: each model's test at Holm's adjusted alpha. Holm's first step is alpha / N and later
steps are larger, so the power at alpha / N is a lower bound (tight when the other models have no
effect) for the power to find a model that has the effect.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TypedDict, cast

from harness.analysis.statistics.sample_size import paired_power, paired_sample_size
from harness.errors import HarnessError


class ModelsPowerFigures(TypedDict):
    """`ModelsPower` as a dict (`as_dict`)."""

    models: int
    correlation: float
    sd_model: float
    sd_pooled: float
    pooled_power: float
    pooled_needed: int | None
    pooled_one_power: float
    pooled_one_needed: int | None
    per_model_alpha: float
    per_model_power: float
    per_model_needed: int | None


@dataclass(frozen=True)
class ModelsPower:
    models: int
    correlation: float
    sd_model: float  # SD of one model's d_t
    sd_pooled: float  # SD of the d_t averaged over models
    pooled_power: float  # effect in every model
    pooled_needed: int | None
    pooled_one_power: float  # effect in one model only (diluted to effect / N)
    pooled_one_needed: int | None
    per_model_alpha: float  # alpha / N: Holm's first step
    per_model_power: float  # for a model with the effect (lower bound under Holm)
    per_model_needed: int | None

    def as_dict(self) -> ModelsPowerFigures:
        return cast(ModelsPowerFigures, asdict(self))


def pooled_sd(sd: float, models: int, correlation: float) -> float:
    """SD of the mean of `models` equicorrelated differences of SD `sd`."""
    if models < 1 or not 0.0 <= correlation <= 1.0:
        raise HarnessError("models must be at least 1 and the correlation in [0, 1]")
    return sd * math.sqrt((1.0 + (models - 1) * correlation) / models)


def _needed(effect: float, sd: float, alpha: float, target: float) -> int | None:
    try:
        return paired_sample_size(effect, sd, alpha, target)
    except HarnessError:
        return None


def models_power(
    *,
    topics: float,
    effect: float,
    sd: float,
    models: int,
    correlation: float,
    alpha: float,
    target: float,
) -> ModelsPower:
    sd_pool = pooled_sd(sd, models, correlation)
    diluted = effect / models
    per_alpha = alpha / models
    return ModelsPower(
        models=models,
        correlation=correlation,
        sd_model=sd,
        sd_pooled=sd_pool,
        pooled_power=paired_power(topics, effect, sd_pool, alpha),
        pooled_needed=_needed(effect, sd_pool, alpha, target),
        pooled_one_power=paired_power(topics, diluted, sd_pool, alpha),
        pooled_one_needed=_needed(diluted, sd_pool, alpha, target),
        per_model_alpha=per_alpha,
        per_model_power=paired_power(topics, effect, sd, per_alpha),
        per_model_needed=_needed(effect, sd, per_alpha, target),
    )


def models_lines(m: ModelsPowerFigures, topics: int, effect: float) -> list[str]:
    """The summary lines of `harness power` for several models."""
    return [
        f"  Several models: {m['models']}, correlation of a topic's d_t between models "
        f"{m['correlation']:g} (SD of d per model {m['sd_model']:.3f}, averaged "
        f"{m['sd_pooled']:.3f})",
        f"    pooled, effect {effect:+g} in every model: power {m['pooled_power']:.3f} with "
        f"{topics} topics; topics needed {m['pooled_needed']}",
        f"    pooled, effect in one model only (diluted to {effect / m['models']:+.3g}): power "
        f"{m['pooled_one_power']:.3f}; topics needed {m['pooled_one_needed']}",
        f"    per model at Holm's alpha (first step {m['per_model_alpha']:.4g}), a model with "
        f"the effect: power >= {m['per_model_power']:.3f}; topics needed "
        f"{m['per_model_needed']}",
    ]
