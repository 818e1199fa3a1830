"""Reading a study for analysis: verify the blinding key, then unblind.

The join reviews -> items -> outputs -> prompts reveals each judgment's condition. It runs only
after the blinding key in the store has been checked against the commitment recorded in the
manifest when packets were made (`harness.study.blinding.commitment`), so a key altered after
reviews came in can never be analysed. This module reads the store only; it does not import the
judge stage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from harness.analysis.statistics.accuracy import CONTROL_COLUMNS
from harness.analysis.statistics.consensus import CONDITIONS, VERDICTS, Judgments
from harness.errors import HarnessError
from harness.study.blinding import study_commitment
from harness.study.history import MANIFEST_NAME
from harness.study.manifest_sections import Blinding, Manifest
from harness.study.store import Study
from harness.study.tables.adjudication import sample_topics
from harness.study.tables.geometry import measure_count, prompt_means_frame
from harness.study.tables.topics import topic_frame
from harness.study.tables.views import (
    control_review_frame,
    reviewer_frame,
    store_counts,
    unblinded_review_frame,
)


@dataclass(frozen=True)
class BlindingCheck:
    status: Literal["verified", "missing"]
    recorded: str | None
    computed: str
    made_at: str | None
    n_items: int


@dataclass(frozen=True)
class StudyData:
    judgments: Judgments
    reviews: pd.DataFrame  # one row per review, with its condition and reviewer kind
    topics: pd.DataFrame
    reviewers: pd.DataFrame
    geometry: pd.DataFrame  # per topic and condition (empty when the study has none)
    geometry_model: str | None
    counts: dict[str, int]
    models: list[str]
    blinding: BlindingCheck
    first_review_at: str | None
    meta: dict[str, str | None]  # the store's meta: pilot, demo, simulated, study_id, created_at
    controls: pd.DataFrame | None = None  # one row per review of a control item
    # per reviewer code of `judgments`: 'primary' or 'adjudicator'
    roles: np.ndarray | None = None
    # the topics drawn for adjudication (sealed in the blinding key); empty: no sample
    sampled_topics: frozenset[str] = frozenset()

    @property
    def sampled(self) -> np.ndarray:
        """Per topic code of `judgments`: drawn for adjudication."""
        ids = self.judgments.topic_ids
        result: np.ndarray = np.isin(np.asarray(ids, dtype=object), list(self.sampled_topics))
        return result


def adjudicator_ids(data: StudyData) -> set[str]:
    """The ids of the reviewers whose role is adjudicator."""
    ids = data.judgments.reviewer_ids
    if data.roles is None or ids is None:
        return set()
    return {str(r) for r, role in zip(ids, data.roles, strict=True) if role == "adjudicator"}


def _control_frame(data: StudyData) -> pd.DataFrame:
    if data.controls is None:
        return pd.DataFrame(columns=list(CONTROL_COLUMNS))
    return data.controls


def primary_controls(data: StudyData) -> pd.DataFrame:
    """The primary reviewers' reviews of control items (`data.controls` without the
    adjudicators'): the primary reviewers' accuracy rests on these alone."""
    frame = _control_frame(data)
    mine = ~frame["reviewer_id"].astype(str).isin(adjudicator_ids(data))
    return frame[mine.to_numpy()].reset_index(drop=True)


def adjudicator_controls(data: StudyData) -> pd.DataFrame:
    """The adjudicators' reviews of control items, in the frame of `data.controls` (one row per
    review: item_id, control_id, reviewer_id, reviewer_kind, verdict, expected, control_kind,
    split), so that `statistics.accuracy.coded_controls` and `accuracy_table` apply to it;
    empty when the study has no adjudicators or they have no control reviews."""
    frame = _control_frame(data)
    theirs = frame["reviewer_id"].astype(str).isin(adjudicator_ids(data))
    return frame[theirs.to_numpy()].reset_index(drop=True)


def verify_blinding(
    study: Study, section: Blinding | None, *, allow_missing: bool
) -> BlindingCheck:
    """Compare the key in the store with the manifest's commitment (its `blinding` section); a
    mismatch is fatal."""
    section = section or Blinding()
    computed = study_commitment(study)
    recorded = section.sha256
    file = study.path / MANIFEST_NAME
    if recorded is None:
        if not allow_missing:
            raise HarnessError(
                "no blinding commitment in the manifest, so the blinding key cannot be verified "
                "(packets are made with `harness judge --blind`); rerun with --allow-deviation to "
                "analyse anyway, reported as a deviation",
                file=file,
                column="blinding.sha256",
            )
        return BlindingCheck("missing", None, computed, None, store_counts(study).items)
    if recorded != computed:
        raise HarnessError(
            f"the blinding key in the store (sha256 {computed}) does not match the commitment "
            f"made {'?' if section.made_at is None else section.made_at} ({recorded}); the "
            "item -> condition map changed after packets were made, so the study cannot be "
            "unblinded",
            file=file,
            column="blinding.sha256",
        )
    return BlindingCheck(
        "verified",
        recorded,
        computed,
        section.made_at,
        store_counts(study).items if section.n_items is None else section.n_items,
    )


def load_study(
    study: Study, manifest: Manifest, *, allow_missing_commitment: bool = False
) -> StudyData:
    """Everything the analysis needs, read after the blinding key is verified."""
    stored = store_counts(study)
    if stored.reviews == 0:
        raise HarnessError(
            "the study has no reviews yet: import reviewer packets or run the automated "
            "reviewers (`harness judge`) before `harness analyze`",
            file=study.path,
        )
    blinding = verify_blinding(study, manifest.blinding, allow_missing=allow_missing_commitment)
    reviews = unblinded_review_frame(study)
    topics = topic_frame(study)
    reviewers = reviewer_frame(study)
    geometry, geometry_model = _geometry(study, reviews)
    controls = control_review_frame(study)
    counts = {
        "topics": stored.topics,
        "prompts": stored.prompts,
        "outputs": stored.outputs,
        "outputs_ok": stored.outputs_ok,
        "items": stored.items - stored.control_items,  # real items (of outputs)
        "control_items": stored.control_items,
        "assignments": stored.assignments,
        "reviews": int(len(reviews)),
        "control_reviews": int(len(controls)),  # both tiers'
        "reviewers": int(len(reviewers)),
    }
    meta = {
        key: study.meta(key) for key in ("pilot", "demo", "simulated", "study_id", "created_at")
    }
    return StudyData(
        judgments=_judgments(reviews, topics, reviewers),
        reviews=reviews,
        topics=topics,
        reviewers=reviewers,
        geometry=geometry,
        geometry_model=geometry_model,
        counts=counts,
        models=sorted(str(m) for m in reviews["model"].dropna().unique()),
        blinding=blinding,
        first_review_at=str(reviews["created_at"].min()) if len(reviews) else None,
        meta=meta,
        controls=controls,
        roles=_roles(reviewers),
        sampled_topics=frozenset(t for t, _ in sample_topics(study)),
    )


def _roles(reviewers: pd.DataFrame) -> np.ndarray:
    """Each reviewer's role, in the order of the judgments' reviewer codes (sorted ids)."""
    if "role" not in reviewers.columns:
        return np.full(len(reviewers), "primary", dtype=object)
    return reviewers["role"].fillna("primary").to_numpy(dtype=object)


def _judgments(reviews: pd.DataFrame, topics: pd.DataFrame, reviewers: pd.DataFrame) -> Judgments:
    topic_ids = topics["topic_id"].to_numpy(dtype=object)
    topic_index = pd.Index(topic_ids)
    reviewer_ids = reviewers["reviewer_id"].to_numpy(dtype=object)
    item_codes, item_ids = pd.factorize(reviews["item_id"], sort=True)
    first = pd.DataFrame(
        {
            "code": item_codes,
            "topic": reviews["topic_id"],
            "condition": reviews["condition"],
            "model": reviews["model"],
        }
    ).drop_duplicates("code")
    first = first.sort_values("code")
    item_topic = topic_index.get_indexer(first["topic"])
    if (item_topic < 0).any():
        raise HarnessError("a prompt refers to a topic missing from the topics table")
    return Judgments(
        item=item_codes.astype(np.int64),
        reviewer=pd.Index(reviewer_ids)
        .get_indexer(pd.Index(reviews["reviewer_id"]))
        .astype(np.int64),
        verdict=pd.Index(VERDICTS).get_indexer(pd.Index(reviews["verdict"])).astype(np.int8),
        item_topic=item_topic.astype(np.int64),
        item_condition=pd.Index(CONDITIONS)
        .get_indexer(pd.Index(first["condition"]))
        .astype(np.int8),
        n_topics=len(topic_ids),
        n_reviewers=len(reviewer_ids),
        topic_ids=topic_ids,
        item_ids=np.asarray(item_ids, dtype=object),
        reviewer_ids=reviewer_ids,
        reviewer_kind=reviewers["kind"].to_numpy(dtype=object),
        item_model=first["model"].astype(str).to_numpy(dtype=object),
    )


def _geometry(study: Study, reviews: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    """Per topic and condition: mean over layers of the head-mean attention measures."""
    if measure_count(study) == 0:
        return pd.DataFrame(columns=["topic_id", "condition", "entropy", "split_index"]), None
    frame = prompt_means_frame(study, -1 if measure_count(study, head=-1) else None)
    models = frame["model"].value_counts()
    output_models = set(reviews["model"].dropna())
    preferred = [m for m in models.index if m in output_models]
    model = preferred[0] if preferred else str(models.index[0])
    chosen = frame[frame["model"] == model]
    return chosen[["topic_id", "condition", "entropy", "split_index"]].reset_index(drop=True), model
