"""The primary analysis as the plan fixes it: one function shared by `analyze`, the secondary
variants (reviewer kind, unsure coded both ways) and the simulations of `power` and the
calibration benchmark, so that what is simulated is exactly what is run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from harness.analysis.planning.plan_file import Plan
from harness.analysis.statistics.consensus import (
    Judgments,
    TopicTable,
    code_outcome,
    consensus_counts,
)
from harness.analysis.statistics.consensus import topic_table as make_table
from harness.analysis.statistics.equivalence import t_interval
from harness.analysis.statistics.gee import GeeResult, fit_gee
from harness.analysis.statistics.paired import McNemar, mcnemar, tango_ci
from harness.analysis.statistics.permutation import SignFlipResult, relabel_test, sign_flip


@dataclass(frozen=True)
class PrimaryOutcome:
    test: str
    table: TopicTable
    n_topics: int  # complete topics
    estimate: float  # on the test's own scale (difference in proportions)
    ci_low: float  # 95% two-sided
    ci_high: float
    p_greater: float  # one-sided, the plan's choice of p-value
    p_less: float
    signflip: SignFlipResult | None = None
    mcnemar: McNemar | None = None
    gee: GeeResult | None = None


def table_for(
    j: Judgments, plan: Plan, *, unsure: str | None = None, min_reviewers: int | None = None
) -> TopicTable:
    return make_table(
        j,
        unsure=unsure or plan.outcome.unsure,
        min_reviewers=plan.minimum.reviewers_per_item if min_reviewers is None else min_reviewers,
        single=plan.single,
    )


def _permutation(table: TopicTable, d: np.ndarray, plan: Plan) -> SignFlipResult:
    """Two arms: sign flips of d. The mean of two singles: relabel the three conditions."""
    draws, seed = plan.primary.permutations, plan.primary.seed
    if table.single == "mean_of_singles":
        return relabel_test(table.p[table.complete], permutations=draws, seed=seed)
    return sign_flip(d, permutations=draws, seed=seed)


def run_primary(
    j: Judgments,
    plan: Plan,
    *,
    test: str | None = None,
    unsure: str | None = None,
    min_reviewers: int | None = None,
    table: TopicTable | None = None,
) -> PrimaryOutcome:
    """Run one of the primary tests (default: the plan's) on a study's judgments."""
    test = test or plan.primary.test
    table = (
        table
        if table is not None
        else table_for(j, plan, unsure=unsure, min_reviewers=min_reviewers)
    )
    d = table.d
    n = int(d.size)
    if test == "permutation":
        flip = _permutation(table, d, plan)
        mid = plan.primary.p_value == "mid"
        low, high = t_interval(d)
        return PrimaryOutcome(
            test,
            table,
            n,
            flip.mean,
            low,
            high,
            flip.p_greater_mid if mid else flip.p_greater,
            flip.p_less_mid if mid else flip.p_less,
            signflip=flip,
        )
    if test in ("mcnemar_exact", "mcnemar_midp"):
        counts = consensus_counts(*table.consensus(plan.consensus.threshold, plan.primary.seed))
        result = mcnemar(counts["b"], counts["c"])
        low, high = tango_ci(counts["b"], counts["c"], n) if n else (-1.0, 1.0)
        estimate = (counts["b"] - counts["c"]) / n if n else math.nan
        if test == "mcnemar_midp":
            return PrimaryOutcome(
                test,
                table,
                n,
                estimate,
                low,
                high,
                result.p_midp_greater,
                result.p_midp_less,
                mcnemar=result,
            )
        return PrimaryOutcome(
            test,
            table,
            n,
            estimate,
            low,
            high,
            result.p_exact_greater,
            result.p_exact_less,
            mcnemar=result,
        )
    if test == "gee":
        y = code_outcome(j.verdict, unsure or plan.outcome.unsure)
        fit = fit_gee(
            j,
            y,
            table.item_eligible,
            single=plan.single,
            max_topics=plan.secondary.heavy_max_topics,
            seed=plan.secondary.seed,
        )
        if fit is None:
            return PrimaryOutcome(test, table, n, math.nan, math.nan, math.nan, 1.0, 1.0)
        return PrimaryOutcome(
            test,
            table,
            n,
            fit.risk_difference,
            fit.rd_ci_low,
            fit.rd_ci_high,
            fit.p_greater,
            fit.p_less,
            gee=fit,
        )
    raise ValueError(f"unknown primary test {test!r}")
