"""`collect` against the loopback server: provenance, resume, settings, errors, cost, faults."""

from __future__ import annotations

import json

import pytest

from harness.collection.collect_stage import collect, output_id
from harness.errors import HarnessError
from harness.models.base import unit_seed
from harness.study import Study
from harness.study.manifest import read_manifest
from tests.collection.conftest import make_study, outputs
from tests.servers.openai_server import FAULT_KINDS

FAST = {"concurrency": 4, "max_attempts": 3}


def run(study, server, **options):
    options = {
        "backend": "openai",
        "model": "gpt-4o-mini",
        "base_url": server.base_url,
        **FAST,
        **options,
    }
    return collect(study, **options)


def test_every_prompt_and_sample_is_stored_with_provenance(study, serve, key):
    server = serve()
    result = run(study, server, samples=2, temperature=0.2, max_tokens=30, seed=11)
    assert (result.completed, result.failed, result.total, result.pending) == (24, 0, 24, 0)
    with Study.open(study) as handle:
        rows = handle.rows("SELECT * FROM outputs ORDER BY prompt_id, sample")
        prompts = handle.count("prompts")
    assert len(rows) == 2 * prompts == 24
    row = rows[0]
    assert row["output_id"] == output_id(row["prompt_id"], row["sample"]) == "o-t000.cross-0"
    assert (row["status"], row["backend"], row["model"]) == ("ok", "openai", "gpt-4o-mini")
    assert row["model_reported"] == "gpt-4o-mini-2024-test"
    assert row["system_fingerprint"].startswith("fp_")
    assert json.loads(row["params"]) == {
        "temperature": 0.2,
        "top_p": 0.95,
        "max_tokens": 30,
        "seed": 11,
    }
    assert row["text"] and row["finish_reason"] == "stop" and row["error"] is None
    assert row["prompt_tokens"] > 0 and row["completion_tokens"] > 0 and row["cost_usd"] > 0
    assert row["started_at"] <= row["finished_at"] and row["attempts"] == 1
    body = server.log.chat_bodies[0]
    assert body["n"] == 2 and body["messages"][-1]["role"] == "user"
    with Study.open(study) as handle:
        prompt_ids = [r[0] for r in handle.rows("SELECT prompt_id FROM prompts")]
    # every request carries its first sample's own seed, derived from the study seed
    assert {b["seed"] for b in server.log.chat_bodies} == {
        unit_seed(11, p, 0, bits=31) for p in prompt_ids
    }
    with_system = [b for b in server.log.chat_bodies if b["messages"][0]["role"] == "system"]
    assert len(with_system) == 6  # odd topics have a system message
    manifest = read_manifest(study).record()
    section = manifest["collect"]["models"]["openai/gpt-4o-mini"]
    assert section["backend"] == "openai" and section["params"]["seed"] == 11
    assert section["reported"] == [
        {
            "model": "gpt-4o-mini-2024-test",
            "system_fingerprint": row["system_fingerprint"],
            "outputs": 24,
        }
    ]
    assert section["outputs"] == {"ok": 24, "failed": 0, "pending": 0, "total": 24}
    assert section["cost_usd"] == pytest.approx(result.cost_usd)
    assert section["base_url"] == server.base_url
    assert manifest["commands"][-1]["stage"] == "collect"
    assert "24 completed" in result.summary()


def test_rerun_resumes_with_stored_settings_and_sends_nothing(study, serve, key):
    server = serve()
    run(study, server, temperature=0.3)
    sent = server.log.counts["requests"]
    again = collect(study, base_url=server.base_url)  # backend, model, params from the study
    assert again.backend == "openai" and again.params["temperature"] == 0.3
    assert (again.completed, again.done_before) == (0, 12)
    assert server.log.counts["requests"] == sent


def test_changed_identity_is_refused_but_more_samples_are_added(study, serve, key):
    server = serve()
    run(study, server)
    before = {r[0]: r for r in outputs(study)}
    with pytest.raises(HarnessError) as caught:
        run(study, server, temperature=0.1)
    assert "temperature=0.7" in str(caught.value) and caught.value.column == "temperature"
    sent = len(server.log.chat_bodies)
    more = run(study, server, samples=3)
    assert more.completed == 24
    after = {r[0]: r for r in outputs(study)}
    assert len(after) == 36 and all(after[k] == v for k, v in before.items())
    # only the two new samples are asked for: nothing stored is generated (or paid for) again
    assert [b.get("n") for b in server.log.chat_bodies[sent:]] == [2] * 12
    assert {r[2] for r in after.values()} == {0, 1, 2}


def test_failures_keep_reasons_and_retry_errors_retries_only_them(study, serve, faults, key):
    server = serve(faults=faults(rate=1.0, kinds=("500",)))
    first = run(study, server, max_attempts=2)
    assert (first.completed, first.failed) == (0, 12)
    rows = outputs(study)
    assert all(r[3] == "failed" and r[10].startswith("HTTP 500: internal error") for r in rows)
    server.faults = faults(rate=0.0)
    server._draw_fault = lambda: None
    assert run(study, server).completed == 0  # failed rows are done unless asked
    assert server.log.counts["requests"] == 24
    retried = run(study, server, retry_errors=True)
    assert (retried.completed, retried.outputs_ok, retried.outputs_failed) == (12, 12, 0)
    with Study.open(study) as handle:
        attempts = {r[0] for r in handle.rows("SELECT attempts FROM outputs")}
        errors = handle.count("outputs", "error IS NOT NULL")
    assert attempts == {3} and errors == 0  # 2 failed attempts + 1 that worked


def test_twenty_percent_faults_end_completed_or_failed_with_reason(tmp_path, serve, faults, key):
    study = make_study(tmp_path / "s", 30)
    server = serve(faults=faults(rate=0.2, hang_s=1.0, retry_after="0.01"), latency=0.005)
    result = run(study, server, concurrency=16, timeout=0.25, max_attempts=3, samples=2)
    rows = outputs(study)
    assert len(rows) == 180 and result.pending == 0
    assert {r[3] for r in rows} <= {"ok", "failed"}
    assert all(r[10] for r in rows if r[3] == "failed")
    assert all(r[4] and r[10] is None for r in rows if r[3] == "ok")
    assert result.retries > 0 and server.log.counts["requests"] > 90
    assert sum(server.log.counts[k] > 0 for k in FAULT_KINDS) >= 6  # draws are seeded


def test_max_cost_is_never_passed_and_a_rerun_continues(study, serve, key, tmp_path, monkeypatch):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"pricey": {"input": 0, "output": 10000}}))  # $0.01 per token
    monkeypatch.setenv("HARNESS_PRICES", str(prices))
    server = serve(latency=0.05)
    # worst case $0.10 per request (10 tokens); answers take 4 to 10 tokens; 8 in flight at once
    result = run(study, server, model="pricey", max_cost=0.5, max_tokens=10, concurrency=8)
    assert result.stopped == "max_cost" and 0.2 <= result.cost_usd <= 0.5
    assert 5 <= result.outputs_ok < 12 and "cost limit" in result.summary()
    assert server.log.counts["requests"] == result.outputs_ok  # nothing sent and then dropped
    rest = run(study, server, model="pricey", max_tokens=10)
    assert rest.outputs_ok == 12 and rest.stopped is None


def test_max_cost_below_one_worst_case_sends_nothing(study, serve, key, tmp_path, monkeypatch):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"pricey": {"input": 10000, "output": 10000}}))
    monkeypatch.setenv("HARNESS_PRICES", str(prices))
    server = serve()
    result = run(study, server, model="pricey", max_cost=0.5)
    assert result.stopped == "max_cost" and result.cost_usd == 0 and result.pending == 12
    assert server.log.counts["requests"] == 0 and "worst-case" in result.summary()
    with pytest.raises(HarnessError, match="no price known"):
        run(make_study(tmp_path / "other", 1), server, model="unpriced", max_cost=1.0)


def test_user_errors(tmp_path, serve, key):
    empty = tmp_path / "empty"
    Study.open(empty, create=True).close()
    with pytest.raises(HarnessError, match="no prompts"):
        collect(empty)
    study = make_study(tmp_path / "s", 1)
    with pytest.raises(HarnessError, match="--batch-size does not apply to the openai"):
        collect(study, backend="openai", model="m", base_url="http://127.0.0.1:9/v1", batch_size=4)
    with pytest.raises(HarnessError, match="--concurrency does not apply to the local"):
        collect(study, concurrency=4)
    with pytest.raises(HarnessError, match="samples must be between 1 and"):
        collect(study, samples=0)
    with Study.open(study) as handle:
        before = handle.meta("collect_models")
    bad_values = ({"temperature": -3}, {"top_p": 0}, {"top_p": 1.5}, {"max_tokens": 0})
    whole = ({"samples": 2.0}, {"max_tokens": 16.5}, {"samples": "omit"}, {"max_tokens": "omit"})
    for bad in (*bad_values, *whole):
        with pytest.raises(HarnessError, match=next(iter(bad))):
            collect(study, backend="openai", model="m", base_url="http://127.0.0.1:9/v1", **bad)
    with Study.open(study) as handle:  # nothing stored by a refused run
        assert handle.meta("collect_models") == before
    with pytest.raises(HarnessError, match="no study here"):
        collect(tmp_path / "nowhere")


def test_batch_api_through_collect(study, serve, key):
    server = serve(batch_delay=0.05)
    result = run(study, server, batch_api=True, poll_interval=0.02, samples=2)
    assert result.completed == 24 and server.log.counts["batches"] == 1
    with Study.open(study) as handle:
        stored = json.loads(handle.meta("collect_batches"))
        params = json.loads(handle.rows("SELECT params FROM outputs LIMIT 1")[0][0])
    assert stored[0]["ingested"] and params["batch_api"] is True
    section = read_manifest(study).record()["collect"]["models"]["openai/gpt-4o-mini"]
    assert section["batch_ids"] == [stored[0]["id"]]


def test_batch_api_submits_only_what_the_budget_allows(study, serve, key, tmp_path, monkeypatch):
    prices = tmp_path / "prices.yaml"
    prices.write_text("pricey: {input: 0, output: 10000}\n")  # $0.01 per output token
    monkeypatch.setenv("HARNESS_PRICES", str(prices))
    server = serve(batch_delay=0.02)
    # worst case per request: 10 tokens x $0.01 x 0.5 (batch discount) = $0.05
    result = run(
        study,
        server,
        model="pricey",
        batch_api=True,
        poll_interval=0.02,
        max_tokens=10,
        max_cost=0.26,
    )
    assert result.stopped == "max_cost" and result.outputs_ok == 5 and result.pending == 7
    assert result.cost_usd <= 0.26
