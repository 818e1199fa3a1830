"""The first hour of a real study, through the real entry point in child processes: a study
folder where nothing has run is refused by `status` and `verify` with the way to start; a
roster's `llm:` model is read when the roster is loaded, so a bare name is refused before
anything is written; `collect --model NAME` is refused before the study (and its log) is
opened; the controls export names the model that wrote each control's text.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.judge.routing.roster import load_roster
from harness.study import Study
from tests.cli_run import run_subprocess
from tests.judge.conftest import fill_study
from tests.test_stage_order import folder_hashes

BARE_NAME = """reviewers:
  - {id: rev-ada, kind: human, expertise: [Computer Science], capacity: 20}
  - id: bot-1
    kind: automated
    method: llm:gpt-4o-mini
    capacity: 20
"""


def every_file(folder: Path) -> dict[str, str]:
    """SHA-256 of every file under the folder (logs and SQLite's side files included)."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def refused(folder: Path, *args: str, hashes: Callable[[Path], dict[str, str]] = every_file) -> str:
    """`harness ARGS` in a child process: exit 2, one line, and `hashes` of the folder as before."""
    before = hashes(folder)
    done = run_subprocess(*args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    err = done.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    assert hashes(folder) == before
    return err


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-first-hour")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture
def study(tmp_path: Path) -> Path:
    fill_study(tmp_path / "study", n_topics=2).close()
    return tmp_path / "study"


def test_a_folder_where_nothing_has_run_is_not_a_study_yet(tmp_path: Path, env: None) -> None:
    bare = tmp_path / "bare"
    Study.open(bare, create=True).close()
    for command in ("status", "verify"):
        done = run_subprocess(command, "--study", str(bare))
        assert done.returncode == 2 and done.stdout == "", done.stdout
        assert done.stderr.strip().splitlines() == [
            f"error: {bare}: nothing has run in this study yet (no manifest, no prompts); "
            f"start one with `harness generate --study {bare}` or `harness run --study {bare}`"
        ]
        missing = tmp_path / "missing"
        done = run_subprocess(command, "--study", str(missing))
        assert done.returncode == 2 and "no study here" in done.stderr
        assert f"harness generate --study {missing}" in done.stderr
        assert not missing.exists()


def test_collect_refuses_a_bare_model_name_before_the_study_is_opened(
    study: Path, env: None
) -> None:
    err = refused(study, "collect", "--study", str(study), "--model", "gpt-4o")
    assert "unknown model 'gpt-4o'" in err and "--model openai/gpt-4o" in err
    assert not (study / "logs").exists()  # not even the command log was started


@pytest.mark.parametrize("command", [["collect"], ["judge", "--blind"]])
def test_an_empty_model_is_refused_in_one_line(study: Path, env: None, command: list[str]) -> None:
    err = refused(study, *command, "--study", str(study), "--model", "")
    assert err == (
        "error: model: the model is empty: name it by a provider string, e.g. "
        "--model openai/gpt-4o-mini or --model local (the embedded model)"
    )


def test_collect_still_reads_a_bare_name_of_the_studys_own_model(study: Path) -> None:
    from harness.cli._model_names import check_model_names

    with Study.open(study) as s, s.transaction() as conn:
        conn.execute(
            "INSERT OR REPLACE INTO meta VALUES ('collect_models', ?)",
            ('{"vllm/qwen-7b": {"backend": "openai", "model": "qwen-7b"}}',),
        )
    check_model_names(study, ["qwen-7b"], None)  # resumes vllm/qwen-7b, as collect does
    with pytest.raises(HarnessError, match="openai/gpt-4o"):
        check_model_names(study, ["qwen-7b", "gpt-4o"], None)


def test_a_roster_with_a_bare_llm_model_is_refused_when_loaded(
    study: Path, tmp_path: Path, env: None
) -> None:
    roster = tmp_path / "roster.yaml"
    roster.write_text(BARE_NAME, encoding="utf-8")
    # refused before the writer lock is taken and the command log started: nothing changes
    blind = ["judge", "--blind", "--study", str(study), "--reviewers", str(roster)]
    blind += ["--no-extract", "--no-normalise", "--no-bank-controls"]
    err = refused(study, *blind, hashes=folder_hashes)
    assert err == (
        f"error: {roster}:3: method: reviewer 'bot-1' (method: llm:gpt-4o-mini): unknown model "
        "'gpt-4o-mini': name it by a provider string, e.g. method: llm:openai/gpt-4o-mini "
        "(providers: local, openai, vllm, llamacpp, ollama, openai-compatible)"
    )
    run = tmp_path / "run"
    done = run_subprocess("run", "--study", str(run), "--reviewers", str(roster), "--limit", "1")
    assert done.returncode == 2 and "llm:openai/gpt-4o-mini" in done.stderr
    assert not run.exists()


def test_shipped_rosters_and_older_spellings_load(tmp_path: Path, capsys) -> None:
    from harness.defaults import materials_dir

    for path in sorted(materials_dir("judging").glob("roster*.yaml")):
        assert load_roster(path).reviewers
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"")
    older = tmp_path / "older.yaml"
    older.write_text(
        BARE_NAME.replace("llm:gpt-4o-mini", f"llm:{model}").replace("bot-1", "bot-2"),
        encoding="utf-8",
    )
    assert load_roster(older).get("bot-2") is not None
    note = capsys.readouterr().err
    assert f"method: llm:local/{model}" in note and "deprecated" in note
    for method in ("llm:local", "llm:openai/gpt-4o-mini", "llm:vllm/Qwen/Qwen2.5-7B-Instruct"):
        fine = tmp_path / "fine.yaml"
        fine.write_text(BARE_NAME.replace("llm:gpt-4o-mini", method), encoding="utf-8")
        assert load_roster(fine).get("bot-1").method == method  # type: ignore[union-attr]


@pytest.mark.slow  # blinds a study with controls (about a minute)
def test_the_controls_export_names_the_model_that_wrote_each_text(
    tmp_path: Path, env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import csv

    from harness.judge.controls import control_sources as K
    from harness.study.unblinding import mark_unblinded
    from tests.judge import controls_study as C

    # a second model of the study: the control texts are spread over both
    made: dict[str, str] = {}
    real = K.make_texts

    def recording(study: Study, batch: list[K.Candidate], seed: int, into: K.Made) -> list[str]:
        errors = real(study, batch, seed, into)
        made.update(into.model_of)
        return errors

    monkeypatch.setattr(K, "make_texts", recording)
    monkeypatch.setattr(C, "fill_study", _two_model_study)
    path = C.make_controlled(tmp_path)
    with Study.open(path) as s:
        assert s.count("controls") == len(made) + 1  # one file control brought its own text
        assert len(set(made.values())) == 2  # both models wrote some
        stored = dict(s.conn.execute("SELECT control_id, writer_model FROM controls"))
        assert {c: m for c, m in stored.items() if m is not None} == made
        mark_unblinded(s)
    done = run_subprocess("export", "controls", "--study", str(path))
    assert done.returncode == 0, done.stderr
    with (path / "exports" / "controls.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    header = list(rows[0])
    assert header[header.index("source") + 1] == "writer_model"
    assert {r["control_id"]: r["writer_model"] for r in rows} == {
        **dict.fromkeys((r["control_id"] for r in rows), ""),
        **made,
    }


def _two_model_study(path: Path, **kwargs: object) -> Study:
    study = fill_study(path, **kwargs)  # type: ignore[arg-type]
    with study.transaction() as conn:
        conn.execute(
            "INSERT INTO outputs (output_id, prompt_id, sample, status, backend, model, "
            "model_key, params, text, started_at, finished_at) SELECT output_id || 'b', "
            "prompt_id, sample, status, backend, 'Other-1B', 'local/Other-1B', params, text, "
            "started_at, finished_at FROM outputs WHERE status = 'ok'"
        )
    return study


def test_a_control_without_a_recorded_writer_exports_an_empty_writer(tmp_path: Path) -> None:
    """A control stored before writers were recorded (or a file control's own text)."""
    from harness.export import read_table
    from harness.study.unblinding import mark_unblinded

    study = fill_study(tmp_path / "s", n_topics=1)
    with study.transaction() as conn:
        conn.execute(
            "INSERT INTO controls (control_id, statement, text, expected, kind, source, "
            "evidence) VALUES ('C-1', 'a b', 'text', 'published', 'cross', 'bank', '{}')"
        )
    mark_unblinded(study)
    study.close()
    frame = read_table(tmp_path / "s", "controls")
    assert list(frame["control_id"]) == ["C-1"] and frame["writer_model"].isna().all()
    shutil.rmtree(tmp_path / "s")
