"""`harness geometry ...` end to end; the real embedded model in two slow tests."""

from __future__ import annotations

import pytest

from harness.study import Study
from tests.cli_run import run_cli as cli
from tests.geometry.conftest import make_study
from tests.geometry.seed_programs import SEED_FIELDS_OUTPUT, SEED_SCALING_OUTPUT


def test_scaling_prints_the_seed_table(capsys, tmp_path):
    code, out, _ = cli(capsys, "geometry", "scaling")
    assert code == 0 and out.strip() == SEED_SCALING_OUTPUT
    code, out, _ = cli(
        capsys,
        "geometry",
        "scaling",
        "--trials",
        "5",
        "--dims",
        "8,32",
        "--plot",
        "--out",
        str(tmp_path / "s.png"),
    )
    assert code == 0 and out.count("d_k =") == 2 and (tmp_path / "s.png").exists()


def test_fields_prints_the_seed_report(capsys):
    code, out, _ = cli(capsys, "geometry", "fields")
    assert code == 0 and out.strip() == SEED_FIELDS_OUTPUT
    code, out, _ = cli(capsys, "geometry", "fields", "--fields", "optics,law", "--dims", "6")
    assert code == 0 and "query spanning optics + law" in out and out.count("\n") == 3


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (["scaling", "--dims", "16,x"], "--dims: "),
        (["scaling", "--keys", "0"], "keys: "),
        (["fields", "--fields", "one"], "fields: "),
        (["heatmap", "The cat", "--heads", "1,2,3"], "--heads: "),
    ],
)
def test_bad_options_give_one_line_and_exit_2(capsys, args, where):
    code, out, err = cli(capsys, "geometry", *args)
    assert code == 2 and err.count("\n") == 1 and where in err


def test_probe_without_a_study_is_a_user_error(capsys, tmp_path):
    code, _, err = cli(capsys, "geometry", "probe", "--study", str(tmp_path / "none"))
    assert code == 2 and "no study here" in err


@pytest.mark.slow
def test_probe_with_the_embedded_model(capsys, tmp_path):
    folder = make_study(tmp_path / "s", n_topics=2)
    code, out, err = cli(capsys, "geometry", "probe", "--study", str(folder))
    assert code == 0, err
    assert "6 prompts measured" in out and "Toy-model prediction" in out
    assert out.count("\n") == 1 + 2 + 30 + 1  # run line, header, 30 layers, verdict
    with Study.open(folder) as study:
        assert study.count("geometry") == 6 * 30 * (9 + 1)
    code, out, _ = cli(capsys, "geometry", "probe", "--study", str(folder))
    assert code == 0 and "0 prompts measured, 6 already done" in out


@pytest.mark.slow
def test_heatmap_with_the_embedded_model(capsys, tmp_path):
    out_file = tmp_path / "cat.png"
    code, out, err = cli(
        capsys,
        "geometry",
        "heatmap",
        "The cat sat on the mat",
        "--layer",
        "3",
        "--out",
        str(out_file),
    )
    assert code == 0, err
    assert "SmolLM2-135M-Instruct, 6 tokens" in out
    assert out_file.read_bytes()[:4] == b"\x89PNG"
