"""Whole simulated studies with a gold subsample: the verdict on the adjudicated scale
(prediction-powered, `harness.analysis.statistics.ppi`) beside the current control-corrected
verdict (`harness.analysis.simulation.verdicts`), for `benchmarks/bench_gold.py`, the tests and
the check of `harness.analysis.planning.gold_power`.

Per study: `topics` topics, three conditions (single_a, single_b, cross: the order of
`known_accuracy.Batch`), one output per prompt. Each output is truly novel or not, drawn from
the latent design of `full_design` without reviewer terms (topic and topic-by-condition effects
on the logit scale give the topics their heterogeneity; the marginal proportions are p_single and
p_single + effect). Primary reviewers (`reviewers` per item) report each output with the
sensitivity and specificity of the cell *on real items*; on the planted controls (`controls`
published and as many unpublished judgments, half cross-field) they have the cell's *control*
accuracy. Adjudicators (`adjudicators` per item, sensitivity = specificity =
`adjudicator_accuracy`) judge every item, and an item's adjudicated value is their mean (the
plan's `combine: mean`). The topics are exchangeable, so the first n of them are a simple random
sample: the sample of size n is `d[:, :n]`, and one batch serves every n.

With adjudicators of accuracy q, an item's expected adjudicated value is (1 - q) + (2q - 1) x for
true novelty x, so the estimand, the mean adjudicated difference, is (2q - 1) times the true
difference (0.9 times at q = 0.95).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from harness.analysis.plan.plan_file import Design, Plan
from harness.analysis.simulation.full_design import latent_parameters
from harness.analysis.simulation.known_accuracy import Batch, Reviewers
from harness.analysis.simulation.verdicts import simulate_verdicts

CROSS = 2  # condition axis: single_a, single_b, cross


@dataclass(frozen=True)
class Cell:
    """Primary reviewers' accuracy on real items and on the planted controls."""

    name: str
    items: Reviewers
    controls: Reviewers


@dataclass(frozen=True)
class GoldStudy:
    topics: int
    reviewers: int = 2  # primary reviewers per item
    adjudicators: int = 2  # per item
    adjudicator_accuracy: float = 0.95
    controls: int = 45  # published control judgments, and as many unpublished ones

    @property
    def scale(self) -> float:
        """Adjudicated difference per unit of true difference (2q - 1)."""
        return 2.0 * self.adjudicator_accuracy - 1.0


@dataclass(frozen=True)
class GoldBatch:
    f: np.ndarray  # (studies, topics) primary reviewers' d_t
    d: np.ndarray  # (studies, topics) adjudicators' d_t (every topic; the sample is d[:, :n])
    true_d: np.ndarray  # (studies, topics) the true d_t
    current: Batch  # primary proportions and control counts for the current rule
    true_difference: float
    adjudicated_difference: float  # the new rule's estimand


@dataclass(frozen=True)
class Outcome:
    """Per study: the verdict and the 95% interval of the rule's estimand."""

    supported: np.ndarray
    refuted: np.ndarray
    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray

    def covers(self, truth: float) -> np.ndarray:
        result: np.ndarray = (self.ci_low <= truth) & (truth <= self.ci_high)
        return result


def true_novelty(
    design: Design,
    *,
    studies: int,
    topics: int,
    p_single: float,
    effect: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """(studies, topics, 3) booleans: is each condition's output truly novel (one per prompt)."""
    clean = design.model_copy(
        update={"samples": 1, "unsure_rate": 0.0, "sd_reviewer": 0.0, "sd_noise": 0.0}
    )
    mu, beta = latent_parameters(clean, p_single, effect)
    eta = (
        mu
        + rng.normal(0.0, clean.sd_topic, (studies, topics, 1))
        + rng.normal(0.0, clean.sd_topic_condition, (studies, topics, 3))
        + rng.normal(0.0, clean.sd_sample, (studies, topics, 3))
    )
    eta[:, :, CROSS] += beta
    novel: np.ndarray = rng.random(eta.shape) < special.expit(eta)
    return novel


def accuracy_by_condition(reviewers: Reviewers) -> tuple[np.ndarray, np.ndarray]:
    """(sensitivity, specificity) per condition (single_a, single_b, cross)."""
    sens = np.full(3, reviewers.sensitivity)
    spec = np.full(3, reviewers.specificity)
    if reviewers.sensitivity_cross is not None:
        sens[CROSS] = reviewers.sensitivity_cross
    if reviewers.specificity_cross is not None:
        spec[CROSS] = reviewers.specificity_cross
    return sens, spec


def judged(
    truth: np.ndarray, reviewers: Reviewers, per_item: int, rng: np.random.Generator
) -> np.ndarray:
    """Share of `per_item` independent reviewers who call each item novel (truth: (..., 3))."""
    sens, spec = accuracy_by_condition(reviewers)
    says_novel = np.where(truth, spec, 1.0 - sens)
    result: np.ndarray = rng.binomial(per_item, says_novel) / per_item
    return result


def differences(p: np.ndarray) -> np.ndarray:
    """d_t with the mean of singles: cross minus the mean of single_a and single_b."""
    result: np.ndarray = p[..., CROSS] - (p[..., 0] + p[..., 1]) / 2.0
    return result


def control_counts(
    reviewers: Reviewers, per_kind: int, studies: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(pub_n, pub_correct, unpub_n, unpub_correct), each (studies, 2) by (cross, single):
    `per_kind` published and as many unpublished control judgments, half cross-field."""
    sens, spec = accuracy_by_condition(reviewers)
    n = np.array([per_kind // 2, per_kind - per_kind // 2])
    pub = np.stack([rng.binomial(n[0], sens[CROSS], studies), rng.binomial(n[1], sens[0], studies)])
    unpub = np.stack(
        [rng.binomial(n[0], spec[CROSS], studies), rng.binomial(n[1], spec[0], studies)]
    )
    tiled = np.tile(n, (studies, 1))
    return tiled, pub.T, tiled.copy(), unpub.T


def simulate_gold(
    study: GoldStudy,
    cell: Cell,
    design: Design,
    *,
    studies: int,
    p_single: float,
    effect: float,
    rng: np.random.Generator,
) -> GoldBatch:
    """`studies` whole studies: truth, primary and adjudicated judgments, control counts."""
    truth = true_novelty(
        design, studies=studies, topics=study.topics, p_single=p_single, effect=effect, rng=rng
    )
    primary = judged(truth, cell.items, study.reviewers, rng)
    q = study.adjudicator_accuracy
    adjudicated = judged(truth, Reviewers(q, q), study.adjudicators, rng)
    pub_n, pub_k, unpub_n, unpub_k = control_counts(cell.controls, study.controls, studies, rng)
    current = Batch(
        p=primary,
        pub_n=pub_n,
        pub_correct=pub_k,
        unpub_n=unpub_n,
        unpub_correct=unpub_k,
        true_difference=effect,
    )
    return GoldBatch(
        f=differences(primary),
        d=differences(adjudicated),
        true_d=differences(truth.astype(float)),
        current=current,
        true_difference=effect,
        adjudicated_difference=study.scale * effect,
    )


@dataclass(frozen=True)
class PPIMany:
    """`ppi_mean` of many studies at once (the same formulas, vectorised over axis 0)."""

    estimate: np.ndarray
    se: np.ndarray
    lam: np.ndarray
    df: float | np.ndarray  # per study where lambda is tuned (n - 2) or not (n - 1)

    @property
    def normal(self) -> bool:
        return isinstance(self.df, float) and math.isinf(self.df)

    def _cdf(self, z: np.ndarray) -> np.ndarray:
        result: np.ndarray = np.asarray(
            stats.norm.cdf(z) if self.normal else stats.t.cdf(z, self.df), dtype=float
        )
        return result

    def _z(self, null: float) -> np.ndarray:
        gap = self.estimate - null
        with np.errstate(divide="ignore", invalid="ignore"):
            z = gap / self.se
            z = np.where(self.se > 0, z, np.sign(gap) * np.inf)
        result: np.ndarray = np.nan_to_num(z, nan=0.0, posinf=np.inf, neginf=-np.inf)
        return result

    def p_greater(self, null: float = 0.0) -> np.ndarray:
        result: np.ndarray = 1.0 - self._cdf(self._z(null))
        return result

    def p_less(self, null: float = 0.0) -> np.ndarray:
        return self._cdf(self._z(null))

    def p_tost(self, margin: float) -> np.ndarray:
        result: np.ndarray = np.maximum(self.p_greater(-margin), self.p_less(margin))
        return result

    def interval(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        q = 0.5 + level / 2
        half = (stats.norm.ppf(q) if self.normal else stats.t.ppf(q, self.df)) * self.se
        return self.estimate - half, self.estimate + half


def ppi_many(
    d: np.ndarray,
    f: np.ndarray,
    f_unlabelled: np.ndarray,
    *,
    estimator: str = "ppi++",
    interval: str = "t",
) -> PPIMany:
    """PPI++ (tuned lambda), PPI (lambda 1) or classical (lambda 0) for each row: d, f
    (studies, n) on the adjudicated topics, f_unlabelled (studies, N) on the rest."""
    n, big_n = d.shape[1], f_unlabelled.shape[1]
    ddof = 1 if interval == "t" else 0
    studies = d.shape[0]
    fitted = np.zeros(studies, dtype=int)  # a lambda tuned on the data costs a degree of freedom
    if big_n == 0 or estimator == "classical" or (estimator == "ppi++" and n < 2):
        lam = np.zeros(studies)
    elif estimator == "ppi":
        lam = np.ones(studies)
    else:
        var_f = np.concatenate([f, f_unlabelled], axis=1).var(axis=1, ddof=1)
        cov = np.mean((d - d.mean(axis=1, keepdims=True)) * (f - f.mean(axis=1, keepdims=True)), 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            raw = cov / ((1 + n / big_n) * var_f)
        lam = np.where(var_f > 0, np.clip(raw, 0.0, 1.0), 0.0)
        if interval == "t":
            fitted = (var_f > 0).astype(int)
            if n < 3:
                lam, fitted = np.zeros(studies), np.zeros(studies, dtype=int)
    rectifier = d - lam[:, None] * f
    var = rectifier.var(axis=1, ddof=0) * n / (n - ddof - fitted) / n
    imputed = np.zeros(studies)
    if big_n:
        imputed = lam * f_unlabelled.mean(axis=1)
        if big_n > ddof:
            var = var + lam**2 * f_unlabelled.var(axis=1, ddof=ddof) / big_n
    return PPIMany(
        estimate=imputed + rectifier.mean(axis=1),
        se=np.sqrt(var),
        lam=lam,
        df=(n - 1.0 - fitted) if interval == "t" else math.inf,
    )


def decide(result: PPIMany, alpha: float, sesoi: float, level: float = 0.95) -> Outcome:
    """The verdict on the adjudicated scale: supported when the one-sided test is significant;
    else refuted when equivalence within +/-sesoi is shown or the difference is significantly
    below zero."""
    supported = result.p_greater(0.0) < alpha
    refuted = ~supported & ((result.p_tost(sesoi) < alpha) | (result.p_less(0.0) < alpha))
    low, high = result.interval(level)
    return Outcome(supported, refuted, result.estimate, low, high)


def new_rule(batch: GoldBatch, adjudicated: int, plan: Plan, estimator: str = "ppi++") -> Outcome:
    """The prediction-powered verdict with the first `adjudicated` topics as the sample."""
    n = adjudicated
    result = ppi_many(batch.d[:, :n], batch.f[:, :n], batch.f[:, n:], estimator=estimator)
    return decide(result, plan.primary.alpha, plan.equivalence.sesoi)


def all_careful_rule(batch: GoldBatch, topics: int, plan: Plan) -> Outcome:
    """Careful reviewers judge every item of `topics` topics and nothing else: the classical
    paired t-test on their differences (PPI with every topic adjudicated)."""
    d = batch.d[:, :topics]
    result = ppi_many(d, d, d[:, :0])
    return decide(result, plan.primary.alpha, plan.equivalence.sesoi)


def current_rule(
    batch: GoldBatch, plan: Plan, rng: np.random.Generator, resamples: int | None = None
) -> Outcome:
    """The control-corrected verdict (`simulate_verdicts`): its interval is of the corrected,
    true-scale difference."""
    v = simulate_verdicts(batch.current, plan, rng, resamples=resamples)
    return Outcome(v.supported, v.refuted, v.estimate, v.ci_low, v.ci_high)


def topic_correlation(batch: GoldBatch) -> float:
    """Correlation of d_t and f_t at the topic level, pooled over the batch's studies."""
    d = batch.d - batch.d.mean(axis=1, keepdims=True)
    f = batch.f - batch.f.mean(axis=1, keepdims=True)
    return float(np.sum(d * f) / math.sqrt(np.sum(d * d) * np.sum(f * f)))


def latent_correlations(design: Design, p_single: float, effect: float) -> tuple[float, float]:
    """Correlation of two outputs' true novelty within a topic under `true_novelty`'s latent
    model: (cross with a single, single_a with single_b), by Gauss-Hermite quadrature over the
    shared topic effect (the other terms are independent between conditions)."""
    clean = design.model_copy(
        update={"samples": 1, "unsure_rate": 0.0, "sd_reviewer": 0.0, "sd_noise": 0.0}
    )
    mu, beta = latent_parameters(clean, p_single, effect)
    nodes, weights = np.polynomial.hermite_e.hermegauss(64)
    weights = weights / weights.sum()
    own = math.hypot(clean.sd_topic_condition, clean.sd_sample)
    u = clean.sd_topic * nodes  # topic effects

    def given_topic(m: float) -> np.ndarray:
        inner: np.ndarray = special.expit(m + u[:, None] + own * nodes[None, :]) @ weights
        return inner

    single, cross = given_topic(mu), given_topic(mu + beta)
    p_s, p_c = float(weights @ single), float(weights @ cross)

    def phi(a: np.ndarray, b: np.ndarray, pa: float, pb: float) -> float:
        joint = float(weights @ (a * b))
        return (joint - pa * pb) / math.sqrt(pa * (1 - pa) * pb * (1 - pb))

    return phi(cross, single, p_c, p_s), phi(single, single, p_s, p_s)
