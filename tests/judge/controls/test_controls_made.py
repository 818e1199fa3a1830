"""Controls made by the model under test: the study's template, model and settings, the keep
rule, and studies whose controls an older version wrote."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.collection.collect_stage import collect
from harness.judge.controls import control_sources as K
from harness.study.manifest import change_manifest, read_manifest
from harness.study.manifest_sections import Controls, Manifest, MaterialFile
from harness.study.store import Study
from tests.collection.conftest import make_study
from tests.judge.controls_study import ROSTER, answer, model_reply, small_plan
from tests.judge.fakes import ScriptedBackend
from tests.models.conftest import serve  # noqa: F401  (fixture)

FAMILY_1 = (
    "Consider {c1}, a concept from {f1}, and {c2}, a concept from {f2}. Examine {r} between "
    "them. Propose one specific research idea that combines the two concepts. Start with one "
    "sentence that states the core combination, then explain in at most three sentences how it "
    "could be tested."
)


# -- the keep rule --------------------------------------------------------------------------------
def test_a_concept_is_stated_when_half_its_content_words_occur() -> None:
    assert K.states_concept("granular jamming", "Jammed granular packings guide the design.")
    assert K.states_concept("Anderson localization", "localized waves")  # first 5 characters
    assert K.states_concept("synaptic pruning", "Pruning shrubs with robots.")  # one of two
    assert not K.states_concept("grid cells", "A lattice of neurons.")
    assert not K.states_concept("the and of", "the and of")  # no content words: never stated
    assert not K.states_concept("alpha 3", "3 tests") and K.states_concept("alpha 3", "alphas")
    three = "stable Paretian distributions"
    assert not K.states_concept(three, "stable prices") and K.states_concept(three, "stable Pareto")
    assert K.states_pair(("wave 0", "market 0"), "Waves meet markets.")
    assert not K.states_pair(("wave 0", "market 0"), "Waves meet auctions.")


def test_planted_pair_comes_from_the_link_else_from_the_topic_concepts() -> None:
    from harness.study.tables.controls import TopicSlots

    slots = TopicSlots(
        "t",
        "Physics",
        "Economics",
        ["wave 1", "resonance"],
        ["market 1", "auction"],
        "r",
        {},
        {},
        {},
    )
    given = {"title": "X", "summary": "Y.", "concepts": ["spin glasses", "neural memory"]}
    assert K.planted_pair(given, "known_links", slots) == (
        ("spin glasses", "neural memory"),
        ("Physics", "Economics"),
        "cross",
    )
    named = {"title": "Auctions", "summary": "Resonance in auction design."}
    assert K.planted_pair(named, "known_links", slots) == (
        ("resonance", "auction"),
        ("Physics", "Economics"),
        "cross",
    )
    assert K.planted_pair({"title": "Other", "summary": "Nothing."}, "known_links", slots) is None
    within = {"title": "W", "summary": "Market 1 and auction theory."}
    assert K.planted_pair(within, "known_within_b", slots) == (
        ("auction", "market 1"),
        ("Economics", "Economics"),
        "single_b",
    )


# -- the study's model, template and settings, through the loopback server -----------------------
def _remote_study(root: Path, server, monkeypatch, reply) -> Path:
    """Three topics collected from the loopback server (temperature 0.3, seed 7), each with a
    known link before the cut-off and one after, naming one concept of each field."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-controls")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    study = make_study(root / "study", topics=3)
    with Study.open(study) as handle, handle.transaction() as conn:
        for i in range(3):
            links = [
                {"title": f"Early {i}", "year": 1990, "summary": f"Linked wave {i} to market {i}."},
                {"title": f"Late {i}", "year": 2010, "summary": "Joined resonance and auction."},
            ]
            conn.execute(
                "UPDATE topics SET data = ? WHERE topic_id = ?",
                (json.dumps({"known_links": links}), f"t{i:03d}"),
            )
    server.reply_text = reply
    collect(
        study,
        backend="openai",
        model="gpt-4o-mini",
        base_url=server.base_url,
        temperature=0.3,
        max_tokens=80,
        seed=7,
        concurrency=2,
    )
    (root / "roster.yaml").write_text(ROSTER, encoding="utf-8")
    return study


def _blind(root: Path, study: Path) -> None:
    from harness.judge.blinding.blind_stage import blind

    blind(
        study,
        reviewers=root / "roster.yaml",
        backend=ScriptedBackend(answer=answer),
        seed=3,
        cutoff="2000-01-01",
        plan=small_plan(root),
    )


def _echo(body: dict) -> str:
    return model_reply(body["messages"][-1]["content"])


def test_control_prompts_are_the_study_template_sent_to_its_model_with_its_settings(
    tmp_path,
    serve,  # noqa: F811
    monkeypatch,
) -> None:
    server = serve()
    study = _remote_study(tmp_path, server, monkeypatch, _echo)
    collected = len(server.log.chat_bodies)
    _blind(tmp_path, study)
    bodies = server.log.chat_bodies[collected:]
    with Study.open(study) as handle:
        controls = handle.rows("SELECT * FROM controls")
    assert bodies and len(bodies) == len(controls) == 6
    wanted = {
        FAMILY_1.format(
            c1=f"wave {i}", f1="Physics", c2=f"market {i}", f2="Economics", r="a shared mechanism"
        )
        for i in range(3)
    } | {
        FAMILY_1.format(
            c1="resonance", f1="Physics", c2="auction", f2="Economics", r="a shared mechanism"
        )
    }
    sent = {b["messages"][-1]["content"] for b in bodies}
    assert sent == wanted  # the study's own template, the planted pair in its slots
    for body in bodies:
        assert body["model"] == "gpt-4o-mini"
        assert body["temperature"] == 0.3 and body["top_p"] == 0.95
        assert body.get("max_tokens", body.get("max_completion_tokens")) == 80
    # the topic's own system message (odd topics have one), as its real prompts were sent
    systems = {
        (
            b["messages"][0]["content"] if len(b["messages"]) == 2 else None,
            "wave 1" in b["messages"][-1]["content"],
        )
        for b in bodies
        if "wave" in b["messages"][-1]["content"]
    }
    assert systems == {(None, False), ("Answer in one sentence.", True)}
    section = read_manifest(study).record()["controls"]
    made = section["made"]
    assert made["generated"] == made["kept"] == 6 and made["dropped"] == {}
    model = made["models"]["openai/gpt-4o-mini"]
    assert model["model"] == "gpt-4o-mini" and model["params"]["temperature"] == 0.3
    assert model["params"]["seed"] == 7 and model["generated"] == 6
    # the texts are the model's replies; extraction ran once, as on real items
    with Study.open(study) as handle:
        items = handle.rows(
            "SELECT i.original_text, i.core_combination, i.steps, c.text FROM items i "
            "JOIN controls c ON c.control_id = i.control_id"
        )
    for original, core, steps, text in items:
        assert original == text and core
        assert [s["step"] for s in json.loads(steps)] == ["extract", "normalise"]


def test_a_control_whose_core_misses_the_planted_pair_is_dropped_and_counted(
    tmp_path,
    serve,  # noqa: F811
    monkeypatch,
) -> None:
    def reply(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        if "resonance" in prompt:  # the unpublished links' pair: the model wanders off
            return "Combines tidal energy with crop rotation to feed towns. A trial could tell."
        return model_reply(prompt)

    server = serve()
    study = _remote_study(tmp_path, server, monkeypatch, reply)
    _blind(tmp_path, study)
    with Study.open(study) as handle:
        controls = handle.rows("SELECT statement, expected FROM controls")
        n_items = handle.count("items")
        outputs = handle.count("outputs")
    assert {r["expected"] for r in controls} == {"published"}
    assert n_items == outputs + len(controls)  # a dropped control never becomes an item
    section = read_manifest(study).record()["controls"]
    made = section["made"]
    assert made["dropped"] == {"core does not state the planted pair": 3}
    assert made["generated"] == 6 and made["kept"] == 3
    assert any("dropped (core does not state the planted pair)" in n for n in section["notes"])


# -- the rewrite default is gone; older studies still load ---------------------------------------
def test_the_rewrite_of_statements_is_gone() -> None:
    from harness.defaults import materials_dir

    assert not (materials_dir("prompts") / "judge" / "control.j2").exists()
    assert not hasattr(K, "writer_template") and not hasattr(K, "write_texts")


def test_a_study_with_controls_written_the_old_way_still_loads(tmp_path: Path) -> None:
    """Stores whose control texts the blinded steps' backend wrote keep their rows and manifest
    section ('writer', 'prompt:control'); a rerun of blind and the reads work on them."""
    from harness.judge.blinding.blind_stage import blind
    from harness.study.tables.controls import calibration_items, control_items_frame
    from tests.judge.controls_study import make_controlled

    folder = make_controlled(tmp_path / "made")
    old = tmp_path / "old"
    shutil.copytree(folder, old)

    def as_before(manifest: Manifest) -> None:
        assert manifest.controls is not None and manifest.materials is not None
        section = manifest.controls.record()
        section.pop("made", None)
        section["writer"] = {"prompt": "prompts/judge/control.j2", "backend": "local"}
        manifest.controls = Controls.from_record(section)
        manifest.materials["judge"]["prompt:control"] = MaterialFile(
            path="/gone/prompts/judge/control.j2", sha256="0" * 64
        )

    change_manifest(old, as_before)
    result = blind(old, backend=ScriptedBackend(answer=answer), seed=5)
    assert result.items.frozen and result.controls is not None
    assert "Controls:" in result.controls.summary()
    with Study.open(old) as study:
        assert len(control_items_frame(study)) == study.count("controls") > 0
        assert calibration_items(study)
    assert read_manifest(old).record()["controls"]["writer"]["backend"] == "local"


@pytest.mark.parametrize("with_text", [True, False])
def test_file_controls_keep_working(tmp_path: Path, with_text: bool) -> None:
    from harness.judge.controls.controls_file import load_controls_file

    entry = (
        '    text: "Spin glasses store memories in networks of neurons; a model would test it."\n'
        if with_text
        else ""
    )
    path = tmp_path / "c.yaml"
    path.write_text(
        "controls:\n"
        '  - statement: "Combines spin glass theory with associative memory in networks."\n'
        "    expected: published\n    kind: cross\n"
        '    evidence: {title: "Neural networks and physical systems", year: 1982}\n' + entry,
        encoding="utf-8",
    )
    pool = K.file_pool(load_controls_file(path, "2000-01-01"), "c.yaml")
    if with_text:  # shown as written: nothing to generate, nothing to check
        assert len(pool.candidates) == 1 and pool.candidates[0].text and not pool.notes
    else:  # nothing to write it from: left out, and said so
        assert not pool.candidates and "neither `text` nor the `concepts`" in pool.notes[0]
