"""Build study stores for analysis tests by inserting rows directly, as the other stages would."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from harness.study.blinding import commitment
from harness.study.manifest import record_section
from harness.study.manifest_sections import Blinding
from harness.study.store import Study

NOW = "2026-01-01T00:00:00Z"
CONDITIONS = ("single_a", "single_b", "cross")

# (topic_id, condition, sample, reviewer_id, verdict)
Judgment = tuple[str, str, int, str, str]
# (control_id, expected, kind 'cross'|'single', split or None, reviewer_id, verdict)
ControlJudgment = tuple[str, str, str, str | None, str, str]


def build_study(
    path: Path,
    judgments: Iterable[Judgment],
    *,
    reviewers: dict[str, str],
    topics: list[str] | None = None,
    commit: bool = True,
    meta: dict[str, str] | None = None,
    distances: dict[str, float] | None = None,
    geometry: list[tuple[str, str, float, float]] | None = None,
    controls: Iterable[ControlJudgment] = (),
    roles: dict[str, str] | None = None,
    sample: Iterable[str] = (),
) -> Path:
    """A study whose items are (topic, condition, sample); every judgment becomes a review.
    Control judgments become control items (one per control_id) and their reviews. `roles`
    marks adjudicators; `sample` lists the topics drawn for adjudication."""
    rows = list(judgments)
    topic_ids = topics or sorted({r[0] for r in rows})
    with Study.open(path, create=True) as study, study.transaction() as conn:
        for t in topic_ids:
            distance = (distances or {}).get(t, 0.5)
            conn.execute(
                "INSERT INTO topics VALUES (?, 'Acoustics', 1, 'Physical', 'Law', 2, 'Social', "
                "?, ?, 'relation', 3, ?, ?)",
                (
                    t,
                    json.dumps(["a1", "a2"]),
                    json.dumps(["b1", "b2"]),
                    distance,
                    json.dumps({"id": t}),
                ),
            )
            for c in CONDITIONS:
                conn.execute(
                    "INSERT INTO prompts VALUES (?, ?, ?, 'f1', 'x', NULL, ?, 12, '{}')",
                    (f"{t}/{c}", t, c, f"prompt {t} {c}"),
                )
        for reviewer, kind in reviewers.items():
            conn.execute(
                "INSERT INTO reviewers (reviewer_id, kind, method, expertise, capacity, role) "
                "VALUES (?, ?, NULL, '[]', 1000, ?)",
                (reviewer, kind, (roles or {}).get(reviewer, "primary")),
            )
        conn.executemany(
            "INSERT INTO adjudication_sample (topic_id, stratum) VALUES (?, 'all')",
            [(t,) for t in sample],
        )
        items: dict[tuple[str, str, int], str] = {}
        for topic, condition, sample, reviewer, verdict in rows:
            key = (topic, condition, sample)
            if key not in items:
                output = f"{topic}/{condition}/{sample}"
                conn.execute(
                    "INSERT INTO outputs (output_id, prompt_id, sample, status, backend, model, "
                    "model_key, params, text, started_at, finished_at) VALUES (?, ?, ?, 'ok', "
                    "'local', 'test-model', 'local/test-model', '{}', 'text', ?, ?)",
                    (output, f"{topic}/{condition}", sample, NOW, NOW),
                )
                items[key] = uuid.uuid4().hex
                conn.execute(
                    "INSERT INTO items (item_id, output_id, original_text, "
                    "core_combination, display_text, steps) "
                    "VALUES (?, ?, 'text', NULL, 'text', '{}')",
                    (items[key], output),
                )
            conn.execute(
                "INSERT INTO assignments (item_id, reviewer_id, position) VALUES (?, ?, 0)",
                (items[key], reviewer),
            )
            conn.execute(
                "INSERT INTO reviews (item_id, reviewer_id, verdict, source, created_at) "
                "VALUES (?, ?, ?, 'xlsx', ?)",
                (items[key], reviewer, verdict, NOW),
            )
        _insert_controls(conn, controls)
        for topic, condition, entropy, split in geometry or []:
            for layer in range(2):
                conn.execute(
                    "INSERT INTO geometry VALUES (?, 'test-model', ?, -1, ?, '{}', ?)",
                    (f"{topic}/{condition}", layer, entropy + layer * 0.1, split),
                )
        for key, value in (meta or {}).items():
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
    if commit:
        with Study.open(path) as study:
            made = Blinding(
                sha256=commitment(study.conn), made_at=NOW, n_items=study.count("items")
            )
            record_section(path, "blinding", made)
    return path


def _insert_controls(conn: object, controls: Iterable[ControlJudgment]) -> None:
    items: dict[str, str] = {}
    for control, expected, kind, split, reviewer, verdict in controls:
        if control not in items:
            items[control] = uuid.uuid4().hex
            conn.execute(
                "INSERT INTO controls (control_id, statement, text, expected, kind, source, "
                "topic_id, evidence, split) VALUES (?, ?, 'text', ?, ?, 'bank', NULL, ?, ?)",
                (
                    control,
                    f"statement {control}",
                    expected,
                    kind,
                    json.dumps({"title": "t", "year": 2020, "doi": None}),
                    split,
                ),
            )
            conn.execute(
                "INSERT INTO items (item_id, control_id, original_text, "
                "core_combination, display_text, steps) "
                "VALUES (?, ?, 'text', NULL, 'text', '{}')",
                (items[control], control),
            )
        conn.execute(
            "INSERT INTO assignments (item_id, reviewer_id, position) VALUES (?, ?, 0)",
            (items[control], reviewer),
        )
        conn.execute(
            "INSERT INTO reviews (item_id, reviewer_id, verdict, source, created_at) "
            "VALUES (?, ?, ?, 'xlsx', ?)",
            (items[control], reviewer, verdict, NOW),
        )


def control_judgments(
    per_reviewer: int,
    reviewers: list[str],
    *,
    sensitivity: float,
    specificity: float,
    seed: int,
    split: str | None = None,
    sensitivity_cross: float | None = None,
) -> list[ControlJudgment]:
    """Each reviewer judges its own controls (half published, half cross-field) with the given
    accuracy; `sensitivity_cross` makes published cross-field controls harder to recognise."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in reviewers:
        for k in range(per_reviewer):
            expected = "published" if k % 2 == 0 else "not_published"
            kind = "cross" if (k // 2) % 2 == 0 else "single"
            if expected == "published":
                sens = sensitivity_cross if kind == "cross" and sensitivity_cross else sensitivity
                verdict = "published" if rng.random() < sens else "not_published"
            else:
                verdict = "not_published" if rng.random() < specificity else "published"
            rows.append((f"c-{r}-{k}", expected, kind, split, r, verdict))
    return rows


def random_judgments(
    n_topics: int,
    *,
    p_cross: float,
    p_single: float,
    reviewers: list[str],
    seed: int,
    samples: int = 1,
    p_unsure: float = 0.0,
) -> list[Judgment]:
    """Independent verdicts with the given probability of `not_published` per arm."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n_topics):
        for c in CONDITIONS:
            p = p_cross if c == "cross" else p_single
            for s in range(samples):
                for r in reviewers:
                    u = rng.random()
                    verdict = (
                        "unsure"
                        if u < p_unsure
                        else "not_published"
                        if rng.random() < p
                        else "published"
                    )
                    rows.append((f"t{t:04d}", c, s, r, verdict))
    return rows


TWO_HUMANS = {"alice": "human", "bob": "human"}


def report_lead(markdown: str) -> str:
    """report.md's lead: the verdict, its estimate and the notes that qualify it (everything
    before the explorer link)."""
    head, link, _ = markdown.partition("[Explore every record")
    assert link, "report.md has no link to the explorer"
    return head
