"""A study cannot be run out of order, checked through the real entry point in child processes:
`judge --blind` refuses a half-collected study (unless told to review what exists, recorded),
`analyze` refuses to unblind while assigned reviews are outstanding (`--partial` is recorded in
the manifest and the report's lead), `judge --import` after the unblinding refuses new
reviews (unless `--after-unblinding`: stored apart, counted in the report, never analysed),
`status` says which stage is next and refuses a study without a manifest. Every refusal is one
line with exit code 2 and leaves the study folder byte for byte as it was.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from harness.cli import main
from tests.analysis.helpers import report_lead
from tests.cli_run import run_subprocess, run_subprocesses
from tests.judge.fakes import fill_workbook
from tests.plans import primary_only_plan
from tests.servers.openai_server import OpenAIServer

KEY = "sk-test-stage-order-Qz81"
ROSTER = """reviewers:
  - {id: rev-ada, kind: human, expertise: [Computer Science, Mathematics], capacity: 20}
  - {id: rev-bo, kind: human, expertise: [Neuroscience], capacity: 20}
  - {id: rev-cy, kind: human, expertise: [Physics and Astronomy, Engineering], capacity: 20}
"""


def harness(*args: object) -> None:
    main([str(a) for a in args])


def folder_hashes(folder: Path) -> dict[str, str]:
    """SHA-256 of every file under the folder, by relative path. Left out: the command log
    (logs/ records every command, refused ones too) and SQLite's shared-memory index and empty
    write-ahead log, which come and go as connections open and close without holding data."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
        and p.relative_to(folder).parts[0] != "logs"
        and not p.name.endswith("-shm")
        and not (p.name.endswith("-wal") and p.stat().st_size == 0)
    }


def refused(study: Path, *args: object, lines: int = 1) -> str:
    """Run `harness ARGS` in a child process; it must exit 2 with one line (an import's problems:
    one per problem, then the summary) and change nothing."""
    before = folder_hashes(study)
    err = one_line_refusal(run_subprocess(*(str(a) for a in args)), lines)
    assert folder_hashes(study) == before
    return err


def one_line_refusal(done: subprocess.CompletedProcess[str], lines: int = 1) -> str:
    """The stderr of a run that must exit 2 with `lines` lines and no traceback."""
    err = done.stderr.strip()
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert err and "Traceback" not in err, err
    assert err.count("\n") == lines - 1, err
    return err


def ok(*args: object) -> str:
    done = run_subprocess(*(str(a) for a in args))
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    _environment(monkeypatch)


def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("COLUMNS", "200")


def test_a_study_keeps_its_stage_order(tmp_path: Path, env: None, capsys) -> None:
    study = tmp_path / "study"
    harness("generate", "--study", study, "--limit", "4", "--pilot")
    out = ok("status", "--study", study)
    assert f"Next: harness collect --study {study} (12 output(s) pending)" in out
    harness("prereg", "--study", study, "--plan", primary_only_plan(tmp_path))
    with OpenAIServer(api_key=KEY) as server:
        collect = ["collect", "--study", study, "--backend", "openai", "--base-url"]
        harness(*collect, server.base_url, "--model", "gpt-4o-mini")
        # an unfinished collect: four outputs are still missing
        with sqlite3.connect(study / "study.sqlite") as conn:
            conn.execute(
                "DELETE FROM outputs WHERE output_id IN "
                "(SELECT output_id FROM outputs ORDER BY output_id LIMIT 4)"
            )
        conn.close()
        roster = tmp_path / "roster.yaml"
        roster.write_text(ROSTER, encoding="utf-8")
        blind = ["judge", "--blind", "--study", study, "--no-extract", "--no-normalise"]
        blind += ["--reviewers", roster, "--k", "2", "--no-bank-controls", "--same-topic"]
        err = refused(study, *blind)
        assert "4 output(s) are still pending (openai/gpt-4o-mini 4)" in err
        assert "--review-what-exists" in err
        assert "Next: harness collect" in ok("status", "--study", study)

        # told to review what exists, a copy is blinded, and its routing record says so
        half = tmp_path / "half"
        shutil.copytree(study, half)
        ok(*[half if a == study else a for a in blind], "--review-what-exists")
        manifest = json.loads((half / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["routing"]["review_what_exists"] is True
        assert manifest["routing"]["pending_outputs"] == {"openai/gpt-4o-mini": 4}

        harness(*collect, server.base_url, "--model", "gpt-4o-mini")  # resumes the four
    capsys.readouterr()
    ok(*blind)
    manifest = json.loads((study / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["routing"]["review_what_exists"] is False
    out = ok("status", "--study", study)
    # registered before the blinding: prereg.md lacks the commitment, so it is registered again
    assert f"Next: harness prereg --study {study} (rerun it: the plan was registered at " in out
    harness("prereg", "--study", study, "--plan", primary_only_plan(tmp_path))
    out = ok("status", "--study", study)
    assert "Next: reviews: 24 of 24 assigned reviews outstanding" in out

    # one reviewer of three returns a packet before the analysis, one after it
    returned = tmp_path / "returned"
    returned.mkdir()
    for reviewer in ("rev-ada", "rev-bo"):
        fill_workbook(
            study / "packets" / reviewer / f"{reviewer}.xlsx",
            returned / f"{reviewer}.xlsx",
            lambda item: ("not_published", 3, ""),
        )
    harness("judge", "--import", "--study", study, returned / "rev-ada.xlsx")
    capsys.readouterr()

    with sqlite3.connect(study / "study.sqlite") as conn:
        load = dict(conn.execute("SELECT reviewer_id, COUNT(*) FROM assignments GROUP BY 1"))
    conn.close()
    missing = 24 - load["rev-ada"]
    err = refused(study, "analyze", "--study", study)
    bo, cy = f"rev-bo {load['rev-bo']}", f"rev-cy {load['rev-cy']}"
    listed = ", ".join([bo, cy] if load["rev-bo"] >= load["rev-cy"] else [cy, bo])
    assert f"{missing} of 24 assigned reviews are outstanding ({listed})" in err
    assert "--partial" in err
    assert "unblinded_at" not in json.dumps(_meta(study))

    ok("analyze", "--study", study, "--partial")
    manifest = json.loads((study / "manifest.json").read_text(encoding="utf-8"))
    partial = manifest["analysis"]["partial"]
    assert partial["outstanding"] == missing and partial["assigned"] == 24
    assert partial["by_reviewer"] == {"rev-bo": load["rev-bo"], "rev-cy": load["rev-cy"]}
    assert any("--partial" in d for d in manifest["analysis"]["deviations"])
    assert manifest["commands"][-1]["params"]["partial"] is True
    report = study / "report"
    lead = report_lead((report / "report.md").read_text(encoding="utf-8"))
    assert f"DEVIATION: analysed with --partial: {missing} of 24" in lead, lead
    result = json.loads((report / "report.json").read_text(encoding="utf-8"))
    assert any("--partial" in d for d in result["verification"]["deviations"])
    assert "--partial" in (report / "report.html").read_text(encoding="utf-8")
    assert result["design"]["reviews"] == load["rev-ada"]
    assert "Done: unblinded" in ok("status", "--study", study)

    # after the unblinding, a late packet is refused, then stored apart when told
    err = refused(study, "judge", "--import", "--study", study, returned / "rev-bo.xlsx")
    assert "the study was unblinded at" in err and "--after-unblinding" in err
    out = ok("judge", "--import", "--study", study, "--after-unblinding", returned / "rev-bo.xlsx")
    assert "imported after unblinding" in out
    with sqlite3.connect(study / "study.sqlite") as conn:
        marks = dict(
            conn.execute("SELECT reviewer_id, SUM(after_unblinding) FROM reviews GROUP BY 1")
        )
    conn.close()
    assert marks == {"rev-ada": 0, "rev-bo": load["rev-bo"]}

    # a packet that changes a verdict given before the unblinding is refused, nothing stored
    fill_workbook(
        study / "packets" / "rev-ada" / "rev-ada.xlsx",
        returned / "rev-ada-changed.xlsx",
        lambda item: ("published", 3, "https://doi.org/10.1234/x"),
    )
    err = refused(
        study,
        "judge",
        "--import",
        "--study",
        study,
        "--after-unblinding",
        returned / "rev-ada-changed.xlsx",
        lines=2,
    )
    assert "reviewed before the unblinding" in err and "stay as they were" in err

    ok("analyze", "--study", study, "--partial")
    result = json.loads((report / "report.json").read_text(encoding="utf-8"))
    late = load["rev-bo"]
    assert result["design"]["reviews"] == load["rev-ada"]  # the late reviews are not analysed
    assert result["design"]["reviews_after_unblinding"] == late
    note = f"AFTER UNBLINDING: {late} review(s) from 1 reviewer(s)"
    assert any(n.startswith(note) for n in result["notes"])
    assert note in (report / "report.md").read_text(encoding="utf-8")
    manifest = json.loads((study / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["analysis"]["reviews_after_unblinding"] == late
    assert f"{late} review(s) came in after the unblinding" in ok("status", "--study", study)

    # a study whose manifest is gone: status says so on one line, as verify does
    (half / "manifest.json").unlink()
    err = refused(half, "status", "--study", half)
    assert "manifest" in err


def _meta(study: Path) -> dict[str, str]:
    with sqlite3.connect(study / "study.sqlite") as conn:
        found = dict(conn.execute("SELECT key, value FROM meta"))
    conn.close()
    return found


BAD_SETTINGS = [
    ("collect", "--model", "bogus/x"),
    ("collect", "--model", "openai/gpt-4o-mini", "--model-arg", "nonsense"),
    ("geometry", "probe", "--test", "bogus"),
    ("judge", "--blind", "--reviewers", "{tmp}/missing.yaml"),
    ("judge", "--blind", "--reviewers", "{roster}", "--plan", "{tmp}/missing.yaml"),
    ("judge", "--blind", "--reviewers", "{roster}", "--controls", "{tmp}/missing.yaml"),
    ("judge", "--blind", "--reviewers", "{roster}", "--cutoff", "2020-13-45"),
    ("judge", "--blind", "--reviewers", "{roster}", "--backend", "bogus"),
    ("judge", "--auto", "--source", "bogus"),
    ("prereg", "--plan", "{tmp}/missing.yaml"),
    ("analyze", "--plan", "{tmp}/missing.yaml"),
    ("run", "--model", "bogus/x", "--limit", "1", "--pilot"),
    ("run", "--reviewers", "{tmp}/missing.yaml", "--limit", "1", "--pilot"),
    ("run", "--config", "{tmp}/missing.yaml"),
]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bad")
    main(["generate", "--study", str(root / "study"), "--limit", "2", "--pilot"])
    (root / "roster.yaml").write_text(ROSTER, encoding="utf-8")
    return root


def _bad_command(root: Path, args: tuple[str, ...]) -> list[str]:
    filled = [a.format(tmp=root, roster=root / "roster.yaml") for a in args]
    at = 2 if filled[0] == "geometry" else 1
    return [*filled[:at], "--study", str(root / "study"), *filled[at:]]


@pytest.fixture(scope="module")
def bad_runs(
    generated: Path,
) -> tuple[bool, dict[tuple[str, ...], subprocess.CompletedProcess[str]]]:
    """BAD_SETTINGS on the generated study, in one child process (`run_subprocesses`): whether
    the study folder is byte for byte as it was after all of them, and each one's run."""
    study = generated / "study"
    before = folder_hashes(study)
    with pytest.MonkeyPatch.context() as patch:
        _environment(patch)
        done = run_subprocesses(*(_bad_command(generated, args) for args in BAD_SETTINGS))
    return folder_hashes(study) == before, dict(zip(BAD_SETTINGS, done, strict=True))


@pytest.mark.parametrize("args", BAD_SETTINGS, ids=lambda a: " ".join(a)[:40])
def test_a_bad_setting_is_refused_before_anything_is_written(
    bad_runs: tuple[bool, dict[tuple[str, ...], subprocess.CompletedProcess[str]]],
    args: tuple[str, ...],
) -> None:
    unchanged, runs = bad_runs
    err = one_line_refusal(runs[args])
    assert "error" in err.lower()
    assert unchanged


def test_a_run_with_a_bad_model_makes_no_study_folder(tmp_path: Path, env: None) -> None:
    done = run_subprocess(
        "run", "--study", str(tmp_path / "r1"), "--model", "bogus/x", "--limit", "1", "--pilot"
    )
    assert done.returncode == 2 and "unknown provider 'bogus'" in done.stderr
    assert not (tmp_path / "r1").exists()
