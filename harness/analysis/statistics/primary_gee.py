"""The binomial GEE on the judgments as a primary test: the marginal risk difference."""

from __future__ import annotations

import math

from harness.analysis.plan.plan_file import Plan
from harness.analysis.plan.primary_tests import PrimaryTestRecord
from harness.analysis.statistics.consensus import Judgments, TopicTable, code_outcome
from harness.analysis.statistics.gee import GeeResult, fit_gee
from harness.analysis.statistics.primary import PrimaryOutcome

__all__ = ["GEE"]

P_LABEL = "Wald z, bias-reduced covariance"


def run(j: Judgments, table: TopicTable, plan: Plan, unsure: str) -> PrimaryOutcome:
    fit = fit_gee(
        j,
        code_outcome(j.verdict, unsure),
        table.item_eligible,
        single=plan.single,
        max_topics=plan.secondary.heavy_max_topics,
        seed=plan.secondary.seed,
    )
    n = int(table.d.size)
    if fit is None:
        return PrimaryOutcome("gee", table, n, math.nan, math.nan, math.nan, 1.0, 1.0, P_LABEL)
    return PrimaryOutcome(
        "gee",
        table,
        n,
        fit.risk_difference,
        fit.rd_ci_low,
        fit.rd_ci_high,
        fit.p_greater,
        fit.p_less,
        p_label=P_LABEL,
        details={
            "odds_ratio": fit.odds_ratio,
            "working_correlation": fit.working_correlation,
            "subsampled_from": fit.subsampled_from,
        },
        note=_note(fit),
    )


def _note(g: GeeResult) -> str:
    low, high = g.or_ci()
    return f"; odds ratio {g.odds_ratio:.3f} [{low:.3f}, {high:.3f}]" + (
        f"; random subsample of {g.n_topics} of {g.subsampled_from} topics"
        if g.subsampled_from
        else ""
    )


GEE = PrimaryTestRecord(
    name="gee",
    label="Binomial GEE, exchangeable, clustered on topic, bias-reduced covariance",
    check_label="GEE clustered on topic (bias-reduced)",
    check_note="marginal risk difference, delta-method interval",
    method=lambda plan: (
        "a binomial GEE on the judgments (exchangeable working correlation, "
        "clusters = topics, bias-reduced sandwich covariance); the difference is the marginal risk "
        "difference."
    ),
    run=run,
    needs="judgments",
    simulation_note="the simulation of verdicts draws per-topic proportions, not the "
    "judgments the GEE fits",
    default_check=True,
)
