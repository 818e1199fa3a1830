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
- differential: `differential` more false "novel" calls on cross-field items, and `missed_single`
  fewer "novel" calls on unpublished single-field items, by adjudicators AND primary reviewers
  alike (errors shared by both tiers, favouring the hypothesis; with `missed_single` above
  `differential` the gap on unpublished controls exceeds the published one);
- by_topic: one verdict per topic for all its items (novel with the topic's true rate); chance
  on their controls;
- one_topic: every item published but the cross-field item(s) of one topic; every control
  published;
- own_rule: each adjudicator calls a real item novel with probability `own_rate` whatever the
  truth, while answering their controls at the given accuracy (controls recognised, real items
  judged by a rule of their own).

The primary reviewers are measured too, on controls of 0.2 x their judgments (half published),
so that the measured rule can ask whether the two tiers describe the same items
(`statistics.tier_agreement`, vectorised here).

Real items may be harder than the controls (`harder`, `harder_primary`): the tiers' accuracy on
real items lower than on their controls, the assumption the correction by J rests on broken.

Each adjudicators' control is judged by `per_control` of them (as `judge --blind` routes it: the
first round's), so their calls on it are clustered; with `control_correlation` controls (and real
items) differ in difficulty, each one's chance of a right call Beta with that correlation of two
calls. The controls' design effect, the correlation it implies and that correlation's
uncertainty are estimated per study from the calls, as `statistics.clustered` estimates them,
and the rules read the effective counts.

The rules, vectorised: `joint_rule` (`statistics.verdict.decide_adjudicated`'s joint test),
`measured_rule` (the betting rule below `adjudication.finite_below` adjudicated topics),
`auto_rule` (the plan's choice between them) and `reference_rule` (t tests on the adjudicated
topics with the true J known: what an idealised rule could reach).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import special

from harness.analysis.statistics.clustered import rho_variance
from harness.analysis.statistics.joint import (
    RHO_MAX,
    correlations_variance,
    fieller,
    majority_rate,
    majority_rho_slope,
    majority_slope,
    newcombe_lower,
    smoothed_rate,
    smoothed_var,
)
from harness.analysis.statistics.ppi_betting import side
from harness.analysis.statistics.tier_agreement import Z_GUARD

BANK_STRATA = (106, 87, 87, 30, 30, 23)  # the bank's domain pairs, topics per pair
Mode = Literal["accurate", "differential", "by_topic", "one_topic", "own_rule"]


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
    missed_single: float = 0.0  # mode differential: fewer "novel" calls on unpublished single
    own_rate: float = 0.01  # mode own_rule: the adjudicators' novel rate, whatever the truth
    controls: int | None = None  # per adjudicator; None: as `judge --blind` plans them
    control_share: float = 0.4  # ... a share of their real items (plan controls.adjudicators)
    # real items harder than the controls: the adjudicators' / primary reviewers' sensitivity
    # and specificity on real items are this much lower than on their controls
    harder: float = 0.0
    harder_primary: float = 0.0
    # controls that differ in difficulty: the correlation of two adjudicators' calls on one
    # control (its chance of a right call Beta with concentration 1 / rho - 1); each control
    # is judged by `per_control` adjudicators (None: all). 0: equally hard controls
    control_correlation: float = 0.0
    per_control: int | None = None

    def controls_each(self) -> int:
        """`control_share` of an adjudicator's real items, at least 10, with every adjudicator
        judging every sampled item."""
        if self.controls is not None:
            return self.controls
        drawn = min(self.topics, max(2, round(self.share * self.topics)))
        items = drawn * 3 * self.models * self.samples * self.per_item / self.adjudicators
        return max(10, round(self.control_share * items))

    @property
    def per_item(self) -> int:
        return self.adjudicators


@dataclass(frozen=True)
class Batch:
    d: np.ndarray  # (studies, n) adjudicated d_t of the drawn topics
    f: np.ndarray  # (studies, n) primary d_t of the drawn topics
    f_rest: np.ndarray  # (studies, N - n) primary d_t of the others
    truth: np.ndarray  # (studies,) the true difference over topics like the study's
    expected: float  # the effect the scenario sets
    pub: np.ndarray  # (studies,) published control judgments of the adjudicators
    pub_correct: np.ndarray
    unpub: np.ndarray
    unpub_correct: np.ndarray
    # per arm (cross, single) on the drawn topics: (studies, 2) sums of the items' mean novel
    # verdicts and item counts, for each tier; the primary reviewers' control counts
    adj_arm: np.ndarray | None = None
    prim_arm: np.ndarray | None = None
    items_arm: np.ndarray | None = None
    primary_controls: tuple[np.ndarray, ...] | None = None
    # each adjudicator's controls per form: published cross, single, unpublished cross,
    # single, each (judged, correct) -> (studies, adjudicators, 4, 2)
    forms: np.ndarray | None = None
    majority: int = 0  # k of a majority of k adjudicators (0: their mean)
    single: np.ndarray | None = None  # (studies, n) adjudicated single-field rate, drawn topics
    cross: np.ndarray | None = None  # (studies, n) adjudicated cross-field rate, drawn topics
    realised: np.ndarray | None = None  # (studies,) the mean error-free difference of its topics
    youden: float = math.nan  # the adjudicated scale's true J (accurate adjudicators only)
    # controls judged by several adjudicators: the control counts above are effective ones
    # (divided by the design effect, `statistics.clustered`), and these each kind's
    # (published, unpublished) correlation of two calls on one control, for a majority's
    # rate, with its estimate's variance and covariance with the kind's rate; None: every
    # control judged once
    rho: np.ndarray | None = None  # (studies, 2)
    rho_var: np.ndarray | None = None  # their estimates' variances
    rho_cov: np.ndarray | None = None  # ... and covariances with their rates


def strata(topics: int) -> np.ndarray:
    """Stratum of each topic: the bank's six domain pairs scaled to `topics`."""
    sizes = np.array(BANK_STRATA, dtype=float) * topics / sum(BANK_STRATA)
    counts = np.floor(sizes).astype(int)
    counts[np.argsort(counts - sizes)[: topics - counts.sum()]] += 1
    return np.repeat(np.arange(len(counts)), counts)


def draws(topics: int, share: float, studies: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of `studies` proportional systematic draws within strata, as `judge --blind`
    draws the adjudicated sample: strata in random order, topics in random order within each,
    a systematic pick from a random start. Each topic's place is its stratum's rank plus a
    uniform key, so one sort orders every study."""
    size = min(topics, max(2, round(share * topics)))
    rank = rng.random((studies, len(BANK_STRATA))).argsort(axis=1).argsort(axis=1)
    key = rank[:, strata(topics)] + rng.random((studies, topics))
    order = key.argsort(axis=1)
    start = rng.integers(topics, size=studies)
    at = (start[:, None] + np.arange(size) * topics) // size
    picked: np.ndarray = np.take_along_axis(order, at, 1)
    return picked


def rest_of(picks: np.ndarray, topics: int) -> np.ndarray:
    """Per row of `picks` (distinct topics), the other topics in increasing order."""
    kept = np.ones((len(picks), topics), dtype=bool)
    kept[np.arange(len(picks))[:, None], picks] = False
    return np.nonzero(kept)[1].reshape(len(picks), topics - picks.shape[1])


def simulate(s: Scenario, effect: float, studies: int, rng: np.random.Generator) -> Batch:
    truth, population = _truth(s, effect, studies, rng)  # (studies, topics, 3, outputs) bool
    true_d = _difference(truth.mean(axis=3))
    acc = s.primary_accuracy - s.harder_primary
    prim = _judge(truth, s.primary, acc, acc, s.differential, rng, s.missed_single)
    votes = _adjudicate(s, truth, rng)
    adj = _combined(s, votes)
    f, d = _difference(prim.mean(axis=3)), _difference(adj.mean(axis=3))
    picks = draws(s.topics, s.share, studies, rng)
    rest = rest_of(picks, s.topics)
    ctl = _controls(s, studies, rng)
    (pub, pub_ok), (unpub, unpub_ok) = ctl.kinds.transpose(1, 2, 0)
    take = np.take_along_axis
    return Batch(
        take(d, picks, 1),
        take(f, picks, 1),
        take(f, rest, 1),
        population,
        effect,
        pub,
        pub_ok,
        unpub,
        unpub_ok,
        adj_arm=_arm_sums(votes, picks),  # the guard reads each adjudicator's verdict
        prim_arm=_arm_sums(prim, picks),
        items_arm=np.array([picks.shape[1] * truth.shape[3] * k for k in (1, 2)], dtype=float),
        primary_controls=_primary_controls(s, studies, rng),
        forms=ctl.forms,
        majority=s.adjudicators if s.combine == "majority" else 0,
        single=take(adj.mean(axis=3)[..., :2].mean(axis=2), picks, 1),
        cross=take(adj.mean(axis=3)[..., 2], picks, 1),
        realised=true_d.mean(axis=1),
        youden=_true_youden(s),
        rho=ctl.rho,
        rho_var=ctl.rho_var,
        rho_cov=ctl.rho_cov,
    )


def _true_youden(s: Scenario) -> float:
    """The adjudicated scale's J on real items (what an idealised rule would know)."""
    if s.mode != "accurate":
        return math.nan
    rates = [s.sensitivity - s.harder, s.specificity - s.harder]
    k = s.adjudicators if s.combine == "majority" else 0
    return float(np.sum(majority_rate(np.array(rates), k, s.control_correlation)) - 1.0)


def _arm_sums(judged: np.ndarray, picks: np.ndarray) -> np.ndarray:
    """(studies, 2): the sum over the drawn topics' items of their mean novel verdict, cross-field
    and single-field."""
    drawn = np.take_along_axis(judged, picks[:, :, None, None], 1)
    return np.stack([drawn[:, :, 2].sum(axis=(1, 2)), drawn[:, :, :2].sum(axis=(1, 2, 3))], 1)


def _primary_controls(
    s: Scenario, studies: int, rng: np.random.Generator
) -> tuple[np.ndarray, ...]:
    """The primary reviewers' control judgments: 0.2 of their real judgments, half published."""
    half = max(10, round(0.2 * s.topics * 3 * s.models * s.samples * s.primary / 2))
    n = np.full(studies, half)
    acc = s.primary_accuracy
    return n, rng.binomial(half, acc, studies), n.copy(), rng.binomial(half, acc, studies)


def _truth(
    s: Scenario, effect: float, studies: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Each output's true novelty (studies, topics, 3, outputs), and each study's true
    difference: the mean over topics like its own, with its domain pairs' effects fixed (the
    bank's six pairs are the strata the estimand names). The pairs' effects on the difference
    are centred (their weighted mean is 0), so that the true difference is `effect` up to the
    clipping of probabilities to [0, 1]."""
    pair = strata(s.topics)
    weights = np.bincount(pair, minlength=len(BANK_STRATA)) / s.topics
    offset, shift = np.zeros((studies, 6)), np.zeros((studies, 6))
    if s.clustered:
        offset = rng.normal(0.0, s.sd_pair, (studies, 6))
        shift = rng.normal(0.0, s.sd_pair_effect, (studies, 6))
        shift -= (shift * weights).sum(axis=1, keepdims=True)
    eta = special.logit(s.base) + rng.normal(0.0, s.sd_topic, (studies, s.topics))
    p_single = special.expit(eta + offset[:, pair])
    p_cross = np.clip(p_single + effect + shift[:, pair], 0.0, 1.0)
    p = np.stack([p_single, p_single, p_cross], axis=2)[..., None]
    outputs = s.models * s.samples
    result: np.ndarray = rng.random((studies, s.topics, 3, outputs)) < p
    return result, _population_difference(s, effect, offset, shift, weights)


def _population_difference(
    s: Scenario, effect: float, offset: np.ndarray, shift: np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """E[clip(p + effect + shift) - p] over the topic effects (Gauss-Hermite, 48 nodes), per
    domain pair, weighted by the pairs' shares."""
    nodes, w = np.polynomial.hermite_e.hermegauss(48)
    eta = special.logit(s.base) + offset[..., None] + s.sd_topic * nodes
    p = special.expit(eta)
    gap = np.clip(p + effect + shift[..., None], 0.0, 1.0) - p
    per_pair = (gap * w).sum(axis=-1) / w.sum()
    result: np.ndarray = (per_pair * weights).sum(axis=-1)
    return result


def _judge(
    truth: np.ndarray,
    k: int,
    sens: float,
    spec: float,
    extra: float,
    rng: np.random.Generator,
    missed: float = 0.0,
    rho: float = 0.0,
) -> np.ndarray:
    """Share of k reviewers calling each item novel; `extra` false "novel" calls on cross items,
    `missed` fewer "novel" calls on truly novel single-field items; `rho`: items that differ
    in difficulty, the reviewers' chance on each Beta around the rate (two calls correlate
    rho)."""
    false_novel = np.array([1 - sens, 1 - sens, min(1.0, max(0.0, 1 - sens + extra))])[:, None]
    novel = np.array([spec - missed, spec - missed, spec])[:, None]
    p = np.where(truth, novel, false_novel)
    if rho > 0:
        kappa = 1.0 / rho - 1.0
        p = rng.beta(np.maximum(p * kappa, 1e-9), np.maximum((1.0 - p) * kappa, 1e-9))
    result: np.ndarray = rng.binomial(k, p) / k
    return result


def _adjudicate(s: Scenario, truth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The share of an item's adjudicators calling it novel (its value under `combine: mean`,
    and what the tiers' agreement guard reads under either combination)."""
    if s.mode == "by_topic":
        rate = truth.mean(axis=(2, 3), keepdims=True)
        return np.broadcast_to(rng.random(rate.shape) < rate, truth.shape).astype(float)
    if s.mode == "one_topic":
        out = np.zeros(truth.shape)
        out[np.arange(truth.shape[0]), rng.integers(truth.shape[1], size=truth.shape[0]), 2] = 1.0
        return out
    if s.mode == "own_rule":
        result: np.ndarray = rng.binomial(s.adjudicators, s.own_rate, truth.shape) / s.adjudicators
        return result
    extra, missed = (s.differential, s.missed_single) if s.mode == "differential" else (0.0, 0.0)
    sens, spec = s.sensitivity - s.harder, s.specificity - s.harder
    rho = s.control_correlation  # real items differ in difficulty as the controls do
    return _judge(truth, s.adjudicators, sens, spec, extra, rng, missed, rho)


def _combined(s: Scenario, votes: np.ndarray) -> np.ndarray:
    """An item's adjudicated value: the mean of its adjudicators' votes, or their majority."""
    if s.combine == "mean" or s.mode in ("by_topic", "one_topic"):
        return votes
    result: np.ndarray = (votes > 0.5).astype(float)
    return result


@dataclass(frozen=True)
class _Controls:
    forms: np.ndarray  # (studies, adjudicators, 4, 2): per form (judged, correct), effective
    kinds: np.ndarray  # (studies, 2, 2): published, unpublished (judged, correct), effective
    # (studies, 2) per kind: two calls' correlation on one control, its estimate's variance
    # and its covariance with the kind's rate of right calls
    rho: np.ndarray | None = None
    rho_var: np.ndarray | None = None
    rho_cov: np.ndarray | None = None


def _controls(s: Scenario, studies: int, rng: np.random.Generator) -> _Controls:
    """The adjudicators' controls: published cross-field, published single-field, unpublished
    cross-field, unpublished single-field, each (judged, correct) per adjudicator; half
    published, each half split evenly between the forms. Controls judged by several
    adjudicators come with each form's and kind's design effect, as the analysis estimates
    it, and their counts are the effective ones."""
    half = s.controls_each() // 2
    if s.mode == "by_topic":
        sens = spec = sens_x = 0.5
    elif s.mode == "one_topic":
        sens, spec, sens_x = 1.0, 0.0, 1.0
    else:
        sens, spec = s.sensitivity, s.specificity
        sens_x = sens - (s.differential if s.mode == "differential" else 0.0)
    spec_s = spec - (s.missed_single if s.mode == "differential" else 0.0)
    n = (half // 2, half - half // 2, half // 2, half - half // 2)
    rates = (sens_x, sens, spec, spec_s)
    if s.mode in ("accurate", "differential") and min(s.adjudicators, s.per_control or 99) > 1:
        return _shared_controls(s, n, rates, studies, rng)
    out = np.empty((studies, s.adjudicators, 4, 2))
    for form, (k, rate) in enumerate(zip(n, rates, strict=True)):
        out[:, :, form, 0] = k
        out[:, :, form, 1] = rng.binomial(k, rate, (studies, s.adjudicators))
    kinds = np.stack([out[:, :, :2].sum(axis=(1, 2)), out[:, :, 2:].sum(axis=(1, 2))], axis=1)
    return _Controls(out, kinds)


def _shared_controls(
    s: Scenario,
    n: tuple[int, ...],
    rates: tuple[float, ...],
    studies: int,
    rng: np.random.Generator,
) -> _Controls:
    """Controls of each form judged by `per_control` adjudicators each (assigned in turn, so
    that each adjudicator gets about n of them), each control's chance of a right call the
    form's rate, or Beta with that mean and concentration 1 / rho - 1 (`control_correlation`).
    Their design effect is estimated as the analysis estimates it, noise and floor included."""
    m = s.adjudicators
    c = min(m, s.per_control or m)
    calls, who = [], []
    for k, rate in zip(n, rates, strict=True):
        units = -(-m * k // c)  # ceil: enough controls for k each
        p = np.full((studies, units), rate)
        if s.control_correlation > 0:
            kappa = 1.0 / s.control_correlation - 1.0
            a, b = max(rate * kappa, 1e-9), max((1.0 - rate) * kappa, 1e-9)
            p = rng.beta(a, b, (studies, units))
        calls.append(rng.random((studies, units, c)) < p[..., None])
        who.append((np.arange(units)[:, None] * c + np.arange(c)) % m)
    return _summarised(calls, who, m)


def _summarised(calls: list[np.ndarray], who: list[np.ndarray], m: int) -> _Controls:
    """The four forms' calls (studies, units, c) "right" by adjudicators `who` (units, c) as
    the analysis reads them: effective counts per form and kind, and each kind's correlation
    of calls on one control with its variance and covariance with the kind's rate."""
    c = who[0].shape[1]
    units = [w.shape[0] for w in who]
    forms = np.stack([_per_adjudicator(y, w, m) for y, w in zip(calls, who, strict=True)], 2)
    deff_forms = np.stack([_design_effect(y, w, m)[0] for y, w in zip(calls, who, strict=True)], 1)
    deff_kinds, var_kinds, cov_kinds = np.stack(
        [
            _design_effect(np.concatenate(calls[i : i + 2], 1), np.concatenate(who[i : i + 2]), m)
            for i in (0, 2)
        ],
        2,
    )
    kinds = np.stack([forms[:, :, i : i + 2].sum(axis=(1, 2)) for i in (0, 2)], 1)
    return _Controls(
        forms / deff_forms[:, None, :, None],
        kinds / deff_kinds[:, :, None],
        *_correlation(deff_kinds, var_kinds, cov_kinds, c, np.array([units[:2], units[2:]]).sum(1)),
    )


def _per_adjudicator(calls: np.ndarray, who: np.ndarray, m: int) -> np.ndarray:
    """(studies, m, 2): each adjudicator's (judged, correct) from calls (studies, units, c)
    made by adjudicators `who` (units, c)."""
    onehot = np.eye(m)[who.ravel()]  # (units * c, m)
    correct = calls.reshape(calls.shape[0], -1) @ onehot
    judged = np.broadcast_to(onehot.sum(axis=0), correct.shape)
    return np.stack([judged, correct], axis=2)


def _design_effect(calls: np.ndarray, who: np.ndarray, m: int) -> np.ndarray:
    """`statistics.clustered.design_effect_var` per study, the adjudicators weighted equally:
    (3, studies), the variance of the weighted rate with controls as clusters over the
    independent one, floored at 1, the unfloored ratio's variance and its covariance with the
    weighted rate."""
    counts = _per_adjudicator(calls, who, m)
    judged = counts[0, :, 0]
    rate = counts[:, :, 1] / np.maximum(judged, 1)
    weight = np.where(judged > 0, 1.0 / (np.count_nonzero(judged) * np.maximum(judged, 1)), 0.0)
    part = weight[who] * (calls - rate[:, who])
    alone = (part**2).sum(axis=2)
    together = part.sum(axis=2) ** 2
    independent = alone.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        deff = np.where(independent > 0, together.sum(axis=1) / independent, 1.0)
        influence = (together - deff[:, None] * alone) / independent[:, None]
        spread = (influence**2).sum(axis=1)
        cov = (influence * part.sum(axis=2)).sum(axis=1)  # with the weighted rate's
    ok = independent > 0
    return np.stack([np.maximum(deff, 1.0), np.where(ok, spread, 0.0), np.where(ok, cov, 0.0)])


def _correlation(
    deff: np.ndarray, var: np.ndarray, cov: np.ndarray, calls: int, controls: np.ndarray
) -> tuple[np.ndarray | None, ...]:
    """`statistics.clustered.correlation`: (deff - 1) / (m - 1), m calls per control, its
    variance and its covariance with the rate."""
    if calls < 2:
        return None, None, None
    rho: np.ndarray = np.clip((deff - 1.0) / (calls - 1.0), 0.0, RHO_MAX)
    return rho, rho_variance(var, calls, controls), cov / (calls - 1.0)


def _difference(p: np.ndarray) -> np.ndarray:
    result: np.ndarray = p[..., 2] - (p[..., 0] + p[..., 1]) / 2.0
    return result


@dataclass(frozen=True)
class Decisions:
    supported: np.ndarray
    refuted: np.ndarray
    covered: np.ndarray  # the true difference inside the rule's 95% interval
    robust: np.ndarray | None = None  # supported and robust to differential error
    # the report withholds the interval (the tiers disagree): coverage is of the others
    withheld: np.ndarray | None = None
    # the true difference inside the interval corrected for differential error (reported
    # beside the verdict: `statistics.differential_error`)
    covered_corrected: np.ndarray | None = None
    # refuted and robust to differential error: the corrected difference's upper limit at
    # one-sided alpha below +SESOI too (`statistics.verdict.refute_guard`)
    refuted_robust: np.ndarray | None = None

    def coverage(self, covered: np.ndarray | None = None) -> float:
        """Coverage of the true difference among the intervals the report prints (`covered`:
        of another of its intervals than the rule's own)."""
        covered = self.covered if covered is None else covered
        shown = covered if self.withheld is None else covered[~self.withheld]
        return float(shown.mean()) if shown.size else math.nan


def reference_rule(b: Batch, alpha: float, sesoi: float) -> Decisions:
    """The idealised reference: the t tests on the adjudicated topics alone with the
    adjudicators' true J known (no primary reviewers, no controls): `supported` when the mean
    d_t is significantly above 0, `refuted` when it is shown inside +/- SESOI x J (TOST at
    alpha) or significantly below 0. Defined for accurate adjudicators (J known) only."""
    d = b.d
    n = d.shape[1]
    mean, se = d.mean(axis=1), d.std(axis=1, ddof=1) / math.sqrt(n)
    q = special.stdtrit(n - 1, 1.0 - alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, mean / se, 0.0)
        margin = sesoi * b.youden
        up = np.where(se > 0, (mean - margin) / se, -np.inf)
        down = np.where(se > 0, (mean + margin) / se, np.inf)
    supported = z > q
    refuted = ~supported & (up < -q) & ((down > q) | (z < -q))
    return Decisions(supported, refuted, np.ones(d.shape[0], dtype=bool))


def ppi_t(b: Batch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`statistics.ppi.ppi_mean` (PPI++, t reference) vectorised over studies: the estimate,
    its standard error and the reference's degrees of freedom."""
    d, fu = b.d, b.f_rest
    n, big_n = d.shape[1], fu.shape[1]
    rest, lam, tuned = _rectified(b)
    estimate = rest.mean(axis=1) + (lam * fu.mean(axis=1) if big_n else 0.0)
    var = rest.var(axis=1, ddof=1) * (n - 1) / (n - 1 - tuned) / n
    if big_n:  # lambda's own error where it was tuned (`statistics.ppi.ppi_mean`), and f_U's
        var = var * (1.0 + tuned / (n * (1.0 + n / big_n)))
        var = var + lam**2 * fu.var(axis=1, ddof=1) / big_n
    return estimate, np.sqrt(var), n - 1.0 - tuned


def _rectified(b: Batch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PPI++'s rectifier d - lambda f on the adjudicated topics, lambda, and whether it was
    tuned (a degree of freedom spent), per study."""
    d, f, fu = b.d, b.f, b.f_rest
    n, big_n = d.shape[1], fu.shape[1]
    lam, tuned = np.zeros(d.shape[0]), np.zeros(d.shape[0])
    if big_n and n >= 3:
        var_f = np.concatenate([f, fu], axis=1).var(axis=1, ddof=1)
        cov = ((d - d.mean(axis=1, keepdims=True)) * (f - f.mean(axis=1, keepdims=True))).mean(1)
        spread = var_f > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.where(spread, np.clip(cov / ((1 + n / big_n) * var_f), 0.0, 1.0), 0.0)
        tuned = spread.astype(float)
    return d - lam[:, None] * f, lam, tuned


def _correlations(b: Batch) -> tuple[tuple[Any, Any], ...]:
    """Each kind's correlation of two calls on one control, its variance and its covariance
    with the kind's rate (0 without)."""
    if b.rho is None or b.rho_var is None or b.rho_cov is None:
        return (0.0, 0.0), (0.0, 0.0), (0.0, 0.0)
    return tuple((x[:, 0], x[:, 1]) for x in (b.rho, b.rho_var, b.rho_cov))


def youden(b: Batch, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`statistics.joint.youden_estimate` vectorised: the scale's J, its variance and the gate's
    Newcombe bound at two-sided `level`, each study's correlation of calls on one control and
    its uncertainty included."""
    s, p = b.pub_correct / b.pub, b.unpub_correct / b.unpub
    k = b.majority
    ties = _correlations(b)  # rho, its variance and covariance, per kind
    rho = ties[0]
    j = majority_rate(s, k, rho[0]) + majority_rate(p, k, rho[1]) - 1.0
    smooth = (smoothed_rate(b.pub_correct, b.pub), smoothed_rate(b.unpub_correct, b.unpub))
    var_j = majority_slope(smooth[0], k, rho[0]) ** 2 * smoothed_var(b.pub_correct, b.pub)
    var_j += majority_slope(smooth[1], k, rho[1]) ** 2 * smoothed_var(b.unpub_correct, b.unpub)
    controls = (b.pub_correct, b.pub, b.unpub_correct, b.unpub)
    var_j = var_j + correlations_variance(*controls, k, *ties)
    low = newcombe_lower(*controls, level, k, *ties)
    return j, np.maximum(var_j, 0.0), low


def joint_rule(
    b: Batch, alpha: float, sesoi: float, min_youden: float, level: float = 0.95
) -> Decisions:
    """`statistics.verdict`'s joint rule vectorised (`statistics.joint`): PPI++ with a t
    reference; `refuted` by the gate on J's Newcombe bound, then the joint TOST of the true
    difference at alpha or a difference significantly below 0; coverage of Fieller's (1 - alpha)
    interval (the report's)."""
    theta, se, df = ppi_t(b)
    j, var_j, low = youden(b, level)
    gate = low >= min_youden
    q = special.stdtrit(df, 1.0 - alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = theta / se
        joint_se = np.sqrt(se**2 + sesoi**2 * var_j)
        below_margin = (theta - sesoi * j) / joint_se < -q
        above_margin = (theta + sesoi * j) / joint_se > q
    supported = z > q
    degenerate = np.all(b.d == 0.0, axis=1) | ~(se > 0)
    refuted = ~supported & gate & ~degenerate & below_margin & (above_margin | (z < -q))
    disagree = tiers_disagree(b)
    refuted &= ~disagree
    low, high = fieller(theta, se, j, var_j, np.asarray(special.stdtrit(df, 1.0 - alpha / 2)))
    covered = (low <= b.truth) & (b.truth <= high)
    robust = supported & robust_to_differential(b, theta, se, df, alpha)
    fixed = corrected_interval(b, theta, se, df, alpha)
    corrected = None if fixed is None else (fixed[0] <= b.truth) & (b.truth <= fixed[1])
    guarded = refuted & refute_guard(b, theta, se, df, alpha, sesoi)
    return Decisions(supported, refuted, covered, robust, disagree, corrected, guarded)


def refute_guard(
    b: Batch, theta: np.ndarray, se: np.ndarray, df: np.ndarray, alpha: float, sesoi: float
) -> np.ndarray:
    """`statistics.verdict.refute_guard`, vectorised: the true difference corrected for the
    adjudicators' differential error shown below +SESOI at one-sided alpha (all True where the
    controls do not measure the error)."""
    fixed = corrected_interval(b, theta, se, df, 2.0 * alpha)
    if fixed is None:
        return np.ones(theta.shape, dtype=bool)
    result: np.ndarray = fixed[1] < sesoi
    return result


def auto_rule(
    b: Batch, alpha: float, sesoi: float, min_youden: float, finite_below: int
) -> Decisions:
    """`adjudication.interval: auto`: the joint rule from `finite_below` adjudicated topics on,
    the betting rule below (the number of adjudicated topics is the design's, the same in
    every study of a batch)."""
    if b.d.shape[1] < finite_below:
        return measured_rule(b, alpha, sesoi, min_youden)
    return joint_rule(b, alpha, sesoi, min_youden)


def _bounds(b: Batch, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact (Clopper-Pearson, Bonferroni) bounds of the adjudicators' J at two-sided `level`."""
    inner = 1.0 - (1.0 - level) / 2.0
    s_lo, s_hi = _cp(b.pub_correct, b.pub, inner, True)
    p_lo, p_hi = _cp(b.unpub_correct, b.unpub, inner, True)
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
    disagree = tiers_disagree(b)
    refuted &= ~disagree
    covered = _covers(b)
    # the betting test is the difference's own leg, as in the analysis (its p stands for theta's)
    robust = supported & robust_to_differential(b, *ppi_t(b), alpha, positive=False)
    guarded = refuted & refute_guard(b, *ppi_t(b), alpha, sesoi)
    return Decisions(supported, refuted, covered, robust, disagree, refuted_robust=guarded)


def robust_to_differential(
    b: Batch,
    theta: np.ndarray,
    se: np.ndarray,
    df: np.ndarray,
    alpha: float,
    positive: bool = True,
) -> np.ndarray:
    """`statistics.differential_error`'s test, vectorised (equal shares): theta significantly
    above 0 (`positive`: by the t reference; else the caller's own test is that leg) and above
    the bias b = (1 - pi_s) g_pub + pi_s g_unpub the adjudicators' controls
    and the single-field arm estimate (above both gaps where pi_s is not estimable)."""
    if b.forms is None:
        return np.zeros(b.d.shape[0], dtype=bool)
    value, var, tie = _scale_rates(b)  # (studies, 4): published cross, single, unpublished ...
    g_pub, g_unpub = value[:, 0] - value[:, 1], value[:, 2] - value[:, 3]
    var_pub = var[:, 0] + var[:, 1] + _tied(tie, 0, 1)
    var_unpub = var[:, 2] + var[:, 3] + _tied(tie, 2, 3)
    q = special.stdtrit(df, 1.0 - alpha)

    def above(gap: np.ndarray, var_gap: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            result: np.ndarray = (theta - gap) / np.sqrt(np.maximum(se**2 + var_gap, 0.0)) > q
        return result

    with np.errstate(divide="ignore", invalid="ignore"):
        robust = theta / se > q if positive else np.ones(theta.shape, dtype=bool)
    worst = above(g_pub, var_pub) & above(g_unpub, var_unpub)
    if b.single is None:
        result: np.ndarray = robust & worst
        return result
    bias, var_b, cov, _, j = _bias_at(b, b.single, value, var, tie, 1)
    with np.errstate(invalid="ignore"):  # a form without discriminating controls: NaN
        result = robust & np.where(j > 0, above(bias, var_b - 2.0 * cov), worst)
    return result


def corrected_interval(
    b: Batch, theta: np.ndarray, se: np.ndarray, df: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray] | None:
    """`statistics.differential_error`'s corrected difference, vectorised (equal shares):
    Fieller's (1 - alpha) interval of (theta - b_x) / J_s."""
    if b.forms is None or b.cross is None:
        return None
    value, var, tie = _scale_rates(b)
    bias, var_b, cov, pi, j_x = _bias_at(b, b.cross, value, var, tie, 0)
    j_s = value[:, 3] - value[:, 1]
    slope, rho_var = tie
    var_js = (
        var[:, 1] + var[:, 3] + slope[:, 1] ** 2 * rho_var[:, 1] + slope[:, 3] ** 2 * rho_var[:, 3]
    )
    q = np.asarray(special.stdtrit(df, 1.0 - alpha / 2.0))
    cov_j = pi * var[:, 3] - (1 - pi) * var[:, 1]  # cov(theta - b_x, J_s)
    with np.errstate(invalid="ignore"):
        se_n = np.sqrt(np.maximum(se**2 + var_b - 2.0 * cov, 0.0))
    low, high = fieller(theta - bias, se_n, j_s, var_js, q, cov_j)
    void = ~(j_x > 0)  # no corrected interval: the analysis reports none
    return np.where(void, -1.0, low), np.where(void, 1.0, high)


def _bias_at(
    b: Batch,
    arm: np.ndarray,
    value: np.ndarray,
    var: np.ndarray,
    tie: tuple[np.ndarray, np.ndarray],
    form: int,
) -> tuple[np.ndarray, ...]:
    """`statistics.differential_error._bias_at` per study (form 0 cross, 1 single): b at the
    arm's true novel rate, its variance, its covariance with theta, the rate and the form's J."""
    rest = _rectified(b)[0]
    n = arm.shape[1]
    p = arm.mean(axis=1)
    var_p = arm.var(axis=1, ddof=1) / n
    cov_p = ((arm - p[:, None]) * (rest - rest.mean(axis=1, keepdims=True))).sum(1) / (n - 1) / n
    other = 1 - form
    j, j_other = value[:, form + 2] - value[:, form], value[:, other + 2] - value[:, other]
    g_pub, g_unpub = value[:, 0] - value[:, 1], value[:, 2] - value[:, 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = (p - value[:, form]) / j
        pi = np.clip(raw, 0.0, 1.0)
        free = pi == raw  # where pi is clipped it does not move with its estimates
        d = np.where(free, (g_unpub - g_pub) / j, 0.0)
        var_b = (1 - pi) ** 2 * var[:, other] + pi**2 * var[:, other + 2]
        own = (1 - pi) ** 2 * var[:, form] + pi**2 * var[:, form + 2]
        scale = np.where(free, j_other / j, 1.0)
        var_b = var_b + scale**2 * own + d**2 * var_p
        var_b = (
            var_b
            + _tied(tie, form, other, 1 - pi, scale)
            + _tied(tie, form + 2, other + 2, pi, scale)
        )
        cov = d * cov_p
    bias = (1 - pi) * g_pub + pi * g_unpub
    return bias, var_b, cov, pi, j


def _scale_rates(b: Batch) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Per study, the adjudicated scale's "novel" rate on each control form (published cross,
    published single, unpublished cross, unpublished single; equal shares), its variance, and
    on a majority's scale its slope in the kind's correlation of calls on one control with
    that correlation's variance (`statistics.differential_error._Rate`)."""
    assert b.forms is not None
    n, ok = b.forms[..., 0], b.forms[..., 1]  # (studies, R, 4)
    novel = np.concatenate([n[..., :2] - ok[..., :2], ok[..., 2:]], axis=-1)
    weight = 1.0 / n.shape[1]
    k = b.majority
    rho = np.zeros(novel.shape[::2]) if b.rho is None else np.repeat(b.rho, 2, axis=1)
    rho_var = np.zeros(rho.shape) if b.rho_var is None else np.repeat(b.rho_var, 2, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):  # a form without controls: NaN
        rate = majority_rate((novel / n).mean(axis=1), k, rho)
    smooth = smoothed_rate(novel, n).mean(axis=1)  # where the majority's slope is taken
    var = majority_slope(smooth, k, rho) ** 2 * (weight**2 * smoothed_var(novel, n)).sum(axis=1)
    tie = majority_rho_slope(smooth, k, rho) if k else np.zeros(rho.shape)
    return rate, var, (tie, rho_var)


def _tied(
    tie: tuple[np.ndarray, np.ndarray], x: int, y: int, weight: Any = 1.0, scale: Any = 1.0
) -> np.ndarray:
    """The variance a difference weight x (scale x rate x - rate y) of one kind's two forms
    takes from their shared correlation's estimate (`statistics.differential_error._Rate`)."""
    slope, var = tie
    result: np.ndarray = (weight * (scale * slope[:, x] - slope[:, y])) ** 2 * var[:, x]
    return result


def _cp(
    k: np.ndarray, n: np.ndarray, level: float, repeated: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Exact intervals of k of n, vectorised; effective (non-integer) k allowed. `repeated`
    (control counts, which repeat across studies): each distinct (k, n) is computed once, since
    the beta quantile is slow."""
    shape = np.broadcast_shapes(np.shape(k), np.shape(n))
    back = None
    if repeated:
        pairs = np.stack(np.broadcast_arrays(k, n)).reshape(2, -1)
        (k, n), back = np.unique(pairs, axis=1, return_inverse=True)
    tail = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore"):
        low = np.where(k > 0, special.betaincinv(np.maximum(k, 1e-12), n - k + 1, tail), 0.0)
        high = np.where(k < n, special.betaincinv(k + 1, np.maximum(n - k, 1e-12), 1 - tail), 1.0)
    if back is None:
        return low, high
    return low[back].reshape(shape), high[back].reshape(shape)


def _implied(
    k: np.ndarray, n: np.ndarray, controls: tuple[np.ndarray, ...], level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on the true novel rate (`statistics.tier_agreement.implied_rate`), vectorised."""
    pub, pub_ok, unpub, unpub_ok = controls
    qs = _cp(k, n, level)
    ss, ps = _cp(pub_ok, pub, level, True), _cp(unpub_ok, unpub, level, True)
    rates, void = [], np.zeros(k.shape, dtype=bool)
    for q in qs:
        for sens in ss:
            for spec in ps:
                j = sens + spec - 1.0
                void |= j <= 0
                with np.errstate(divide="ignore", invalid="ignore"):
                    rates.append((q - 1.0 + sens) / np.where(j > 0, j, 1.0))
    stacked = np.stack(rates)
    low = np.where(void, 0.0, np.maximum(0.0, stacked.min(axis=0)))
    high = np.where(void, 1.0, np.minimum(1.0, stacked.max(axis=0)))
    return low, high


def tiers_disagree(b: Batch, level: float = 0.95) -> np.ndarray:
    """Per study: do the tiers' verdicts on the drawn items imply true novel rates that do not
    overlap in an arm, given each tier's accuracy on its controls? (False without the data.)"""
    if b.adj_arm is None or b.prim_arm is None or b.items_arm is None:
        return np.zeros(b.d.shape[0], dtype=bool)
    assert b.primary_controls is not None
    adj_controls = (b.pub, b.pub_correct, b.unpub, b.unpub_correct)
    out = np.zeros(b.d.shape[0], dtype=bool)
    for arm in (0, 1):
        n = np.full(b.d.shape[0], b.items_arm[arm])
        lo_a, hi_a = _implied(b.adj_arm[:, arm], n, adj_controls, level)
        lo_p, hi_p = _implied(b.prim_arm[:, arm], n, b.primary_controls, level)
        out |= (hi_a < lo_p) | (hi_p < lo_a)
        out |= _z_guard(b.adj_arm[:, arm], b.prim_arm[:, arm], n, adj_controls, b)
    every = np.full(b.d.shape[0], b.items_arm.sum())
    out |= _z_guard(b.adj_arm.sum(axis=1), b.prim_arm.sum(axis=1), every, adj_controls, b)
    return out


def _z_guard(
    adj: np.ndarray, prim: np.ndarray, n: np.ndarray, controls: tuple[np.ndarray, ...], b: Batch
) -> np.ndarray:
    assert b.primary_controls is not None
    pi_a, var_a = _implied_var(adj, n, controls)
    pi_p, var_p = _implied_var(prim, n, b.primary_controls)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(var_a + var_p > 0, (pi_a - pi_p) / np.sqrt(var_a + var_p), 0.0)
    result: np.ndarray = np.abs(np.nan_to_num(z)) > Z_GUARD
    return result


def _implied_var(
    k: np.ndarray, n: np.ndarray, controls: tuple[np.ndarray, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """`statistics.tier_agreement._implied`, vectorised: the implied rate and its variance."""
    pub, pub_ok, unpub, unpub_ok = controls
    s, p = pub_ok / pub, unpub_ok / unpub
    j = s + p - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        pi = np.where(j > 0, (k / n - 1.0 + s) / j, np.nan)
        var = smoothed_var(k, n) + (1 - pi) ** 2 * smoothed_var(pub_ok, pub)
        var = (var + pi**2 * smoothed_var(unpub_ok, unpub)) / j**2
    return pi, np.where(j > 0, var, np.inf)


def _covers(b: Batch) -> np.ndarray:
    """Does the interval of the true difference the report prints under the betting rule
    cover it: the adjudicated 95% interval (PPI++, t reference) divided by J's 95% exact
    interval, as `adjudication._instrument_fields` and `statistics.instrument.
    corrected_interval` make it (labelled "at least 90%": Bonferroni)."""
    theta, se, df = ppi_t(b)
    q = special.stdtrit(df, 0.975)
    low, high = theta - q * se, theta + q * se
    j_lo, j_hi = _bounds(b, 0.95)
    j_hi = np.clip(np.maximum(j_hi, j_lo), None, 1.0)
    ok = j_lo > 0
    jl = np.where(ok, j_lo, 1.0)
    lo = np.where(low < 0, low / jl, low / j_hi)
    hi = np.where(high > 0, high / jl, high / j_hi)
    lo, hi = np.maximum(lo, -1.0), np.minimum(hi, 1.0)
    # without a positive lower bound of J the corrected interval is [-1, 1]: it covers
    result: np.ndarray = ~ok | ((lo <= b.truth) & (b.truth <= hi))
    return result
