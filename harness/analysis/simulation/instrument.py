"""Whole simulated studies whose adjudicators are imperfect, lazy or wrong in the ways a real
study's can be, for `benchmarks/bench_instrument.py`, the tests and `harness power`.

Per study: N topics in the bank's six domain-pair strata (scaled to N); three conditions, each
prompt answered by `models` x `samples` outputs. Each output is truly novel or not: on the logit
scale a topic effect (sd `sd_topic`, heterogeneity across topics) and, when `clustered`, an
effect shared by the topics of a domain pair (sd `sd_pair`) set the single-field rate around
`base`; cross-field outputs add `effect` on the probability scale plus, when clustered, a
domain-pair share of it (sd `sd_pair_effect`). The true difference of a study is the mean over its
topics of the error-free per-topic difference.

Primary reviewers (`primary` per item, accuracy `primary_accuracy`) judge every item; adjudicators
(`adjudicators` per item, combined by mean or majority) judge every item of a proportional,
systematic draw of `share` of the topics within strata (as `judge/blinding/gold_draw.py`), and
`controls` planted controls each (half published, half cross-field), judged as they judge real
items. Adjudicator behaviours (`mode`):

- accurate: sensitivity / specificity as given, the same in both conditions;
- differential: `differential` more false "novel" calls on cross-field items, by adjudicators
  AND primary reviewers alike (errors shared by both tiers, favouring the hypothesis);
- by_topic: one verdict per topic for all its items (novel with the topic's true rate); chance
  on their controls;
- one_topic: every item published but the cross-field item(s) of one topic; every control
  published.

Two rules decide each study: `landed` (PPI++ with a t reference, SESOI not scaled, no measure of
the adjudicators: the rule before the adjudicators were measured) and `measured` (betting tests,
design-based over the study's topics, the adjudicators' J gate and the SESOI scaled by J's
lower bound: `statistics.verdict.decide_adjudicated`'s rule, vectorised).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import special, stats

from harness.analysis.statistics.ppi import ppi_mean
from harness.analysis.statistics.ppi_betting import side

BANK_STRATA = (106, 87, 87, 30, 30, 23)  # the bank's domain pairs, topics per pair
Mode = Literal["accurate", "differential", "by_topic", "one_topic"]


@dataclass(frozen=True)
class Scenario:
    name: str
    topics: int = 363
    share: float = 0.25
    base: float = 0.3
    sd_topic: float = 1.0
    clustered: bool = False
    sd_pair: float = 0.7
    sd_pair_effect: float = 0.08
    models: int = 1
    samples: int = 1
    primary: int = 2
    primary_accuracy: float = 0.8
    adjudicators: int = 2
    combine: Literal["mean", "majority"] = "mean"
    sensitivity: float = 0.9
    specificity: float = 0.9
    mode: Mode = "accurate"
    differential: float = 0.0
    controls: int | None = None  # per adjudicator; None: as `judge --blind` plans them

    def controls_each(self) -> int:
        """`controls.share` 0.2 of an adjudicator's real items, at least 10 (the bundled plan),
        with every adjudicator judging every sampled item."""
        if self.controls is not None:
            return self.controls
        drawn = min(self.topics, max(2, round(self.share * self.topics)))
        items = drawn * 3 * self.models * self.samples * self.per_item / self.adjudicators
        return max(10, round(0.2 * items))

    @property
    def per_item(self) -> int:
        return self.adjudicators


@dataclass(frozen=True)
class Batch:
    d: np.ndarray  # (studies, n) adjudicated d_t of the drawn topics
    f: np.ndarray  # (studies, n) primary d_t of the drawn topics
    f_rest: np.ndarray  # (studies, N - n) primary d_t of the others
    truth: np.ndarray  # (studies,) the study's true difference (mean over its topics)
    expected: float  # the effect the scenario sets
    pub: np.ndarray  # (studies,) published control judgments of the adjudicators
    pub_correct: np.ndarray
    unpub: np.ndarray
    unpub_correct: np.ndarray


def strata(topics: int) -> np.ndarray:
    """Stratum of each topic: the bank's six domain pairs scaled to `topics`."""
    sizes = np.array(BANK_STRATA, dtype=float) * topics / sum(BANK_STRATA)
    counts = np.floor(sizes).astype(int)
    counts[np.argsort(counts - sizes)[: topics - counts.sum()]] += 1
    return np.repeat(np.arange(len(counts)), counts)


def draw(topics: int, share: float, rng: np.random.Generator) -> np.ndarray:
    """Indices of a proportional systematic draw within strata (strata in random order)."""
    size = min(topics, max(2, round(share * topics)))
    pair = strata(topics)
    order = np.concatenate([rng.permutation(np.flatnonzero(pair == s)) for s in rng.permutation(6)])
    start = int(rng.integers(topics))
    return order[[(start + j * topics) // size for j in range(size)]]


def simulate(s: Scenario, effect: float, studies: int, rng: np.random.Generator) -> Batch:
    truth = _truth(s, effect, studies, rng)  # (studies, topics, 3, outputs) bool
    true_d = _difference(truth.mean(axis=3))
    prim = _judge(truth, s.primary, s.primary_accuracy, s.primary_accuracy, s.differential, rng)
    adj = _adjudicate(s, truth, rng)
    f, d = _difference(prim.mean(axis=3)), _difference(adj.mean(axis=3))
    picks = np.stack([draw(s.topics, s.share, rng) for _ in range(studies)])
    rest = np.stack([np.setdiff1d(np.arange(s.topics), p) for p in picks])
    counts = _controls(s, studies, rng)
    take = np.take_along_axis
    return Batch(
        take(d, picks, 1), take(f, picks, 1), take(f, rest, 1), true_d.mean(axis=1), effect, *counts
    )


def _truth(s: Scenario, effect: float, studies: int, rng: np.random.Generator) -> np.ndarray:
    pair = strata(s.topics)
    eta = special.logit(s.base) + rng.normal(0.0, s.sd_topic, (studies, s.topics))
    shift = np.zeros((studies, s.topics))
    if s.clustered:
        eta += rng.normal(0.0, s.sd_pair, (studies, 6))[:, pair]
        shift = rng.normal(0.0, s.sd_pair_effect, (studies, 6))[:, pair]
    p_single = special.expit(eta)
    p_cross = np.clip(p_single + effect + shift, 0.0, 1.0)
    p = np.stack([p_single, p_single, p_cross], axis=2)[..., None]
    outputs = s.models * s.samples
    result: np.ndarray = rng.random((studies, s.topics, 3, outputs)) < p
    return result


def _judge(
    truth: np.ndarray, k: int, sens: float, spec: float, extra: float, rng: np.random.Generator
) -> np.ndarray:
    """Share of k reviewers calling each item novel; `extra` false "novel" calls on cross items."""
    false_novel = np.array([1 - sens, 1 - sens, min(1.0, 1 - sens + extra)])[:, None]
    p = np.where(truth, spec, false_novel)
    result: np.ndarray = rng.binomial(k, p) / k
    return result


def _adjudicate(s: Scenario, truth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if s.mode == "by_topic":
        rate = truth.mean(axis=(2, 3), keepdims=True)
        return np.broadcast_to(rng.random(rate.shape) < rate, truth.shape).astype(float)
    if s.mode == "one_topic":
        out = np.zeros(truth.shape)
        out[np.arange(truth.shape[0]), rng.integers(truth.shape[1], size=truth.shape[0]), 2] = 1.0
        return out
    extra = s.differential if s.mode == "differential" else 0.0
    if s.combine == "mean":
        return _judge(truth, s.adjudicators, s.sensitivity, s.specificity, extra, rng)
    votes = _judge(truth, s.adjudicators, s.sensitivity, s.specificity, extra, rng)
    result: np.ndarray = (votes > 0.5).astype(float)
    return result


def _controls(s: Scenario, studies: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Pooled over the adjudicators: published / unpublished judgments and correct ones."""
    half = s.controls_each() // 2 * s.adjudicators
    if s.mode == "by_topic":
        sens = spec = 0.5
        sens_x = 0.5
    elif s.mode == "one_topic":
        sens, spec, sens_x = 1.0, 0.0, 1.0
    else:
        sens, spec = s.sensitivity, s.specificity
        sens_x = sens - (s.differential if s.mode == "differential" else 0.0)
    pub_correct = rng.binomial(half // 2, sens_x, studies) + rng.binomial(
        half - half // 2, sens, studies
    )
    unpub_correct = rng.binomial(half, spec, studies)
    n = np.full(studies, half)
    return n, pub_correct, n.copy(), unpub_correct


def _difference(p: np.ndarray) -> np.ndarray:
    result: np.ndarray = p[..., 2] - (p[..., 0] + p[..., 1]) / 2.0
    return result


@dataclass(frozen=True)
class Decisions:
    supported: np.ndarray
    refuted: np.ndarray
    covered: np.ndarray  # the true difference inside the rule's 95% interval


def landed_rule(b: Batch, alpha: float, sesoi: float) -> Decisions:
    """PPI++, t reference, the SESOI on the adjudicated scale, adjudicators not measured."""
    sup, ref, cov = [], [], []
    for i in range(b.d.shape[0]):
        r = ppi_mean(b.d[i], b.f[i], b.f_rest[i])
        low, high = r.interval(0.95)
        sup.append(r.p_greater() < alpha)
        ref.append(r.p_less() < alpha or r.p_tost(sesoi) < alpha)
        cov.append(low <= b.truth[i] <= high)
    return Decisions(np.array(sup), np.array(ref), np.array(cov))


def _bounds(b: Batch, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact (Clopper-Pearson, Bonferroni) bounds of the adjudicators' J at two-sided `level`."""
    inner = 1.0 - (1.0 - level) / 2.0
    q = (1.0 - inner) / 2.0
    with np.errstate(invalid="ignore"):
        s_lo = np.where(
            b.pub_correct > 0, stats.beta.ppf(q, b.pub_correct, b.pub - b.pub_correct + 1), 0.0
        )
        p_lo = np.where(
            b.unpub_correct > 0,
            stats.beta.ppf(q, b.unpub_correct, b.unpub - b.unpub_correct + 1),
            0.0,
        )
        s_hi = np.where(
            b.pub_correct < b.pub,
            stats.beta.ppf(1 - q, b.pub_correct + 1, b.pub - b.pub_correct),
            1.0,
        )
        p_hi = np.where(
            b.unpub_correct < b.unpub,
            stats.beta.ppf(1 - q, b.unpub_correct + 1, b.unpub - b.unpub_correct),
            1.0,
        )
    return s_lo + p_lo - 1.0, s_hi + p_hi - 1.0


def measured_rule(
    b: Batch,
    alpha: float,
    sesoi: float,
    min_youden: float,
    orders: int = 8,
    estimand: str = "topic_population",
) -> Decisions:
    """The adjudicators measured: betting tests, J gate, SESOI x J's bound."""
    up = side(1.0, b.d, b.f, b.f_rest, alpha, orders=orders, estimand=estimand)
    down = side(-1.0, b.d, b.f, b.f_rest, alpha, orders=orders, estimand=estimand)
    gate = _bounds(b, 0.95)[0] >= min_youden
    j_low = np.maximum(_bounds(b, 1.0 - alpha)[0], 0.0)
    margin = sesoi * j_low
    degenerate = np.all(b.d == 0.0, axis=1)
    zero = np.zeros(b.d.shape[0])
    supported = down.p_values(zero) < alpha  # H0: theta <= 0
    below = up.p_values(zero) < alpha / 2  # H0: theta >= 0, at alpha/2 as the verdict
    inside = np.maximum(up.p_values(margin), down.p_values(margin)) < alpha / 2
    refuted = ~supported & gate & ~degenerate & (margin > 0) & (below | inside)
    covered = _covers(b, orders, estimand)
    return Decisions(supported, refuted, covered)


def _covers(b: Batch, orders: int, estimand: str) -> np.ndarray:
    """The 95% interval of the true difference: the adjudicated interval at 97.5% divided by
    J's 97.5% interval (Bonferroni), as `statistics.instrument.corrected_interval`."""
    tail = 0.0125
    up = side(1.0, b.d, b.f, b.f_rest, tail, orders=orders, estimand=estimand)
    down = side(-1.0, b.d, b.f, b.f_rest, tail, orders=orders, estimand=estimand)
    high, low = up.bound(tail), -down.bound(tail)
    j_lo, j_hi = _bounds(b, 0.975)
    j_hi = np.clip(np.maximum(j_hi, j_lo), None, 1.0)
    ok = j_lo > 0
    jl = np.where(ok, j_lo, 1.0)
    lo = np.where(low < 0, low / jl, low / j_hi)
    hi = np.where(high > 0, high / jl, high / j_hi)
    lo, hi = np.maximum(lo, -1.0), np.minimum(hi, 1.0)
    # without a positive lower bound of J the corrected interval is [-1, 1]: it covers
    result: np.ndarray = ~ok | ((lo <= b.truth) & (b.truth <= hi))
    return result
