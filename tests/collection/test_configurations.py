"""Configurations of one model (MODEL#LABEL) in one study: each its own key, settings and output
ids, the model itself recorded beside the label; on the loopback server (through the real CLI)
and on a tiny local model."""

from __future__ import annotations

import json

import pytest

from harness.collection.collect_stage import collect_models
from harness.errors import HarnessError
from harness.study import Study
from harness.study.manifest import read_manifest
from tests.cli_run import run_subprocess
from tests.collection.conftest import cli
from tests.models.conftest import tiny_model  # noqa: F401  (fixture)

MODEL = "openai-compatible/m"


def by_key(study):
    with Study.open(study) as handle:
        found: dict[str, list[dict]] = {}
        for r in handle.rows(
            "SELECT output_id, model_key, model, status, params FROM outputs ORDER BY output_id"
        ):
            found.setdefault(r["model_key"], []).append(dict(r))
        return found


def test_two_configurations_of_one_server_model_through_the_cli(study, serve, key):
    server = serve()
    process = cli(
        [
            "collect",
            "--study",
            str(study),
            "--model",
            f"{MODEL}#sampled",
            "--model",
            f"{MODEL}#greedy",
            "--model-arg",
            "greedy@temperature=0",  # the label alone names its configuration
            "--base-url",  # one server serves every configuration of its model
            server.base_url,
            "--max-tokens",
            "16",
        ]
    )
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert f"collect: {MODEL}#sampled" in out and f"collect: {MODEL}#greedy" in out
    outputs = by_key(study)
    assert sorted(outputs) == [f"{MODEL}#greedy", f"{MODEL}#sampled"]
    ids = [r["output_id"] for rows in outputs.values() for r in rows]
    assert len(ids) == len(set(ids)) == 24
    temperatures = {
        k: {json.loads(r["params"])["temperature"] for r in v} for k, v in outputs.items()
    }
    assert temperatures == {f"{MODEL}#sampled": {0.7}, f"{MODEL}#greedy": {0.0}}
    # the server is asked for the model, never for a label
    assert {b["model"] for b in server.log.chat_bodies} == {"m"}
    assert sorted(b["temperature"] for b in server.log.chat_bodies)[::12] == [0.0, 0.7]
    recorded = read_manifest(study).record()["collect"]["models"][f"{MODEL}#greedy"]
    assert (recorded["provider_string"], recorded["label"]) == (MODEL, "greedy")
    assert recorded["model_key"] == f"{MODEL}#greedy" and recorded["params"]["temperature"] == 0.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--model", "local#bad:tag"],
            "model: bad configuration label 'bad:tag' in 'local#bad:tag'",
        ),
        (["--model", "#greedy"], "model: '#greedy' names no model before '#'"),
        (["--model", "local", "--model", "local"], "a model is named twice (local, local); to run"),
        (
            ["--model", "local#a", "--model", "local#b", "--model-arg", "c@temperature=0"],
            "'c' is not one of this run's --model values (local#a, local#b, a, b)",
        ),
    ],
)
def test_label_errors_are_one_line_from_the_real_cli(study, args, message):
    done = run_subprocess("collect", "--study", str(study), *args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    assert by_key(study) == {}


def test_a_label_shared_by_two_models_must_be_named_in_full(study, serve, key):
    with pytest.raises(HarnessError, match="'x' is not one of this run's --model values"):
        collect_models(study, models=["vllm/a#x", "vllm/b#x"], model_args=["x@temperature=0"])


def test_two_configurations_of_a_local_model_in_one_study(study, tiny_model):  # noqa: F811
    local = f"local/{tiny_model}"
    models = [f"{local}#sampled", f"{local}#greedy"]
    results = collect_models(
        study, models=models, model_args=["greedy@temperature=0"], max_tokens=6
    )
    assert [(r.model_key, r.completed, r.pending) for r in results] == [
        (models[0], 12, 0),
        (models[1], 12, 0),
    ]
    outputs = by_key(study)
    assert {r["model"] for rows in outputs.values() for r in rows} == {str(tiny_model)}
    assert all(r["status"] == "ok" for rows in outputs.values() for r in rows)
    assert {json.loads(r["params"])["temperature"] for r in outputs[models[1]]} == {0.0}
    assert {json.loads(r["params"])["temperature"] for r in outputs[models[0]]} == {0.7}
    recorded = read_manifest(study).record()["collect"]["models"]
    assert {k: (v["provider_string"], v["label"]) for k, v in recorded.items()} == {
        models[0]: (local, "sampled"),
        models[1]: (local, "greedy"),
    }
    # a rerun resumes both configurations with their own settings and collects nothing
    again = collect_models(study, max_tokens=6)
    assert [(r.model_key, r.completed) for r in again] == [(models[0], 0), (models[1], 0)]
    with pytest.raises(HarnessError, match=r"#greedy: this model's outputs were collected with"):
        collect_models(study, models=[models[1]], model_args=["temperature=0.5"], max_tokens=6)
