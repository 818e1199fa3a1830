"""The primary analysis as the plan fixes it: one function shared by `analyze`, the secondary
variants (reviewer kind, unsure coded both ways) and the simulations of `power` and the
calibration benchmark, so that what is simulated is exactly what is run.

The tests themselves are records in `plan.primary_tests` (the bundled ones: `primary_tests`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.analysis.plan.plan_file import Plan
from harness.analysis.plan.primary_tests import primary_test
from harness.analysis.statistics.consensus import Judgments, TopicTable
from harness.analysis.statistics.consensus import topic_table as make_table

__all__ = ["Detail", "PrimaryOutcome", "run_primary", "table_for"]

#: a value of a test's details in report.json (`primary.details`)
Detail = str | int | float | None


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
    p_label: str = ""  # how the primary row names its p-value ("mid-p", "exact", ...)
    details: Mapping[str, Detail] = field(default_factory=dict)  # the test's own figures
    note: str = ""  # appended to the test's row among the checks


def table_for(
    j: Judgments, plan: Plan, *, unsure: str | None = None, min_reviewers: int | None = None
) -> TopicTable:
    return make_table(
        j,
        unsure=unsure or plan.outcome.unsure,
        min_reviewers=plan.minimum.reviewers_per_item if min_reviewers is None else min_reviewers,
        single=plan.single,
    )


def run_primary(
    j: Judgments,
    plan: Plan,
    *,
    test: str | None = None,
    unsure: str | None = None,
    min_reviewers: int | None = None,
    table: TopicTable | None = None,
) -> PrimaryOutcome:
    """Run one of the registered primary tests (default: the plan's) on a study's judgments."""
    record = primary_test(test or plan.primary.test)
    if table is None:
        table = table_for(j, plan, unsure=unsure, min_reviewers=min_reviewers)
    return record.run(j, table, plan, unsure or plan.outcome.unsure)
