"""The blinded steps' fidelity per condition: did extraction and normalisation fail more often on
cross-field outputs than on single-field ones?

Reviewers judge what the steps wrote, so a step that fails more often in one condition (drops
content, adds a claim of novelty or prior work, echoes its instruction) biases the comparison even
when every failing item is shown in its original form. The check itself runs when the step is
recorded (`harness.judge.items.step_fidelity`); this module counts the recorded results per
condition (a step that wrote nothing counts as failed) and tests the difference in failure rates
with Fisher's exact test, cross against single. The test counts items as independent; every
topic gives one cross-field and two single-field outputs, so an effect a topic shares with its
three items falls equally on both arms and makes the test conservative, not liberal: a screen.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict

import numpy as np
import pandas as pd
from pydantic import JsonValue
from scipy import stats

from harness.analysis.report.results import BlindedStepsResult, StepFidelityRow, StepFidelityTest
from harness.study.step_counts import count_steps

#: Condition groups in the report's order; single_a and single_b are one group.
GROUPS = {"cross": "cross", "single_a": "single", "single_b": "single", "control": "control"}
STEPS = ("extract", "normalise")

#: One recorded step entry (`items.steps`) as read from the store.
StepEntry = dict[str, JsonValue]


def _rows(frame: pd.DataFrame) -> dict[str, dict[str, list[StepEntry]]]:
    """step -> group -> the step entries recorded on that group's items."""
    out: dict[str, dict[str, list[StepEntry]]] = defaultdict(lambda: defaultdict(list))
    for condition, steps in zip(frame["condition"], frame["steps"], strict=True):
        for entry in json.loads(steps):
            out[entry["step"]][GROUPS.get(condition, "control")].append(entry)
    return out


def _row(step: str, group: str, entries: list[StepEntry]) -> StepFidelityRow:
    # the report counts a step that wrote nothing as a failure: reviewers see the original text
    counts = count_steps(entries, empty_fails=True)
    n = counts.checked
    return StepFidelityRow(
        step=step,
        group=group,
        items=len(entries),
        checked=n,
        failed=counts.failed,
        empty=counts.empty,
        share_failed=counts.failed / n if n else None,
        mean_support=float(np.mean(counts.support)) if counts.support else None,
        low_support=counts.low_support,
        added=counts.added,
        echoed=counts.echoed,
        shown_original=counts.shown_original,
    )


def _test(step: str, rows: list[StepFidelityRow]) -> StepFidelityTest | None:
    by = {r.group: r for r in rows}
    cross, single = by.get("cross"), by.get("single")
    if cross is None or single is None or not cross.checked or not single.checked:
        return None
    table = np.array(
        [
            [cross.failed, cross.checked - cross.failed],
            [single.failed, single.checked - single.failed],
        ]
    )
    result = stats.fisher_exact(table)
    odds = float(result.statistic)
    return StepFidelityTest(
        step=step,
        difference=(cross.failed / cross.checked) - (single.failed / single.checked),
        odds_ratio=odds if math.isfinite(odds) else None,
        p_value=float(result.pvalue),
    )


def _models(entries: list[StepEntry]) -> list[str]:
    return sorted({f"{e.get('backend', '?')}/{e.get('model', '?')}" for e in entries})


def blinded_steps(frame: pd.DataFrame) -> BlindedStepsResult | None:
    """Per step and condition group: items, failures and what was shown; None without steps."""
    recorded = _rows(frame)
    if not recorded:
        return None
    rows, tests, models = [], [], {}
    for step in (s for s in STEPS if s in recorded):
        groups = recorded[step]
        step_rows = [
            _row(step, g, groups[g]) for g in ("cross", "single", "control") if g in groups
        ]
        rows += step_rows
        test = _test(step, step_rows)
        if test is not None:
            tests.append(test)
        models[step] = _models([e for g in groups.values() for e in g])
    unchecked = sum(r.items - r.checked for r in rows)
    return BlindedStepsResult(models=models, rows=rows, tests=tests, unchecked=unchecked)
