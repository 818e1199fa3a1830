"""Reviewer accuracy on control items: sensitivity, specificity and Youden's J with exact intervals.

Controls are coded like the outcome (plan `outcome.unsure`): sensitivity is the share of
*published* controls judged not novel, specificity the share of *unpublished* controls judged
novel, J = sensitivity + specificity - 1. Intervals are Clopper-Pearson; J's interval combines the
two exact intervals, each at level 1 - (1 - level) / 2 (Bonferroni), so it covers J with
probability at least `level` whatever the true accuracies. Automated reviewers are scored on
held-out controls only (the calibration split tuned them); human reviewers on all controls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from scipy import special

from harness.analysis.statistics.consensus import VERDICTS, code_outcome

if TYPE_CHECKING:
    import pandas as pd

    from harness.analysis.report.results import AccuracyRow

# one row per review of a control item (`study.tables.views.control_review_frame`)
CONTROL_COLUMNS = (
    "item_id",
    "control_id",
    "reviewer_id",
    "reviewer_kind",
    "verdict",
    "expected",
    "control_kind",
    "split",
)


def clopper_pearson(k: float, n: float, level: float) -> tuple[float, float]:
    """Exact two-sided interval for a binomial proportion (NaNs when n = 0); non-integer k and n
    (effective counts) go through the same beta quantiles."""
    if n <= 0:
        return (math.nan, math.nan)
    tail = (1.0 - level) / 2.0
    low = 0.0 if k <= 0 else float(special.betaincinv(k, n - k + 1, tail))
    high = 1.0 if k >= n else float(special.betaincinv(k + 1, n - k, 1.0 - tail))
    return (low, high)


@dataclass(frozen=True)
class Accuracy:
    """Accuracy of one reviewer, one reviewer kind, or all reviewers pooled."""

    label: str
    scope: Literal["reviewer", "kind", "pooled", "weighted"]
    kind: str  # human | automated | mixed
    # counts of coded control judgments; effective (non-integer) counts for scope "weighted"
    published: float  # published controls judged
    published_correct: float  # ... judged not novel
    unpublished: float
    unpublished_correct: float  # unpublished controls judged novel
    level: float

    @property
    def sensitivity(self) -> float:
        return self.published_correct / self.published if self.published else math.nan

    @property
    def specificity(self) -> float:
        return self.unpublished_correct / self.unpublished if self.unpublished else math.nan

    @property
    def youden(self) -> float:
        return self.sensitivity + self.specificity - 1.0

    @property
    def estimable(self) -> bool:
        return self.published > 0 and self.unpublished > 0

    def sensitivity_ci(self, level: float | None = None) -> tuple[float, float]:
        return clopper_pearson(self.published_correct, self.published, level or self.level)

    def specificity_ci(self, level: float | None = None) -> tuple[float, float]:
        return clopper_pearson(self.unpublished_correct, self.unpublished, level or self.level)

    def youden_ci(self, level: float | None = None) -> tuple[float, float]:
        """Bonferroni: both exact intervals at 1 - (1 - level)/2 hold together with >= level."""
        inner = 1.0 - (1.0 - (level or self.level)) / 2.0
        s_low, s_high = self.sensitivity_ci(inner)
        p_low, p_high = self.specificity_ci(inner)
        return (s_low + p_low - 1.0, s_high + p_high - 1.0)

    def youden_lower(self, alpha: float) -> float:
        """One-sided lower confidence bound of J at 1 - alpha (alpha split over both rates)."""
        return self.youden_ci(1.0 - 2.0 * alpha)[0]

    def row(self) -> AccuracyRow:
        def num(x: float) -> float | None:
            return float(x) if math.isfinite(x) else None

        s, p, j = self.sensitivity_ci(), self.specificity_ci(), self.youden_ci()
        return {
            "label": self.label,
            "scope": self.scope,
            "kind": self.kind,
            "published": self.published,
            "published_correct": self.published_correct,
            "unpublished": self.unpublished,
            "unpublished_correct": self.unpublished_correct,
            "sensitivity": num(self.sensitivity),
            "sensitivity_low": num(s[0]),
            "sensitivity_high": num(s[1]),
            "specificity": num(self.specificity),
            "specificity_low": num(p[0]),
            "specificity_high": num(p[1]),
            "youden": num(self.youden),
            "youden_low": num(j[0]),
            "youden_high": num(j[1]),
            "level": self.level,
        }


def coded_controls(frame: pd.DataFrame, unsure: str) -> pd.DataFrame:
    """Control judgments that count: coded outcome, held-out only for automated reviewers."""
    import pandas as pd

    if frame.empty:
        return frame.assign(novel=pd.Series(dtype=float), correct=pd.Series(dtype=bool))
    verdict = pd.Index(VERDICTS).get_indexer(pd.Index(frame["verdict"]))
    novel = code_outcome(verdict, unsure)
    keep = ~np.isnan(novel) & ~(
        (frame["reviewer_kind"] == "automated").to_numpy()
        & (frame["split"] == "calibration").to_numpy()
    )
    out = frame.assign(novel=novel)[keep].reset_index(drop=True)
    expected_novel = (out["expected"] == "not_published").to_numpy()
    result: pd.DataFrame = out.assign(correct=(out["novel"].to_numpy() == 1.0) == expected_novel)
    return result


def uncounted_controls(frame: pd.DataFrame | None, unsure: str) -> str | None:
    """Why control judgments that exist count for nothing, in words (None when there are none,
    or some count): calibration controls of automated reviewers calibrate them rather than
    measure them, and an unsure verdict the plan leaves out codes to nothing."""
    import pandas as pd

    if frame is None or frame.empty:
        return None
    verdict = pd.Index(VERDICTS).get_indexer(pd.Index(frame["verdict"]))
    uncoded = np.isnan(code_outcome(verdict, unsure))
    calibration = (frame["reviewer_kind"] == "automated").to_numpy() & (
        frame["split"] == "calibration"
    ).to_numpy()
    if not (uncoded | calibration).all():
        return None
    parts = []
    if calibration.any():
        parts.append(
            f"{int(calibration.sum())} on calibration controls by automated reviewers, which "
            "calibrate them and are not counted"
        )
    if (uncoded & ~calibration).any():
        parts.append(f"{int((uncoded & ~calibration).sum())} unsure, which the plan leaves out")
    return (
        f"none of the {len(frame)} control judgments of {frame['control_id'].nunique()} control "
        f"items counts: {'; '.join(parts)}"
    )


def accuracy_of(
    rows: pd.DataFrame,
    label: str,
    scope: Literal["reviewer", "kind", "pooled"],
    kind: str,
    level: float,
) -> Accuracy:
    published = rows["expected"] == "published"
    return Accuracy(
        label=label,
        scope=scope,
        kind=kind,
        published=int(published.sum()),
        published_correct=int((published & rows["correct"]).sum()),
        unpublished=int((~published).sum()),
        unpublished_correct=int((~published & rows["correct"]).sum()),
        level=level,
    )


def accuracy_table(coded: pd.DataFrame, level: float) -> list[Accuracy]:
    """Per reviewer, per reviewer kind, then pooled."""
    out = [
        accuracy_of(rows, str(reviewer), "reviewer", str(rows["reviewer_kind"].iloc[0]), level)
        for reviewer, rows in coded.groupby("reviewer_id", sort=True)
    ]
    out += [
        accuracy_of(rows, f"all {kind} reviewers", "kind", str(kind), level)
        for kind, rows in coded.groupby("reviewer_kind", sort=True)
    ]
    kinds = set(coded["reviewer_kind"]) if len(coded) else set()
    out.append(
        accuracy_of(
            coded,
            "all reviewers, pooled",
            "pooled",
            kinds.pop() if len(kinds) == 1 else "mixed",
            level,
        )
    )
    return out


@dataclass(frozen=True)
class Differential:
    """Cross-field vs single-field controls: equal sensitivity, equal specificity (Fisher)."""

    sens_cross: float
    sens_single: float
    n_published: tuple[int, int]  # (cross, single)
    p_sensitivity: float | None  # two-sided Fisher exact
    spec_cross: float
    spec_single: float
    n_unpublished: tuple[int, int]
    p_specificity: float | None
    alpha: float

    @property
    def favours_hypothesis(self) -> bool:
        """Lower sensitivity or higher specificity on cross-field controls, significantly:
        cross-field outputs are then called novel more often whatever their truth."""
        sens = (
            self.p_sensitivity is not None
            and self.p_sensitivity < self.alpha
            and self.sens_cross < self.sens_single
        )
        spec = (
            self.p_specificity is not None
            and self.p_specificity < self.alpha
            and self.spec_cross > self.spec_single
        )
        return sens or spec


def _fisher(rows: pd.DataFrame) -> tuple[float, float, tuple[int, int], float | None]:
    cross = rows[rows["control_kind"] == "cross"]["correct"]
    single = rows[rows["control_kind"] == "single"]["correct"]
    rate_c = float(cross.mean()) if len(cross) else math.nan
    rate_s = float(single.mean()) if len(single) else math.nan
    if not len(cross) or not len(single):
        return rate_c, rate_s, (len(cross), len(single)), None
    table = [[int(cross.sum()), int((~cross).sum())], [int(single.sum()), int((~single).sum())]]
    from scipy import stats  # scipy.stats costs 0.4 s to import; only this test needs it

    p = float(stats.fisher_exact(np.array(table)).pvalue)
    return rate_c, rate_s, (len(cross), len(single)), p


def differential(coded: pd.DataFrame, alpha: float) -> Differential | None:
    """None unless both cross-field and single-field controls were judged."""
    if coded.empty or set(coded["control_kind"]) != {"cross", "single"}:
        return None
    pub = coded[coded["expected"] == "published"]
    unpub = coded[coded["expected"] == "not_published"]
    sc, ss, n_pub, p_sens = _fisher(pub)
    pc, ps, n_unpub, p_spec = _fisher(unpub)
    return Differential(sc, ss, n_pub, p_sens, pc, ps, n_unpub, p_spec, alpha)


def excluded_reviewers(table: list[Accuracy], threshold: float) -> list[str]:
    """Reviewers whose J estimate is below the plan's threshold (unestimable ones are kept)."""
    return [
        a.label for a in table if a.scope == "reviewer" and a.estimable and a.youden < threshold
    ]
