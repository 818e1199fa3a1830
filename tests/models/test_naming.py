"""One way to name a model: provider strings in every command, the older spellings with a
deprecation line, and a bare name refused with the provider string to write (real CLI)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.models.providers import (
    ModelSpec,
    closest_name,
    edit_distance,
    model_flags,
    resolve_model,
)
from tests.cli_run import CLI, run_subprocess


def snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.parent.name != "logs"  # the command's log line
    }


def test_a_bare_name_is_refused_with_the_provider_string_to_write():
    with pytest.raises(HarnessError, match="e.g. --model openai/gpt-4o ") as error:
        resolve_model("gpt-4o")
    assert "\n" not in str(error.value)
    with pytest.raises(HarnessError, match="e.g. --model vllm/Qwen/Qwen2.5-7B"):
        resolve_model("Qwen/Qwen2.5-7B")


def test_older_spellings_still_work_with_one_deprecation_line(capsys, tmp_path):
    assert resolve_model("m1", backend="openai") == ModelSpec("openai", "m1")
    assert model_flags(None, "local") == model_flags(None, None) == ModelSpec("local", None)
    weights = tmp_path / "w.gguf"
    weights.write_bytes(b"")
    assert resolve_model(str(weights)) == ModelSpec("local", str(weights))
    err = capsys.readouterr().err
    assert "note: --backend openai --model m1 is deprecated; write --model openai/m1\n" in err
    assert f"write --model local/{weights}" in err
    assert resolve_model("openai/m1") == ModelSpec("openai", "m1")
    assert capsys.readouterr().err == ""  # a provider string is silent


def test_collect_with_a_bare_name_suggests_the_provider_string(tmp_path):
    study = tmp_path / "s"
    done = run_subprocess("generate", "--study", str(study), "--limit", "1", "--pilot")
    assert done.returncode == 0, done.stderr
    before = snapshot(study)
    done = run_subprocess("collect", "--study", str(study), "--model", "gpt-4o")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "unknown model 'gpt-4o'" in done.stderr and "--model openai/gpt-4o" in done.stderr
    assert snapshot(study) == before


PROVIDER_LIST = "(providers: local, openai, vllm, llamacpp, ollama, openai-compatible)"


@pytest.mark.parametrize(
    ("model", "line"),
    [
        (
            "openai-compatable/stub",
            "unknown provider 'openai-compatable' in 'openai-compatable/stub' (and no local path "
            f"'openai-compatable/stub'): did you mean `openai-compatible/stub`? {PROVIDER_LIST}",
        ),
        ("loacl", f"unknown model 'loacl': did you mean `local`? {PROVIDER_LIST}"),
        (  # nothing near: the provider string to write
            "gpt-4o",
            "unknown model 'gpt-4o': name it by a provider string, e.g. --model openai/gpt-4o "
            + PROVIDER_LIST,
        ),
    ],
)
def test_collect_with_a_mistyped_model_suggests_the_nearest_provider(tmp_path, model, line):
    study = tmp_path / "s"
    done = run_subprocess("collect", "--study", str(study), "--model", model)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [f"error: model: {line}"]
    assert not study.exists()  # refused before anything is written


def test_the_nearest_name_is_a_typo_away_or_none():
    assert edit_distance("loacl", "local") == 1  # a swap is one edit
    assert edit_distance("openai-compatable", "openai-compatible") == 1
    assert edit_distance("", "vllm") == 4
    names = ("local", "openai", "vllm", "llamacpp", "ollama", "openai-compatible")
    assert closest_name("OpenAI", names) == "openai"
    assert closest_name("llama.cpp", names) == "llamacpp"
    assert closest_name("vlm", names) == "vllm"
    for far in ("Qwen", "openai-community", "gpt-4o", "meta-llama", "lm"):
        assert closest_name(far, names) is None, far
    # the resolver's own words for the other spellings
    with pytest.raises(HarnessError, match="did you mean `vllm/Qwen/Qwen2.5-7B`"):
        resolve_model("vlm/Qwen/Qwen2.5-7B")
    with pytest.raises(HarnessError, match="did you mean `ollama/NAME`"):
        resolve_model("olama")
    with pytest.raises(HarnessError, match="'vllm' names a provider but no model"):
        resolve_model("vllm")
    with pytest.raises(HarnessError, match="unknown backend 'vlm': did you mean `vllm`"):
        resolve_model("m", backend="vlm")


def test_judge_auto_names_the_reviewer_and_the_fix(tmp_path):
    """README step 7 with a roster whose llm reviewer has a bare model name."""
    from tests.literature.study import build_study

    build_study(tmp_path / "s", [("lex", "retrieval"), ("auto-llm", "llm:gpt-4o-mini")]).close()
    before = snapshot(tmp_path / "s")
    done = run_subprocess("judge", "--auto", "--study", str(tmp_path / "s"), "--source", "local")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "reviewer 'auto-llm'" in done.stderr
    assert "method: llm:openai/gpt-4o-mini" in done.stderr
    assert snapshot(tmp_path / "s") == before


def test_judge_auto_with_a_provider_string_names_the_reviewer_when_it_cannot_open(tmp_path):
    from tests.literature.study import build_study

    roster = [("auto-llm", "llm:openai/gpt-4o-mini")]
    build_study(tmp_path / "s", roster).close()
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    done = subprocess.run(
        [*CLI, "judge", "--auto", "--study", str(tmp_path / "s"), "--source", "local"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert "reviewer 'auto-llm'" in last and "OPENAI_API_KEY" in last
