"""Speed of `harness analyze` on large studies, report included.

Target: 10,000 topics x 3 conditions x 3 reviewers (90,000 judgments) analysed, report written,
in under 30 s on a 2-core machine, with control items (each reviewer judges the plan's share 0.2
of its items as controls: 6,000 per reviewer), the corrected difference's bootstrap and an
adjudicated sample of a quarter of the topics (two adjudicators judge each of its items: the
prediction-powered verdict, accuracy on the real items). A 1,000-topic study runs beside it to
show how time scales.

    python benchmarks/bench_analyze.py [--topics 10000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from harness.analysis.plan.plan_file import Design
from harness.analysis.run import analyze
from harness.analysis.simulation.study_folder import write_simulated_study

TARGET_S = 30.0


def run(topics: int, folder: Path) -> tuple[float, float, int, str]:
    start = time.perf_counter()
    write_simulated_study(
        folder,
        Design(samples=1, reviewers=3),
        topics=topics,
        effect=0.03,
        seed=topics,
        controls_per_reviewer=max(10, int(0.2 * 3 * topics)),
        adjudicated=topics // 4,
    )
    setup = time.perf_counter() - start
    start = time.perf_counter()
    result = analyze(folder)
    elapsed = time.perf_counter() - start
    assert Path(result.report_files["html"]).exists()
    assert result.adjudication is not None and result.adjudication.topics_labelled > 0
    return setup, elapsed, result.design.reviews, result.verdict.label


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=10_000)
    args = parser.parse_args()
    import statsmodels.api  # noqa: F401  (import time is not analysis time)
    from matplotlib.figure import Figure  # noqa: F401

    sizes = sorted({1_000, args.topics})
    print(
        f"{'topics':>8} {'judgments':>10} {'setup s':>8} {'analyze s':>10} "
        f"{'us/judgment':>12} {'verdict':>13}"
    )
    times = {}
    with tempfile.TemporaryDirectory() as tmp:
        for topics in sizes:
            setup, elapsed, judgments, verdict = run(topics, Path(tmp) / f"s{topics}")
            times[topics] = elapsed
            print(
                f"{topics:>8} {judgments:>10} {setup:>8.1f} {elapsed:>10.2f} "
                f"{1e6 * elapsed / judgments:>12.1f} {verdict:>13}"
            )
    big = times[max(sizes)]
    print(
        f"time ratio {max(sizes)} / {min(sizes)} topics: {big / times[min(sizes)]:.2f} "
        f"(data ratio {max(sizes) / min(sizes):.0f})"
    )
    print(
        f"{max(sizes)} topics: {big:.2f} s = {big / TARGET_S:.2f} x the {TARGET_S:.0f} s "
        f"target -> {'PASS' if big < TARGET_S else 'FAIL'}"
    )


if __name__ == "__main__":
    main()
