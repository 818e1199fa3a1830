"""The two tiers of reviewers as the analysis sees them: per-topic differences from the
adjudicators (d_t, on the sample of topics) and from the primary reviewers (f_t, on every topic),
and the primary reviewers' accuracy on the real items measured against the adjudicated labels.

A topic enters the comparison when the primary reviewers complete it (each compared arm keeps an
item with enough reviews), whether or not it was drawn, so the exclusion rule never depends on
sample membership. A drawn topic that the primary reviewers complete but the adjudicators do not
is *missing*: leaving it out could bias the estimate, so the verdict waits for it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.analysis.plan.plan_file import Plan
from harness.analysis.statistics.consensus import (
    ADJUDICATOR,
    CONDITIONS,
    CROSS,
    Judgments,
    TopicTable,
    code_outcome,
    role_mask,
)
from harness.analysis.statistics.consensus import topic_table as make_table
from harness.analysis.statistics.differential_error import ArmRate
from harness.analysis.statistics.ppi import PPIResult, ppi_mean
from harness.analysis.statistics.ppi_betting import betting_ppi


@dataclass(frozen=True)
class Tiers:
    """Per topic (rows of the study's topics): the two tiers' differences and the sample."""

    topic_ids: np.ndarray
    sampled: np.ndarray  # bool: drawn for adjudication
    d: np.ndarray  # adjudicated difference (NaN where not adjudicated or incomplete)
    f: np.ndarray  # primary reviewers' difference (NaN where incomplete)
    adjudicated: TopicTable  # the adjudicators' topic table (item scores for accuracy)

    @property
    def labelled(self) -> np.ndarray:
        result: np.ndarray = self.sampled & np.isfinite(self.d) & np.isfinite(self.f)
        return result

    @property
    def unlabelled(self) -> np.ndarray:
        result: np.ndarray = ~self.sampled & np.isfinite(self.f)
        return result

    @property
    def missing(self) -> list[str]:
        """Drawn topics the primary reviewers completed but the adjudicators did not."""
        gap = self.sampled & np.isfinite(self.f) & ~np.isfinite(self.d)
        return [str(t) for t in self.topic_ids[gap]]

    def arms(self, lam: float) -> tuple[ArmRate | None, ArmRate | None]:
        """The adjudicated single-field and cross-field arms' mean novel rates over the
        adjudicated topics, each with that mean's variance across them and its covariance with
        the difference's estimate at PPI's `lam` (`statistics.differential_error`)."""
        single = self.adjudicated.p_single[self.labelled]
        cross = self.adjudicated.p_cross[self.labelled]
        if single.size < 2:
            return None, None
        rectifier = self.d[self.labelled] - lam * self.f[self.labelled]
        return ArmRate.of(single, rectifier), ArmRate.of(cross, rectifier)

    def estimate(self, plan: Plan) -> PPIResult:
        """The PPI++ estimate; where the plan's reference is betting (`Adjudication.reference`)
        its tests and intervals are betting ones (`ppi_betting`), else those of `ppi.ppi_mean`."""
        a = plan.adjudication
        d, f, fu = self.d[self.labelled], self.f[self.labelled], self.f[self.unlabelled]
        reference = a.reference(d.size)
        if reference != "betting":
            return ppi_mean(d, f, fu, estimator=a.estimator, interval=reference)
        point = ppi_mean(d, f, fu, estimator=a.estimator, interval="t")
        estimand = estimand_used(plan, d.size, fu.size)
        return betting_ppi(point, d, f, fu, alpha=plan.primary.alpha, estimand=estimand)


STUDY_TOPICS_MAX_SHARE = 0.5


def estimand_used(plan: Plan, labelled: int, unlabelled: int) -> str:
    """The plan's estimand, except `study_topics` with more than half the topics adjudicated:
    it takes the adjudicators' verdicts as fixed and, with most topics adjudicated, called a
    difference that was only their noise significant in up to 39% of studies (all 363 topics
    adjudicated, simulation), so the topic population is used instead and the report says so."""
    estimand = plan.adjudication.estimand
    total = labelled + unlabelled
    if estimand == "study_topics" and total and labelled / total > STUDY_TOPICS_MAX_SHARE:
        return "topic_population"
    return estimand


def tiers(j: Judgments, roles: np.ndarray, sampled: np.ndarray, plan: Plan) -> Tiers:
    """Split the judgments by role and form each tier's per-topic difference."""
    is_adj = role_mask(j, roles, ADJUDICATOR)
    primary = _table(j.subset(~is_adj), plan, plan.minimum.reviewers_per_item, "mean")
    adj = plan.adjudication
    adjudicated = _table(j.subset(is_adj), plan, adj.per_item, adj.combine)
    return Tiers(
        topic_ids=np.asarray(
            j.topic_ids if j.topic_ids is not None else np.arange(j.n_topics), dtype=object
        ),
        sampled=np.asarray(sampled, dtype=bool),
        d=_difference(adjudicated),
        f=_difference(primary),
        adjudicated=adjudicated,
    )


def _table(j: Judgments, plan: Plan, min_reviewers: int, combine: str) -> TopicTable:
    return make_table(
        j,
        unsure=plan.outcome.unsure,
        min_reviewers=min_reviewers,
        single=plan.single,
        combine=combine,
    )


def _difference(table: TopicTable) -> np.ndarray:
    result: np.ndarray = table.p_cross - table.p_single  # NaN where an arm is missing
    return result


def labelled_judgments(
    j: Judgments, roles: np.ndarray, adjudicated: TopicTable, unsure: str
) -> pd.DataFrame:
    """Primary judgments of items with a clear adjudicated label, in the columns of
    `accuracy.coded_controls`: expected (published | not_published), control_kind (cross |
    single), correct. An item whose adjudicators tie (score 0.5) has no clear label and is left
    out; `unsure` follows the plan's outcome coding."""
    score = adjudicated.item_score
    clear = adjudicated.item_eligible & np.isin(score, (0.0, 1.0))
    keep = ~role_mask(j, roles, ADJUDICATOR) & clear[j.item]
    novel = code_outcome(j.verdict, unsure)
    keep &= ~np.isnan(novel)
    truth = score[j.item[keep]] == 1.0
    reviewer_ids = np.asarray(
        j.reviewer_ids if j.reviewer_ids is not None else np.arange(j.n_reviewers), dtype=object
    )
    kinds = np.asarray(
        j.reviewer_kind if j.reviewer_kind is not None else ["human"] * j.n_reviewers,
        dtype=object,
    )
    condition = j.item_condition[j.item[keep]]
    return pd.DataFrame(
        {
            "reviewer_id": reviewer_ids[j.reviewer[keep]],
            "reviewer_kind": kinds[j.reviewer[keep]],
            "expected": np.where(truth, "not_published", "published"),
            "control_kind": np.where(condition == CROSS, "cross", "single"),
            "condition": np.asarray(CONDITIONS, dtype=object)[condition],
            "novel": novel[keep],
            "correct": (novel[keep] == 1.0) == truth,
        }
    )
