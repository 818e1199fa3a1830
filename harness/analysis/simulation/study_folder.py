"""A study folder filled with simulated judgments, for dry runs of `analyze` and its benchmark.

The store is marked `simulated` = 1, and the report says at the top that its data are
simulated. Rows follow the schema exactly (topics -> prompts -> outputs -> items -> reviews), and
the blinding commitment is recorded as `harness judge --blind` would.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np

from harness.analysis.plan.plan_file import Design
from harness.analysis.simulation.full_design import latent_parameters, simulate_judgments
from harness.analysis.statistics.consensus import CONDITIONS, VERDICTS, Judgments
from harness.errors import HarnessError
from harness.study import is_study
from harness.study.blinding import study_commitment
from harness.study.clock import utc_now
from harness.study.manifest import record_section
from harness.study.manifest_sections import Blinding
from harness.study.store import Study
from harness.study.tables.simulated import (
    insert_adjudication,
    insert_control_items,
    insert_judged_items,
    insert_simulated_outputs,
    insert_simulated_prompts,
    output_items,
)


def write_simulated_study(
    path: str | Path,
    design: Design | None = None,
    *,
    topics: int = 50,
    p_single: float = 0.3,
    effect: float = 0.0,
    seed: int = 0,
    reviewer_kind: str = "automated",
    controls_per_reviewer: int = 0,
    sensitivity: float = 0.9,
    specificity: float = 0.9,
    adjudicated: int = 0,
) -> Path:
    """Create a new study at `path` holding one simulated study of `topics` topics; with
    `controls_per_reviewer`, each reviewer also judges that many control items (half published,
    half cross-field; held-out split) with the given accuracy; with `adjudicated`, that many
    topics (every (topics / adjudicated)-th) are drawn and two automated adjudicators judge
    their items (each adopts the first primary verdict of the item, flipped with
    probability 0.05: agreement, not truth, is what this folder is for)."""
    folder = Path(path)
    if is_study(folder):
        raise HarnessError("a study already exists here", file=folder)
    design = design or Design()
    rng = np.random.default_rng(seed)
    mu, beta = latent_parameters(design, p_single, effect)
    judgments = simulate_judgments(design, topics, mu, beta, rng)
    with Study.open(folder, create=True) as study:
        store_judgments(study, judgments, design.samples, rng, reviewer_kind)
        if adjudicated:
            store_adjudication(study, judgments, adjudicated, rng)
        if controls_per_reviewer:
            store_controls(
                study, judgments.n_reviewers, controls_per_reviewer, sensitivity, specificity, rng
            )
        study.set_meta("simulated", "1")
        commitment = Blinding(
            sha256=study_commitment(study), made_at=utc_now(), n_items=judgments.n_items
        )
        record_section(folder, "blinding", commitment)
    return folder


def store_judgments(
    study: Study,
    j: Judgments,
    samples: int,
    rng: np.random.Generator,
    reviewer_kind: str = "automated",
) -> None:
    """Insert topics, prompts, outputs, items, reviewers, assignments and reviews in one go."""
    now = utc_now()
    topic_ids = [f"sim-{t:05d}" for t in range(j.n_topics)]
    reviewer_ids = [f"sim-reviewer-{r + 1}" for r in range(j.n_reviewers)]
    item_ids = [uuid.UUID(bytes=rng.bytes(16)).hex for _ in range(j.n_items)]
    distance = rng.uniform(0.3, 0.9, j.n_topics)
    outputs = []
    for item in range(j.n_items):
        topic, condition = topic_ids[j.item_topic[item]], CONDITIONS[j.item_condition[item]]
        outputs.append((f"out-{item}", f"{topic}:{condition}", item % samples))
    reviews = [
        (item_ids[i], reviewer_ids[r], VERDICTS[v])
        for i, r, v in zip(j.item.tolist(), j.reviewer.tolist(), j.verdict.tolist(), strict=True)
    ]
    with study.transaction() as conn:
        insert_simulated_prompts(
            conn, list(zip(topic_ids, distance.tolist(), strict=True)), CONDITIONS
        )
        insert_simulated_outputs(conn, outputs, now)
        insert_judged_items(
            conn,
            [(item_ids[i], f"out-{i}") for i in range(j.n_items)],
            [(r, reviewer_kind) for r in reviewer_ids],
            reviews,
            now,
        )
    study.set_meta("simulated_design", json.dumps({"samples": samples}))


def store_adjudication(study: Study, j: Judgments, n: int, rng: np.random.Generator) -> None:
    """`n` topics drawn at a fixed step, judged by two automated adjudicators."""
    topic_ids = [f"sim-{t:05d}" for t in range(j.n_topics)]
    drawn = np.unique(np.linspace(0, j.n_topics - 1, n).astype(int))
    by_output = output_items(study)
    first = np.full(j.n_items, -1)
    first[j.item[::-1]] = j.verdict[::-1]  # each item's first verdict wins
    reviews = []
    for item in np.flatnonzero(np.isin(j.item_topic, drawn)):
        for adjudicator in ("sim-adjudicator-1", "sim-adjudicator-2"):
            verdict = int(first[item])
            if verdict < 2 and rng.random() < 0.05:
                verdict = 1 - verdict
            reviews.append((by_output[f"out-{item}"], adjudicator, VERDICTS[verdict]))
    sample = [(topic_ids[t], "simulated") for t in drawn]
    with study.transaction() as conn:
        insert_adjudication(
            conn, sample, ["sim-adjudicator-1", "sim-adjudicator-2"], reviews, utc_now()
        )


def store_controls(
    study: Study,
    reviewers: int,
    per_reviewer: int,
    sensitivity: float,
    specificity: float,
    rng: np.random.Generator,
) -> None:
    """Control items (one per reviewer and slot) and each reviewer's judgment of its own."""
    now = utc_now()
    rows, items, reviews = [], [], []
    for r in range(reviewers):
        for k in range(per_reviewer):
            control = f"sim-control-{r + 1}-{k}"
            expected = "published" if k % 2 == 0 else "not_published"
            correct = rng.random() < (sensitivity if expected == "published" else specificity)
            verdict = (
                expected
                if correct
                else ("not_published" if expected == "published" else "published")
            )
            item = uuid.UUID(bytes=rng.bytes(16)).hex
            rows.append(
                (
                    control,
                    f"simulated control {control}",
                    expected,
                    "cross" if (k // 2) % 2 == 0 else "single",
                )
            )
            items.append((item, control))
            reviews.append((item, f"sim-reviewer-{r + 1}", verdict))
    with study.transaction() as conn:
        insert_control_items(conn, rows, items, reviews, now)
