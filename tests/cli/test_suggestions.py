"""Names written as other tools write them get the near name to write, through the real entry
point: `PROVIDER:MODEL` (`openai:gpt-4o-mini`) is read as the provider string `openai/...`, in
`collect --model` and in a roster's `llm:` method, and a misspelt roster method gets the method
it is near. Each is refused in one line with exit 2 before the study is touched. The refusals
share one child process (`run_subprocesses`: one start-up for all of them)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cli_run import run_subprocesses
from tests.collection.conftest import make_study

COLONS = [
    ("openai:gpt-4o-mini", "openai/gpt-4o-mini"),
    ("vllm:Qwen/Qwen2.5-7B-Instruct", "vllm/Qwen/Qwen2.5-7B-Instruct"),
    ("ollama:llama3.1:8b", "ollama/llama3.1:8b"),  # the tag keeps its colon
    ("OpenAI:gpt-4o", "openai/gpt-4o"),
    ("opnai:gpt-4o", "openai/gpt-4o"),
]
METHODS = [
    ("retreival", "unknown method 'retreival': did you mean `method: retrieval`?"),
    ("retrieval-dens", "did you mean `method: retrieval-dense`?"),
    ("lm:openai/gpt-4o-mini", "did you mean `method: llm:openai/gpt-4o-mini`?"),
    ("llm:openai:gpt-4o-mini", "did you mean `method: llm:openai/gpt-4o-mini`?"),
]
FAR = "bm25"  # a method near no method


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _roster(path: Path, method: str) -> Path:
    """A roster of one human and one automated reviewer of `method` (only the automated one
    where the method is FAR)."""
    human = "  - {id: rev-ada, kind: human, expertise: [Computer Science], capacity: 10}\n"
    path.write_text(
        "reviewers:\n"
        + ("" if method == FAR else human)
        + f"  - {{id: bot, kind: automated, method: '{method}', capacity: 10}}\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory,
) -> tuple[bool, dict[str, tuple[Path | None, subprocess.CompletedProcess[str]]]]:
    """Every refusal on one study, in one child process: whether the study is byte for byte as
    it was after all of them, and each given name's roster (None for --model) and run."""
    folder = tmp_path_factory.mktemp("suggestions")
    study = make_study(folder / "study", 2)
    methods = [method for method, _ in METHODS] + [FAR]
    rosters = {m: _roster(folder / f"roster-{n}.yaml", m) for n, m in enumerate(methods)}
    commands = [["collect", "--study", str(study), "--model", given] for given, _ in COLONS]
    blind = ["judge", "--blind", "--study", str(study), "--reviewers"]
    commands += [[*blind, str(roster)] for roster in rosters.values()]
    before = snapshot(study)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-test-suggestions-0001")
        patch.setenv("COLUMNS", "250")
        done = run_subprocesses(*commands)
    names = [given for given, _ in COLONS] + list(rosters)
    paths: list[Path | None] = [None] * len(COLONS) + list(rosters.values())
    return snapshot(study) == before, {
        name: (path, run) for name, path, run in zip(names, paths, done, strict=True)
    }


@pytest.mark.parametrize(("given", "meant"), COLONS)
def test_a_colon_for_the_slash_gets_the_provider_string(runs, given: str, meant: str):
    unchanged, by_name = runs
    done = by_name[given][1]
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert f"unknown model {given!r}: " in line
    assert f"did you mean `--model {meant}`?" in line
    assert f"/{given}" not in line  # never the provider put in front of the whole text
    assert unchanged


@pytest.mark.parametrize(("method", "message"), METHODS)
def test_a_roster_s_misspelt_method_gets_the_near_one(runs, method: str, message: str):
    unchanged, by_name = runs
    roster, done = by_name[method]
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: {roster}:3: ") and message in line
    assert unchanged


def test_a_method_near_nothing_gets_the_choices_only(runs):
    done = runs[1][FAR][1]
    assert done.returncode == 2
    assert "did you mean" not in done.stderr
    assert "automated reviewers need method: retrieval, retrieval-dense" in done.stderr
