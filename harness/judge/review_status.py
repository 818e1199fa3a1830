"""Where reviewing stands: per reviewer, items assigned, returned and missing, and the
adjudicators' progress on the gold sample (counts only); once the study is unblinded (`harness
analyze` has recorded its analysis in the manifest), each reviewer's accuracy on control items as
well, and on the real items against the adjudicators as the analysis reported it.

Before unblinding nothing about controls is shown, so the status cannot tell a coordinator which
items are controls. Accuracy is coded as the analysis codes it (the preregistered plan's
`outcome.unsure` and `controls.level`; automated reviewers on held-out controls only), with exact
Clopper-Pearson intervals; this stage does not import the analysis stage, so the few lines of
arithmetic are repeated here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from harness.study.manifest import read_manifest
from harness.study.manifest_sections import Analysis, Prereg
from harness.study.store import Study
from harness.study.tables.adjudication import adjudication_progress
from harness.study.tables.assignments import control_assignments_per_reviewer
from harness.study.tables.reviewers import review_progress
from harness.study.tables.reviews import control_verdict_counts

if TYPE_CHECKING:
    import pandas as pd


def review_status(study: Study) -> pd.DataFrame:
    """DataFrame: reviewer, kind, assigned, returned, missing, searches, last_import; after
    unblinding also the controls routed (as `judge --blind` printed them) and scored (the
    report's: an automated reviewer's held-out ones, less `unsure` where the plan leaves it
    out), sensitivity, specificity and J with its exact interval."""
    frame = review_progress(study)
    frame.insert(5, "missing", frame.assigned - frame.returned)
    frame["last_import"] = frame.last_import.fillna("")
    manifest = read_manifest(study)
    if manifest.analysis is not None and manifest.analysis.record():
        frame = _with_accuracy(study, frame, _plan_settings(manifest.prereg))
        frame = _with_real_accuracy(frame, manifest.analysis)
    return frame


def _with_real_accuracy(frame: pd.DataFrame, analysis: Analysis) -> pd.DataFrame:
    """Each primary reviewer's sensitivity and specificity on the real items against the
    adjudicated labels, as the last analysis reported them (report.json), both arms together;
    the report gives them per arm."""

    path = (analysis.report or {}).get("json")
    try:
        saved = json.loads(Path(path).read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError):
        saved = {}
    rows = (saved.get("adjudication") or {}).get("accuracy") or []
    mine = {r["label"]: r for r in rows if r.get("scope") == "reviewer" and r.get("arm") == "both"}
    if not mine:
        return frame
    for name, key in (("real sensitivity", "sensitivity"), ("real specificity", "specificity")):
        frame[name] = [_real_cell(mine.get(reviewer), key) for reviewer in frame["reviewer"]]
    return frame


def _real_cell(row: Mapping[str, float | None] | None, key: str) -> str:
    if row is None or row.get(key) is None:
        return ""
    return f"{row[key]:.2f} [{row[key + '_low']:.2f}, {row[key + '_high']:.2f}]"


def _plan_settings(prereg: Prereg | None) -> tuple[str, float]:
    """(unsure coding, interval level) from the preregistered plan; the plan defaults else."""
    path = prereg.plan_path if prereg is not None else None
    try:
        plan = yaml.safe_load(Path(path).read_text(encoding="utf-8")) if path else {}
    except (OSError, yaml.YAMLError):
        plan = {}
    plan = plan if isinstance(plan, dict) else {}
    unsure = str(((plan.get("outcome") or {}).get("unsure")) or "not_novel")
    level = float(((plan.get("controls") or {}).get("level")) or 0.95)
    return unsure, level


def _with_accuracy(study: Study, frame: pd.DataFrame, settings: tuple[str, float]) -> pd.DataFrame:
    unsure, level = settings
    counts = control_verdict_counts(study)
    novel = {
        "not_published": True,
        "published": False,
        "unsure": {"novel": True, "not_novel": False}.get(unsure),
    }
    routed = control_assignments_per_reviewer(study)
    rows = []
    for reviewer in frame["reviewer"]:
        mine = counts[counts["reviewer"] == reviewer]
        tally = {"published": [0, 0], "not_published": [0, 0]}  # [judged, correct]
        for expected, verdict, n in mine[["expected", "verdict", "n"]].itertuples(index=False):
            said = novel[verdict]
            if said is None:  # unsure left out by the plan
                continue
            tally[expected][0] += n
            tally[expected][1] += n if said == (expected == "not_published") else 0
        rows.append(_accuracy_cells(tally, level))
    frame["controls routed"] = [routed.get(reviewer, 0) for reviewer in frame["reviewer"]]
    names = ("controls scored", "sensitivity", "specificity", "J", "J interval")
    for index, name in enumerate(names):
        frame[name] = [row[index] for row in rows]
    return frame


def _accuracy_cells(tally: dict[str, list[int]], level: float) -> tuple[int, str, str, str, str]:
    (pub, sens_k), (unpub, spec_k) = tally["published"], tally["not_published"]
    sens = sens_k / pub if pub else math.nan
    spec = spec_k / unpub if unpub else math.nan
    inner = 1 - (1 - level) / 2  # Bonferroni: both exact intervals together cover J
    s_low, s_high = _exact(sens_k, pub, inner)
    p_low, p_high = _exact(spec_k, unpub, inner)
    youden = sens + spec - 1
    interval = "" if math.isnan(youden) else f"[{s_low + p_low - 1:.2f}, {s_high + p_high - 1:.2f}]"
    return (pub + unpub, _cell(sens), _cell(spec), _cell(youden), interval)


def _exact(k: int, n: int, level: float) -> tuple[float, float]:
    from scipy import stats

    if n == 0:
        return math.nan, math.nan
    tail = (1 - level) / 2
    low = 0.0 if k == 0 else float(stats.beta.ppf(tail, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1 - tail, k + 1, n - k))
    return low, high


def _cell(value: float) -> str:
    return "" if math.isnan(value) else f"{value:.2f}"


def status_summary(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "No reviewers yet: run `harness judge --blind --study DIR --reviewers FILE`."
    total = frame[["assigned", "returned", "missing"]].sum()
    return (
        f"{int(total.returned)} of {int(total.assigned)} assigned reviews returned, "
        f"{int(total.missing)} missing, across {len(frame)} reviewers"
    )


def adjudication_summary(study: Study) -> str | None:
    """One line on the gold sample: topics drawn, their items, adjudicators' reviews returned of
    those assigned (counts only, so which items are in the sample stays sealed); None without
    a sample."""

    progress = adjudication_progress(study)
    if not progress.topics:
        return None
    controls = progress.control_assigned
    split = (
        f" ({progress.assigned - controls} assignments of sample items, {controls} of control "
        "items)"
        if controls
        else ""
    )
    return (
        f"Adjudication: {progress.topics} topics drawn, {progress.items} sample items; "
        f"{progress.returned} of {progress.assigned} adjudicator reviews returned{split}"
    )
