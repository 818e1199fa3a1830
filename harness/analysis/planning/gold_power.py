"""Planning the adjudicated design: power of the prediction-powered verdict, the sample size it
needs and the careful-reviewer judgments it saves (`harness power --adjudicated`).

Model (normal approximation, topic as the unit). In a topic, each output x_c of condition c
(single_a, single_b, cross) is truly novel with probability pi_c (p_single, p_single + effect);
two outputs of one topic are correlated with `rho` (the plan's correlation of a topic's cross
and single outcomes; `rho_singles` between the two single-field outputs, default `rho`). A tier
of reviewers with sensitivity s_c and specificity p_c (per condition) and K reviewers per item
reports an item as (1 - s_c) + J_c x_c + e, J_c = s_c + p_c - 1, where the noise e has variance
[pi_c p_c (1 - p_c) + (1 - pi_c) s_c (1 - s_c)] / K and is independent between items, reviewers
and tiers. With weights w = (-1/2, -1/2, 1) (mean of singles) and C the covariance of the
condition means of x:

    var(d) = sum w w' Ja^2 C + sum w^2 var(e_a)     (adjudicators, the estimand's scale)
    var(f) = sum w w' J J' C + sum w^2 var(e)         (primary reviewers)
    cov(d, f) = sum w w' Ja J' C

and the estimand is theta = sum w Ja pi = Ja x effect (0.9 x effect for adjudicators at 0.95).
PPI++ with n adjudicated topics of N and lambda = cov / ((1 + n / (N - n)) var(f)) (clipped to
[0, 1]) has variance var(d) / n x [1 - rho^2 (N - n) / N] (rho the correlation of d_t and f_t)
when lambda is not clipped: the classical variance var(d) / n less the share rho^2 that the
primary reviewers explain on the topics nobody adjudicated. n = N gives the classical paired
test. Equal variance means equal power of both verdicts, so an all-careful design matches a
PPI design of variance V with var(d) / V topics. `harness.analysis.simulation.gold` simulates
the same model (the tests check the two against each other).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Literal, Self, TypedDict, cast

# `import harness` does not reach this module (`harness.analysis` loads `power` on first use)
import numpy as np  # noqa: TID253
from scipy import stats  # noqa: TID253

from harness.analysis.plan.plan_file import Adjudication
from harness.analysis.simulation.instrument import Scenario, auto_rule, simulate
from harness.study.records import JsonObject

ADJUDICATOR_ACCURACY = 0.95  # careful reviewers with thorough searches
AGREEMENTS = (0.7, 0.85, 0.95)  # primary accuracies shown when none is given
SHARES = (0.1, 0.25, 0.5, 1.0)  # sample sizes shown beside the chosen one

#: A number, or an array of them (one per sample size): the power figures take and give either.
Values = float | np.ndarray
Verdict = Literal["supported", "refuted"]


@dataclass(frozen=True)
class Accuracy:
    """A tier's sensitivity and specificity, optionally different on cross-field items."""

    sensitivity: float
    specificity: float
    sensitivity_cross: float | None = None
    specificity_cross: float | None = None

    def by_condition(self) -> tuple[np.ndarray, np.ndarray]:
        sens = np.full(3, self.sensitivity)
        spec = np.full(3, self.specificity)
        if self.sensitivity_cross is not None:
            sens[2] = self.sensitivity_cross
        if self.specificity_cross is not None:
            spec[2] = self.specificity_cross
        return sens, spec


@dataclass(frozen=True)
class TopicMoments:
    """Topic-level moments of the adjudicated (d_t) and primary (f_t) differences."""

    var_d: float
    var_f: float
    cov: float
    difference: float  # the mean of d_t: the estimand on the adjudicated scale

    @property
    def rho(self) -> float:
        if not self.var_d > 0 or not self.var_f > 0:
            return 0.0
        return self.cov / math.sqrt(self.var_d * self.var_f)


def topic_moments(
    *,
    p_single: float,
    effect: float,
    rho: float,
    primary: Accuracy,
    reviewers: int,
    adjudicator_accuracy: float = ADJUDICATOR_ACCURACY,
    adjudicators: int = 2,
    samples: int = 1,
    rho_singles: float | None = None,
    singles: int = 2,
) -> TopicMoments:
    """Moments of d_t and f_t (see the module docstring); `singles` 2 compares cross with the
    mean of single_a and single_b, 1 with single_a alone."""
    pi = np.array([p_single, p_single, p_single + effect])
    if not ((pi > 0) & (pi < 1)).all():
        raise ValueError(f"proportions {pi.tolist()} must lie strictly between 0 and 1")
    v = pi * (1 - pi)
    r = np.full((3, 3), rho)
    r[0, 1] = r[1, 0] = rho if rho_singles is None else rho_singles
    cov_x = r * np.sqrt(np.outer(v, v))
    # condition means over `samples` outputs, correlated as outputs of different conditions
    np.fill_diagonal(cov_x, v * (1 + (samples - 1) * rho) / samples)
    w = np.array([-0.5, -0.5, 1.0]) if singles == 2 else np.array([-1.0, 0.0, 1.0])
    q = adjudicator_accuracy
    j_adj = np.full(3, 2 * q - 1)
    noise_adj = np.full(3, q * (1 - q) / adjudicators / samples)
    sens, spec = primary.by_condition()
    j_pri = sens + spec - 1
    noise_pri = (pi * spec * (1 - spec) + (1 - pi) * sens * (1 - sens)) / reviewers / samples
    a, b = w * j_adj, w * j_pri
    return TopicMoments(
        var_d=float(a @ cov_x @ a + np.sum(w**2 * noise_adj)),
        var_f=float(b @ cov_x @ b + np.sum(w**2 * noise_pri)),
        cov=float(a @ cov_x @ b),
        difference=float(np.sum(w * j_adj * pi)),
    )


def ppi_variance(m: TopicMoments, topics: int, adjudicated: Values) -> Values:
    """Variance of the PPI++ estimate with `adjudicated` (a number or an array) of `topics`
    topics in the sample and the variance-minimising lambda (clipped to [0, 1]); the classical
    variance var(d) / n at n = N."""
    n = np.asarray(adjudicated, dtype=float)
    rest = topics - n
    if not m.var_f > 0:
        return m.var_d / n
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(rest > 0, np.clip(m.cov / ((1 + n / rest) * m.var_f), 0.0, 1.0), 0.0)
        extra = np.where(rest > 0, lam**2 * m.var_f / rest, 0.0)
    variance = (m.var_d - 2 * lam * m.cov + lam**2 * m.var_f) / n + extra
    return float(variance) if variance.ndim == 0 else variance


def _quantile(alpha: float, adjudicated: Values) -> Values:
    quantile: Values = stats.t.isf(alpha, np.maximum(np.asarray(adjudicated) - 1, 1))
    return quantile


def supported_power(se: Values, difference: float, alpha: float, adjudicated: Values) -> Values:
    """P(one-sided test significant) when the adjudicated-scale difference is `difference`
    (numbers or arrays of se and adjudicated topics alike)."""
    value = stats.norm.cdf(difference / np.asarray(se) - _quantile(alpha, adjudicated))
    return float(value) if np.ndim(value) == 0 else value


def refuted_power(
    se: Values, difference: float, alpha: float, sesoi: float, adjudicated: Values
) -> Values:
    """P(refuted): not supported, and equivalence within +/-sesoi shown or the difference
    significantly below zero; the estimate normal around `difference` with SD `se`."""
    se = np.asarray(se, dtype=float)
    z = _quantile(alpha, adjudicated) * se
    inside = sesoi - z  # TOST rejects when |estimate| < sesoi - z

    def below(x: np.ndarray) -> np.ndarray:
        cdf: np.ndarray = stats.norm.cdf((x - difference) / se)
        return cdf

    upper = np.minimum(inside, z)  # the refuted region stops where `supported` begins
    tost = np.maximum(below(upper) - below(np.maximum(-inside, -z)), 0.0)
    value = np.where(inside > 0, below(-z) + tost, below(-z))
    return float(value) if value.ndim == 0 else value


@dataclass(frozen=True)
class DesignPower:
    """Both verdicts' power at one sample size."""

    adjudicated: int
    supported: float  # at an adjudicated-scale difference of +SESOI
    refuted: float  # at no difference
    careful_judgments: int
    all_careful_supported: int  # topics an all-careful design needs for the same power
    all_careful_refuted: int


@dataclass(frozen=True)
class Needed:
    """Sample sizes for the target power and their careful-reviewer cost."""

    adjudicated: int | None  # PPI++ topics adjudicated (None: not reached at n = N)
    all_careful: int | None  # topics of a design where careful reviewers judge everything
    per_topic: int  # careful judgments per adjudicated topic

    @property
    def ratio(self) -> float | None:
        if self.adjudicated is None or self.all_careful is None:
            return None
        return self.adjudicated / self.all_careful


@dataclass(frozen=True)
class Agreement:
    """The adjudicated design at one primary accuracy."""

    agreement: float
    rho_null: float  # topic-level correlation of d_t and f_t at no difference
    rho_alternative: float  # ... at +SESOI
    at: list[DesignPower]
    supported: Needed
    refuted: Needed


@dataclass(frozen=True)
class GoldPowerSettings:
    """One study shape of the adjudicated design: what `GoldPlanner` plans for and
    `adjudicated_power` reports, built once (`harness power` builds it from the plan and the
    flags)."""

    topics: int
    p_single: float
    rho: float
    sesoi: float
    alpha: float
    target: float
    reviewers: int  # primary reviewers per item
    adjudicators: int = 2  # careful reviewers per sampled item
    adjudicator_accuracy: float = ADJUDICATOR_ACCURACY
    samples: int = 1  # outputs per prompt (of every model)
    singles: int = 2  # 2: cross against the mean of both singles, 1: against single_a

    def record(self) -> JsonObject:
        """The settings as plain numbers (JSON), every field named."""
        return asdict(self)

    @classmethod
    def from_record(cls, record: Mapping[str, object]) -> Self:
        """The settings a `record()` holds."""

        def number(key: str) -> float:
            value = record[key]
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"{key}: a number, not {value!r}")
            return value

        return cls(
            topics=int(number("topics")),
            p_single=float(number("p_single")),
            rho=float(number("rho")),
            sesoi=float(number("sesoi")),
            alpha=float(number("alpha")),
            target=float(number("target")),
            reviewers=int(number("reviewers")),
            adjudicators=int(number("adjudicators")),
            adjudicator_accuracy=float(number("adjudicator_accuracy")),
            samples=int(number("samples")),
            singles=int(number("singles")),
        )


class NeededFigures(TypedDict):
    """`Needed` as `adjudicated_power` gives it."""

    adjudicated: int | None
    all_careful: int | None
    per_topic: int


class DesignPowerFigures(TypedDict):
    """`DesignPower` as `adjudicated_power` gives it."""

    adjudicated: int
    supported: float
    refuted: float
    careful_judgments: int
    all_careful_supported: int
    all_careful_refuted: int


class AgreementFigures(TypedDict):
    """`Agreement` as `adjudicated_power` gives it (`dataclasses.asdict`)."""

    agreement: float
    rho_null: float
    rho_alternative: float
    at: list[DesignPowerFigures]
    supported: NeededFigures
    refuted: NeededFigures


class MeasuredRow(TypedDict):
    """The verdict's own rule at one sample size, simulated."""

    adjudicated: int
    supported: float
    refuted: float


class MeasuredPower(TypedDict):
    """The verdict's own rule, simulated, at the sizes of the adjudicated section."""

    agreement: float
    studies: int
    controls: int
    differential: str
    combine: str
    rows: list[MeasuredRow]
    needed: dict[str, int | None]  # supported, refuted: the first size reaching the target
    alone: dict[str, float]  # supported, refuted: the adjudicated topics alone


class GoldPower(TypedDict):
    """The figures of `harness power`'s adjudicated section."""

    topics: int
    adjudicated: int
    sizes: list[int]
    reviewers: int
    adjudicators: int
    adjudicator_accuracy: float
    samples: int
    per_topic: int
    target: float
    sesoi: float
    scale: float
    agreements: list[AgreementFigures]
    measured: MeasuredPower | None
    escalated: float | None


class GoldPlanner:
    """Power of the adjudicated design for one study shape (topics, items, reviewers)."""

    def __init__(self, settings: GoldPowerSettings) -> None:
        self.settings = settings
        self.topics, self.sesoi, self.alpha = settings.topics, settings.sesoi, settings.alpha
        self.target = settings.target
        self.per_topic = 3 * settings.samples * settings.adjudicators
        self._moments: dict[tuple[Accuracy, float], TopicMoments] = {}

    def moments(self, accuracy: Accuracy, difference: float) -> TopicMoments:
        """Moments when the adjudicated-scale difference is `difference`."""
        key = (accuracy, difference)
        if key not in self._moments:
            self._moments[key] = self._compute(accuracy, difference)
        return self._moments[key]

    def _compute(self, accuracy: Accuracy, difference: float) -> TopicMoments:
        s = self.settings
        return topic_moments(
            p_single=s.p_single,
            effect=difference / (2 * s.adjudicator_accuracy - 1),
            rho=s.rho,
            primary=accuracy,
            reviewers=s.reviewers,
            adjudicator_accuracy=s.adjudicator_accuracy,
            adjudicators=s.adjudicators,
            samples=s.samples,
            singles=s.singles,
        )

    def power(self, accuracy: Accuracy, adjudicated: Values) -> tuple[Values, Values]:
        """(supported at +SESOI, refuted at 0) with `adjudicated` topics in the sample (a
        number or an array)."""
        alt, null = self.moments(accuracy, self.sesoi), self.moments(accuracy, 0.0)
        se_alt = np.sqrt(ppi_variance(alt, self.topics, adjudicated))
        se_null = np.sqrt(ppi_variance(null, self.topics, adjudicated))
        return (
            supported_power(se_alt, alt.difference, self.alpha, adjudicated),
            refuted_power(se_null, 0.0, self.alpha, self.sesoi, adjudicated),
        )

    def classical_power(self, accuracy: Accuracy, topics: Values) -> tuple[Values, Values]:
        """(supported, refuted) when careful reviewers judge every item of `topics` topics."""
        alt, null = self.moments(accuracy, self.sesoi), self.moments(accuracy, 0.0)
        n = np.asarray(topics, dtype=float)
        return (
            supported_power(np.sqrt(alt.var_d / n), alt.difference, self.alpha, topics),
            refuted_power(np.sqrt(null.var_d / n), 0.0, self.alpha, self.sesoi, topics),
        )

    def needed(self, accuracy: Accuracy) -> tuple[Needed, Needed]:
        """Smallest sample reaching the target for each verdict, PPI++ and all-careful."""
        sizes = np.arange(2, self.topics + 1)
        ppi = self.power(accuracy, sizes)
        careful = self.classical_power(accuracy, sizes)

        def first(powers: np.ndarray) -> int | None:
            hits = np.flatnonzero(powers >= self.target)
            return int(sizes[hits[0]]) if hits.size else None

        return (
            Needed(first(np.asarray(ppi[0])), first(np.asarray(careful[0])), self.per_topic),
            Needed(first(np.asarray(ppi[1])), first(np.asarray(careful[1])), self.per_topic),
        )

    def at(self, accuracy: Accuracy, adjudicated: int) -> DesignPower:
        supported, refuted = self.power(accuracy, adjudicated)
        equal = []
        for difference in (self.sesoi, 0.0):
            m = self.moments(accuracy, difference)
            variance = float(ppi_variance(m, self.topics, adjudicated))
            equal.append(min(self.topics, math.ceil(m.var_d / variance - 1e-9)))
        return DesignPower(
            adjudicated,
            float(supported),
            float(refuted),
            adjudicated * self.per_topic,
            equal[0],
            equal[1],
        )

    def agreement(self, value: float, sizes: list[int]) -> Agreement:
        accuracy = Accuracy(value, value)
        supported, refuted = self.needed(accuracy)
        return Agreement(
            agreement=value,
            rho_null=self.moments(accuracy, 0.0).rho,
            rho_alternative=self.moments(accuracy, self.sesoi).rho,
            at=[self.at(accuracy, n) for n in sizes],
            supported=supported,
            refuted=refuted,
        )


def sample_size(value: float | int, topics: int) -> int:
    """Topics drawn for a share (float in (0, 1]) or count (int >= 2), as the plan's
    `adjudication.topics` reads it: at least 2, at most `topics`."""
    wanted = value if isinstance(value, int) else round(value * topics)
    return min(topics, max(2, int(wanted)))


def parse_share_or_count(text: str) -> float | int:
    """'0.25' is a share, '90' a count (the type written decides, as in the plan)."""
    try:
        value: float | int = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{text!r} is neither a share (0.25) nor a count (90)") from None
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"a share of topics must lie in (0, 1] (got {value:g})") from None
        return value
    if value != 0 and value < 2:
        raise ValueError("a count of topics must be at least 2 (0: no adjudicated sample)")
    return value


def adjudicated_power(
    settings: GoldPowerSettings,
    *,
    adjudicated: int,
    agreements: list[float],
    min_youden: float | None = None,
    differential: str = "report",
    combine: str = "mean",
    escalate: bool = False,
) -> GoldPower:
    """The figures of `harness power`'s adjudicated section, as a plain dict: `adjudicated`
    topics in the sample, at each primary accuracy of `agreements`."""
    s = settings
    planner = GoldPlanner(s)
    sizes = sorted({adjudicated, *(sample_size(share, s.topics) for share in SHARES)})
    return {
        "topics": s.topics,
        "adjudicated": adjudicated,
        "sizes": sizes,
        "reviewers": s.reviewers,
        "adjudicators": s.adjudicators,
        "adjudicator_accuracy": s.adjudicator_accuracy,
        "samples": s.samples,
        "per_topic": planner.per_topic,
        "target": s.target,
        "sesoi": s.sesoi,
        "scale": 2 * s.adjudicator_accuracy - 1,
        "agreements": [
            cast(AgreementFigures, asdict(planner.agreement(a, sizes))) for a in agreements
        ],
        "measured": _measured(s, adjudicated, agreements, min_youden, differential, combine),
        "escalated": (
            escalated_judgments(s.adjudicator_accuracy, s.adjudicators) if escalate else None
        ),
    }


def escalated_judgments(accuracy: float, k: int) -> float:
    """Expected adjudicator judgments per item with `adjudication.escalate`: k // 2 + 1 first,
    then each round as many as the majority of k still needs, every verdict right with
    probability `accuracy` (2 + 2a(1 - a) for three)."""
    majority = k // 2 + 1
    states = {
        (r, majority - r): math.comb(majority, r) * accuracy**r * (1 - accuracy) ** (majority - r)
        for r in range(majority + 1)
    }
    expected = float(majority)
    while states:
        after: dict[tuple[int, int], float] = {}
        for (right, wrong), p in states.items():
            need = min(majority - max(right, wrong), k - right - wrong)
            if need <= 0:
                continue
            expected += p * need
            for x in range(need + 1):
                key = (right + x, wrong + need - x)
                odds = math.comb(need, x) * accuracy**x * (1 - accuracy) ** (need - x)
                after[key] = after.get(key, 0.0) + p * odds
        states = after
    return expected


def _measured(
    s: GoldPowerSettings,
    adjudicated: int,
    agreements: list[float],
    min_youden: float | None,
    differential: str,
    combine: str = "mean",
) -> MeasuredPower | None:
    if min_youden is None:
        return None
    agreement = agreements[len(agreements) // 2]

    share = adjudicated / s.topics
    controls = Scenario(
        "plan", topics=s.topics, share=share, samples=s.samples, adjudicators=s.adjudicators
    ).controls_each()
    # the approximation's grid and every topic: what more adjudication buys, and the first
    # size at which the verdict's own rule reaches the target
    shown = sorted({adjudicated, *(sample_size(x, s.topics) for x in SHARES), s.topics})
    sizes = [n for n in shown if n >= 2]
    strict = differential == "require"
    rows = measured_power(
        s, sizes, agreement, min_youden=min_youden, require_robust=strict, combine=combine
    )
    chosen = next(r for r in rows if r["adjudicated"] == adjudicated)
    return {
        "agreement": agreement,
        "studies": MEASURED_STUDIES,
        "controls": controls,
        "differential": differential,
        "combine": combine,
        "rows": rows,
        "needed": {
            "supported": _first(rows, "supported", s.target),
            "refuted": _first(rows, "refuted", s.target),
        },
        "alone": _adjudicated_alone(s, chosen, agreement, min_youden, strict, combine),
    }


def _adjudicated_alone(
    s: GoldPowerSettings,
    chosen: MeasuredRow,
    agreement: float,
    min_youden: float,
    strict: bool,
    combine: str,
) -> dict[str, float]:
    """Value for money by the verdict's own rule: the power of the adjudicated topics alone
    (a study of only those n topics, every one adjudicated), beside the plan's design, which
    adds the primary reviewers' judgments of the other topics for no more careful ones."""
    n = chosen["adjudicated"]
    alone = measured_power(
        replace(s, topics=n),
        [n],
        agreement,
        min_youden=min_youden,
        require_robust=strict,
        combine=combine,
    )[0]
    return {"supported": alone["supported"], "refuted": alone["refuted"]}


def _mc_error(studies: int) -> float:
    """Two Monte Carlo standard errors of a simulated power, at its largest (power 0.5)."""
    return float(2 * np.sqrt(0.25 / studies))


def _first(rows: list[MeasuredRow], column: Verdict, target: float) -> int | None:
    """The smallest simulated sample whose power reaches `target` (None: none of them)."""
    return next((r["adjudicated"] for r in rows if r[column] >= target), None)


def adjudicated_lines(g: GoldPower) -> list[str]:
    """A compact table of `adjudicated_power`'s figures."""
    agreements = g["agreements"]
    sesoi, target = g["sesoi"], g["target"]
    head = "".join(f"{'accuracy ' + format(a['agreement'], 'g'):>17}" for a in agreements)
    lines = [
        f"Adjudicated design: PPI++ on the adjudicated scale, topic as the unit (normal "
        f"approximation); {g['topics']} topics of {g['samples'] * 3} item(s) (all models), "
        f"{g['reviewers']} primary reviewer(s) per item;",
        f"  {g['adjudicators']} adjudicators per sampled item at accuracy "
        f"{g['adjudicator_accuracy']:g}: the adjudicated difference is {g['scale']:g} x the true "
        "one; accuracy: the primary reviewers' sensitivity = specificity on real items",
        f"  power of supported at +{sesoi:g} (adjudicated scale) / refuted at 0, by adjudicated "
        "topics n, with the t reference and the SESOI unscaled (the approximation's rule; it "
        "overstates what the verdict's own rule, simulated below, reaches):",
        f"  {'n':>6} {'careful':>8}{head}",
    ]
    for i, n in enumerate(g["sizes"]):
        mark = "*" if n == g["adjudicated"] else " "
        cells = "".join(
            f"{a['at'][i]['supported']:>11.3f} /{a['at'][i]['refuted']:>5.3f}" for a in agreements
        )
        lines.append(f"  {n:>5}{mark} {n * g['per_topic']:>8}{cells}")
    lines.append(
        "  (* the plan's or --adjudicated sample; careful: adjudicators' judgments; "
        "topic-level correlation of d_t and f_t at 0: "
        + ", ".join(f"{a['rho_null']:.2f}" for a in agreements)
        + ")"
    )

    def row(label: str, cell: Callable[[AgreementFigures], str]) -> str:
        return f"  {label:<40}" + "".join(f"{cell(a):>17}" for a in agreements)

    def count(value: int | None) -> str:
        return "not reached" if value is None else str(value)

    def needed_rows(v: Verdict) -> list[str]:
        return [
            row(f"{v}: n for {target:.0%} (PPI++)", lambda a: count(_needed(a, v)["adjudicated"])),
            row(
                f"{v}: topics for {target:.0%}, all careful",
                lambda a: count(_needed(a, v)["all_careful"]),
            ),
            row(
                f"{v}: careful judgments, PPI / all",
                lambda a: _ratio(_needed(a, v), g["per_topic"]),
            ),
        ]

    lines += needed_rows("supported") + needed_rows("refuted")
    lines += measured_lines(g)
    k = g["sizes"].index(g["adjudicated"])
    lines.append(
        row(
            f"saved at n = {g['adjudicated']} (refuted, equal power)",
            lambda a: str((a["at"][k]["all_careful_refuted"] - g["adjudicated"]) * g["per_topic"]),
        )
    )
    return lines


def _needed(a: AgreementFigures, verdict: Verdict) -> NeededFigures:
    return a["supported"] if verdict == "supported" else a["refuted"]


def _ratio(needed: NeededFigures, per_topic: int) -> str:
    n, c = needed["adjudicated"], needed["all_careful"]
    if n is None or c is None:
        return "n/a"
    return f"{n * per_topic}/{c * per_topic} ({n / c:.2f})"


# the bundled plan's switch from betting to the joint rule (`Adjudication.reference`)
FINITE_BELOW = Adjudication().finite_below
MEASURED_STUDIES = 100  # simulated studies per figure of the verdict's own rule (MC SE <= 5%)
MEASURED_SEED = 20261206


def measured_power(
    settings: GoldPowerSettings,
    sizes: list[int],
    agreement: float,
    *,
    min_youden: float,
    studies: int = MEASURED_STUDIES,
    require_robust: bool = False,
    combine: str = "mean",
) -> list[MeasuredRow]:
    """Power of the verdict's own rule (the joint test of `statistics.joint` from FINITE_BELOW
    adjudicated topics on, betting tests below), simulated (`simulation.instrument`): at
    each sample size, supported at a true +SESOI and refuted at a true 0; with
    `require_robust` (`adjudication.differential_error: require`) a `supported` counts only when it
    is robust to the adjudicators' differential error. The normal approximation above is the
    t reference's and overstates what the rule can reach."""
    s = settings
    rng = np.random.default_rng(MEASURED_SEED)
    out: list[MeasuredRow] = []
    for n in sizes:
        scenario = Scenario(
            "plan",
            topics=s.topics,
            share=n / s.topics,
            base=s.p_single,
            samples=s.samples,
            primary=s.reviewers,
            primary_accuracy=agreement,
            adjudicators=s.adjudicators,
            sensitivity=s.adjudicator_accuracy,
            specificity=s.adjudicator_accuracy,
            combine="majority" if combine == "majority" else "mean",
        )
        powers = []
        for effect, column in ((s.sesoi, "supported"), (0.0, "refuted")):
            batch = simulate(scenario, effect, studies, rng)
            decided = auto_rule(batch, s.alpha, s.sesoi, min_youden, FINITE_BELOW)
            hits = decided.robust if require_robust and column == "supported" else None
            powers.append(float((getattr(decided, column) if hits is None else hits).mean()))
        out.append({"adjudicated": n, "supported": powers[0], "refuted": powers[1]})
    return out


def measured_lines(g: GoldPower) -> list[str]:
    m = g.get("measured")
    if not m:
        return []
    robust = " and robust" if m.get("differential") == "require" else ""
    lines = [
        f"  the verdict's own rule (the joint test of the true difference from {FINITE_BELOW} "
        "adjudicated topics on, betting tests below; adjudicators measured on controls of 0.2 x "
        f"their items, at least 10: {m['controls']} each at n = {g['adjudicated']}), "
        f"{g['adjudicators']} per item, {m.get('combine', 'mean')}; "
        f"simulated ({m['studies']} studies per figure, "
        f"primary accuracy {m['agreement']:g}; adjudication.differential_error: "
        f"{m.get('differential', 'report')}):",
        f"  {'n':>6} {'supported' + robust + ' at +' + format(g['sesoi'], 'g'):>22} "
        f"{'refuted at 0':>14}",
    ]
    for row in m["rows"]:
        mark = "*" if row["adjudicated"] == g["adjudicated"] else " "
        lines.append(
            f"  {row['adjudicated']:>5}{mark} {row['supported']:>22.3f} {row['refuted']:>14.3f}"
        )
    if g.get("escalated") is not None:
        lines.append(
            f"  adjudication.escalate: about {g['escalated']:.2f} adjudicator judgments per item "
            f"at accuracy {g['adjudicator_accuracy']:g}, against {g['adjudicators']} (the labels "
            f"of a majority of {g['adjudicators']})"
        )
    needed, alone = m.get("needed") or {}, m.get("alone") or {}
    for verdict in ("supported", "refuted"):
        n = needed.get(verdict)
        text = str(n) if n is not None else f"not reached (at most {g['topics']} adjudicated)"
        lines.append(f"  {verdict}: n for {g['target']:.0%} by the verdict's rule: {text}")
    chosen = next((r for r in m["rows"] if r["adjudicated"] == g["adjudicated"]), None)
    if chosen is not None and alone:
        lines.append(
            f"  the same {g['adjudicated'] * g['per_topic']} careful judgments without the "
            f"primary-only topics (a study of the {g['adjudicated']} adjudicated topics alone): "
            f"supported {alone['supported']:.3f} (with them {chosen['supported']:.3f}), refuted "
            f"{alone['refuted']:.3f} (with them {chosen['refuted']:.3f}); each figure "
            f"+/- about {_mc_error(m['studies']):.2f} (Monte Carlo, 2 SE)"
        )
    return lines
