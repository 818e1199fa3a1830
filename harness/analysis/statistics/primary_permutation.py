"""The topic-level permutation test of the mean d_t: the bundled plan's primary test."""

from __future__ import annotations

import numpy as np

from harness.analysis.plan.plan_file import Plan
from harness.analysis.plan.primary_tests import PrimaryTestRecord
from harness.analysis.statistics.consensus import Judgments, TopicTable
from harness.analysis.statistics.equivalence import t_interval
from harness.analysis.statistics.permutation import SignFlipResult, relabel_test, sign_flip
from harness.analysis.statistics.primary import PrimaryOutcome

__all__ = ["PERMUTATION"]


def _flip(table: TopicTable, plan: Plan) -> SignFlipResult:
    """Two arms: sign flips of d. The mean of two singles: relabel the three conditions."""
    draws, seed = plan.primary.permutations, plan.primary.seed
    if table.single == "mean_of_singles":
        return relabel_test(table.p[table.complete], permutations=draws, seed=seed)
    return sign_flip(table.d, permutations=draws, seed=seed)


def run(j: Judgments, table: TopicTable, plan: Plan, unsure: str) -> PrimaryOutcome:
    flip = _flip(table, plan)
    mid = plan.primary.p_value == "mid"
    low, high = t_interval(table.d)
    return PrimaryOutcome(
        "permutation",
        table,
        int(table.d.size),
        flip.mean,
        low,
        high,
        flip.p_greater_mid if mid else flip.p_greater,
        flip.p_less_mid if mid else flip.p_less,
        p_label="mid-p" if mid else "conventional",
        details={
            "distribution": flip.method,
            "nonzero_topics": flip.n_nonzero,
            "p_conventional": flip.p_greater,
            "p_mid": flip.p_greater_mid,
        },
    )


def simulate(p: np.ndarray, plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """Mid-p values of the relabelling test, per simulated study (rows of `p`)."""
    greater, less = np.empty(p.shape[0]), np.empty(p.shape[0])
    for s in range(p.shape[0]):
        r = relabel_test(p[s], permutations=plan.primary.permutations, seed=plan.primary.seed)
        greater[s], less[s] = r.p_greater_mid, r.p_less_mid
    return greater, less


def method(plan: Plan) -> str:
    how = (
        "a topic-level permutation test of the mean of d_t that relabels the three "
        "conditions within each topic: under the null hypothesis they are exchangeable, so "
        "each topic's difference is, with probability 1/3 each, the value it takes with "
        "cross, single_a or single_b labelled cross; the reference distribution over all "
        "3^n labellings is computed exactly by convolution (Monte Carlo only when too "
        "large). The p-value is "
        if plan.single == "mean_of_singles"
        else "a topic-level paired sign-flip permutation test of the mean of d_t: under the "
        "null hypothesis each topic's difference is as likely to have the opposite sign; "
        "the reference distribution over all 2^n sign patterns is computed exactly by "
        "convolution (Monte Carlo only when too large). The p-value is "
    )
    p_value = (
        "the mid-p, P(T* > T) + P(T* = T)/2, which keeps the size near alpha although "
        "d_t takes few distinct values"
        if plan.primary.p_value == "mid"
        else "P(T* >= T)"
    )
    return how + p_value + ". The 95% interval is the t interval of the mean d_t."


PERMUTATION = PrimaryTestRecord(
    name="permutation",
    label="Topic-level paired permutation test",
    check_label="Topic-level permutation test of mean d_t",
    check_note="95% t interval of the mean d_t",
    method=method,
    run=run,
    needs="topic_table",
    simulate=simulate,
    default_check=True,
)
