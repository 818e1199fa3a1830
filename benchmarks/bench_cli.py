"""CLI start-up: `harness --help` and `import harness` against `python -c "import typer"`,
measured side by side.

Goal: `harness --help` at most 1.5x `import typer`. `import harness` imports every stage module
(the public API), so it is measured beside them. Each round runs the three commands one after
the other; the ratio is taken within each round (the three runs share the machine's load of that
moment) and the median of those per-round ratios is the figure compared with the goal. The
medians and best runs of each command are printed beside it.

Installed packages start from compiled bytecode, so the runs do too: PYTHONDONTWRITEBYTECODE is
dropped for them and the warm-up run writes harness's bytecode. With it set, every run would
compile harness from source while typer loads from its installed bytecode.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time

RUNS = 41


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    return time.perf_counter() - start


def main() -> None:
    harness = shutil.which("harness") or f"{sys.prefix}/bin/harness"
    commands = {
        "python -c 'import typer'": [sys.executable, "-c", "import typer"],
        "harness --help": [harness, "--help"],
        "python -c 'import harness'": [sys.executable, "-c", "import harness"],
    }
    for argv in commands.values():  # warm the file cache and write harness's bytecode
        timed(argv)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(RUNS):
        for name, argv in commands.items():
            samples[name].append(timed(argv))
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


if __name__ == "__main__":
    main()
