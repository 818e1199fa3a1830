"""Study files: validation with file, line and field; paths relative to the file; flags override
the file and the overrides are recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.materials.study_file import load_study_file
from harness.pipeline.run_settings import settings
from tests.cli_run import run_subprocess

FLAGS = dict.fromkeys(
    [
        "pilot",
        "limit",
        "subset",
        "subset_seed",
        "topics",
        "seed",
        "model",
        "configurations",
        "samples",
        "max_tokens",
        "extract",
        "normalise",
        "reviewers",
        "probe",
        "cutoff",
        "controls",
    ]
)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_valid_file_gives_run_settings_and_its_record(tmp_path):
    (tmp_path / "plan.yaml").write_text("x", encoding="utf-8")
    path = _write(
        tmp_path,
        "version: 1\nlimit: 60\nseed: 7\ncutoff: 2015-01-01\n"
        "plan: plan.yaml\nsamples: 2\nmodels:\n  - model: local\n"
        "    max_tokens: 40\n",
    )
    out = settings(path, FLAGS)
    assert (out.limit, out.seed, out.cutoff, out.samples) == (60, 7, "2015-01-01", 2)
    assert out.model_args == ("local@max_tokens=40",) and out.models == ("local",)
    assert out.plan == tmp_path / "plan.yaml"
    assert out.study_file["sha256"] == load_study_file(path).sha256
    assert out.study_file["overrides"] == {}
    flagged = settings(path, FLAGS | {"seed": 3, "controls": False})
    assert flagged.seed == 3 and flagged.controls is False
    assert flagged.study_file["overrides"] == {"controls": False, "seed": 3}


def test_no_file_keeps_the_demo_defaults():
    out = settings(None, FLAGS)
    assert out.cutoff == "1985-01-01" and out.samples == 1 and out.study_file is None


@pytest.mark.parametrize(
    ("text", "row", "column", "words"),
    [
        ("version: 1\nsampels: 2\n", 2, "sampels", "unknown field"),
        ("version: 1\ncutoff: 2015-13-01\n", 2, "cutoff", "YYYY-MM-DD"),
        (
            "version: 1\nmodels:\n  - model: local\n    samples: 0\n",
            4,
            "models.0.samples",
            "greater than or equal to 1",
        ),
        ("version: 2\n", 1, "version", "version 1"),
        ("version: 1\ntopics: missing.yaml\n", 2, "topics", "not found"),
        ("version: 1\nmodels: [\n", None, None, "invalid YAML"),
    ],
)
def test_every_bad_entry_names_file_line_and_field(tmp_path, text, row, column, words):
    path = _write(tmp_path, text)
    with pytest.raises(HarnessError) as caught:
        load_study_file(path)
    error = caught.value
    assert words in str(error) and str(path) in str(error)
    if row is not None:
        assert error.row == row and error.column == column


def test_several_models_become_provider_strings_and_model_arguments(tmp_path):
    (tmp_path / "m.gguf").write_text("x", encoding="utf-8")
    path = _write(
        tmp_path,
        "version: 1\nmodels:\n  - model: openai/gpt-4o-mini\n"
        "    temperature: 0.7\n    args: {token_param: max_completion_tokens}\n"
        "  - model: local/m.gguf\n    samples: 2\n",
    )
    out = settings(path, FLAGS)
    local = f"local/{tmp_path / 'm.gguf'}"
    assert out.models == ("openai/gpt-4o-mini", local)
    assert out.model == str(tmp_path / "m.gguf")  # the blind steps and probe use it
    assert out.model_args == (
        "openai/gpt-4o-mini@temperature=0.7",
        "openai/gpt-4o-mini@token_param=max_completion_tokens",
        f"{local}@samples=2",
    )


def test_replicas_of_a_model_become_one_base_url_argument(tmp_path):
    path = _write(
        tmp_path,
        "version: 1\nmodels:\n  - model: vllm/qwen\n    base_urls:\n"
        "      - http://gpu1:8000/v1\n      - http://gpu2:8000/v1\n",
    )
    out = settings(path, FLAGS)
    assert out.model_args == ("vllm/qwen@base_url=http://gpu1:8000/v1,http://gpu2:8000/v1",)
    both = _write(
        tmp_path,
        "version: 1\nmodels:\n  - model: vllm/qwen\n    base_url: http://gpu1:8000/v1\n"
        "    base_urls: [http://gpu2:8000/v1]\n",
    )
    with pytest.raises(HarnessError, match="not both") as caught:
        load_study_file(both)
    assert caught.value.row == 3 and caught.value.column == "models.0"


@pytest.mark.parametrize(
    ("models", "words"),
    [
        ("  - model: nowhere/x\n", "unknown provider"),
        ("  - model: local\n  - model: local\n", "listed twice"),
    ],
)
def test_bad_model_entries_name_the_entry(tmp_path, models, words):
    path = _write(tmp_path, "version: 1\nmodels:\n" + models)
    with pytest.raises(HarnessError, match=words) as caught:
        settings(path, FLAGS)
    assert caught.value.column.startswith("models.")


def test_labelled_entries_are_configurations_of_one_model(tmp_path):
    path = _write(
        tmp_path,
        "version: 1\nmodels:\n  - model: local\n    label: sampled\n"
        "  - model: local\n    label: greedy\n    temperature: 0\n",
    )
    out = settings(path, FLAGS)
    assert out.models == ("local#sampled", "local#greedy")
    assert out.model_args == ("local#greedy@temperature=0.0",) and out.model is None


@pytest.mark.parametrize(
    ("models", "row", "column", "words"),
    [
        (
            "  - model: local\n    label: a\n  - model: local\n    label: a\n",
            6,
            "models.1.label",
            "model local#a is listed twice (give each configuration",
        ),
        ("  - model: local\n  - model: local\n", 4, "models.1.model", "listed twice"),
        ("  - model: local\n    label: 'x:y'\n", 4, "models.0.label", "bad configuration label"),
        ("  - model: local#\n", 3, "models.0.model", "bad configuration label ''"),
    ],
)
def test_bad_labels_name_file_line_and_field(tmp_path, models, row, column, words):
    path = _write(tmp_path, "version: 1\nmodels:\n" + models)
    with pytest.raises(HarnessError) as caught:
        load_study_file(path)
    assert words in str(caught.value)
    assert (caught.value.row, caught.value.column) == (row, column)
    assert str(caught.value).startswith(f"{path}:{row}: {column}: ")


def test_cli_reports_a_bad_study_file_in_one_line_and_writes_nothing(tmp_path):
    path = _write(tmp_path, "version: 1\nsampels: 2\n")
    done = run_subprocess("run", "--study", str(tmp_path / "s"), "--config", str(path))
    assert done.returncode == 2
    assert "unknown field" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "s").exists()


def test_the_documented_example_is_valid(tmp_path):
    doc = (Path(__file__).parents[1] / "docs" / "study-file.md").read_text(encoding="utf-8")
    example = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("topics/bank.yaml", "judging/roster.demo.yaml", "analysis/plan.yaml"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("x", encoding="utf-8")
    config = load_study_file(_write(docs, example)).config
    assert config.subset == 60 and config.models[0].model == "local"
    assert [m.label for m in config.models] == ["sampled", "greedy"]


ROOT = Path(__file__).parents[1]


def test_the_shipped_example_is_the_documented_one_and_loads_from_anywhere(monkeypatch, tmp_path):
    doc = (ROOT / "docs" / "study-file.md").read_text(encoding="utf-8")
    example = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    shipped = (ROOT / "examples" / "study.yaml").read_text(encoding="utf-8")
    assert example in shipped
    monkeypatch.chdir(tmp_path)  # paths resolve against the file, not the working folder
    loaded = load_study_file(ROOT / "examples" / "study.yaml")
    assert loaded.resolve(loaded.config.topics) == ROOT / "examples" / ".." / "topics" / "bank.yaml"
    assert loaded.resolve(loaded.config.topics).exists()


def test_a_missing_path_says_paths_are_relative_to_the_file(tmp_path):
    path = _write(tmp_path, "version: 1\ntopics: topics/bank.yaml\n")
    done = run_subprocess("run", "--study", str(tmp_path / "s"), "--config", str(path))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "relative to the file's own folder" in done.stderr
    assert not (tmp_path / "s").exists()


def test_power_reads_the_shipped_example_from_the_root():
    done = run_subprocess("power", "--config", str(ROOT / "examples" / "study.yaml"))
    assert done.returncode == 0, done.stderr
