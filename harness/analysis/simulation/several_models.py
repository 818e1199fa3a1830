"""Simulated studies with several models for the across-models analysis: topic and prompt effects
shared by all models (they answer the same prompts), each model with its own base rate and its own
cross-field effect; each output judged by `reviewers` reviewers without error."""

from __future__ import annotations

import numpy as np
from scipy import special


def model_batch(
    *,
    studies: int,
    topics: int,
    base_rates: list[float],
    effects: list[float],
    samples: int = 1,
    reviewers: int = 3,
    sd_topic: float = 0.8,
    sd_prompt: float = 0.5,
    rng: np.random.Generator,
) -> np.ndarray:
    """(studies, topics, models, 3) proportions judged novel (single_a, single_b, cross).

    `effects` are on the probability scale at the model's base rate, turned into logit shifts."""
    mu = special.logit(np.asarray(base_rates))
    beta = special.logit(np.asarray(base_rates) + np.asarray(effects)) - mu
    shape = (studies, topics, 1, 3, 1)
    eta = (
        rng.normal(0.0, sd_topic, (studies, topics, 1, 1, 1))
        + rng.normal(0.0, sd_prompt, shape)  # the prompt's own effect
        + mu[None, None, :, None, None]
    )
    eta = np.broadcast_to(eta, (studies, topics, mu.size, 3, 1)).copy()
    eta[:, :, :, 2] += beta[None, None, :, None]
    prob = special.expit(eta)
    novel = rng.random((studies, topics, mu.size, 3, samples * reviewers)) < prob
    proportions: np.ndarray = novel.mean(axis=4)
    return proportions
