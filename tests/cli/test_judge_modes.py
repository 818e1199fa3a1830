"""`harness judge`'s modes through the real entry point: an option of another mode is refused
(one line, exit 2, nothing written), each mode takes all of its own, `--help` groups the options
by mode, and a bad `--cutoff` is one line."""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path

import pytest

from harness.cli.judge_cmds import MODE_FLAGS, MODES, judge
from tests.cli_run import run_subprocess

#: one spelling of every option a mode can take, as a user would type it
SPELLED = {
    "reviewers": ["--reviewers", "roster.yaml"],
    "k": ["--k", "5"],
    "seed": ["--seed", "3"],
    "extract": ["--no-extract"],
    "normalise": ["--no-normalise"],
    "model": ["--model", "openai/gpt-4o-mini"],
    "backend": ["--backend", "openai"],
    "cutoff": ["--cutoff", "2024-06-30"],
    "base_url": ["--base-url", "http://127.0.0.1:9/v1"],
    "concurrency": ["--concurrency", "4"],
    "same_topic": ["--same-topic"],
    "review_what_exists": ["--review-what-exists"],
    "controls": ["--controls", "controls.yaml"],
    "bank_controls": ["--no-bank-controls"],
    "plan": ["--plan", "plan.yaml"],
    "files": ["returned.xlsx"],
    "replace": ["--replace"],
    "after_unblinding": ["--after-unblinding"],
    "sources": ["--source", "openalex"],
    "threshold": ["--threshold", "0.7"],
    "max_queries": ["--max-queries", "5"],
    "accept_unsure": ["--accept-unsure", "bot"],
}
FOREIGN = [
    (mode, option)
    for mode in MODES
    for option in sorted(set().union(*MODES.values()) - set(MODES[mode]))
]


def snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def refused(*args: str) -> str:
    """The one stderr line of `harness ARGS`, which must exit 2."""
    done = run_subprocess(*args)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_the_table_names_every_option_of_judge():
    names = set(inspect.signature(judge).parameters) - {"ctx", "study", *MODE_FLAGS.values()}
    assert set().union(*MODES.values()) == names == set(SPELLED)
    assert len(FOREIGN) > 60


@pytest.mark.parametrize(("mode", "option"), FOREIGN, ids=lambda x: x.strip("-"))
def test_every_mode_refuses_every_option_of_other_modes(tmp_path, mode, option):
    folder = tmp_path / "study"
    line = refused("judge", mode, "--study", str(folder), *SPELLED[option])
    spelled = SPELLED[option][0]
    named = spelled if spelled.startswith("--") else f"argument {spelled!r} (FILES)"
    owners = ", ".join(m for m in MODES if option in MODES[m])
    assert line.startswith(f"error: {named} belongs to {owners}; not to {mode}"), line
    assert not folder.exists()


#: written out by hand, so that the refusals do not rest on the table alone
BY_HAND = [
    ("--status", ["--k", "5"], "error: --k belongs to --blind; not to --status"),
    ("--auto", ["--model", "X"], "error: --model belongs to --blind; not to --auto"),
    ("--blind", ["--threshold", "0.7"], "error: --threshold belongs to --auto; not to --blind"),
    (
        "--calibrate",
        ["--threshold", "0.5"],
        "error: --threshold belongs to --auto; not to --calibrate",
    ),
    (
        "--blind",
        ["--source", "openalex"],
        "error: --source belongs to --auto, --calibrate; not to --blind",
    ),
    ("--import", ["--no-extract"], "error: --no-extract belongs to --blind; not to --import"),
    (
        "--status",
        ["--cutoff", "2024"],
        "error: --cutoff belongs to --blind, --auto, --calibrate; not to --status",
    ),
    (
        "--calibrate",
        ["--after-unblinding"],
        "error: --after-unblinding belongs to --import, --auto; not to --calibrate",
    ),
    (
        "--blind",
        ["back.xlsx"],
        "error: argument 'back.xlsx' (FILES) belongs to --import; not to --blind",
    ),
]


@pytest.fixture
def study(tmp_path: Path) -> Path:
    from tests.judge.conftest import fill_study

    fill_study(tmp_path / "study", n_topics=2).close()
    return tmp_path / "study"


@pytest.mark.parametrize(("mode", "args", "said"), BY_HAND)
def test_misplaced_options_written_by_hand_are_refused(study, mode, args, said):
    before = snapshot(study)
    assert refused("judge", mode, "--study", str(study), *args).startswith(said)
    assert snapshot(study) == before


def test_the_hints_for_automated_reviewers_stay():
    line = refused("judge", "--calibrate", "--study", "s", "--model", "openai/x")
    assert "an automated reviewer's model is its roster method" in line
    line = refused("judge", "--calibrate", "--study", "s", "--threshold", "0.5")
    assert "--threshold fixes the threshold that --calibrate chooses" in line


@pytest.mark.parametrize("mode", MODES)
def test_each_mode_takes_all_of_its_own_options(tmp_path, mode):
    """Past the mode check, a folder with no study is what stops each of them."""
    own = [arg for option in MODES[mode] for arg in SPELLED[option]]
    line = refused("judge", mode, "--study", str(tmp_path / "none"), *own)
    assert "no study here" in line, line


def help_sections() -> dict[str, str]:
    """Section title -> its text, from `harness judge --help`."""
    done = run_subprocess("judge", "--help")
    assert done.returncode == 0, done.stderr
    sections: dict[str, str] = {}
    title = ""
    for line in done.stdout.splitlines():
        if line.endswith(":") and not line.startswith(" "):
            title = line[:-1]
            sections[title] = ""
        elif title:
            sections[title] += line + "\n"
    return sections


def test_help_lists_the_options_under_their_modes():
    sections = help_sections()
    assert list(sections)[:2] == ["All modes", "Modes (choose one)"]
    for title in ("--blind", "--import", "--auto", "--auto / --calibrate"):
        assert title in sections
    for option, spelled in SPELLED.items():
        title = " / ".join(m for m in MODES if option in MODES[m])
        shown = "files..." if option == "files" else spelled[0]
        assert shown in sections[title], (option, title)
    assert "--study" in sections["All modes"]
    for text in sections.values():  # no help string names its mode by hand
        assert not any(f"{mode}:" in text for mode in MODES), text


def test_a_bad_cutoff_is_one_line_and_changes_nothing(study):
    before = snapshot(study)
    line = refused("judge", "--blind", "--study", str(study), "--cutoff", "2024-13-45")
    assert line == "error: --cutoff: '2024-13-45' is not a date (use YYYY-MM-DD or YYYY)"
    assert snapshot(study) == before
    line = refused("search", "q", "--cutoff", "2023-02-29")
    assert line == "error: --cutoff: '2023-02-29' is not a date (use YYYY-MM-DD or YYYY)"
