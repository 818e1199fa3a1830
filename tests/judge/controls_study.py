"""A study whose topics carry known links, blinded with controls from the bank and a file."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from harness.analysis.plan.plan_file import bundled_plan_path
from harness.study.store import Study
from tests.judge.conftest import fill_study
from tests.judge.fakes import ScriptedBackend

CUTOFF = "2000-01-01"
N_TOPICS = 10
ROSTER = """reviewers:
  - {id: ann, kind: human, expertise: [Medicine], capacity: 10}
  - {id: ben, kind: human, expertise: [Computer Science], capacity: 10}
  - {id: cat, kind: human, expertise: [Psychology], capacity: 10}
  - {id: dan, kind: human, expertise: [], capacity: 10}
  - {id: eve, kind: human, expertise: [Mathematics], capacity: 10}
  - {id: fay, kind: human, expertise: [], capacity: 10}
  - {id: auto, kind: automated, method: retrieval, capacity: 100}
"""
CONTROLS = """controls:
  - statement: "Combines spin glass theory with associative memory in neural networks."
    expected: published
    kind: cross
    concepts: [spin glass theory, associative memory]
    fields: [Physics and Astronomy, Neuroscience]
    evidence: {title: "Neural networks and physical systems", year: 1982, doi: "10.1073/x"}
  - statement: "Combines soil moisture sensing with auction design to allocate irrigation."
    expected: not_published
    kind: cross
    text: "Irrigation water could be sold in auctions whose rules read soil moisture sensors. A
      field trial could compare yields and water use under the auction and a fixed quota."
"""


def links(t: int) -> dict[str, list[dict[str, object]]]:
    """Per topic: one link before the cut-off, one after, one in its year; every other topic
    also a single-field link of field A."""
    data: dict[str, list[dict[str, object]]] = {
        "known_links": [
            {
                "title": f"Early work {t}",
                "year": 1970 + t,
                "summary": f"Combined alpha {t} with gamma {t} to explain an old effect. More.",
            },
            {
                "title": f"Late work {t}",
                "year": 2005 + t,
                "doi": f"10.9/{t}",
                "summary": f"Joined beta {t} and delta {t} in a new model of growth.",
            },
            {
                "title": f"Same-year work {t}",
                "year": 2000,
                "summary": f"Related alpha {t} to delta {t} in one survey.",
            },
        ]
    }
    if t % 2 == 0:
        data["known_within_a"] = [
            {
                "title": f"Within work {t}",
                "year": 1980 + t,
                "summary": f"Linked alpha {t} and beta {t} in one field.",
            }
        ]
    return data


def model_reply(prompt: str) -> str:
    """The model under test, faked: its idea restates the whole prompt in one sentence, so the
    planted pair is in the sentence extraction keeps."""
    return prompt.replace(". ", "; ").rstrip(".") + "."


def model_under_test(study: Study, run: object) -> ScriptedBackend:
    """Replaces `harness.judge.controls.control_sources.open_model`: the study's model, faked."""
    return ScriptedBackend(model=getattr(run, "key", "model"), answer=model_reply)


def answer(prompt: str) -> str:
    """A reply that depends on the prompt's words only (never on what kind of item it is);
    extraction keeps the idea's first sentence."""
    if prompt.startswith("Here is a research idea."):
        from harness.judge.controls.control_sources import first_sentence

        return first_sentence(prompt.split("\n\n")[1])
    words = re.findall(r"[a-z]{4,}", prompt.lower())
    digest = hashlib.sha256(prompt.encode()).digest()
    picked = [words[b % len(words)] for b in digest[:6]] if words else ["idea"] * 6
    return (
        f"Combines {picked[0]} with {picked[1]} to study {picked[2]}. A trial could "
        f"compare {picked[3]} and {picked[4]} outcomes."
    )


def small_plan(folder: Path, *, adjudicated: int = 0, minimum: int = 2) -> Path:
    """The bundled plan with share 0.25 and `minimum` controls per reviewer; no adjudicated
    sample unless `adjudicated` topics are drawn (these tests are mostly about controls)."""
    text = bundled_plan_path().read_text(encoding="utf-8")
    text = text.replace("share: 0.2 ", "share: 0.25").replace(
        "min_per_reviewer: 10 ", f"min_per_reviewer: {minimum:<3d}"
    )
    text = re.sub(r"(?m)^(adjudication:\n  topics:) [0-9.]+", rf"\1 {adjudicated}", text)
    path = folder / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    return path


# Seven adjudicators, six people and one automated method: three drawn topics' nine items x 2
ADJUDICATORS = (
    "".join(
        f"  - {{id: adj-{n}, kind: human, role: adjudicator, capacity: 8}}\n" for n in range(1, 7)
    )
    + "  - {id: adj-auto, kind: automated, method: retrieval, role: adjudicator, capacity: 100}\n"
)


def make_controlled(
    root: Path, *, roster: str = ROSTER, adjudicated: int = 0, minimum: int = 2
) -> Path:
    """The study folder, blinded with controls (seed 5); `roster`, `adjudicated` and `minimum`
    as `small_plan` takes them."""
    from harness.judge.blinding.blind_stage import blind

    study = fill_study(root / "study", n_topics=N_TOPICS)
    with study.transaction() as conn:
        for t in range(N_TOPICS):
            conn.execute(
                "UPDATE topics SET data = ? WHERE topic_id = ?",
                (json.dumps(links(t)), f"topic-{t:03d}"),
            )
    study.close()
    (root / "roster.yaml").write_text(roster, encoding="utf-8")
    (root / "controls.yaml").write_text(CONTROLS, encoding="utf-8")
    import pytest

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("harness.judge.controls.control_sources.open_model", model_under_test)
        blind(
            root / "study",
            reviewers=root / "roster.yaml",
            backend=ScriptedBackend(answer=answer),
            seed=5,
            cutoff=CUTOFF,
            controls=root / "controls.yaml",
            plan=small_plan(root, adjudicated=adjudicated, minimum=minimum),
        )
    return root / "study"


def open_study(path: Path) -> Study:
    return Study.open(path)
