"""A study's first hour at the judge stage, through the real entry point in child processes
against a loopback OpenAI-compatible server: `judge --auto` before `judge --blind` is refused in
one line; a blinding whose every control text is dropped says why in a `warning:` line and how
to get controls; a packet returned unfilled is summarised, not listed row by row.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_run import run_subprocess
from tests.plans import primary_only_plan
from tests.servers.openai_server import OpenAIServer

MODEL = "openai-compatible/m"
ROSTER = """reviewers:
  - {id: rev-ada, kind: human, expertise: [Computer Science, Mathematics], capacity: 30}
  - {id: rev-bo, kind: human, expertise: [Neuroscience], capacity: 30}
  - {id: auto-llm, kind: automated, method: "llm:openai-compatible/m", capacity: 60}
"""


def harness(*args: object) -> tuple[int, str, str]:
    done = run_subprocess(*(str(a) for a in args))
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def blinded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A study of 4 topics whose outputs a loopback server wrote (words that state no planted
    pair), refused by `judge --auto` before its blinding, then blinded with the bank's controls;
    (the study, the blinding's stdout)."""
    root = tmp_path_factory.mktemp("judge")
    study = root / "study"
    (root / "roster.yaml").write_text(ROSTER, encoding="utf-8")
    env = {"OPENAI_API_KEY": "sk-first-hour-judge", "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        patch.delenv("OPENAI_BASE_URL", raising=False)
        code, _, err = harness("generate", "--study", study, "--limit", "4", "--pilot")
        assert code == 0, err
        with OpenAIServer() as server:
            code, _, err = harness("collect", "--study", study, "--model", MODEL, "--base-url",
                                   server.base_url)  # fmt: skip
            assert code == 0, err
            # nothing is blinded yet: refused in one line, no empty table
            code, out, err = harness("judge", "--auto", "--study", study)
            assert (code, out) == (2, ""), (out, err)
            assert err.strip().splitlines() == [
                f"error: {study}: no items are routed to reviewers yet: run `harness judge "
                f"--blind --study {study} --reviewers ROSTER` first (it makes the blinded items "
                "and routes them to the roster's reviewers, automated ones included)"
            ]
            code, out, err = harness(
                "judge", "--blind", "--study", study, "--reviewers", root / "roster.yaml",
                "--no-extract", "--no-normalise", "--same-topic", "--cutoff", "2015",
                "--plan", primary_only_plan(root),
            )  # fmt: skip
        assert code == 0, err
    return study, out


def test_a_blinding_that_keeps_no_control_warns_why_and_how_to_get_them(
    blinded: tuple[Path, str],
) -> None:
    study, out = blinded
    lines = out.splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith("Controls: "))
    assert lines[at].startswith("Controls: none; ") and ", 0 kept: " in lines[at], lines[at]
    made = json.loads((study / "manifest.json").read_text(encoding="utf-8"))["controls"]["made"]
    written = made["generated"]
    assert written > 0 and made["kept"] == 0
    assert lines[at + 1] == (
        f"warning: no control item was kept: the {written} control text(s) written by {MODEL} "
        f"were all dropped ({written}: core does not state the planted pair), so reviewers' "
        "sensitivity and specificity cannot be measured, automated reviewers stay uncalibrated "
        "and the verdict cannot be `refuted`; controls are made only by a study's first "
        "routing: to have them, blind a new study with --controls FILE whose entries bring "
        "their own `text` (see judging/controls.example.yaml), or with a model under test whose "
        "texts state the planted pairs (checked by --extract with a capable --model "
        "PROVIDER/NAME)"
    )
    manifest = json.loads((study / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["controls"]["warning"] == lines[at + 1].removeprefix("warning: ")


def test_an_unfilled_packet_is_summarised_and_named_as_unfilled(
    blinded: tuple[Path, str],
) -> None:
    study, _ = blinded
    packet = study / "packets" / "rev-bo" / "rev-bo.xlsx"
    code, out, err = harness("judge", "--import", packet, "--study", study)
    assert code == 2 and out == "", out
    lines = err.strip().splitlines()
    assert len(lines) == 7, lines  # five problems, how many more, the error line
    assert all(
        line.startswith("rev-bo.xlsx: sheet Items, row ") and "missing verdict for item" in line
        for line in lines[:5]
    ), lines
    more = int(lines[5].removeprefix("rev-bo.xlsx: ... and ").split()[0])
    assert lines[5] == f"rev-bo.xlsx: ... and {more} more problem(s)"
    total = 5 + more
    assert lines[6] == (
        f"error: {total} problem(s) in rev-bo.xlsx; nothing was imported (summarised above); "
        f"rev-bo.xlsx looks unfilled: none of its {total} item(s) has a verdict (is it the "
        "packet as sent, not the one the reviewer returned?)"
    )
