"""The bundled primary tests, registered in the order the default plan lists its checks.

A new test: a module with its runner and `PrimaryTestRecord`, and one `register` line here.
The registry (`plan.primary_tests`) loads this module on its first use, so a plan is never
validated against an empty registry.
"""

from __future__ import annotations

from harness.analysis.plan.primary_tests import register
from harness.analysis.statistics.primary_gee import GEE
from harness.analysis.statistics.primary_mcnemar import MCNEMAR_EXACT, MCNEMAR_MIDP
from harness.analysis.statistics.primary_permutation import PERMUTATION

__all__ = ["BUNDLED"]

BUNDLED = (
    register(PERMUTATION),
    register(MCNEMAR_EXACT),
    register(MCNEMAR_MIDP),
    register(GEE),
)
