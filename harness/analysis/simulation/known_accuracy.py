"""Many simulated studies at once, with reviewers of known accuracy, for the controls benchmark,
the equivalence-test comparison and the small verdict simulation in the tests.

Two models, both vectorised over studies (axis 0) and topics (axis 1):
- `latent`: the design of `harness.analysis.simulation.full_design` (reviewer bias and noise on
  the logit scale);
- `misclassified`: each output is truly novel or not (the latent model without reviewer terms),
  and each reviewer reports it with a sensitivity and specificity, possibly differing between
  cross-field and single-field material. The observed novel rate is then (1 - sens) + J * pi.
Per topic the difference d_t is formed as the primary analysis forms it with `mean_of_singles`
and `unsure` counted as not novel (item score = mean over reviewers; topics complete).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from harness.analysis.plan.plan_file import Design
from harness.analysis.simulation.full_design import latent_parameters


@dataclass(frozen=True)
class Reviewers:
    """Accuracy of every reviewer (the same for all), optionally per condition."""

    sensitivity: float
    specificity: float
    sensitivity_cross: float | None = None  # differential accuracy on cross-field material
    specificity_cross: float | None = None


@dataclass(frozen=True)
class Batch:
    p: np.ndarray  # (studies, topics, 3) proportions judged novel per condition
    pub_n: np.ndarray  # (studies, 2) published control judgments (cross, single)
    pub_correct: np.ndarray  # ... judged not novel
    unpub_n: np.ndarray
    unpub_correct: np.ndarray  # unpublished control judgments judged novel
    # per reviewer (studies, R), for reviewers who differ: control counts and each reviewer's
    # share of the absolute weights of the real judgments in d_t
    by_reviewer: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
    shares: np.ndarray | None = None

    @property
    def d(self) -> np.ndarray:
        result: np.ndarray = self.p[:, :, 2] - (self.p[:, :, 0] + self.p[:, :, 1]) / 2.0
        return result


def _eta(
    design: Design,
    studies: int,
    topics: int,
    mu: float,
    beta: float,
    rng: np.random.Generator,
    reviewer_terms: bool,
) -> np.ndarray:
    m, r = design.samples, (design.reviewers if reviewer_terms else 1)
    eta = (
        mu
        + rng.normal(0.0, design.sd_topic, (studies, topics, 1, 1, 1))
        + rng.normal(0.0, design.sd_topic_condition, (studies, topics, 3, 1, 1))
        + rng.normal(0.0, design.sd_sample, (studies, topics, 3, m, 1))
    )
    if reviewer_terms:
        eta = (
            eta
            + rng.normal(0.0, design.sd_reviewer, (studies, 1, 1, 1, r))
            + rng.normal(0.0, design.sd_noise, (studies, topics, 3, m, r))
        )
    eta[:, :, 2] += beta
    return eta


def _proportions(novel: np.ndarray) -> np.ndarray:
    """(studies, topics, 3, samples, reviewers) booleans -> (studies, topics, 3) proportions."""
    result: np.ndarray = novel.mean(axis=4).mean(axis=3)
    return result


def _differences(novel: np.ndarray) -> np.ndarray:
    """d_t with the mean of singles."""
    p = _proportions(novel)
    result: np.ndarray = p[:, :, 2] - (p[:, :, 0] + p[:, :, 1]) / 2.0
    return result


def latent_batch(
    design: Design,
    *,
    studies: int,
    topics: int,
    p_single: float,
    effect: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """d_t of `studies` studies under the latent design (unsure counted as not novel)."""
    mu, beta = latent_parameters(design, p_single, effect)
    eta = _eta(design, studies, topics, mu, beta, rng, reviewer_terms=True)
    novel = rng.random(eta.shape) < special.expit(eta)
    if design.unsure_rate > 0:
        novel &= rng.random(eta.shape) >= design.unsure_rate
    return _differences(novel)


def misclassified_batch(
    design: Design,
    reviewers: Reviewers,
    *,
    studies: int,
    topics: int,
    p_single: float,
    effect: float,
    controls_per_reviewer: int,
    rng: np.random.Generator,
) -> Batch:
    """True novelty per output, then each reviewer's report; controls half published, half not,
    half cross-field and half single-field, scored with the same accuracy."""
    clean = design.model_copy(update={"unsure_rate": 0.0, "sd_reviewer": 0.0, "sd_noise": 0.0})
    mu, beta = latent_parameters(clean, p_single, effect)
    eta = _eta(clean, studies, topics, mu, beta, rng, reviewer_terms=False)
    truth = rng.random(eta.shape) < special.expit(eta)  # (S, T, 3, m, 1)
    shape = (*truth.shape[:4], design.reviewers)
    sens = np.full(3, reviewers.sensitivity)
    spec = np.full(3, reviewers.specificity)
    if reviewers.sensitivity_cross is not None:
        sens[2] = reviewers.sensitivity_cross
    if reviewers.specificity_cross is not None:
        spec[2] = reviewers.specificity_cross
    u = rng.random(shape)
    says_novel = np.where(
        truth, u < spec[None, None, :, None, None], u >= sens[None, None, :, None, None]
    )
    half = controls_per_reviewer // 2
    n_pub = np.array([half // 2, half - half // 2]) * design.reviewers
    n_unpub = (
        np.array(
            [
                (controls_per_reviewer - half) // 2,
                controls_per_reviewer - half - (controls_per_reviewer - half) // 2,
            ]
        )
        * design.reviewers
    )
    sens_c = (
        reviewers.sensitivity
        if reviewers.sensitivity_cross is None
        else reviewers.sensitivity_cross
    )
    spec_c = (
        reviewers.specificity
        if reviewers.specificity_cross is None
        else reviewers.specificity_cross
    )
    pub_correct = np.stack(
        [
            rng.binomial(n_pub[0], sens_c, studies),
            rng.binomial(n_pub[1], reviewers.sensitivity, studies),
        ],
        axis=1,
    )
    unpub_correct = np.stack(
        [
            rng.binomial(n_unpub[0], spec_c, studies),
            rng.binomial(n_unpub[1], reviewers.specificity, studies),
        ],
        axis=1,
    )
    return Batch(
        p=_proportions(says_novel),
        pub_n=np.tile(n_pub, (studies, 1)),
        pub_correct=pub_correct,
        unpub_n=np.tile(n_unpub, (studies, 1)),
        unpub_correct=unpub_correct,
    )


def mixed_reviewers_batch(
    design: Design,
    accuracies: list[tuple[float, float]],
    shares: list[float],
    controls: list[int],
    *,
    studies: int,
    topics: int,
    p_single: float,
    effect: float,
    rng: np.random.Generator,
) -> Batch:
    """Reviewers of different accuracy (sensitivity, specificity) who take different shares of
    the real judgments: each of an output's `design.reviewers` judgments goes to a reviewer drawn
    by `shares`; reviewer r judges `controls[r]` controls (half published, half cross-field)."""
    clean = design.model_copy(update={"unsure_rate": 0.0, "sd_reviewer": 0.0, "sd_noise": 0.0})
    mu, beta = latent_parameters(clean, p_single, effect)
    eta = _eta(clean, studies, topics, mu, beta, rng, reviewer_terms=False)
    truth = rng.random(eta.shape) < special.expit(eta)  # (S, T, 3, m, 1)
    shape = (*truth.shape[:4], design.reviewers)
    who = rng.choice(len(shares), size=shape, p=np.asarray(shares) / np.sum(shares))
    sens, spec = (np.array(x)[who] for x in zip(*accuracies, strict=True))
    u = rng.random(shape)
    says_novel = np.where(truth, u < spec, u >= sens)
    weight = np.array([0.5, 0.5, 1.0])[None, None, :, None, None] * np.ones(shape)
    realised = np.stack(
        [(weight * (who == r)).sum(axis=(1, 2, 3, 4)) for r in range(len(shares))], axis=1
    )
    realised /= realised.sum(axis=1, keepdims=True)
    counts = _reviewer_controls(accuracies, controls, studies, rng)
    return Batch(
        p=_proportions(says_novel),
        pub_n=counts[0],
        pub_correct=counts[1],
        unpub_n=counts[2],
        unpub_correct=counts[3],
        by_reviewer=counts[4],
        shares=realised,
    )


Counts = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _reviewer_controls(
    accuracies: list[tuple[float, float]],
    controls: list[int],
    studies: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Counts]:
    """Counts by control kind (studies, 2) and by reviewer (studies, R)."""
    pub_k = np.zeros((studies, 2, len(controls)), dtype=np.int64)
    unpub_k = np.zeros_like(pub_k)
    pub_n = np.zeros((2, len(controls)), dtype=np.int64)
    unpub_n = np.zeros_like(pub_n)
    for r, ((sens, spec), n) in enumerate(zip(accuracies, controls, strict=True)):
        half = n // 2
        pub_n[:, r] = (half // 2, half - half // 2)
        unpub_n[:, r] = ((n - half) // 2, n - half - (n - half) // 2)
        for kind in range(2):
            pub_k[:, kind, r] = rng.binomial(pub_n[kind, r], sens, studies)
            unpub_k[:, kind, r] = rng.binomial(unpub_n[kind, r], spec, studies)
    tile = np.tile
    by_reviewer = (
        tile(pub_n.sum(axis=0), (studies, 1)),
        pub_k.sum(axis=1),
        tile(unpub_n.sum(axis=0), (studies, 1)),
        unpub_k.sum(axis=1),
    )
    return (
        tile(pub_n.sum(axis=1), (studies, 1)),
        pub_k.sum(axis=2),
        tile(unpub_n.sum(axis=1), (studies, 1)),
        unpub_k.sum(axis=2),
        by_reviewer,
    )
