"""The report's lead: the estimate the verdict rests on, with its interval, the margin the verdict
tests it against and the instrument's J with its lower bound, as data that the Markdown, the
HTML figure (`lead_html`) and the PNG (`figures.verdict`) all draw from, so they cannot differ.

Which estimate and margin: with an adjudicated sample, supported reads the one-sided test on
the adjudicators' scale ((1 - 2 alpha) interval above 0); refuted reads, under the joint rule,
the true difference (theirs / J) against +/- SESOI by the joint TOST, and under the betting rule
their difference against +/- SESOI x J's exact lower bound at alpha / 2. Without one, the
provisional verdict reads the primary reviewers' test, and the equivalence test on the corrected
scale against the margin the controls give (`statistics.verdict.decide`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.analysis.report.results import (
    AdjudicationResult,
    AnalysisResult,
    ControlsResult,
    fmt,
    fmt_p,
)

AXIS_TITLE = "difference in proportion judged novel (cross - single)"


@dataclass(frozen=True)
class LeadRow:
    """One estimate the verdict reads: its interval, and the margin it is tested against."""

    label: str  # what the estimate is
    estimate: float
    low: float | None  # the interval drawn thin
    high: float | None
    interval: str  # its level and kind, e.g. "95% Fieller interval"
    inner: tuple[float, float] | None = None  # drawn thick: the (1 - 2 alpha) interval
    inner_text: str = ""
    margin: float | None = None  # +/- margin the row is tested against
    margin_text: str = ""  # what the margin is
    test: str = ""  # what the verdict reads from this row

    def text(self) -> str:
        """The row in one clause of the report's text."""
        inner = f" ({self.inner_text})" if self.inner_text else ""
        tested = (
            f", tested against +/-{self.margin:.3g} ({self.margin_text})" if self.margin else ""
        )
        return (
            f"{self.label} {fmt(self.estimate, signed=True)}, {self.interval} "
            f"{_pair(self.low, self.high)}{inner}{tested}: {self.test}"
        )

    def span(self) -> list[float]:
        """Every value the row draws, for the axis."""
        values = [self.estimate, *(v for v in (self.low, self.high) if v is not None)]
        values += list(self.inner or ())
        if self.margin:
            values += [-self.margin, self.margin]
        return values


@dataclass(frozen=True)
class LeadYouden:
    """The instrument's J: the adjudicators' (or the primary reviewers' on their controls)."""

    who: str
    value: float
    bound: float | None
    bound_text: str  # which lower bound, e.g. "95% score interval"
    minimum: float  # the plan's controls.min_youden: the gate on the bound
    passed: bool

    def text(self) -> str:
        bound = (
            f", lower bound {fmt(self.bound)} ({self.bound_text})" if self.bound is not None else ""
        )
        gate = "passed" if self.passed else "not passed"
        return (
            f"{self.who} {fmt(self.value)}{bound}; the gate needs the bound at least "
            f"{self.minimum:g}: {gate}"
        )


@dataclass(frozen=True)
class Lead:
    """What the report opens with, beside the verdict."""

    rows: list[LeadRow]
    youden: LeadYouden | None
    caption: str

    def text(self) -> str:
        """The estimate paragraph (Markdown inline)."""
        if not self.rows:
            return "**The verdict's estimate**: none (the primary test could not be computed)."
        parts = "; ".join(row.text() for row in self.rows)
        youden = f". {capital(self.youden.text())}" if self.youden else ""
        return f"**The verdict's estimate**: {parts}{youden}."

    def axis(self) -> tuple[float, float]:
        """The difference axis: every row's values and 0, at least 0.2 wide, within [-1, 1]."""
        values = [0.0, *(v for row in self.rows for v in row.span())]
        low, high = min(values), max(values)
        widen = max(0.0, 0.2 - (high - low)) / 2
        pad = 0.08 * (high - low + 2 * widen)
        return max(-1.0, low - widen - pad), min(1.0, high + widen + pad)


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def ticks(low: float, high: float, most: int = 6) -> list[float]:
    """Round tick values inside [low, high]: the finest step that gives at most `most`."""
    for step in (0.01, 0.02, 0.025, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0):
        first = math.ceil(low / step - 1e-9)
        last = math.floor(high / step + 1e-9)
        if last - first + 1 <= most:
            return [round(k * step, 6) + 0.0 for k in range(first, last + 1)]
    return [low, high]


def tick_label(value: float) -> str:
    return "0" if value == 0 else f"{value:+g}"


def build_lead(r: AnalysisResult) -> Lead:
    a = r.adjudication
    if r.verdict.basis == "adjudicated" and a is not None and a.estimate is not None:
        return _adjudicated(r, a)
    return _provisional(r)


def _adjudicated(r: AnalysisResult, a: AdjudicationResult) -> Lead:
    alpha = a.alpha
    assert a.estimate is not None  # build_lead's condition
    theirs = LeadRow(
        label=f"adjudicated difference ({a.estimator.upper()}, the adjudicators' scale)",
        estimate=a.estimate,
        low=a.ci_low,
        high=a.ci_high,
        interval=f"{a.ci_level:.0%} interval",
        inner=_inner(a.tost_low, a.tost_high),
        inner_text=f"{1 - 2 * alpha:.0%}: {_pair(a.tost_low, a.tost_high)}",
        test=f"one-sided p = {fmt_p(a.p_greater)}, supported needs < {alpha:g}",
    )
    rows = [theirs]
    by_equivalence = _plan(r, "equivalence", "refute_by") != "non_superiority"
    if a.rule == "joint" and a.corrected_estimate is not None:
        true = LeadRow(
            label="true difference (adjudicated / J)",
            estimate=a.corrected_estimate,
            low=a.corrected_low,
            high=a.corrected_high,
            interval=f"{1 - alpha:.0%} Fieller interval (J's uncertainty included)",
            inner=_inner(a.corrected_tost_low, a.corrected_tost_high),
            inner_text=(
                f"{1 - 2 * alpha:.0%}, inside the margin exactly when the joint TOST refutes: "
                f"{_pair(a.corrected_tost_low, a.corrected_tost_high)}"
            ),
            margin=a.margin,
            margin_text="the SESOI on the true scale",
            test=(
                f"joint TOST p = {fmt_p(a.p_tost_margin)}, refuted needs < {alpha:g}"
                if by_equivalence
                else f"refuted needs it shown below +{a.margin:g} (joint test at {alpha:g})"
            ),
        )
        rows = [theirs, true] if r.verdict.label == "supported" else [true, theirs]
        rows += _robust_row(a)
    elif a.rule != "joint" and a.margin:
        rows = [
            _with_test(
                theirs,
                a.margin,
                f"the SESOI {a.sesoi:g} times J's lower bound {fmt(a.youden_bound)}",
                f"TOST p = {fmt_p(a.p_tost_margin)}, refuted needs < {alpha / 2:g}"
                if by_equivalence
                else f"refuted needs it shown below +{a.margin:.3g} (at {alpha / 2:g})",
            )
        ]
    else:
        rows = [_with_test(theirs, None, "", _out_of_reach(a))]
    youden = None
    if a.youden is not None:
        kind = "score" if a.rule == "joint" else "exact"
        youden = LeadYouden(
            who="adjudicators' J (planted controls)",
            value=a.youden,
            bound=a.youden_bound,
            bound_text=f"{_level(r):.0%} {kind} interval",
            minimum=_min_youden(r),
            passed=a.adjudicator_gate,
        )
    return Lead(rows, youden, _caption(rows, youden, r))


def _robust_row(a: AdjudicationResult) -> list[LeadRow]:
    """The true difference corrected for the adjudicators' differential error too, where it
    was estimated; the verdict reads its upper limit where the plan requires robustness."""
    if a.robust_estimate is None:
        return []
    reads = (
        f"refuted needs its {1 - 2 * a.alpha:.0%} upper limit below +{a.sesoi:g} too (the plan "
        "requires robustness to differential error)"
        if a.robust_required
        else "reported beside the verdict (the plan does not require robustness)"
    )
    return [
        LeadRow(
            label="true difference corrected for their differential error too",
            estimate=a.robust_estimate,
            low=a.robust_low,
            high=a.robust_high,
            interval=f"{1 - a.alpha:.0%} Fieller interval",
            margin=a.sesoi,
            margin_text="the SESOI",
            test=reads,
        )
    ]


def _with_test(row: LeadRow, margin: float | None, what: str, test: str) -> LeadRow:
    """The row with a margin and a second test that the verdict reads from it."""
    return LeadRow(
        label=row.label,
        estimate=row.estimate,
        low=row.low,
        high=row.high,
        interval=row.interval,
        inner=row.inner,
        inner_text=row.inner_text,
        margin=margin,
        margin_text=what,
        test=f"{row.test}; {test}",
    )


def _out_of_reach(a: AdjudicationResult) -> str:
    if a.tiers_disagree:
        return "refuted is out of reach: the tiers' judgments do not fit their accuracy"
    if not a.adjudicator_gate:
        return "refuted is out of reach: the adjudicators were not shown to discriminate"
    return "refuted is out of reach on this scale (see the verdict's reason)"


def _provisional(r: AnalysisResult) -> Lead:
    p, c = r.primary, r.controls
    if p.estimate is None or not math.isfinite(p.estimate):
        return Lead([], None, "No estimate: the primary test could not be computed.")
    primary = LeadRow(
        label="difference on the primary reviewers' scale",
        estimate=p.estimate,
        low=p.ci_low,
        high=p.ci_high,
        interval="95% CI",
        test=f"one-sided p ({p.p_label}) = {fmt_p(p.p_value)}, supported needs < {p.alpha:g}",
    )
    equivalence = _controls_row(r, c) if c is not None and c.gate_ok else None
    if equivalence is not None:
        rows = [primary, equivalence]
    else:
        why = (
            "the corrected-scale equivalence test was not run (see the verdict's reason)"
            if c is not None and c.gate_ok
            else "refuted is out of reach: the reviewers were not shown to discriminate"
        )
        rows = [_with_test(primary, r.equivalence.sesoi, "the SESOI", why)]
    youden = None
    if c is not None and c.pooled_youden is not None:
        youden = LeadYouden(
            who="primary reviewers' J (planted controls)",
            value=c.pooled_youden,
            bound=c.youden_bound if c.youden_bound is not None else c.pooled_youden_low,
            bound_text=f"{c.level:.0%} exact interval",
            minimum=c.min_youden,
            passed=c.gate_ok,
        )
    return Lead(rows, youden, _caption(rows, youden, r))


def _controls_row(r: AnalysisResult, c: ControlsResult) -> LeadRow | None:
    """The equivalence test on the corrected scale that refuted reads, where the gate passed."""
    eq = c.equivalence
    if eq is None or eq.estimate is None:
        return None
    by_equivalence = _plan(r, "equivalence", "refute_by") != "non_superiority"
    needs = f"< {(1 - eq.ci_level) / 2:g}"
    if eq.method == "bootstrap":
        inside = "inside" if by_equivalence else "below the upper"
        return LeadRow(
            label="corrected difference (/ J)",
            estimate=eq.estimate,
            low=eq.ci_low,
            high=eq.ci_high,
            interval=f"{eq.ci_level:.0%} bootstrap interval",
            margin=eq.sesoi,
            margin_text="the SESOI",
            test=f"refuted needs the interval {inside} margin",
        )
    p = eq.p_tost if by_equivalence else eq.p_upper
    return LeadRow(
        label=f"observed differences, equivalence test ({eq.method})",
        estimate=eq.estimate,
        low=eq.ci_low,
        high=eq.ci_high,
        interval=f"{eq.ci_level:.0%} interval",
        margin=eq.sesoi,
        margin_text=f"the SESOI {r.equivalence.sesoi:g} times J's lower bound {fmt(c.youden_bound)}",
        test=f"{'TOST' if by_equivalence else 'non-superiority'} p = {fmt_p(p)}, "
        f"refuted needs {needs}",
    )


def _caption(rows: list[LeadRow], youden: LeadYouden | None, r: AnalysisResult) -> str:
    thick = " Thick: the (1 - 2 alpha) interval a one-sided test at alpha reads." * any(
        row.inner for row in rows
    )
    shaded = " Shaded, dashed: the margin each row is tested against." * any(
        row.margin for row in rows
    )
    j = (
        " Below: J with its lower bound; dotted, the plan's minimum for the bound."
        if youden
        else ""
    )
    per_model = (
        " The verdict follows each model's own (see Across models); pooled here."
        if _plan(r, "models", "primary") == "per_model" and r.models is not None
        else ""
    )
    return (
        f"The verdict's estimate: the point and its interval (thin).{thick}{shaded}{j}{per_model}"
    )


def _inner(low: float | None, high: float | None) -> tuple[float, float] | None:
    return (low, high) if low is not None and high is not None else None


def _pair(low: float | None, high: float | None) -> str:
    return f"[{fmt(low, signed=True)}, {fmt(high, signed=True)}]"


def _plan(r: AnalysisResult, section: str, key: str) -> object:
    part = r.plan.get(section)
    return part.get(key) if isinstance(part, dict) else None


def _level(r: AnalysisResult) -> float:
    level = _plan(r, "controls", "level")
    return float(level) if isinstance(level, (int, float)) else 0.95


def _min_youden(r: AnalysisResult) -> float:
    value = _plan(r, "controls", "min_youden")
    return float(value) if isinstance(value, (int, float)) else 0.0
