from __future__ import annotations

import hashlib
import json
import re

import pytest

from harness.defaults import materials_dir
from harness.judge.blinding.blinded_items import clean_result, create_items, make_items, new_item_id
from tests.judge.fakes import ScriptedBackend


def items(study) -> dict[str, dict]:
    return {r["item_id"]: dict(r) for r in study.rows("SELECT * FROM items")}


def test_item_ids_are_random_base32() -> None:
    ids = {new_item_id() for _ in range(2000)}
    assert len(ids) == 2000
    assert all(re.fullmatch(r"I-[A-Z2-7]{10}", i) for i in ids)


def test_one_item_per_ok_output_with_text(make_study) -> None:
    study = make_study(n_topics=4)
    with study.transaction() as conn:  # a blank ok output gets no item
        conn.execute("UPDATE outputs SET text = '   ' WHERE output_id = 'O00010'")
    created, blank = create_items(study)
    assert (created, blank) == (11, 1)
    rows = items(study)
    outputs = {r["output_id"] for r in rows.values()}
    assert "Ofailed" not in outputs and "O00010" not in outputs
    assert all(
        r["display_text"] == r["original_text"] and r["core_combination"] is None
        for r in rows.values()
    )
    assert create_items(study) == (0, 1)  # nothing twice


def test_store_order_does_not_follow_prompt_order(make_study) -> None:
    study = make_study(n_topics=20)
    create_items(study)
    order = [r[0] for r in study.rows("SELECT output_id FROM items ORDER BY rowid")]
    assert order != sorted(order)


def test_steps_are_recorded_and_blind_to_condition(make_study) -> None:
    study = make_study(n_topics=3)
    backend = ScriptedBackend(answer=lambda prompt: "A joins B.  ")
    report = make_items(study, backend=backend)
    assert report.created == 9
    assert report.steps["extract"]["done"] == 9 and report.steps["normalise"]["done"] == 9
    prompts_seen = [m[-1]["content"] for _, m, _ in backend.seen]
    for prompt in prompts_seen:  # only the output text reaches the model
        assert not re.search(r"topic-|single_|cross|P\d{4}|Consider concept", prompt)
    texts = {r[0] for r in study.rows("SELECT original_text FROM items")}
    assert all(any(t in p for p in prompts_seen) for t in texts)
    extract_hash = hashlib.sha256(
        (materials_dir("prompts") / "judge/extract.j2").read_bytes()
    ).hexdigest()
    for row in items(study).values():
        assert row["core_combination"] == "A joins B."
        assert row["display_text"] == "A joins B."
        assert row["original_text"] != row["display_text"]
        steps = {s["step"]: s for s in json.loads(row["steps"])}
        assert steps["extract"]["prompt_sha256"] == extract_hash
        assert steps["extract"]["prompt"] == "prompts/judge/extract.j2"
        assert steps["normalise"]["params"]["max_tokens"] == 64
        assert steps["extract"]["params"]["temperature"] == 0.0
        assert steps["extract"]["backend"] == "scripted"
        assert steps["extract"]["model"] == "scripted-1"
        assert steps["extract"]["model_reported"] == "scripted-1-reported"
    # nothing left to do: a rerun sends no request
    again = ScriptedBackend()
    make_items(study, backend=again)
    assert again.seen == []


def test_failures_are_resumable(make_study) -> None:
    study = make_study(n_topics=2)
    create_items(study)
    first = sorted(items(study))[0]
    report = make_items(study, backend=ScriptedBackend(fail={first}), normalise=False)
    assert report.steps["extract"] == {"done": 5, "failed": 1, "removed": 0}
    assert "server said no" in report.errors[0]
    retry = ScriptedBackend()
    report = make_items(study, backend=retry, normalise=False)
    assert [key for key, _, _ in retry.seen] == [first]
    assert report.errors == []


def test_other_model_redoes_step_and_unwanted_step_is_removed(make_study) -> None:
    study = make_study(n_topics=2)
    make_items(study, backend=ScriptedBackend(answer=lambda p: "short."))
    report = make_items(
        study, backend=ScriptedBackend(model="other", answer=lambda p: "new."), normalise=False
    )
    assert report.steps["extract"]["done"] == 6
    assert report.steps["normalise"]["removed"] == 6
    for row in items(study).values():
        assert row["core_combination"] == "new."
        assert row["display_text"] == row["original_text"]
        assert [s["step"] for s in json.loads(row["steps"])] == ["extract"]
    make_items(study, extract=False, normalise=False, backend=ScriptedBackend())
    assert all(r["core_combination"] is None for r in items(study).values())


def test_empty_rewrite_keeps_original(make_study) -> None:
    study = make_study(n_topics=1)
    make_items(study, backend=ScriptedBackend(answer=lambda p: "  "))
    for row in items(study).values():
        assert row["display_text"] == row["original_text"]
        assert row["core_combination"] is None
        assert {s["outcome"] for s in json.loads(row["steps"])} == {"empty"}


@pytest.mark.parametrize(
    ("text", "reason", "expected"),
    [
        ("One idea. Then half a", "length", ("One idea.", "trimmed")),
        ("no sentence end at all", "length", ("no sentence end at all", "cut")),
        ("  Fine.  ", "stop", ("Fine.", "ok")),
        ("", "stop", ("", "empty")),
    ],
)
def test_clean_result(text: str, reason: str, expected: tuple[str, str]) -> None:
    assert clean_result(text, reason) == expected


def test_items_frozen_once_routed(make_study) -> None:
    study = make_study(n_topics=1)
    create_items(study)
    with study.transaction() as conn:
        conn.execute(
            "INSERT INTO reviewers (reviewer_id, kind, method, expertise, capacity) "
            "VALUES ('r', 'human', NULL, '[]', 5)"
        )
        conn.execute("INSERT INTO assignments SELECT item_id, 'r', 1 FROM items LIMIT 1")
        conn.execute("UPDATE outputs SET status = 'ok', text = 'late' WHERE output_id = 'Ofailed'")
    backend = ScriptedBackend()
    report = make_items(study, backend=backend)
    assert report.frozen and backend.seen == [] and study.count("items") == 3


@pytest.mark.slow
def test_steps_with_the_embedded_model(make_study) -> None:
    study = make_study(n_topics=1)
    report = make_items(study, backend="local")
    assert report.errors == [] and report.steps["extract"]["done"] == 3
    for row in items(study).values():
        steps = {s["step"]: s for s in json.loads(row["steps"])}
        assert steps["extract"]["backend"] == "local"
        assert steps["extract"]["model"] == "SmolLM2-135M-Instruct"
        assert steps["normalise"]["params"]["max_tokens"] == 64
        assert row["display_text"].strip() and row["original_text"] != ""
        assert (row["core_combination"] or "").strip() or steps["extract"]["outcome"] == "empty"
