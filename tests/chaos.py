"""Random SIGKILLs of writing stages while a second process tries to write, then resume.

Used by the chaos test (tests/study/test_chaos.py) and the fault benchmark
(benchmarks/bench_faults.py). A study goes through `collect`, `judge --blind` (extraction on a
loopback OpenAI-compatible server) and `judge --import` twice: once uninterrupted, once with
each stage killed at random moments and rerun. While a victim holds the study's lock, a second
`harness` process runs the same command: it must be refused at once (exit 2) or, when the victim
is already gone, do the work itself. The stored rows that are meant to be deterministic must end
the same in both studies.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.study.lock import HOLDER_NAME
from harness.study.store import Study
from tests.cli_run import CLI
from tests.collection.conftest import make_study
from tests.judge.fakes import fill_workbook
from tests.plans import primary_only_plan

REVIEWERS = ("ann", "ben", "cat")
ROSTER = "reviewers:\n" + "".join(
    f"  - {{id: {r}, kind: human, expertise: [], capacity: 40}}\n" for r in REVIEWERS
)
REFUSED = "the study is being written by"


@dataclass
class Tally:
    """What the chaos run did: kills that landed, and what the second writers met."""

    kills: dict[str, int] = field(default_factory=dict)
    refused: int = 0  # second writers refused at once (exit 2, holder named)
    second_ran: int = 0  # second writers that found the study free and did the work
    attempts: int = 0
    unstarted: int = 0  # victims that finished before they were seen holding the lock

    def line(self) -> str:
        kills = ", ".join(f"{stage} {n}" for stage, n in self.kills.items())
        return (
            f"{sum(self.kills.values())} kills ({kills}); second writers: {self.refused} "
            f"refused, {self.second_ran} ran after the victim was gone"
        )


def stage_args(study: Path, url: str) -> dict[str, list[str]]:
    """The command line of each stage (the import's files are made after blinding)."""
    return {
        "collect": [
            "collect",
            "--study",
            str(study),
            "--backend",
            "openai",
            "--model",
            "m",
            "--base-url",
            url,
            "--concurrency",
            "2",
            "--seed",
            "5",
        ],
        "judge --blind": [
            "judge",
            "--blind",
            "--study",
            str(study),
            "--reviewers",
            str(study.parent / "roster.yaml"),
            "--backend",
            "openai",
            "--model",
            "m",
            "--base-url",
            url,
            "--concurrency",
            "2",
            "--no-normalise",
            "--no-bank-controls",
            "--same-topic",
            "--seed",
            "3",
            "--plan",
            str(primary_only_plan(study.parent)),
        ],
        "judge --import": [
            "judge",
            "--import",
            *[str(study.parent / "back" / f"{r}.xlsx") for r in REVIEWERS],
            "--study",
            str(study),
        ],
    }


def new_study(folder: Path, topics: int) -> Path:
    folder.mkdir(parents=True)
    (folder / "roster.yaml").write_text(ROSTER, encoding="utf-8")
    return make_study(folder / "study", topics)


def run_plain(study: Path, url: str) -> None:
    """Every stage once, uninterrupted: the reference."""
    for stage, args in stage_args(study, url).items():
        if stage == "judge --import":
            fill_packets(study)
        finished(args)


def run_chaos(
    study: Path, url: str, rng: random.Random, kills_per_stage: int, window_s: float
) -> Tally:
    """Every stage killed `kills_per_stage` times at random moments, then finished."""
    tally = Tally()
    for stage, args in stage_args(study, url).items():
        if stage == "judge --import":
            fill_packets(study)
        tally.kills[stage] = 0
        for _ in range(kills_per_stage):
            tally.attempts += 1
            if not _attempt(study, args, rng, window_s, tally):
                break  # the victim finished the stage before a kill could land
            tally.kills[stage] += 1
        finished(args)
    return tally


def _attempt(
    study: Path, args: list[str], rng: random.Random, window_s: float, tally: Tally
) -> bool:
    """Start a victim, let a second writer try while it holds the lock, kill it at random."""
    victim = _start(args)
    if not _holds_lock(study, victim):
        victim.wait()
        tally.unstarted += 1
        return False
    second = _start(args)  # it tries the lock once its imports are done (about 2 s)
    time.sleep(rng.uniform(0.0, window_s))
    landed = victim.poll() is None
    if landed:
        victim.send_signal(signal.SIGKILL)
    victim.wait()
    _, err = second.communicate(timeout=300)
    if second.returncode == 2 and REFUSED in err:
        tally.refused += 1
    elif second.returncode in (0, 1):  # it found the study free and did the work itself
        tally.second_ran += 1
    else:
        raise AssertionError(f"second writer: exit {second.returncode}: {err[-500:]}")
    return landed


def _holds_lock(study: Path, process: subprocess.Popen, timeout_s: float = 120) -> bool:
    """Wait until `process` holds the study's lock (its pid in the holder note), or exits."""
    note, deadline = study / HOLDER_NAME, time.monotonic() + timeout_s
    while process.poll() is None:
        try:
            if json.loads(note.read_text(encoding="utf-8"))["pid"] == process.pid:
                return True
        except (OSError, ValueError, KeyError):
            pass
        if time.monotonic() > deadline:
            raise AssertionError("the stage never took the study's lock")
        time.sleep(0.005)
    return False


def _start(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [*CLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )


def finished(args: list[str]) -> None:
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise AssertionError(
            f"harness {' '.join(args[:2])}: exit {done.returncode}: {done.stderr[-800:]}"
        )


def fill_packets(study: Path) -> None:
    """Each human reviewer answers every item; the verdict depends on the output, not the
    item's random id, so both studies get the same answers."""
    with Study.open(study) as s:
        output_of = {r[0]: r[1] for r in s.rows("SELECT item_id, output_id FROM items")}
    back = study.parent / "back"
    shutil.rmtree(back, ignore_errors=True)
    back.mkdir()
    for reviewer in REVIEWERS:
        fill_workbook(
            study / "packets" / reviewer / f"{reviewer}.xlsx",
            back / f"{reviewer}.xlsx",
            verdict=lambda item_id: _verdict(output_of[item_id]),
        )


def _verdict(output_id: str) -> tuple[str, int, str]:
    digest = hashlib.sha256(output_id.encode()).digest()
    if digest[0] % 2:
        return "published", 1 + digest[1] % 5, f"https://doi.org/10.1/{output_id.lower()}"
    return "not_published", 1 + digest[1] % 5, ""


def deterministic_rows(study: Path) -> dict[str, list[tuple[Any, ...]]]:
    """The stored rows an interrupted history must not change (random item ids left out)."""
    queries = {
        "outputs": "SELECT prompt_id, sample, status, text FROM outputs ORDER BY 1, 2",
        "items": "SELECT output_id, control_id, original_text, core_combination, display_text "
        "FROM items ORDER BY 1, 2",
        "assignments": "SELECT i.output_id, a.reviewer_id, a.position FROM assignments a "
        "JOIN items i USING (item_id) ORDER BY 1, 2",
        "reviews": "SELECT i.output_id, r.reviewer_id, r.verdict, r.confidence, r.prior_work, "
        "r.notes, r.source FROM reviews r JOIN items i USING (item_id) ORDER BY 1, 2",
    }
    with Study.open(study) as s:
        return {name: [tuple(r) for r in s.rows(sql)] for name, sql in queries.items()}


def differences(got: dict[str, list[Any]], want: dict[str, list[Any]]) -> list[str]:
    """Tables whose rows differ, with their row counts."""
    return [
        f"{name}: {len(got[name])} rows vs {len(want[name])}"
        for name in want
        if got[name] != want[name]
    ]
