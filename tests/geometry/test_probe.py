"""The probe on a tiny study: what it stores, resuming, transactions, and the paired comparison."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.errors import HarnessError
from harness.geometry.compare import compare_split
from harness.geometry.probe import LAYER_MEAN, encode_row, probe_frame
from harness.geometry.probe_stage import run_probe
from harness.geometry.realmodel import attention_matrices
from harness.study import Study
from tests.geometry.conftest import make_study

SLOTS = {"concept_1", "concept_2", "field_1", "field_2"}


def geometry_rows(folder) -> list:
    with Study.open(folder) as study:
        rows = study.rows("SELECT * FROM geometry ORDER BY prompt_id, layer, head")
    return [dict(r) for r in rows]


def test_probe_stores_every_layer_and_head(tmp_path, tiny_model):
    folder = make_study(tmp_path / "s", n_topics=2)
    run = run_probe(folder, loaded=tiny_model)
    assert (run.probed, run.skipped, run.n_layers, run.n_heads) == (6, 0, 2, 4)
    rows = geometry_rows(folder)
    assert len(rows) == 6 * 2 * (4 + 1)
    for layer_rows in _by_layer(rows):
        heads = [r for r in layer_rows if r["head"] != LAYER_MEAN]
        (mean,) = [r for r in layer_rows if r["head"] == LAYER_MEAN]
        masses = [json.loads(r["mass"]) for r in heads]
        assert set(masses[0]) == SLOTS
        assert all(0 <= m <= 1 for ms in masses for m in ms.values())
        assert mean["entropy"] == pytest.approx(np.mean([r["entropy"] for r in heads]))
        mean_mass = json.loads(mean["mass"])
        for slot in SLOTS:
            assert mean_mass[slot] == pytest.approx(np.mean([m[slot] for m in masses]))
        c1, c2 = mean_mass["concept_1"], mean_mass["concept_2"]
        assert mean["split_index"] == pytest.approx(2 * min(c1, c2) / (c1 + c2))


def test_stored_measures_come_from_the_last_token_of_the_templated_prompt(tmp_path, tiny_model):
    folder = make_study(tmp_path / "s", n_topics=1)
    run_probe(folder, loaded=tiny_model)
    with Study.open(folder) as study:
        row = study.rows("SELECT * FROM prompts WHERE condition = 'cross'")[0]
    encoded = encode_row(tiny_model, row)
    last = attention_matrices(tiny_model, encoded.input_ids)[:, :, -1, :]  # run alone, unpadded
    stored = {
        (r["layer"], r["head"]): r
        for r in geometry_rows(folder)
        if r["prompt_id"] == row["prompt_id"]
    }
    for layer in range(2):
        for head in range(4):
            w = last[layer, head]
            mass = json.loads(stored[layer, head]["mass"])
            expected = w[encoded.slot_tokens["concept_2"]].sum()
            assert mass["concept_2"] == pytest.approx(expected, abs=1e-6)
            entropy = -(w[w > 0] * np.log2(w[w > 0])).sum()
            assert stored[layer, head]["entropy"] == pytest.approx(entropy, abs=1e-5)


def test_rerun_resumes_and_each_prompt_is_all_or_nothing(tmp_path, tiny_model):
    folder = make_study(tmp_path / "s", n_topics=2)
    assert run_probe(folder, loaded=tiny_model, limit=2).probed == 2

    def interrupt(done, total):
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_probe(folder, loaded=tiny_model, batch_size=1, on_prompt=interrupt)
    rows = geometry_rows(folder)
    assert len({r["prompt_id"] for r in rows}) == 4 and len(rows) == 4 * 10  # whole prompts only
    again = run_probe(folder, loaded=tiny_model)
    assert (again.probed, again.skipped) == (2, 4)
    assert run_probe(folder, loaded=tiny_model).probed == 0
    assert len(geometry_rows(folder)) == 6 * 10


def test_bad_spans_stop_the_run_before_anything_is_written(tmp_path, tiny_model):
    folder = make_study(tmp_path / "s", n_topics=1, spans_override='{"concept_1": [3, 1]}')
    with pytest.raises(HarnessError) as error:
        run_probe(folder, loaded=tiny_model)
    assert error.value.column == "spans" and error.value.row == "t000.cross"
    assert geometry_rows(folder) == []


def test_frame_and_comparison(tmp_path, tiny_model):
    folder = make_study(tmp_path / "s", n_topics=4)
    run_probe(folder, loaded=tiny_model)
    frame = probe_frame(folder, "tiny-llama")
    assert len(frame) == 12 * 10
    assert {"topic_id", "condition", "entropy", "split_index", "mass_concept_1"} <= set(frame)
    result = compare_split(folder)
    assert result.model == "tiny-llama" and result.n_topics == 4
    assert result.table["layer"].tolist() == [0, 1]
    means = frame[frame["head"] == LAYER_MEAN].pivot_table(
        index=["layer", "topic_id"], columns="condition", values="split_index"
    )
    cross = means["cross"].groupby("layer").mean()
    single = ((means["single_a"] + means["single_b"]) / 2).groupby("layer").mean()
    np.testing.assert_allclose(result.table["split_cross"], cross)
    np.testing.assert_allclose(result.table["diff"], cross - single)
    text = result.summary()
    assert "Toy-model prediction" in text and text.count("\n") == 2 + 2
    paired_t = compare_split(folder, test="t")
    assert paired_t.table["p"].notna().all()


def test_comparison_needs_both_conditions(tmp_path, tiny_model):
    folder = make_study(tmp_path / "s", n_topics=1)
    with pytest.raises(HarnessError, match="not measured"):
        compare_split(folder, "tiny-llama")
    with pytest.raises(HarnessError, match="unknown test"):
        compare_split(folder, test="anova")


def _by_layer(rows: list) -> list[list]:
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["prompt_id"], r["layer"]), []).append(r)
    return list(groups.values())


def test_a_finished_probe_does_not_load_the_model(tmp_path, tiny_model, monkeypatch):
    from harness.defaults import EMBEDDED_MODEL_NAME
    from harness.geometry import realmodel
    from harness.geometry.realmodel import LoadedModel

    folder = make_study(tmp_path / "s", n_topics=1)
    as_embedded = LoadedModel(EMBEDDED_MODEL_NAME, tiny_model.model, tiny_model.tokenizer)
    run_probe(folder, loaded=as_embedded)

    def no_loading(model=None):
        raise AssertionError("the model was loaded although nothing was pending")

    monkeypatch.setattr(realmodel, "load", no_loading)  # the probe loads it from there
    run = run_probe(folder)
    assert (run.model, run.probed, run.skipped, run.n_layers, run.n_heads) == (
        EMBEDDED_MODEL_NAME,
        0,
        3,
        2,
        4,
    )
