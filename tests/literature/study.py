"""A small blinded study for the automated reviewers, made by inserting rows directly."""

from __future__ import annotations

import json
from pathlib import Path

from harness.study.store import Study

#: Words only the topics and prompts contain: reviewers must never search for them.
HIDDEN_WORDS = ("quokkatopic", "wombatprompt", "crosscondition")

# (item core combination, display text) -- the first three restate works in CORPUS.
ITEMS = [  # two topics x three conditions
    (
        "Combines predictive coding with river sediment transport to forecast riverbed change.",
        "Idea: use predictive coding to forecast how river sediment moves and beds change.",
    ),
    (
        "Reads enzyme kinetics through queueing theory to model Michaelis-Menten reactions.",
        "Treat enzymes as servers in a queue; Michaelis-Menten kinetics follow.",
    ),
    (
        "Combines message passing graph neural networks with crystal structure prediction.",
        "Graph networks could predict which crystal lattices are stable.",
    ),
    (
        "Combines origami folding with monetary policy to time interest-rate changes.",
        "Fold paper like central bank decisions.",
    ),
    (
        "Combines sediment transport with monetary policy to time interest-rate changes.",
        "Central banks could learn from how rivers move sediment.",
    ),
    (None, "Apply jazz improvisation rules to schedule hospital nurse shifts."),
]


def build_study(path: Path, reviewers: list[tuple[str, str]]) -> Study:
    """A study with two topics, six items and every item assigned to every reviewer."""
    study = Study.open(path, create=True)
    with study.transaction() as conn:
        for topic_id in ("quokkatopic-0", "quokkatopic-1"):
            conn.execute(
                "INSERT INTO topics VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    topic_id,
                    "Mathematics",
                    26,
                    "Physical Sciences",
                    "Neuroscience",
                    28,
                    "Life Sciences",
                    json.dumps(["quokkatopic a", "b"]),
                    json.dumps(["c", "d"]),
                    "a shared principle",
                    3,
                    None,
                    json.dumps({"id": topic_id}),
                ),
            )
        for n, (core, display) in enumerate(ITEMS):
            prompt_id, output_id = f"P{n}", f"O{n}"
            conn.execute(
                "INSERT INTO prompts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    prompt_id,
                    f"quokkatopic-{n // 3}",
                    ("single_a", "single_b", "cross")[n % 3],
                    f"family-{n}",
                    "0" * 64,
                    None,
                    f"wombatprompt crosscondition idea number {n}",
                    9,
                    "{}",
                ),
            )
            conn.execute(
                "INSERT INTO outputs (output_id, prompt_id, sample, status, backend, model,"
                " model_key, params, text, started_at, finished_at) VALUES (?, ?, 0, 'ok',"
                " 'local', 'm', 'local/m', '{}', ?, '2026-01-01T00:00:00Z',"
                " '2026-01-01T00:00:01Z')",
                (output_id, prompt_id, display),
            )
            conn.execute(
                "INSERT INTO items (item_id, output_id, original_text, core_combination, "
                "display_text, steps) VALUES (?, ?, ?, ?, ?, '[]')",
                (f"I-{n:010d}", output_id, display, core, display),
            )
        for position, (reviewer_id, method) in enumerate(reviewers):
            conn.execute(
                "INSERT INTO reviewers (reviewer_id, kind, method, expertise, capacity) "
                "VALUES (?, 'automated', ?, '[]', 100)",
                (reviewer_id, method),
            )
            for n in range(len(ITEMS)):
                conn.execute(
                    "INSERT INTO assignments (item_id, reviewer_id, position) VALUES (?, ?, ?)",
                    (f"I-{n:010d}", reviewer_id, (n + position) % len(ITEMS)),
                )
        conn.execute(
            "INSERT INTO reviewers (reviewer_id, kind, method, expertise, capacity) "
            "VALUES ('person', 'human', NULL, '[]', 10)"
        )
        conn.execute(
            "INSERT INTO assignments (item_id, reviewer_id, position) "
            "VALUES ('I-0000000000', 'person', 0)"
        )
    return study
