"""CLI wall times beside `python -c "import typer"`: start-up, and every stage command on one
fixed 56-topic study.

Start-up (goal: `harness --help` at most 1.5x `import typer`): `harness --help` and
`import harness` against `import typer`. `import harness` imports every stage module (the public
API), so it is measured beside them. Each round runs the three commands one after the other; the
ratio is taken within each round (the three runs share the machine's load of that moment) and the
median of those per-round ratios is the figure compared with the goal.

Commands, on studies made once at the start (not timed): the bundled bank's `--subset 56` at the
default seed, its 168 outputs from a loopback OpenAI-compatible server (tests/servers), the
example roster (judging/roster.example.yaml: 5 people and 2 automated primary reviewers, 6
adjudicators for the drawn quarter of the topics, 42 items), and a simulated 56-topic study with
reviews, controls and an adjudicated sample for `analyze`:

    generate --subset 56     a new study folder each run                goal <= 3 s
    power --topics 50        no study                                   goal <= 2 s
    status                   the blinded study                          goal <= 2 s
    judge --blind            a copy of the collected study each run (its blinded steps and
                             control texts from the loopback server, routing, packets, leak
                             audit); the routing of the 42 sample items: goal <= 10 s
    analyze                  a copy of the simulated study each run

Each round times `import typer`, then each command once; with `--against DIR` (another checkout,
e.g. the commit before: `mkdir /tmp/base && git archive HEAD | tar -x -C /tmp/base`) each command
also runs there, in alternating order, so both sides of a round share its load. Printed per
command: the median wall time over the rounds, the median of the per-round ratios to
`import typer`, and with `--against` the other checkout's figures and the speed-up. Both
checkouts run on this interpreter and its packages; the studies are made by this checkout.

Installed packages start from compiled bytecode, so the runs do too: PYTHONDONTWRITEBYTECODE is
dropped for them and each command's warm-up run (not timed) writes the harness's bytecode and its
caches (the embedded tokenizer's cached form).

    python benchmarks/bench_cli.py [--rounds 3] [--against /tmp/base] [--skip-startup]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.analysis.plan.plan_file import Design  # noqa: E402
from harness.analysis.simulation.study_folder import write_simulated_study  # noqa: E402
from tests.servers.openai_server import OpenAIServer  # noqa: E402

RUNS = 41  # start-up rounds
TOPICS = 56
ENV = {
    **{k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")},
    "HF_HUB_OFFLINE": "1",
    "OPENAI_API_KEY": "not-used-by-the-loopback-server",
    "HARNESS_PROGRESS_EVERY": "0.2",
}
SAMPLE_ITEMS = 3 * (TOPICS // 4)  # the drawn quarter of the topics, 3 items each
TYPER = [sys.executable, "-c", "import typer"]
GOALS = {"generate": 3.0, "power": 2.0, "status": 2.0}


#: `harness` of the checkout it runs in: `-c` puts the working folder first on sys.path
CLI = [sys.executable, "-c", "from harness.cli import main; main()"]
#: the routing step's line in a log: "routing 42 items to 6 reviewers, k=2 (HiGHS MILP): done
#: in 3 s" (progress lines for every step: HARNESS_PROGRESS_EVERY below)
ROUTED = re.compile(r"routing (\d+) items to (\d+) reviewers.*: done in (?:(\d+) min )?(\d+) s")


def run(argv: list[str], cwd: Path) -> tuple[float, str]:
    """(wall seconds, stderr) of a command that must succeed."""
    start = time.perf_counter()
    done = subprocess.run(
        argv, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} (in {cwd}) failed:\n{done.stderr[-2000:]}")
    return elapsed, done.stderr


def timed(argv: list[str], cwd: Path) -> float:
    return run(argv, cwd)[0]


def routing_seconds(stderr: str, items: int) -> float | None:
    """The routing of `items` items, from a command's progress lines (whole seconds; None: no
    line, a step shorter than the lines' interval)."""
    for match in ROUTED.finditer(stderr):
        if int(match[1]) == items:
            return 60.0 * int(match[3] or 0) + int(match[4])
    return None


# -- start-up ---------------------------------------------------------------------------------
def startup() -> None:
    harness = shutil.which("harness") or f"{sys.prefix}/bin/harness"
    commands = {
        "python -c 'import typer'": TYPER,
        "harness --help": [harness, "--help"],
        "python -c 'import harness'": [sys.executable, "-c", "import harness"],
    }
    for argv in commands.values():  # warm the file cache and write harness's bytecode
        timed(argv, ROOT)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(RUNS):
        for name, argv in commands.items():
            samples[name].append(timed(argv, ROOT))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    for name, value in medians.items():
        best = min(samples[name]) * 1000
        print(f"{name:28s} median {value * 1000:7.1f} ms, best {best:7.1f} ms over {RUNS} runs")
    typer = samples["python -c 'import typer'"]
    typer_median = medians["python -c 'import typer'"]
    for name, goal in (("harness --help", " (goal <= 1.5x)"), ("python -c 'import harness'", "")):
        paired = sorted(run / base for run, base in zip(samples[name], typer, strict=True))
        low, high = paired[len(paired) // 4], paired[(3 * len(paired)) // 4]
        print(
            f"ratio {name} / import typer: {statistics.median(paired):.2f}x{goal} "
            f"(median of {RUNS} rounds; quartiles {low:.2f}-{high:.2f}; "
            f"ratio of medians {medians[name] / typer_median:.2f}x)"
        )


# -- the fixed study --------------------------------------------------------------------------
@dataclass
class Studies:
    """The studies every timed run starts from (made once by this checkout)."""

    root: Path
    collected: Path = field(init=False)
    blinded: Path = field(init=False)
    simulated: Path = field(init=False)

    def make(self, server: OpenAIServer) -> None:
        harness = CLI
        self.collected = self.root / "collected"
        timed([*harness, "generate", "--study", str(self.collected), "--subset", str(TOPICS)], ROOT)
        model = ["--model", "openai-compatible/toy", "--base-url", server.base_url]
        timed([*harness, "collect", "--study", str(self.collected), *model], ROOT)
        self.blinded = self.copy(self.collected, "blinded")
        timed([*harness, *blind_args(self.blinded, server)], ROOT)
        self.simulated = self.root / "simulated"
        write_simulated_study(
            self.simulated,
            Design(samples=1, reviewers=3),
            topics=TOPICS,
            effect=0.03,
            seed=TOPICS,
            controls_per_reviewer=34,
            adjudicated=TOPICS // 4,
        )

    def copy(self, study: Path, name: str) -> Path:
        target = self.root / name
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(study, target)
        return target


def blind_args(study: Path, server: OpenAIServer) -> list[str]:
    roster = ROOT / "judging" / "roster.example.yaml"
    model = ["--model", "openai-compatible/toy", "--base-url", server.base_url]
    return ["judge", "--blind", "--study", str(study), "--reviewers", str(roster), *model]


def commands(studies: Studies, server: OpenAIServer) -> dict[str, Callable[[Path], list[str]]]:
    """Each command's arguments for one run, its study prepared in `scratch` (not timed)."""

    def generate(scratch: Path) -> list[str]:
        shutil.rmtree(scratch / "generated", ignore_errors=True)
        return ["generate", "--study", str(scratch / "generated"), "--subset", str(TOPICS)]

    def blind(scratch: Path) -> list[str]:
        return blind_args(studies.copy(studies.collected, scratch.name + "-blind"), server)

    def analyze(scratch: Path) -> list[str]:
        return ["analyze", "--study", str(studies.copy(studies.simulated, scratch.name + "-an"))]

    return {
        "generate": generate,
        "power": lambda scratch: ["power", "--topics", "50"],
        "status": lambda scratch: ["status", "--study", str(studies.blinded)],
        "judge --blind": blind,
        "analyze": analyze,
    }


@dataclass
class Side:
    """One checkout's runs: seconds, seconds over the round's `import typer`, and the sample's
    routing (from the progress lines of `judge --blind`)."""

    root: Path
    seconds: dict[str, list[float]] = field(default_factory=dict)
    ratios: dict[str, list[float]] = field(default_factory=dict)
    routing: list[float] = field(default_factory=list)

    def run(self, name: str, args: list[str], typer: float) -> None:
        elapsed, stderr = run([*CLI, *args], self.root)
        self.seconds.setdefault(name, []).append(elapsed)
        self.ratios.setdefault(name, []).append(elapsed / typer)
        if name == "judge --blind":  # no line: the step took less than the lines' interval
            self.routing.append(routing_seconds(stderr, SAMPLE_ITEMS) or 0.0)

    def figures(self, name: str) -> str:
        seconds, ratio = statistics.median(self.seconds[name]), statistics.median(self.ratios[name])
        return f"{seconds:7.2f} s {ratio:6.1f}x"


def bench_commands(rounds: int, against: Path | None) -> None:
    sides = [Side(ROOT)] + ([Side(against)] if against else [])
    with tempfile.TemporaryDirectory() as tmp, OpenAIServer() as server:
        studies = Studies(Path(tmp))
        studies.make(server)
        plan = commands(studies, server)
        for side in sides:  # warm-up: bytecode and caches
            for prepare in plan.values():
                timed([*CLI, *prepare(Path(tmp) / "warm")], side.root)
        typer: list[float] = []
        for n in range(rounds):
            typer.append(timed(TYPER, ROOT))
            for name, prepare in plan.items():
                for i, side in enumerate(sides if n % 2 == 0 else sides[::-1]):
                    side.run(name, prepare(Path(tmp) / f"r{n}s{i}"), typer[-1])
    print(f"\ncommands on a {TOPICS}-topic study, median of {rounds} rounds", end="")
    print(f" (import typer: median {statistics.median(typer):.2f} s)")
    head = f"{'':16s} {'this checkout':>17s}"
    if against:
        head += f" {str(against):>17s} {'speed-up':>9s}"
    print(head + "  goal")
    for name in plan:
        line = f"{name:16s} {sides[0].figures(name)}"
        if against:
            speedup = statistics.median(
                b / a for a, b in zip(sides[0].seconds[name], sides[1].seconds[name], strict=True)
            )
            line += f" {sides[1].figures(name)} {speedup:8.1f}x"
        goal = GOALS.get(name)
        if goal is not None:
            met = statistics.median(sides[0].seconds[name]) <= goal
            line += f"  <= {goal:g} s: {'met' if met else 'NOT MET'}"
        print(line)
    routed = [
        f"{statistics.median(side.routing):.0f} s ({side.root})" for side in sides if side.routing
    ]
    print(
        f"routing the {SAMPLE_ITEMS} sample items to the 6 adjudicators inside `judge --blind` "
        f"(whole seconds, median): {', '.join(routed) or 'not seen'}; goal < 10 s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="Rounds of the commands.")
    parser.add_argument("--against", type=Path, help="Another checkout to time beside this one.")
    parser.add_argument("--skip-startup", action="store_true", help="Only the commands.")
    args = parser.parse_args()
    if not args.skip_startup:
        startup()
    bench_commands(args.rounds, args.against)


if __name__ == "__main__":
    main()
