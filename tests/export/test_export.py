"""Every table exports in every format and reads back as the store holds it; item-keyed tables
reveal nothing about conditions until the study is unblinded."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest
from pandas.api.types import is_numeric_dtype

from harness.errors import HarnessError
from harness.export import export, read_table
from harness.export.tables import TABLES
from harness.export.write import FORMATS
from harness.study.store import Study
from harness.study.unblinding import mark_unblinded, unblinded_at
from tests.cli_run import run_cli
from tests.records import add_item_without_output, build_records_study

BLINDED = [name for name, table in TABLES.items() if table.blinded and not table.sealed]
REVEALING = {
    "model_key",
    "configuration",
    "control_id",
    "expected",
    "control_kind",
    "control_split",
    "output_id",
    "prompt_id",
    "topic_id",
    "condition",
    "sample",
    "model",
    "original_text",
    "steps",
    "field_a",
    "field_b",
}


@pytest.fixture(scope="module")
def blind_study(tmp_path_factory):
    return build_records_study(tmp_path_factory.mktemp("blind") / "s")


@pytest.fixture(scope="module")
def open_study(tmp_path_factory, blind_study):
    path = tmp_path_factory.mktemp("open") / "s"
    shutil.copytree(blind_study, path)
    with Study.open(path) as study:
        mark_unblinded(study)
    return path


@pytest.fixture(scope="module")
def with_control(tmp_path_factory, open_study):
    """The unblinded study with one control item, reviewed by alice, and one never judged."""
    path = tmp_path_factory.mktemp("control") / "s"
    shutil.copytree(open_study, path)
    add_item_without_output(path)
    with Study.open(path) as study, study.transaction() as conn:
        conn.execute(
            "INSERT INTO controls (control_id, statement, text, expected, kind, source, "
            "evidence, split) VALUES ('c-1', 'b combination', 'text', 'not_published', "
            "'single', 'bank', '{}', 'held_out')"
        )
    return path


def test_controls_are_sealed_until_unblinding(blind_study, tmp_path):
    path = tmp_path / "s"
    shutil.copytree(blind_study, path)
    add_item_without_output(path)
    with pytest.raises(HarnessError, match="sealed in the blinding key"):
        read_table(path, "controls")
    # before unblinding a control's judgment is a judgment like any other
    judgments = read_table(path, "judgments")
    assert not REVEALING & set(judgments.columns)
    assert "ctrl-0000" in set(judgments["item_id"])


def test_controls_export_one_row_per_judgment_and_unjudged_controls(with_control):
    frame = read_table(with_control, "controls")
    rows = frame.set_index("control_id")
    assert len(frame) == 2
    assert rows.loc[
        "c-0", ["item_id", "expected", "control_kind", "reviewer_id", "verdict"]
    ].tolist() == [
        "ctrl-0000",
        "published",
        "cross",
        "alice",
        "published",
    ]
    assert rows.loc["c-0", "correct"] == 1
    assert rows.loc["c-1", ["expected", "split"]].tolist() == ["not_published", "held_out"]
    assert pd.isna(rows.loc["c-1", "reviewer_id"]) and pd.isna(rows.loc["c-1", "correct"])


def test_control_rows_in_judgments_carry_their_expected_verdict(with_control):
    for table in ("judgments", "items"):
        frame = read_table(with_control, table).set_index("item_id")
        assert frame.loc["ctrl-0000", ["control_id", "expected", "control_kind"]].tolist() == [
            "c-0",
            "published",
            "cross",
        ], table
        real = frame.drop(index="ctrl-0000")
        assert real["expected"].isna().all() and real["control_id"].isna().all()


def test_every_item_table_names_the_model_key_and_configuration(tmp_path):
    from tests.records import build_configurations_study

    path = build_configurations_study(tmp_path / "s")
    for table in BLINDED:  # before unblinding: nothing of it
        assert not {"model_key", "configuration"} & set(read_table(path, table).columns)
    with Study.open(path) as study:
        mark_unblinded(study)
    for table in [*BLINDED, "outputs"]:
        frame = read_table(path, table)
        keys = frame["model_key"].dropna()
        assert set(keys) == {"local#sampled", "local#greedy"}, table
        assert (frame.loc[keys.index, "configuration"] == keys.str.split("#").str[1]).all()
        assert set(frame["model"].dropna()) == {"SmolLM2-135M-Instruct"}


def _secrets(study) -> set[str]:
    """Every value that would tie an item to its topic, condition, prompt, output or model."""
    with Study.open(study) as s:
        rows = s.rows(
            "SELECT o.output_id, o.prompt_id, o.model, p.topic_id FROM outputs o "
            "JOIN prompts p USING (prompt_id)"
        )
    return {str(v) for row in rows for v in row} | {"single_a", "single_b", "cross"}


@pytest.mark.parametrize("table", BLINDED)
def test_blinded_tables_reveal_nothing(blind_study, table):
    frame = read_table(blind_study, table)
    assert len(frame) > 0
    assert not REVEALING & set(frame.columns)
    cells = {str(v) for v in frame.to_numpy().ravel()}
    assert not cells & _secrets(blind_study)


def test_unblinding_is_recorded_once(open_study):
    with Study.open(open_study) as study:
        first = unblinded_at(study)
        assert first and mark_unblinded(study) == first


def test_judgments_after_unblinding_match_the_store(open_study):
    frame = read_table(open_study, "judgments")
    with Study.open(open_study) as s:
        truth = s.frame(
            "SELECT r.item_id, r.reviewer_id, r.verdict, v.kind, p.topic_id, "
            "p.condition, o.model FROM reviews r JOIN items i USING (item_id) "
            "JOIN outputs o USING (output_id) JOIN prompts p USING (prompt_id) "
            "JOIN reviewers v USING (reviewer_id)"
        )
    assert len(frame) == len(truth) == 24
    merged = frame.merge(truth, on=["item_id", "reviewer_id"], validate="one_to_one")
    assert (merged["verdict_x"] == merged["verdict_y"]).all()
    assert (merged["reviewer_kind"] == merged["kind"]).all()
    for column in ("topic_id", "condition", "model"):
        assert (merged[f"{column}_x"] == merged[f"{column}_y"]).all()


def test_hits_one_row_per_retrieved_work(open_study):
    hits = read_table(open_study, "hits")
    searches = read_table(open_study, "searches")
    assert len(hits) == searches["retrieved_hits"].sum() == 2 * len(searches)
    assert hits.groupby("search_id")["relevant"].sum().eq(1).all()
    assert set(hits.loc[hits["rank"] == 1, "hit_id"].str.endswith("-0")) == {True}


def _read_back(path, fmt, expected: pd.DataFrame) -> pd.DataFrame:
    if fmt == "csv":
        text = {c: str for c in expected.columns if not is_numeric_dtype(expected[c])}
        return pd.read_csv(path, dtype=text, keep_default_na=True)
    if fmt == "jsonl":
        # pandas 2 turns `*_at` columns into timestamps unless told not to (pandas 3 does not,
        # and deprecates the keyword); the file holds text
        dates = {"convert_dates": False} if int(pd.__version__.split(".")[0]) < 3 else {}
        return pd.read_json(path, lines=True, dtype=False, **dates)
    if fmt == "parquet":
        return pd.read_parquet(path)
    from datasets import load_from_disk

    return load_from_disk(str(path)).to_pandas()


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("table", list(TABLES))
def test_round_trip(with_control, table, fmt, tmp_path):
    expected = read_table(with_control, table)
    path = export(with_control, table, fmt, tmp_path / f"{table}{FORMATS[fmt]}")
    back = _read_back(path, fmt, expected)
    assert list(back.columns) == list(expected.columns)
    assert len(back) == len(expected) > 0
    for column in expected.columns:
        want, got = expected[column], back[column]
        assert want.isna().tolist() == got.isna().tolist(), column
        keep = want.notna()
        if not is_numeric_dtype(want):
            assert want[keep].astype(str).tolist() == got[keep].astype(str).tolist(), column
        else:
            assert want[keep].astype(float).tolist() == pytest.approx(
                got[keep].astype(float).tolist()
            ), column


def test_default_path_and_cli(open_study, capsys):
    code, out, err = run_cli(
        capsys, "export", "judgments", "--study", str(open_study), "--format", "parquet"
    )
    assert code == 0, err
    assert (open_study / "exports" / "judgments.parquet").exists()
    assert "judgments.parquet" in out


def test_errors(blind_study, tmp_path):
    with pytest.raises(HarnessError, match="unknown format"):
        export(blind_study, "reviews", "xls")
    with pytest.raises(HarnessError, match="unknown table"):
        read_table(blind_study, "blinding_key")
    with Study.open(blind_study) as s:
        empty = tmp_path / "empty"
        Study.open(empty, create=True).close()
        assert s.count("searches") > 0
    with pytest.raises(HarnessError, match="no searches"):
        export(empty, "searches", "csv")


def test_items_without_an_output_are_kept(open_study, tmp_path):
    path = tmp_path / "s"
    shutil.copytree(open_study, path)
    item = add_item_without_output(path)
    for table in ("items", "judgments"):
        frame = read_table(path, table).set_index("item_id")
        assert item in frame.index, table
        assert frame.loc[item, ["topic_id", "condition", "model"]].isna().all(), table
    assert len(read_table(path, "judgments")) == 25
