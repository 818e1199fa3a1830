"""Names written as other tools write them get the near name to write, through the real entry
point: `PROVIDER:MODEL` (`openai:gpt-4o-mini`) is read as the provider string `openai/...`, in
`collect --model` and in a roster's `llm:` method, and a misspelt roster method gets the method
it is near. Each is refused in one line with exit 2 before the study is touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_run import run_subprocess
from tests.collection.conftest import make_study


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-suggestions-0001")
    monkeypatch.setenv("COLUMNS", "250")
    return make_study(tmp_path / "study", 2)


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("openai:gpt-4o-mini", "openai/gpt-4o-mini"),
        ("vllm:Qwen/Qwen2.5-7B-Instruct", "vllm/Qwen/Qwen2.5-7B-Instruct"),
        ("ollama:llama3.1:8b", "ollama/llama3.1:8b"),  # the tag keeps its colon
        ("OpenAI:gpt-4o", "openai/gpt-4o"),
        ("opnai:gpt-4o", "openai/gpt-4o"),
    ],
)
def test_a_colon_for_the_slash_gets_the_provider_string(study: Path, given: str, meant: str):
    before = snapshot(study)
    done = run_subprocess("collect", "--study", str(study), "--model", given)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert f"unknown model {given!r}: " in line
    assert f"did you mean `--model {meant}`?" in line
    assert f"/{given}" not in line  # never the provider put in front of the whole text
    assert snapshot(study) == before


@pytest.mark.parametrize(
    ("method", "message"),
    [
        ("retreival", "unknown method 'retreival': did you mean `method: retrieval`?"),
        ("retrieval-dens", "did you mean `method: retrieval-dense`?"),
        ("lm:openai/gpt-4o-mini", "did you mean `method: llm:openai/gpt-4o-mini`?"),
        ("llm:openai:gpt-4o-mini", "did you mean `method: llm:openai/gpt-4o-mini`?"),
    ],
)
def test_a_roster_s_misspelt_method_gets_the_near_one(
    study: Path, tmp_path: Path, method: str, message: str
):
    roster = tmp_path / "roster.yaml"
    roster.write_text(
        "reviewers:\n"
        "  - {id: rev-ada, kind: human, expertise: [Computer Science], capacity: 10}\n"
        f"  - {{id: bot, kind: automated, method: '{method}', capacity: 10}}\n",
        encoding="utf-8",
    )
    before = snapshot(study)
    done = run_subprocess("judge", "--blind", "--study", str(study), "--reviewers", str(roster))
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: {roster}:3: ") and message in line
    assert snapshot(study) == before


def test_a_method_near_nothing_gets_the_choices_only(study: Path, tmp_path: Path):
    roster = tmp_path / "roster.yaml"
    roster.write_text(
        "reviewers:\n  - {id: bot, kind: automated, method: bm25, capacity: 10}\n",
        encoding="utf-8",
    )
    done = run_subprocess("judge", "--blind", "--study", str(study), "--reviewers", str(roster))
    assert done.returncode == 2
    assert "did you mean" not in done.stderr
    assert "automated reviewers need method: retrieval, retrieval-dense" in done.stderr
