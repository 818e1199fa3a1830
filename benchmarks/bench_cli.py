"""CLI start-up: `harness --help` against `python -c "import typer"`, measured side by side.

Goal: at most 1.5x. Each command runs N times alternately; the medians are compared.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time

RUNS = 15


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    harness = shutil.which("harness") or f"{sys.prefix}/bin/harness"
    commands = {
        "python -c 'import typer'": [sys.executable, "-c", "import typer"],
        "harness --help": [harness, "--help"],
    }
    for argv in commands.values():  # warm the file cache
        timed(argv)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(RUNS):
        for name, argv in commands.items():
            samples[name].append(timed(argv))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    for name, value in medians.items():
        print(f"{name:28s} median {value * 1000:7.1f} ms over {RUNS} runs")
    ratio = medians["harness --help"] / medians["python -c 'import typer'"]
    print(f"ratio harness --help / import typer: {ratio:.2f}x (goal <= 1.5x)")


if __name__ == "__main__":
    main()
