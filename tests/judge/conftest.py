"""Judge test fixtures: studies with topics, prompts and outputs inserted straight into a store."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.study.store import Study
from tests.plans import primary_only_plan

FIELDS = [
    ("Computer Science", 17, "Physical Sciences"),
    ("Medicine", 27, "Health Sciences"),
    ("Psychology", 32, "Social Sciences"),
    ("Agricultural and Biological Sciences", 11, "Life Sciences"),
    ("Mathematics", 26, "Physical Sciences"),
    ("Economics, Econometrics and Finance", 20, "Social Sciences"),
]
CONDITIONS = ("single_a", "single_b", "cross")
MODEL = "TestModel-7B-chat"

WORDS = (
    "graph",
    "enzyme",
    "lattice",
    "market",
    "memory",
    "soil",
    "neuron",
    "tensor",
    "auction",
    "crystal",
    "protein",
    "queue",
    "habit",
    "river",
    "spline",
    "vaccine",
    "signal",
    "forest",
)


def output_text(rng: random.Random, topic: int, condition: str) -> str:
    """A plausible idea; its words vary by topic and at random, not by condition."""
    picks = rng.sample(WORDS, 5)
    return (
        f"Combine {picks[0]} models with {picks[1]} data to study {picks[2]} effects in "
        f"setting {topic}. A trial could compare {picks[3]} and {picks[4]} outcomes."
    )


def fill_study(
    path: Path,
    *,
    n_topics: int = 6,
    samples: int = 1,
    seed: int = 1,
    text: Callable[[random.Random, int, str], str] = output_text,
    pilot: bool = False,
) -> Study:
    """A study with `n_topics` topics x 3 conditions x `samples` ok outputs (plus one failed)."""
    rng = random.Random(seed)
    study = Study.open(path, create=True)
    with study.transaction() as conn:
        if pilot:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('pilot', '1')")
        for t in range(n_topics):
            fa, fb = FIELDS[t % len(FIELDS)], FIELDS[(t + 1) % len(FIELDS)]
            topic_id = f"topic-{t:03d}"
            conn.execute(
                "INSERT INTO topics VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    topic_id,
                    fa[0],
                    fa[1],
                    fa[2],
                    fb[0],
                    fb[1],
                    fb[2],
                    json.dumps([f"alpha {t}", f"beta {t}"]),
                    json.dumps([f"gamma {t}", f"delta {t}"]),
                    "the effect of one on the other",
                    3,
                    0.5,
                    "{}",
                ),
            )
            for c, condition in enumerate(CONDITIONS):
                prompt_id = f"P{t:03d}{c}"
                prompt = (
                    f"Consider concept {t}-{condition} from a field and another concept. "
                    f"Propose one research idea that combines them (prompt {prompt_id})."
                )
                conn.execute(
                    "INSERT INTO prompts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        prompt_id,
                        topic_id,
                        condition,
                        "family-1",
                        "0" * 64,
                        None,
                        prompt,
                        30,
                        json.dumps({"concept_1": [0, 5]}),
                    ),
                )
                for s in range(samples):
                    conn.execute(
                        "INSERT INTO outputs (output_id, prompt_id, sample, status, backend, model,"
                        " model_key, params, text, started_at, finished_at) VALUES (?, ?, ?, 'ok',"
                        " 'local', ?, ?, '{}', ?, '2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z')",
                        (
                            f"O{t:03d}{c}{s}",
                            prompt_id,
                            s,
                            MODEL,
                            f"local/{MODEL}",
                            text(rng, t, condition),
                        ),
                    )
        conn.execute(
            "INSERT INTO outputs (output_id, prompt_id, sample, status, backend, model, model_key,"
            " params, error, started_at, finished_at) VALUES ('Ofailed', 'P0000', 99, 'failed',"
            " 'local', ?, ?, '{}', 'timeout', '2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z')",
            (MODEL, f"local/{MODEL}"),
        )
    return study


@pytest.fixture
def make_study(tmp_path: Path) -> Callable[..., Study]:
    opened: list[Study] = []

    def factory(name: str = "study", **kwargs) -> Study:
        study = fill_study(tmp_path / name, **kwargs)
        opened.append(study)
        return study

    yield factory
    for study in opened:
        study.close()


# -- a study blinded and routed to human reviewers, with packets written --------------------------
LONG_TEXT = "".join(f"sentence {n} of a very long idea. " for n in range(2600))  # > 70,000 chars
SPECIAL = {
    "O00000": '=HYPERLINK("http://evil.example","click") is how the idea starts.',
    "O00010": LONG_TEXT,
    "O00020": "-minus first, then a bell \x07 character.",
    "O00100": "@mention and\ttab inside.",
}
ROSTER = """reviewers:
  - {id: ann, kind: human, expertise: [Medicine], capacity: 6}
  - {id: ben, kind: human, expertise: [Computer Science], capacity: 6}
  - {id: cat, kind: human, expertise: [Psychology], capacity: 6}
  - {id: dan, kind: human, expertise: [], capacity: 6}
  - {id: auto, kind: automated, method: retrieval, capacity: 100}
"""


@pytest.fixture(scope="session")
def blinded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from harness.judge.blinding.blind_stage import blind
    from tests.judge.fakes import ScriptedBackend

    root = tmp_path_factory.mktemp("blinded")
    study = fill_study(root / "study", n_topics=6)
    with study.transaction() as conn:
        for output_id, text in SPECIAL.items():
            conn.execute("UPDATE outputs SET text = ? WHERE output_id = ?", (text, output_id))
    study.close()
    roster = root / "roster.yaml"
    roster.write_text(ROSTER, encoding="utf-8")
    # a core whose words are all the extraction instruction's or function words: it passes the
    # fidelity check on any output, so the formula-like start reaches the packets
    backend = ScriptedBackend(answer=lambda prompt: "+Combines one idea with another.")
    blind(
        root / "study",
        reviewers=roster,
        normalise=False,
        backend=backend,
        seed=11,
        plan=primary_only_plan(root),
    )
    return root / "study"


@pytest.fixture
def blinded(blinded_template: Path, tmp_path: Path) -> Study:
    import shutil

    target = tmp_path / "study"
    shutil.copytree(blinded_template, target)
    study = Study.open(target)
    yield study
    study.close()
