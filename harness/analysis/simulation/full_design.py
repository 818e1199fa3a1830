"""Full-design simulation: topics, conditions, samples and reviewers, run through the exact
primary analysis of the plan.

Latent model (logit scale) for output o of topic t, condition c, judged by reviewer r:
    eta = mu + beta [c = cross] + u_t + v_tc + w_o + b_r + e_or
u: topic effects, v: topic-by-condition effects, w: output-to-output variation within a prompt,
b: reviewer bias, e: judgment noise. A judgment is `unsure` with probability `unsure_rate`,
otherwise `not_published` with probability expit(eta). mu and beta are solved so that the
expected proportion of `not_published` verdicts is p_single after single-field prompts and
p_single + effect after cross-field prompts.

`rejection_rates` gives one design's rejection rate; the searches over topics and effect
(`design_search`) and `simulate_design` (`simulated_power`), which runs them, build on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from harness.analysis.plan.plan_file import Design, Plan
from harness.analysis.statistics.consensus import (
    CROSS,
    NOT_PUBLISHED,
    PUBLISHED,
    UNSURE,
    Judgments,
    code_outcome,
)
from harness.analysis.statistics.pooled import pooled_test
from harness.analysis.statistics.primary import run_primary
from harness.errors import HarnessError

_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(64)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def _latent_sd(design: Design) -> float:
    return math.sqrt(
        design.sd_topic**2
        + design.sd_topic_condition**2
        + design.sd_sample**2
        + design.sd_reviewer**2
        + design.sd_noise**2
    )


def _marginal(mu: float, sd: float) -> float:
    return float(np.sum(_WEIGHTS * special.expit(mu + sd * _NODES)))


def latent_parameters(design: Design, p_single: float, effect: float) -> tuple[float, float]:
    """(mu, beta) giving the requested marginal proportions of `not_published` verdicts."""
    keep = 1.0 - design.unsure_rate
    targets = (p_single / keep, (p_single + effect) / keep)
    for target in targets:
        if not 0.0 < target < 1.0:
            raise HarnessError(
                f"proportion {target * keep:g} is not reachable with unsure rate "
                f"{design.unsure_rate:g}"
            )
    sd = _latent_sd(design)

    def solve(target: float) -> float:
        return optimize.brentq(lambda m: _marginal(m, sd) - target, -40.0, 40.0)

    mu = solve(targets[0])
    return mu, solve(targets[1]) - mu


def simulate_judgments(
    design: Design, topics: int, mu: float, beta: float, rng: np.random.Generator
) -> Judgments:
    """One simulated study: every item judged by every reviewer (a crossed design)."""
    m, r = design.samples, design.reviewers
    shape = (topics, 3, m, r)
    eta = (
        mu
        + rng.normal(0.0, design.sd_topic, (topics, 1, 1, 1))
        + rng.normal(0.0, design.sd_topic_condition, (topics, 3, 1, 1))
        + rng.normal(0.0, design.sd_sample, (topics, 3, m, 1))
        + rng.normal(0.0, design.sd_reviewer, (1, 1, 1, r))
        + rng.normal(0.0, design.sd_noise, shape)
    )
    eta[:, CROSS] += beta
    novel = rng.random(shape) < special.expit(eta)
    verdict = np.where(novel, NOT_PUBLISHED, PUBLISHED).astype(np.int8)
    if design.unsure_rate > 0:
        verdict[rng.random(shape) < design.unsure_rate] = UNSURE
    n_items = topics * 3 * m
    return Judgments(
        item=np.repeat(np.arange(n_items), r),
        reviewer=np.tile(np.arange(r), n_items),
        verdict=verdict.reshape(-1),
        item_topic=np.repeat(np.arange(topics), 3 * m),
        item_condition=np.tile(np.repeat(np.arange(3), m), topics),
        n_topics=topics,
        n_reviewers=r,
        reviewer_kind=np.array(["automated"] * r),
    )


@dataclass(frozen=True)
class Rejections:
    primary: float
    primary_se: float  # Monte Carlo standard error
    pooled: float  # the literal rule's pooled z-test (one-sided, same alpha)
    pooled_se: float
    sd_d: float  # mean SD of the per-topic differences d_t
    reps: int


def rejection_rates(
    plan: Plan, design: Design, *, topics: int, p_single: float, effect: float, reps: int, seed: int
) -> Rejections:
    """Share of simulated studies in which the primary test rejects at the plan's alpha."""
    mu, beta = latent_parameters(design, p_single, effect)
    rng = np.random.default_rng(seed)
    alpha = plan.primary.alpha
    primary = pooled = 0
    sds = []
    for _ in range(reps):
        j = simulate_judgments(design, topics, mu, beta, rng)
        outcome = run_primary(j, plan)
        primary += outcome.p_greater < alpha
        y = code_outcome(j.verdict, plan.outcome.unsure)
        test = pooled_test(y, j.condition, plan.single, "larger")
        pooled += test.p_value < alpha
        d = outcome.table.d
        if d.size > 1:
            sds.append(float(d.std(ddof=1)))
    rate, pooled_rate = primary / reps, pooled / reps
    return Rejections(
        rate,
        math.sqrt(rate * (1 - rate) / reps),
        pooled_rate,
        math.sqrt(pooled_rate * (1 - pooled_rate) / reps),
        float(np.mean(sds)) if sds else math.nan,
        reps,
    )
