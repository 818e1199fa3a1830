"""The analysis plan (`analysis/plan.yaml`) and the registry of primary tests it names: the lowest
layer of `analysis/`, read by the statistics, the simulations, planning and the report."""

from __future__ import annotations

from harness.analysis.plan.plan_file import LoadedPlan, Plan, load_plan
from harness.analysis.plan.primary_tests import (
    PrimaryTestRecord,
    primary_test,
    primary_test_names,
    register,
    unregister,
)

__all__ = [
    "LoadedPlan",
    "Plan",
    "PrimaryTestRecord",
    "load_plan",
    "primary_test",
    "primary_test_names",
    "register",
    "unregister",
]
