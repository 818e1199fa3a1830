"""Speed of the judge stage: routing, packets out and in, the leak audit, the blinded steps.

Everything runs side by side in one process and prints ratios:
- routing (exact integer programme) at the demo size (180 items) and at 600 and 1,500 items;
- packets: writing and importing 8 human packets, per item;
- the blinded steps with the embedded model, batched (8) beside one request at a time.

    python benchmarks/bench_judge.py [--model-items 16] [--no-model] [--large]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.judge.blinding.leak_audit import classifier_audit  # noqa: E402
from harness.judge.items.blinded_items import create_items, make_items  # noqa: E402
from harness.judge.packets.packet_import import import_reviews  # noqa: E402
from harness.judge.packets.packet_write import write_packets  # noqa: E402
from harness.judge.routing.roster import Reviewer, Roster  # noqa: E402
from harness.judge.routing.route_items import plan_routing, route  # noqa: E402
from tests.judge.conftest import FIELDS, fill_study  # noqa: E402
from tests.judge.fakes import fill_workbook  # noqa: E402


def timed(fn, *args, **kwargs) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


def roster(humans: int, capacity: int, automated: int = 2) -> Roster:
    return Roster(
        reviewers=[
            *[
                Reviewer(
                    id=f"h{i:02d}",
                    kind="human",
                    capacity=capacity,
                    expertise=(FIELDS[i % len(FIELDS)][0],),
                )
                for i in range(humans)
            ],
            *[
                Reviewer(id=f"a{i}", kind="automated", method="retrieval", capacity=100_000)
                for i in range(automated)
            ],
        ]
    )


def bench_routing(root: Path, large: bool) -> None:
    sizes = [(60, 0), (200, 12)] + ([(500, 24)] if large else [])
    base = None
    print("routing (HiGHS MILP)            items  reviewers   seconds   ratio")
    for topics, humans in sizes:
        study = fill_study(root / f"route{topics}", n_topics=topics)
        create_items(study)
        elapsed, result = timed(plan_routing, study, roster(humans, topics), k=2, seed=1)
        base = base or elapsed
        print(
            f"  {result.solver:30s} {topics * 3:5d}  {humans + 2:9d}  {elapsed:8.2f}  "
            f"{elapsed / base:6.1f}x"
        )
        study.close()


def bench_packets(root: Path) -> None:
    study = fill_study(root / "packets", n_topics=40)
    create_items(study)
    route(study, roster(8, 40, automated=0), k=2, seed=1)
    n = study.count("assignments")
    write_s, _ = timed(write_packets, study, made_at="2026-01-01T00:00:00Z")
    filled = []
    for folder in sorted(study.packets_dir.iterdir()):
        out = root / f"{folder.name}-back.xlsx"
        fill_workbook(folder / f"{folder.name}.xlsx", out)
        filled.append(out)
    import_s, _ = timed(import_reviews, study, filled)
    audit_s, _ = timed(classifier_audit, study)
    print(f"packets: {n} assigned items in 8 workbooks + CSV pairs")
    print(f"  write   {write_s:6.2f} s  ({1000 * write_s / n:5.1f} ms per item)")
    print(
        f"  import  {import_s:6.2f} s  ({1000 * import_s / n:5.1f} ms per item; "
        f"{import_s / write_s:.2f}x the write time)"
    )
    print(f"  leak audit on {study.count('items')} items: {audit_s:.2f} s")
    study.close()


def bench_steps(root: Path, n_items: int) -> None:
    from harness.models.local import LocalBackend

    topics = max(1, n_items // 3)
    results = {}
    for batch in (1, 8):
        study = fill_study(root / f"steps{batch}", n_topics=topics)
        backend = LocalBackend(batch_size=batch).load()
        elapsed, report = timed(make_items, study, backend=backend)
        done = sum(v["done"] for v in report.steps.values())
        results[batch] = elapsed / done
        study.close()
    print(f"blinded steps, embedded model ({topics * 3} items x extract + normalise)")
    for batch, per in results.items():
        print(f"  batch {batch}: {per:6.2f} s per completion")
    print(
        f"  batched / one at a time: {results[1] / results[8]:.2f}x faster; demo estimate "
        f"(180 items x 2 steps): {360 * results[8] / 60:.1f} min"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-items", type=int, default=16)
    parser.add_argument("--no-model", action="store_true")
    parser.add_argument("--large", action="store_true", help="also route 1,500 items")
    args = parser.parse_args()
    import sklearn.linear_model  # noqa: F401  (import time is not work time)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bench_routing(root, args.large)
        bench_packets(root)
        if not args.no_model:
            bench_steps(root, args.model_items)


if __name__ == "__main__":
    main()
