"""Time `judge --blind` with and without control items, side by side, on one collected study.

The study (e.g. one made by `harness run --study DIR --limit 10`, or stopped after `collect`) is
copied twice and each copy is put back to its collected state (items, controls, routing, reviews
and their manifest sections removed); then `blind` runs on the demo roster with the embedded model,
extraction and normalisation on, once with the bank's controls (cut-off as `harness run` sets it)
and once without. Prints both times (wall clock and this process's CPU time, all threads: on a
shared machine the CPU time is the steadier figure) and their ratios.

    python benchmarks/bench_blind_controls.py --study runs/demo
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

RESET_TABLES = (
    "searches",
    "reviews",
    "imports",
    "assignments",
    "items",
    "controls",
    "reviewers",
    "adjudication_sample",
)
RESET_META = ("cutoff", "blinding_salt")
RESET_SECTIONS = (
    "blinding",
    "routing",
    "blinded_steps",
    "controls",
    "leak_audit",
    "cutoff",
    "prereg",
    "analysis",
    "automated",
)


def collected_copy(source: Path, target: Path) -> Path:
    """A copy of the study as it was right after `collect`."""
    shutil.copytree(
        source,
        target,
        ignore=shutil.ignore_patterns("packets", "report", "*.sqlite-wal", "*.sqlite-shm"),
    )
    with sqlite3.connect(target / "study.sqlite") as conn:
        for table in RESET_TABLES:
            conn.execute(f"DELETE FROM {table}")  # noqa: S608 (fixed names)
        conn.executemany("DELETE FROM meta WHERE key = ?", [(k,) for k in RESET_META])
    manifest_path = target / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    for section in RESET_SECTIONS:
        manifest.pop(section, None)
    manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return target


def timed_blind(folder: Path, controls: bool) -> tuple[float, float, int]:
    from harness.judge.blinding.blind_stage import blind
    from harness.judge.routing.roster import demo_roster_path
    from harness.pipeline.run_settings import DEMO_CUTOFF

    start, cpu = time.perf_counter(), time.process_time()
    result = blind(
        folder,
        reviewers=demo_roster_path(),
        backend="local",
        cutoff=DEMO_CUTOFF,
        bank_controls=controls,
    )
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    n_controls = sum(result.controls.counts.get("expected", {}).values()) if result.controls else 0
    return elapsed, cpu, n_controls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", type=Path, required=True, help="a study with outputs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plain = collected_copy(args.study, Path(tmp) / "plain")
        mixed = collected_copy(args.study, Path(tmp) / "mixed")
        without, cpu_without, _ = timed_blind(plain, False)
        with_controls, cpu_with, n = timed_blind(mixed, True)
    with sqlite3.connect(args.study / "study.sqlite") as conn:
        outputs = conn.execute("SELECT COUNT(*) FROM outputs WHERE status = 'ok'").fetchone()[0]
    print(
        f"judge --blind on {outputs} outputs, without controls / with {n} control items:\n"
        f"  wall {without:.1f} s / {with_controls:.1f} s, ratio {with_controls / without:.2f}\n"
        f"  CPU  {cpu_without:.1f} s / {cpu_with:.1f} s, ratio {cpu_with / cpu_without:.2f}"
    )


if __name__ == "__main__":
    main()
