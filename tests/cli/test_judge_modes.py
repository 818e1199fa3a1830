"""`harness judge`'s modes through the real entry point: an option of another mode is refused
(one line, exit 2, nothing written), each mode takes all of its own, `--help` groups the options
by mode, and a bad `--cutoff` is one line. The refusals share child processes
(`run_subprocesses`: one start-up for many commands); `--help` and `--cutoff` run in their own."""

from __future__ import annotations

import hashlib
import inspect
import subprocess
from pathlib import Path

import pytest

from harness.cli.judge_cmds import MODE_FLAGS, MODES, judge
from tests.cli_run import run_subprocess, run_subprocesses

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
    return one_line(run_subprocess(*args))


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one stderr line of a run that must exit 2."""
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def foreign_command(folder: Path, mode: str, option: str) -> list[str]:
    return ["judge", mode, "--study", str(folder / f"{mode}-{option}"), *SPELLED[option]]


def own_command(folder: Path, mode: str) -> list[str]:
    own = [arg for option in MODES[mode] for arg in SPELLED[option]]
    return ["judge", mode, "--study", str(folder / "none"), *own]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, dict[tuple[str, ...], subprocess.CompletedProcess[str]]]:
    """Every refusal of FOREIGN and every mode with all of its own options, in one child
    process: (the folder their --study points into, each command's run)."""
    folder = tmp_path_factory.mktemp("modes")
    commands = [foreign_command(folder, mode, option) for mode, option in FOREIGN]
    commands += [own_command(folder, mode) for mode in MODES]
    return folder, {
        tuple(c): done for c, done in zip(commands, run_subprocesses(*commands), strict=True)
    }


def test_the_table_names_every_option_of_judge():
    names = set(inspect.signature(judge).parameters) - {"ctx", "study", *MODE_FLAGS.values()}
    assert set().union(*MODES.values()) == names == set(SPELLED)
    assert len(FOREIGN) > 60


@pytest.mark.parametrize(("mode", "option"), FOREIGN, ids=lambda x: x.strip("-"))
def test_every_mode_refuses_every_option_of_other_modes(runs, mode, option):
    command = foreign_command(runs[0], mode, option)
    folder = Path(command[3])
    line = one_line(runs[1][tuple(command)])
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


@pytest.fixture(scope="module")
def by_hand(tmp_path_factory) -> tuple[bool, dict[str, subprocess.CompletedProcess[str]]]:
    """BY_HAND's commands on one study, in one child process: (whether the study's files are
    unchanged after all of them, each mode's run)."""
    from tests.judge.conftest import fill_study

    folder = tmp_path_factory.mktemp("by-hand") / "study"
    fill_study(folder, n_topics=2).close()
    before = snapshot(folder)
    done = run_subprocesses(
        *(["judge", mode, "--study", str(folder), *args] for mode, args, _ in BY_HAND)
    )
    return snapshot(folder) == before, {
        said: run for (_, _, said), run in zip(BY_HAND, done, strict=True)
    }


@pytest.mark.parametrize(("mode", "args", "said"), BY_HAND)
def test_misplaced_options_written_by_hand_are_refused(by_hand, mode, args, said):
    unchanged, runs = by_hand
    assert one_line(runs[said]).startswith(said)
    assert unchanged


def test_the_hints_for_automated_reviewers_stay():
    model, threshold = run_subprocesses(
        ["judge", "--calibrate", "--study", "s", "--model", "openai/x"],
        ["judge", "--calibrate", "--study", "s", "--threshold", "0.5"],
    )
    assert "an automated reviewer's model is its roster method" in one_line(model)
    assert "--threshold fixes the threshold that --calibrate chooses" in one_line(threshold)


@pytest.mark.parametrize("mode", MODES)
def test_each_mode_takes_all_of_its_own_options(runs, mode):
    """Past the mode check, a folder with no study is what stops each of them."""
    line = one_line(runs[1][tuple(own_command(runs[0], mode))])
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
