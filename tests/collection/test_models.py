"""Several models in one study on loopback servers: settings, ids, resume, adding a model later,
refused parameters, per-model cost and provenance, and status per model."""

from __future__ import annotations

import json
import signal
import time

import pytest

from harness.collection.collect_stage import collect, collect_models
from harness.errors import HarnessError
from harness.status.stage_table import study_status
from harness.study import Study
from harness.study.manifest import read_manifest, record_section
from harness.study.manifest_sections import Collect
from tests.cli_run import run_cli
from tests.collection.conftest import cli, make_study

MINI, REASONING = "openai/gpt-4o-mini", "openai-compatible/o3-mini"
FAST = {"concurrency": 4, "max_attempts": 2}


def two_models(a, b):
    """Model arguments for gpt-4o-mini on server a and a reasoning model on server b."""
    return [
        f"{MINI}@base_url={a.base_url}",
        f"{REASONING}@base_url={b.base_url}",
        f"{REASONING}@temperature=omit",
        f"{REASONING}@top_p=omit",
        f"{REASONING}@token_param=max_completion_tokens",
        f"{REASONING}@reasoning_effort=low",
    ]


def rows(study):
    with Study.open(study) as handle:
        return [
            dict(r)
            for r in handle.rows(
                "SELECT output_id, prompt_id, sample, model_key, status, text, params, cost_usd "
                "FROM outputs ORDER BY model_key, prompt_id, sample"
            )
        ]


def test_two_models_each_with_their_own_settings(study, serve, key):
    mini = serve()
    reasoning = serve(reject_params={"o3-mini": ("temperature", "top_p", "max_tokens")})
    results = collect_models(
        study,
        models=[MINI, REASONING],
        model_args=two_models(mini, reasoning),
        samples=2,
        max_tokens=40,
        **FAST,
    )
    assert [(r.model_key, r.completed, r.pending) for r in results] == [
        (MINI, 24, 0),
        (REASONING, 24, 0),
    ]
    got = rows(study)
    assert len(got) == 48 and len({r["output_id"] for r in got}) == 48
    assert len({(r["prompt_id"], r["model_key"], r["sample"]) for r in got}) == 48
    # the study's first model keeps the plain ids; the later one's carry its suffix
    assert {r["output_id"] for r in got if r["model_key"] == MINI} == {
        f"o-t00{t}.{c}-{s}"
        for t in range(4)
        for c in ("single_a", "single_b", "cross")
        for s in (0, 1)
    }
    assert all(r["output_id"].count("-") == 3 for r in got if r["model_key"] == REASONING)
    sent = reasoning.log.chat_bodies[0]
    assert "temperature" not in sent and "top_p" not in sent and "max_tokens" not in sent
    assert sent["max_completion_tokens"] == 40 and sent["reasoning_effort"] == "low"
    assert reasoning.log.counts["rejected"] == 0 and len(mini.log.chat_bodies) == 12
    params = {r["model_key"]: json.loads(r["params"]) for r in got}
    assert params[MINI] == {"temperature": 0.7, "top_p": 0.95, "max_tokens": 40, "seed": 0}
    assert params[REASONING] == {
        "temperature": None,
        "top_p": None,
        "max_tokens": 40,
        "seed": 0,
        "token_param": "max_completion_tokens",
        "body": {"reasoning_effort": "low"},
    }
    # provenance and cost per model: gpt-4o-mini is priced, the other model is not
    models = read_manifest(study).record()["collect"]["models"]
    assert models[MINI]["base_url"] == mini.base_url
    assert models[REASONING]["base_url"] == reasoning.base_url
    assert models[MINI]["cost_usd"] == pytest.approx(results[0].cost_usd) and results[0].cost_usd
    assert models[REASONING]["params"] == params[REASONING]
    assert models[REASONING]["outputs"] == {"ok": 24, "failed": 0, "pending": 0, "total": 24}
    status = {s.stage: s for s in study_status(study)}
    assert status[f"collect {MINI}"].complete == "24/24 (100%)"
    assert status[f"collect {REASONING}"].holds == "24 ok, 0 failed outputs"


def test_a_model_added_later_collects_only_its_outputs(study, serve, key):
    mini, other = serve(), serve()
    collect(study, model=MINI, base_url=mini.base_url, **FAST)
    before = rows(study)
    first = len(mini.log.chat_bodies)
    added = collect(
        study, model="vllm/Qwen2.5-7B-Instruct", base_url=other.base_url, temperature=0.2, **FAST
    )
    assert added.completed == 12 and len(mini.log.chat_bodies) == first
    assert any("new in this study" in note for note in added.notes)
    after = rows(study)
    assert [r for r in after if r["model_key"] == MINI] == before
    # a rerun without models resumes both, each at its recorded endpoint: nothing left to send
    sent = len(other.log.chat_bodies)
    again = collect_models(study, **FAST)
    assert [(r.model_key, r.completed) for r in again] == [
        (MINI, 0),
        ("vllm/Qwen2.5-7B-Instruct", 0),
    ]
    assert (len(mini.log.chat_bodies), len(other.log.chat_bodies)) == (first, sent)
    with pytest.raises(HarnessError, match="several models"):
        collect(study)  # the one-model call cannot guess which
    # each model keeps its own settings: the vLLM model's temperature is fixed, not gpt-4o-mini's
    with pytest.raises(HarnessError, match="temperature=0.2, not 0.9"):
        collect(study, model="vllm/Qwen2.5-7B-Instruct", temperature=0.9)


def test_a_refused_parameter_stops_that_model_with_one_error(study, serve, key, capsys):
    mini = serve()
    reasoning = serve(reject_params={"o3-mini": ("temperature",)})
    args = [f"{MINI}@base_url={mini.base_url}", f"{REASONING}@base_url={reasoning.base_url}"]
    with pytest.raises(HarnessError) as caught:
        collect_models(study, models=[MINI, REASONING], model_args=args, **FAST)
    message = str(caught.value)
    assert message.startswith(
        f"temperature: {REASONING}: the server rejected the request "
        "parameter 'temperature' (HTTP 400"
    )
    assert "--model-arg temperature=omit" in message
    assert reasoning.log.counts["requests"] <= FAST["concurrency"]  # no retry storm
    assert {r["model_key"] for r in rows(study)} == {MINI}  # nothing stored for the refused one
    code, out, err = run_cli(
        capsys,
        "collect",
        "--study",
        str(study),
        "--model",
        MINI,
        "--model",
        REASONING,
        *[f"--model-arg={a}" for a in args],
    )
    last = err.strip().splitlines()[-1]  # after the progress bars on stderr
    assert code == 2 and "rejected the request parameter 'temperature'" in last
    assert "collect: openai/gpt-4o-mini" in out  # the first model's summary came before


def test_one_base_url_serves_every_model_without_its_own(study, serve, key):
    """Two models on one server need one --base-url; a model with its own URL keeps it."""
    shared, own = serve(), serve()
    results = collect_models(
        study,
        models=["vllm/m", "openai-compatible/o", "ollama/n"],
        base_url=shared.base_url,
        model_args=[f"ollama/n@base_url={own.base_url}"],
        **FAST,
    )
    assert [(r.model_key, r.completed) for r in results] == [
        ("vllm/m", 12),
        ("openai-compatible/o", 12),
        ("ollama/n", 12),
    ]
    assert {b["model"] for b in shared.log.chat_bodies} == {"m", "o"}
    assert {b["model"] for b in own.log.chat_bodies} == {"n"}
    # the OpenAI key reaches only the provider that gets it
    assert "Bearer EMPTY" in shared.log.auth_headers and own.log.auth_headers == {"Bearer EMPTY"}


def test_run_wide_options_and_their_errors(study, serve, key):
    a, b = serve(), serve()
    with pytest.raises(HarnessError, match="needs a server URL"):
        collect(study, model="openai-compatible/m")
    with pytest.raises(HarnessError, match="applies to OpenAI-compatible models only"):
        collect(study, model="local", model_args=["temperature=omit"])
    with pytest.raises(HarnessError, match="named twice"):
        collect_models(study, models=[MINI, "openai/gpt-4o-mini"])
    urls = [f"{MINI}@base_url={a.base_url}", f"vllm/m@base_url={b.base_url}"]
    with pytest.raises(HarnessError, match="no price known for model 'm'"):
        collect_models(study, models=[MINI, "vllm/m"], max_cost=1.0, model_args=urls)
    assert rows(study) == []  # refused before any model ran
    # a cap for the priced model only; --concurrency serves the remote models, --batch-size
    # would serve local ones
    results = collect_models(
        study,
        models=[MINI, "vllm/m"],
        batch_size=4,
        model_args=[*urls, f"{MINI}@max_cost=1.0"],
        **FAST,
    )
    assert [r.completed for r in results] == [12, 12]
    # the OpenAI key goes to OpenAI's model only, never to the self-hosted server
    assert a.log.auth_headers == {f"Bearer {key}"} and b.log.auth_headers == {"Bearer EMPTY"}
    commands = read_manifest(study).record()["commands"]
    assert [c["params"]["max_cost"] for c in commands[-2:]] == [1.0, None]


def test_sigkill_during_the_second_model_resumes_only_it(tmp_path, serve, key):
    mini, other = serve(), serve(latency=0.03)
    args = [
        "collect",
        "--study",
        str(tmp_path / "killed"),
        "--model",
        MINI,
        "--model",
        "vllm/m",
        "--model-arg",
        f"{MINI}@base_url={mini.base_url}",
        "--model-arg",
        f"vllm/m@base_url={other.base_url}",
        "--model-arg",
        "vllm/m@samples=2",
        "--concurrency",
        "2",
        "--seed",
        "5",
    ]
    make_study(tmp_path / "killed", 30)

    def second_model_rows() -> int:
        with Study.open(tmp_path / "killed") as handle:
            return handle.count("outputs", "model_key = 'vllm/m'")

    process = cli(args)
    deadline = time.monotonic() + 60
    while process.poll() is None and second_model_rows() < 20:
        assert time.monotonic() < deadline, "collect made no progress"
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    stored = second_model_rows()
    assert 20 <= stored < 180, "the kill did not land during the second model"
    sent_first = len(mini.log.chat_bodies)
    final = cli(args)
    _, err = final.communicate(timeout=120)
    assert final.returncode == 0, err
    assert len(mini.log.chat_bodies) == sent_first  # the first model was complete: not asked

    reference = make_study(tmp_path / "reference", 30)
    collect_models(
        reference,
        models=[MINI, "vllm/m"],
        seed=5,
        model_args=[
            f"{MINI}@base_url={mini.base_url}",
            f"vllm/m@base_url={other.base_url}",
            "vllm/m@samples=2",
        ],
        concurrency=8,
    )
    assert rows(tmp_path / "killed") == rows(reference)
    assert len(rows(reference)) == 90 + 180


def test_a_model_can_have_its_own_price_table(study, serve, key, tmp_path):
    server = serve()
    table = tmp_path / "prices.yaml"
    table.write_text("m: {input: 1000, output: 2000}\n")  # USD per million tokens
    with pytest.raises(HarnessError, match="no price known for model 'm'"):
        collect(study, model="vllm/m", base_url=server.base_url, max_cost=5.0, **FAST)
    result = collect(
        study,
        model="vllm/m",
        base_url=server.base_url,
        max_cost=5.0,
        model_args=[f"prices={table}"],
        **FAST,
    )
    want = sum(1000 * r.prompt_tokens + 2000 * r.completion_tokens for r in [result]) / 1e6
    assert result.completed == 12 and result.cost_usd == pytest.approx(want)


def test_a_manifest_from_before_several_models_is_read_and_rewritten(study, serve, key):
    first, other = serve(), serve()
    collect(
        study, backend="openai", model="gpt-4o-mini", base_url=first.base_url, samples=1, **FAST
    )
    # the one-model section older harness versions wrote, straight under `collect`
    one_model = read_manifest(study).record()["collect"]["models"][MINI]
    record_section(study, "collect", Collect.from_record(one_model))
    more = collect(study, backend="openai", model="gpt-4o-mini", samples=2, **FAST)
    assert more.completed == 12 and len(first.log.chat_bodies) == 24
    assert f"{MINI}: endpoint {first.base_url}, as recorded in the study" in more.notes
    models = read_manifest(study).record()["collect"]["models"]
    assert list(models) == [MINI] and len(models[MINI]["runs"]) == 2
    # scoped by key with no --model: the study's models resume, this one with its own option
    added = collect_models(study, models=["vllm/m"], base_url=other.base_url, **FAST)
    assert added[0].completed == 12
    again = collect_models(study, model_args=["vllm/m@concurrency=2"], concurrency=4)
    assert [r.completed for r in again] == [0, 0]
    runs = read_manifest(study).record()["collect"]["models"]
    assert (runs[MINI]["runs"][-1]["concurrency"], runs["vllm/m"]["runs"][-1]["concurrency"]) == (
        4,
        2,
    )


def test_each_model_keeps_its_own_batch_api_state(study, serve, key):
    server = serve(batch_delay=0.05)
    models = [MINI, "openai-compatible/m"]
    results = collect_models(
        study,
        models=models,
        base_url=None,
        batch_api=True,
        poll_interval=0.02,
        model_args=[f"{m}@base_url={server.base_url}" for m in models],
    )
    assert [r.completed for r in results] == [12, 12] and server.log.counts["batches"] == 2
    with Study.open(study) as handle:
        suffix = json.loads(handle.meta("collect_models") or "")[models[1]]["id_suffix"]
        first = json.loads(handle.meta("collect_batches") or "[]")
        second = json.loads(handle.meta(f"collect_batches:{suffix}") or "[]")
    # the second model's run did not drop the first model's batch record
    assert len(first) == len(second) == 1 and first[0]["id"] != second[0]["id"]
    assert first[0]["ingested"] and second[0]["ingested"]
    ids = read_manifest(study).record()["collect"]["models"]
    assert ids[MINI]["batch_ids"] == [first[0]["id"]]
    assert ids[models[1]]["batch_ids"] == [second[0]["id"]]
