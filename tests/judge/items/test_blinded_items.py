from __future__ import annotations

import hashlib
import json
import re

import pytest

from harness.defaults import materials_dir
from harness.judge.items.blinded_items import (
    clean_result,
    create_items,
    make_items,
    new_item_id,
    step_summary,
)
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
    backend = ScriptedBackend(answer=lambda prompt: "A with B.  ")
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
        assert row["core_combination"] == "A with B."
        assert row["display_text"] == "A with B."
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
    make_items(study, backend=ScriptedBackend(answer=lambda p: "A and B."))
    report = make_items(
        study, backend=ScriptedBackend(model="other", answer=lambda p: "B and A."), normalise=False
    )
    assert report.steps["extract"]["done"] == 6
    assert report.steps["normalise"]["removed"] == 6
    for row in items(study).values():
        assert row["core_combination"] == "B and A."
        assert row["display_text"] == row["original_text"]
        assert [s["step"] for s in json.loads(row["steps"])] == ["extract"]
    make_items(study, extract=False, normalise=False, backend=ScriptedBackend())
    assert all(r["core_combination"] is None for r in items(study).values())


def _unfaithful(prompt: str) -> str:
    """An extraction about something else; a rewrite that adds a novelty claim."""
    if prompt.startswith("Here is a research idea."):
        return "Quantum annealing is combined with protein folding to design vaccines."
    return "This groundbreaking idea has never been tried."


def test_steps_that_fail_fidelity_are_kept_aside_and_the_original_is_shown(make_study) -> None:
    study = make_study(n_topics=2)
    report = make_items(study, backend=ScriptedBackend(answer=_unfaithful))
    assert report.steps["extract"]["done"] == report.steps["normalise"]["done"] == 6
    for row in items(study).values():
        assert row["core_combination"] is None
        assert row["display_text"] == row["original_text"]
        steps = {s["step"]: s for s in json.loads(row["steps"])}
        assert steps["extract"]["fidelity"]["passed"] is False
        assert steps["extract"]["fidelity"]["support"] < 0.6
        assert steps["extract"]["rejected"].startswith("Quantum annealing")
        assert steps["normalise"]["fidelity"]["added"] == ["novelty"]
        assert steps["normalise"]["shown"] == "original"
    summary = step_summary(study)
    assert summary["extract"]["fidelity"] == {
        "checked": 6,
        "failed": 6,
        "low_support": 6,
        "added": 0,
        "echoed": 0,
    }
    assert summary["normalise"]["fidelity"]["added"] == 6
    again = ScriptedBackend()  # checked once: a rerun sends nothing
    make_items(study, backend=again)
    assert again.seen == []


def test_steps_recorded_before_the_fidelity_check_are_run_again(make_study) -> None:
    study = make_study(n_topics=1)
    make_items(study, backend=ScriptedBackend(answer=_unfaithful))
    with study.transaction() as conn:  # as an older study stored its steps
        for row in items(study).values():
            old = [
                {k: v for k, v in e.items() if k not in ("fidelity", "shown", "rejected")}
                for e in json.loads(row["steps"])
            ]
            conn.execute(
                "UPDATE items SET steps = ? WHERE item_id = ?", (json.dumps(old), row["item_id"])
            )
    again = ScriptedBackend(answer=_unfaithful)
    report = make_items(study, backend=again)
    assert len(again.seen) == 6 and report.steps["extract"]["done"] == 3
    assert all("fidelity" in e for r in items(study).values() for e in json.loads(r["steps"]))


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
        conn.execute(
            "INSERT INTO assignments (item_id, reviewer_id, position) "
            "SELECT item_id, 'r', 1 FROM items LIMIT 1"
        )
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


class GroupingBackend(ScriptedBackend):
    """Decodes every group of a call together and yields the last group's completions first,
    as shared batches may: a normalisation can be stored before its item's extraction."""

    def __init__(self) -> None:
        super().__init__(answer=lambda prompt: "A joins B.")
        self.calls: list[list[tuple[int, int]]] = []

    def complete_groups(self, groups):
        self.calls.append([(len(requests), params.max_tokens) for requests, params in groups])
        for index in reversed(range(len(groups))):
            for completion in self.complete(*groups[index]):
                yield index, completion


def test_all_steps_go_in_one_shared_call_and_store_as_one_after_another(make_study) -> None:
    study = make_study(n_topics=3)
    grouped = GroupingBackend()
    report = make_items(study, backend=grouped)
    assert grouped.calls == [[(9, 48), (9, 64)]]  # extract and normalise of all 9 items at once
    assert report.steps["extract"]["done"] == 9 and report.steps["normalise"]["done"] == 9
    for row in items(study).values():
        assert [s["step"] for s in json.loads(row["steps"])] == ["extract", "normalise"]
    manifest = json.loads((study.path / "manifest.json").read_text())
    call = manifest["decoding"]["judge.blind"]["extract+normalise"]
    assert call["completions"] == 18 and call["completion_tokens"] == 90
    assert call["prompt_tokens"] == 180 and call["calls"] == 1
    assert call["seconds"] >= 0 and set(call) >= {"tokens_per_s"}


def test_without_shared_batches_each_step_is_its_own_call(make_study) -> None:
    study = make_study(n_topics=1)
    plain = ScriptedBackend(answer=lambda prompt: "A joins B.")
    make_items(study, backend=plain)
    assert [p.max_tokens for _, _, p in plain.seen] == [48] * 3 + [64] * 3


def test_a_rerun_step_goes_after_the_steps_that_stay(make_study, tmp_path) -> None:
    import shutil

    study = make_study(n_topics=1)
    make_items(study, backend=GroupingBackend())
    prompts = tmp_path / "prompts"
    shutil.copytree(materials_dir("prompts"), prompts)
    with open(prompts / "judge/extract.j2", "a") as handle:
        handle.write("\n")  # a new extraction prompt: only the extraction is pending
    again = GroupingBackend()
    make_items(study, backend=again, prompts_dir=prompts)
    assert again.calls == [[(3, 48)]]
    for row in items(study).values():  # as one step after the other would leave them
        assert [s["step"] for s in json.loads(row["steps"])] == ["normalise", "extract"]


class OneStepAtATime:
    """The local backend as the blinded steps used it before shared batches: one call per step,
    one prompt at a time."""

    def __init__(self, backend) -> None:
        self.backend, self.name, self.model = backend, backend.name, backend.model

    def complete(self, requests, params):
        return self.backend.complete(requests, params)

    def run_settings(self):
        return self.backend.run_settings()


def stored(study) -> dict[str, tuple]:
    """Each item's texts and steps, by original text, without the times they were made at."""
    out = {}
    for row in items(study).values():
        steps = [
            {k: v for k, v in s.items() if k not in ("at", "recorded_at")}
            for s in json.loads(row["steps"])
        ]
        out[row["original_text"]] = (row["core_combination"], row["display_text"], steps)
    return out


@pytest.mark.slow
def test_shared_batches_store_what_one_prompt_at_a_time_stores(make_study, tmp_path) -> None:
    from harness.models import open_backend

    study = make_study(n_topics=2)
    # threads pinned: unset, each backend takes the cores idle when it loads (recorded as
    # threads_used), and other workers of the test run make that number differ between the two
    alone = open_backend("local", batch_size=1, threads=1)
    make_items(study, backend=OneStepAtATime(alone))
    before = stored(study)
    with study.transaction() as conn:  # the same outputs, steps not yet run
        conn.execute("DELETE FROM items")
    make_items(study, backend=open_backend("local", batch_size=32, threads=1))
    after = stored(study)
    assert len(after) == 6 and after == before
