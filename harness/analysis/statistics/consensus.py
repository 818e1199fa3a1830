"""From judgments to the unit of analysis: per-topic proportions judged novel, by condition.

Everything here is vectorised over integer codes (np.bincount), because the same functions run on
a study of ten thousand topics and inside simulations of thousands of studies: the simulation
calls exactly the code path that the real analysis calls.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

CONDITIONS = ("single_a", "single_b", "cross")
VERDICTS = ("published", "not_published", "unsure")
SINGLE_A, SINGLE_B, CROSS = 0, 1, 2
PUBLISHED, NOT_PUBLISHED, UNSURE = 0, 1, 2
ADJUDICATOR = "adjudicator"  # the roster role of the careful reviewers


@dataclass(frozen=True)
class Judgments:
    """One entry per review, integer-coded. Items carry their topic and condition."""

    item: np.ndarray  # item code per judgment
    reviewer: np.ndarray  # reviewer code per judgment
    verdict: np.ndarray  # index into VERDICTS per judgment
    item_topic: np.ndarray  # topic code per item
    item_condition: np.ndarray  # index into CONDITIONS per item
    n_topics: int
    n_reviewers: int
    topic_ids: np.ndarray | None = None
    item_ids: np.ndarray | None = None
    reviewer_ids: np.ndarray | None = None
    reviewer_kind: np.ndarray | None = None  # 'human' | 'automated' per reviewer code
    item_model: np.ndarray | None = None  # the model (label) of each item's output

    @property
    def n_items(self) -> int:
        return int(self.item_topic.size)

    @property
    def n(self) -> int:
        return int(self.item.size)

    @property
    def topic(self) -> np.ndarray:
        result: np.ndarray = self.item_topic[self.item]
        return result

    @property
    def condition(self) -> np.ndarray:
        result: np.ndarray = self.item_condition[self.item]
        return result

    def subset(self, mask: np.ndarray) -> Judgments:
        """The same study restricted to some judgments (codes and labels are kept)."""
        return replace(
            self,
            item=self.item[mask],
            reviewer=self.reviewer[mask],
            verdict=self.verdict[mask],
        )

    def frame(self) -> pd.DataFrame:
        """Judgments as a DataFrame with labels (topic, condition, item, reviewer, verdict)."""
        import pandas as pd

        topics = self.topic_ids if self.topic_ids is not None else np.arange(self.n_topics)
        items = self.item_ids if self.item_ids is not None else np.arange(self.n_items)
        reviewers = (
            self.reviewer_ids if self.reviewer_ids is not None else np.arange(self.n_reviewers)
        )
        return pd.DataFrame(
            {
                "topic_id": np.asarray(topics)[self.topic],
                "condition": np.asarray(CONDITIONS)[self.condition],
                "item_id": np.asarray(items)[self.item],
                "reviewer_id": np.asarray(reviewers)[self.reviewer],
                "verdict": np.asarray(VERDICTS)[self.verdict],
            }
        )


def role_mask(j: Judgments, roles: np.ndarray, role: str) -> np.ndarray:
    """Judgments made by reviewers of `role` (roles: one entry per reviewer code)."""
    result: np.ndarray = np.asarray(roles, dtype=object)[j.reviewer] == role
    return result


def code_outcome(verdict: np.ndarray, unsure: str) -> np.ndarray:
    """1.0 novel (not_published), 0.0 not novel, NaN left out, following the plan's `unsure`."""
    y = (verdict == NOT_PUBLISHED).astype(float)
    if unsure == "novel":
        y[verdict == UNSURE] = 1.0
    elif unsure == "exclude":
        y[verdict == UNSURE] = np.nan
    result: np.ndarray = y
    return result


@dataclass(frozen=True)
class TopicTable:
    """Per-topic proportions judged novel (rows: topics; columns: CONDITIONS)."""

    p: np.ndarray  # (T, 3) mean item score; NaN where a condition has no eligible item
    n_items: np.ndarray  # (T, 3) eligible items
    n_judgments: np.ndarray  # (T, 3) coded judgments of eligible items
    single: str  # how the single arm is formed (plan `single`)
    item_score: np.ndarray  # per item: mean coded verdict (NaN if no coded verdict)
    item_reviews: np.ndarray  # per item: reviews of any verdict
    item_eligible: np.ndarray  # per item: has at least the minimum reviews and a coded verdict
    topic_ids: np.ndarray | None = None

    @property
    def p_cross(self) -> np.ndarray:
        return self.p[:, CROSS]

    @property
    def p_single(self) -> np.ndarray:
        if self.single == "single_a":
            return self.p[:, SINGLE_A]
        if self.single == "single_b":
            return self.p[:, SINGLE_B]
        result: np.ndarray = self.p[:, [SINGLE_A, SINGLE_B]].mean(axis=1)
        return result

    @property
    def complete(self) -> np.ndarray:
        """Topics where the cross arm and the single arm each keep an eligible item."""
        result: np.ndarray = ~np.isnan(self.p_cross) & ~np.isnan(self.p_single)
        return result

    @property
    def d(self) -> np.ndarray:
        """Paired differences p_cross - p_single of complete topics."""
        keep = self.complete
        result: np.ndarray = self.p_cross[keep] - self.p_single[keep]
        return result

    @property
    def n_complete(self) -> int:
        return int(self.complete.sum())

    def consensus(self, threshold: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """Binary consensus per complete topic: an arm is novel when its proportion exceeds
        the threshold.

        With `mean_of_singles` the single arm of each topic is one of its two single-field
        conditions, drawn with `seed`: a mean of two conditions rests on twice the outputs, so
        it crosses the threshold less often than the cross arm does, which would bias the
        table towards cross even when the conditions do not differ.
        """
        keep = self.complete
        single = self.p_single
        if self.single == "mean_of_singles":
            pick = np.random.default_rng(seed).integers(0, 2, size=self.p.shape[0])
            single = self.p[np.arange(self.p.shape[0]), pick]
        return self.p_cross[keep] > threshold, single[keep] > threshold

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        ids = self.topic_ids if self.topic_ids is not None else np.arange(self.p.shape[0])
        out = pd.DataFrame({"topic_id": ids})
        for index, name in enumerate(CONDITIONS):
            out[f"p_{name}"] = self.p[:, index]
            out[f"n_items_{name}"] = self.n_items[:, index]
        out["p_single"] = self.p_single
        out["d"] = self.p_cross - self.p_single
        out["complete"] = self.complete
        return out


def topic_table(
    j: Judgments,
    *,
    unsure: str,
    min_reviewers: int,
    single: str = "mean_of_singles",
    combine: str = "mean",
) -> TopicTable:
    """Item scores (mean over reviewers), then topic-by-condition means over eligible items.

    `combine: majority` makes an item's score its reviewers' majority verdict (0.5 on a tie),
    the rule for adjudicators whose disagreement a third settles. Of `min_reviewers` such
    reviewers, an item is complete once one verdict has a majority of them (two of three who
    agree): the others cannot change it, so waiting for them changes nothing."""
    y = code_outcome(j.verdict, unsure)
    coded = ~np.isnan(y)
    n_items = j.n_items
    reviews = np.bincount(j.item, minlength=n_items)
    valid = np.bincount(j.item[coded], minlength=n_items)
    novel = np.bincount(j.item[coded], weights=y[coded], minlength=n_items)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(valid > 0, novel / np.maximum(valid, 1), np.nan)
    if combine == "majority":
        score = np.where(score > 0.5, 1.0, np.where(score < 0.5, 0.0, score))
    enough = reviews >= min_reviewers
    if combine == "majority":
        need = min_reviewers // 2 + 1
        enough |= (novel >= need) | (valid - novel >= need)
    eligible = enough & (valid > 0)
    cell = j.item_topic * 3 + j.item_condition
    size = j.n_topics * 3
    counts = np.bincount(cell[eligible], minlength=size).reshape(j.n_topics, 3)
    sums = np.bincount(cell[eligible], weights=score[eligible], minlength=size)
    judged = np.bincount(cell[eligible], weights=valid[eligible], minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(counts > 0, sums.reshape(j.n_topics, 3) / np.maximum(counts, 1), np.nan)
    return TopicTable(
        p=p,
        n_items=counts,
        n_judgments=judged.reshape(j.n_topics, 3).astype(int),
        single=single,
        item_score=score,
        item_reviews=reviews,
        item_eligible=eligible,
        topic_ids=j.topic_ids,
    )


def consensus_counts(cross: np.ndarray, single: np.ndarray) -> dict[str, int]:
    """The paired 2x2 table: a both novel, b cross only, c single only, d neither."""
    return {
        "a": int(np.sum(cross & single)),
        "b": int(np.sum(cross & ~single)),
        "c": int(np.sum(~cross & single)),
        "d": int(np.sum(~cross & ~single)),
    }
