"""McNemar's tests on the consensus table (exact and mid-p), with Tango's score interval."""

from __future__ import annotations

import math

from harness.analysis.plan.plan_file import Plan
from harness.analysis.plan.primary_tests import PrimaryTestRecord
from harness.analysis.statistics.consensus import Judgments, TopicTable, consensus_counts
from harness.analysis.statistics.paired import mcnemar, tango_ci
from harness.analysis.statistics.primary import PrimaryOutcome

__all__ = ["MCNEMAR_EXACT", "MCNEMAR_MIDP"]

NOT_SIMULATED = (
    "the simulation of verdicts draws per-topic proportions, not the consensus table "
    "McNemar's test reads"
)


def _run(midp: bool, table: TopicTable, plan: Plan) -> PrimaryOutcome:
    counts = consensus_counts(*table.consensus(plan.consensus.threshold, plan.primary.seed))
    n = int(table.d.size)
    result = mcnemar(counts["b"], counts["c"])
    low, high = tango_ci(counts["b"], counts["c"], n) if n else (-1.0, 1.0)
    estimate = (counts["b"] - counts["c"]) / n if n else math.nan
    return PrimaryOutcome(
        "mcnemar_midp" if midp else "mcnemar_exact",
        table,
        n,
        estimate,
        low,
        high,
        result.p_midp_greater if midp else result.p_exact_greater,
        result.p_midp_less if midp else result.p_exact_less,
        p_label="mid-p" if midp else "exact",
        details={
            "b": result.b,
            "c": result.c,
            "p_exact": result.p_exact_greater,
            "p_midp": result.p_midp_greater,
            "ci": "Tango score interval",
        },
    )


def run_exact(j: Judgments, table: TopicTable, plan: Plan, unsure: str) -> PrimaryOutcome:
    return _run(False, table, plan)


def run_midp(j: Judgments, table: TopicTable, plan: Plan, unsure: str) -> PrimaryOutcome:
    return _run(True, table, plan)


MCNEMAR_EXACT = PrimaryTestRecord(
    name="mcnemar_exact",
    label="McNemar exact conditional test on the consensus table",
    check_label="McNemar exact (consensus), Tango CI",
    check_note="Tango score interval",
    method=lambda plan: (
        "McNemar's exact conditional test on the consensus table, with "
        "Tango's score interval for the paired difference."
    ),
    run=run_exact,
    needs="consensus_table",
    simulation_note=NOT_SIMULATED,
    default_check=True,
)

MCNEMAR_MIDP = PrimaryTestRecord(
    name="mcnemar_midp",
    label="McNemar mid-p test on the consensus table",
    check_label="McNemar mid-p (consensus), Tango CI",
    check_note="Tango score interval",
    method=lambda plan: (
        "McNemar's mid-p test on the consensus table, with Tango's score "
        "interval for the paired difference."
    ),
    run=run_midp,
    needs="consensus_table",
    simulation_note=NOT_SIMULATED,
    default_check=True,
)
