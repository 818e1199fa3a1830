"""The registry of primary tests: one record per test, read by every place that names one.

The plan's allowed `primary.test` and `checks`, `run_primary`, the report's labels and method
sentence, and the simulation of verdicts all look a test up here, so a new test is one module
(its runner and record) and one `register` line (in `statistics/primary_tests.py` for a bundled
test). This module sits below everything else in `analysis/`: the plan validates against it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np

    from harness.analysis.plan.plan_file import Plan
    from harness.analysis.statistics.consensus import Judgments, TopicTable
    from harness.analysis.statistics.primary import PrimaryOutcome

__all__ = [
    "Needs",
    "PrimaryTestRecord",
    "Runner",
    "SimulatedTest",
    "default_checks",
    "primary_test",
    "primary_test_names",
    "register",
    "unregister",
]

#: what a test reads: the per-topic proportions, the consensus table built from them (its
#: differences are then what the power summary and the SD describe), or every judgment
Needs = Literal["topic_table", "consensus_table", "judgments"]

#: (judgments, topic table, plan, how `unsure` is coded) -> the test's outcome
Runner = Callable[["Judgments", "TopicTable", "Plan", str], "PrimaryOutcome"]

#: (per-topic proportions of many simulated studies (studies, topics, 3), plan) -> one-sided
#: p-values (greater, less), one per study
SimulatedTest = Callable[["np.ndarray", "Plan"], tuple["np.ndarray", "np.ndarray"]]


@dataclass(frozen=True)
class PrimaryTestRecord:
    """One primary test. `simulate` is None where the simulation of verdicts with controls
    cannot evaluate the test; `simulation_note` then says why (it refuses such a plan)."""

    name: str  # the plan's value (`primary.test`, `checks`)
    label: str  # the report's name of the test
    check_label: str  # its row among the checks of the primary analysis
    check_note: str  # that row's note (the interval it reports)
    method: Callable[[Plan], str]  # the report's method sentence
    run: Runner
    needs: Needs
    simulate: SimulatedTest | None = None
    simulation_note: str = ""
    #: reported as a check by a plan that names no `checks`. Off for a new test, so that
    #: registering one changes neither the bundled plan nor what an existing plan runs.
    default_check: bool = False


#: registers the bundled tests; loaded on the first use of the registry, because the tests bring
#: the statistics (numpy, scipy, statsmodels) that importing the plan must not load
BUNDLED = "harness.analysis.statistics.primary_tests"

_REGISTRY: dict[str, PrimaryTestRecord] = {}
_bundled: list[bool] = []  # non-empty once the bundled module's loading has begun


def _records() -> dict[str, PrimaryTestRecord]:
    if not _bundled:
        _bundled.append(True)  # before the import: the bundled module registers through here
        try:
            importlib.import_module(BUNDLED)
        except BaseException:
            _bundled.clear()  # a failed load is retried, never taken for an empty registry
            raise
    return _REGISTRY


def register(record: PrimaryTestRecord) -> PrimaryTestRecord:
    """Add a test (names are unique); returns the record so a module can register on import.
    The bundled tests come first, whoever registers first."""
    if record.name in _records():
        raise ValueError(f"primary test {record.name!r} is registered already")
    _REGISTRY[record.name] = record
    return record


def unregister(name: str) -> None:
    """Remove a test (for tests that register a toy one)."""
    _records().pop(name, None)


def primary_test(name: str) -> PrimaryTestRecord:
    try:
        return _records()[name]
    except KeyError:
        raise ValueError(f"unknown primary test {name!r}") from None


def primary_test_names() -> tuple[str, ...]:
    """The registered tests, in the order they were registered."""
    return tuple(_records())


def default_checks() -> list[str]:
    """The checks of a plan that names none: the tests registered with `default_check`."""
    return [name for name, record in _records().items() if record.default_check]
