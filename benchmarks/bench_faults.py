"""Hostile input and concurrent writers, measured side by side in one run.

- peak memory of `read_xlsx` on a 1 GB zip bomb (about 1 MB on disk) beside the same process
  reading a real filled packet, each in a fresh subprocess (ru_maxrss);
- concurrent writers: N processes start a writing stage on one study at once; how many were
  refused at once, and how long a refusal took;
- chaos: `collect`, `judge --blind` and `judge --import` each killed (SIGKILL) at random moments
  while a second process runs the same command, then resumed; the number of kills, the second
  writers refused, and whether the final store equals that of an uninterrupted run
  (tests/chaos.py: outputs, items, assignments and reviews, keyed by output).

    python benchmarks/bench_faults.py [--bomb-mb 1024] [--writers 4] [--kills 3] [--topics 10]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import chaos  # noqa: E402
from tests.collection.conftest import make_study  # noqa: E402
from tests.judge.packets.test_packets_hostile import zip_bomb  # noqa: E402

READ = """
import resource, sys
from pathlib import Path
from harness.judge.packets.packet_read import read_xlsx
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
source = read_xlsx(Path(sys.argv[1]))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(base / 1024, peak / 1024, "; ".join(map(str, source.problems))[:120])
"""

HOLD_THEN_WRITE = """
import sys, time
from harness.errors import HarnessError
from harness.study.lock import study_lock
start = time.perf_counter()
try:
    with study_lock(sys.argv[1], "bench writer"):
        time.sleep(2.0)
        print("wrote", time.perf_counter() - start)
except HarnessError:
    print("refused", time.perf_counter() - start)
"""


def peak_memory(path: Path) -> tuple[float, float, str]:
    out = subprocess.run(
        [sys.executable, "-c", READ, str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stdout.split(maxsplit=2)
    return float(out[0]), float(out[1]), out[2].strip() if len(out) > 2 else ""


def plain_workbook(folder: Path) -> Path:
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    for row in range(2000):
        ws.append([f"I-{row:010d}", "text " * 40, "core", "published", 3, "doi", "note"])
    path = folder / "plain.xlsx"
    wb.save(path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bomb-mb", type=int, default=1024)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--kills", type=int, default=3, help="chaos: kills tried per stage")
    parser.add_argument("--topics", type=int, default=10, help="chaos: topics of the study")
    parser.add_argument("--seed", type=int, default=1, help="chaos: seed of the kill times")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bomb = zip_bomb(folder / "bomb.xlsx", args.bomb_mb << 20)
        plain = plain_workbook(folder)
        print(f"zip bomb: {bomb.stat().st_size / 1e6:.2f} MB on disk, {args.bomb_mb} MB inflated")
        for name, path in (("2,000-row workbook", plain), ("zip bomb", bomb)):
            base, peak, problems = peak_memory(path)
            print(
                f"  {name:<20} peak RSS {peak:7.1f} MB (after imports {base:6.1f} MB)  "
                f"{problems or 'read'}"
            )
        study = make_study(folder / "study", 2)
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", HOLD_THEN_WRITE, str(study)],
                stdout=subprocess.PIPE,
                text=True,
                cwd=ROOT,
            )
            for _ in range(args.writers)
        ]
        results = [p.communicate()[0].split() for p in procs]
        wrote = [float(t) for kind, t in results if kind == "wrote"]
        refused = [float(t) for kind, t in results if kind == "refused"]
        print(
            f"concurrent writers: {len(procs)} started at once, {len(wrote)} wrote, "
            f"{len(refused)} refused; slowest refusal {max(refused, default=0):.2f} s "
            f"(the writer held the lock 2.0 s)"
        )
        chaos_run(folder, args.kills, args.topics, args.seed)


def chaos_run(folder: Path, kills: int, topics: int, seed: int) -> None:
    from tests.servers.openai_server import OpenAIServer

    with OpenAIServer(latency=0.4) as server:
        start = time.perf_counter()
        reference = chaos.new_study(folder / "chaos-reference", topics)
        chaos.run_plain(reference, server.base_url)
        plain_s = time.perf_counter() - start
        start = time.perf_counter()
        killed = chaos.new_study(folder / "chaos-killed", topics)
        tally = chaos.run_chaos(killed, server.base_url, random.Random(seed), kills, 6.0)
        chaos_s = time.perf_counter() - start
    want = chaos.deterministic_rows(reference)
    diff = chaos.differences(chaos.deterministic_rows(killed), want)
    sizes = ", ".join(f"{name} {len(rows)}" for name, rows in want.items())
    print(
        f"chaos ({topics} topics, up to {kills} kills per stage, seed {seed}): {tally.line()}; "
        f"{tally.attempts - sum(tally.kills.values())} victim(s) finished before their kill"
    )
    equal = "yes" if not diff else "NO: " + "; ".join(diff)
    print(f"  final store equals the uninterrupted run: {equal} ({sizes})")
    print(f"  uninterrupted run {plain_s:.1f} s, killed and resumed {chaos_s:.1f} s")


if __name__ == "__main__":
    main()
