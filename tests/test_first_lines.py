"""No command starts its output with a blank line: every command's help, and the normal and
error paths of each stage on one small study, run through the real entry point, each in its own
process with its own stdout and stderr (forked from one process that imported the CLI once, so
the survey takes seconds, not a start-up per command).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.judge.fakes import fill_workbook
from tests.plans import primary_only_plan
from tests.servers.openai_server import OpenAIServer

KEY = "sk-test-first-lines-Lw27"
ROSTER = """reviewers:
  - {id: rev-ada, kind: human, expertise: [Computer Science, Mathematics], capacity: 20}
  - {id: rev-bo, kind: human, expertise: [Neuroscience], capacity: 20}
"""

#: Runs each command of a JSON list [[name, argv], ...] from stdin in a forked child whose
#: stdout and stderr are the files NAME.out and NAME.err; prints the exit codes as JSON.
DRIVER = """
import json, os, sys, traceback
from harness.cli import main

codes = []
for name, argv in json.load(sys.stdin):
    pid = os.fork()
    if pid == 0:
        for fd, suffix in ((1, ".out"), (2, ".err")):
            os.dup2(os.open(name + suffix, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
        code = 0
        try:
            main(argv)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (stop.code is not None)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    codes.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
print(json.dumps(codes))
"""

HELP = [
    [],
    ["--help"],
    ["--version"],
    *[
        [*cmd, "--help"]
        for cmd in (
            ["generate"],
            ["collect"],
            ["judge"],
            ["analyze"],
            ["prereg"],
            ["power"],
            ["search"],
            ["run"],
            ["status"],
            ["verify"],
            ["explore"],
            ["export"],
            *(["export", t] for t in ("prompts", "outputs", "items", "controls")),
            ["geometry"],
            *(["geometry", c] for c in ("scaling", "fields", "heatmap", "probe")),
            ["topics"],
            ["topics", "check"],
            ["topics", "draft"],
        )
    ],
]


def survey(folder: Path, commands: list[list[str]]) -> list[tuple[list[str], int, str, str]]:
    """(argv, exit code, stdout, stderr) of each `harness ARGV`, run one after another."""
    start = len(list(folder.glob("*.out")))
    named = [[str(folder / f"c{start + i:03d}"), argv] for i, argv in enumerate(commands)]
    done = subprocess.run(
        [sys.executable, "-c", DRIVER],
        input=json.dumps(named),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    codes = json.loads(done.stdout)
    return [
        (
            argv,
            code,
            Path(name + ".out").read_text(encoding="utf-8"),
            Path(name + ".err").read_text(encoding="utf-8"),
        )
        for (name, argv), code in zip(named, codes, strict=True)
    ]


def blank_starts(runs: list[tuple[list[str], int, str, str]]) -> list[str]:
    """The commands whose stdout or stderr starts with a blank line, or that crashed."""
    found = []
    for argv, code, out, err in runs:
        for stream, text in (("stdout", out), ("stderr", err)):
            if text and not text.splitlines()[0].strip():
                found.append(f"harness {' '.join(argv)} (exit {code}): {stream} {text[:80]!r}")
        if "Traceback" in err:
            found.append(f"harness {' '.join(argv)} (exit {code}): {err[-300:]}")
    return found


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("COLUMNS", "120")


@pytest.mark.slow  # about 40 s: generate, collect, blind, import, analyze and export a pilot
def test_no_command_starts_with_a_blank_line(tmp_path: Path, env: None) -> None:
    out = tmp_path / "out"
    out.mkdir()
    study, s = tmp_path / "study", str(tmp_path / "study")
    roster = tmp_path / "roster.yaml"
    roster.write_text(ROSTER, encoding="utf-8")
    bad_roster = tmp_path / "bad-roster.yaml"
    bad_roster.write_text(
        ROSTER.replace(
            "kind: human, expertise: [Neuroscience]", "kind: automated, method: llm:gpt-4o-mini"
        ),
        encoding="utf-8",
    )
    plan = str(primary_only_plan(tmp_path))
    missing = str(tmp_path / "missing")
    runs = survey(out, HELP)
    runs += survey(
        out,
        [
            ["status", "--study", missing],
            ["verify", "--study", missing],
            ["collect", "--study", missing],
            ["generate", "--study", s, "--limit", "2", "--pilot"],
            ["generate", "--study", str(tmp_path / "g2"), "--topics", missing],
            ["status", "--study", s],
            ["verify", "--study", s],
            ["prereg", "--study", s, "--plan", plan],
            ["prereg", "--study", s, "--plan", missing],
            ["collect", "--study", s, "--model", "gpt-4o"],
            ["collect", "--study", s, "--model", "openai/gpt-4o-mini", "--model-arg", "x"],
            ["judge", "--blind", "--study", s, "--reviewers", str(roster)],
            ["judge", "--blind", "--study", s, "--reviewers", str(bad_roster)],
            ["judge", "--status", "--study", s],
            ["analyze", "--study", s],
            ["export", "prompts", "--study", s],
            ["export", "controls", "--study", s],
            ["export", "prompts", "--study", s, "--format", "bogus"],
            ["explore", "--study", s],
            ["power", "--topics", "50", "--p-single", "0.3", "--effect", "0.1"],
            ["power", "--topics", "1"],
            ["search", "--source", "bogus", "graph neural networks"],
            ["run", "--study", str(tmp_path / "r"), "--model", "bogus/x", "--limit", "1"],
            ["run", "--study", str(tmp_path / "r"), "--reviewers", str(bad_roster)],
            ["geometry", "scaling"],
            ["geometry", "probe", "--study", s, "--test", "bogus"],
            ["topics", "check", missing],
            ["topics", "draft", "--model", "gpt-4o"],
            ["nonsense"],
            ["status"],
        ],
    )
    with OpenAIServer(api_key=KEY) as server:
        collect = ["collect", "--study", s, "--model", "openai/gpt-4o-mini"]
        runs += survey(out, [[*collect, "--base-url", server.base_url]])
    blind = ["judge", "--blind", "--study", s, "--no-extract", "--no-normalise"]
    blind += ["--reviewers", str(roster), "--k", "2", "--no-bank-controls", "--same-topic"]
    runs += survey(out, [blind, ["judge", "--status", "--study", s], ["analyze", "--study", s]])
    returned = tmp_path / "returned.xlsx"
    fill_workbook(
        study / "packets" / "rev-ada" / "rev-ada.xlsx",
        returned,
        lambda item: ("not_published", 3, ""),
    )
    runs += survey(
        out,
        [
            ["judge", "--import", "--study", s, str(returned)],
            ["judge", "--import", "--study", s, str(tmp_path / "missing.xlsx")],
            ["judge", "--auto", "--study", s, "--source", "bogus"],
            ["analyze", "--study", s],
            ["analyze", "--study", s, "--partial"],
            ["status", "--study", s],
            ["export", "judgments", "--study", s],
            ["export", "controls", "--study", s],
        ],
    )
    assert len(runs) > 60
    assert blank_starts(runs) == []
    # analyze ends, as every stage does, with what comes next: here, the report and the tables
    analysed = [out for argv, code, out, _ in runs if argv[:1] == ["analyze"] and code == 0]
    last = analysed[-1].splitlines()[-1]
    assert last.startswith("Done: unblinded") and f"harness explore --study {s}" in last
    assert f"harness export judgments --study {s}" in last
    assert last in runs[-3][2]  # status says the same
