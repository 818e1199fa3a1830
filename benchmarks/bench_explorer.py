"""Speed of the study explorer at 10,000 topics in headless Chromium.

Builds a simulated 10,000-topic study (3 conditions, 1 sample, 3 reviewers: 30,000 items and
90,000 reviews), gives every review one literature search with three hits, and writes the page
blinded and unblinded. Each page is opened from a file:// URL; the figures are the time until
the page is ready (navigation start to the first rendered list, as the page measures it, and the
wall time of the load seen from the driver), the time each filter takes to run and draw (the
first text search includes decoding every long text), and the time to follow a row to its
detail.
Goal: under 2 s to open and under 2 s to filter. A 1,000-topic study runs beside it.

    python benchmarks/bench_explorer.py [--topics 10000]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests.explore.browser

from harness.analysis.plan.plan_file import Design  # noqa: E402
from harness.analysis.simulation.study_folder import write_simulated_study  # noqa: E402
from harness.explore import write_explorer  # noqa: E402
from harness.study.store import Study  # noqa: E402
from harness.study.unblinding import mark_unblinded  # noqa: E402
from tests.explore.browser import browser_paths, chromium, open_page  # noqa: E402

GOAL_S = 2.0
FILLER = (
    "A proposal that links the named concepts through the stated relation, with a "
    "mechanism, a test and the data it would need. "
) * 3

# (label, element id, value, event): each runs from the unfiltered state
FILTERS = [
    ("verdict = not_published", "f-verdict", "not_published", "change"),
    ("reviewer = 2", "f-reviewer", "1", "change"),
    ("condition = cross", "f-condition", "2", "change"),
    ("search 'sim-00042' (1st)", "q", "sim-00042", "input"),
    ("search 'no such text'", "q", "no such text", "input"),
]

# Runs one filter from the unfiltered state and waits until the page has drawn its result (a
# text search first decodes the long texts, so it finishes asynchronously), then resets it.
TIME_FILTER = """
const [id, value, kind, done] = arguments;
const node = document.getElementById(id);
const body = document.body;
function settle(before, then) {
  if (body.dataset.filtered !== before) { body.offsetHeight; then(); }
  else setTimeout(() => settle(before, then), 1);
}
const before = body.dataset.filtered, start = performance.now();
node.value = value;
node.dispatchEvent(new Event(kind));
settle(before, () => {
  const ms = performance.now() - start, count = document.getElementById('count').textContent;
  const again = body.dataset.filtered;
  node.value = '';
  node.dispatchEvent(new Event(kind));
  settle(again, () => done([ms, count]));
});
"""

# Follows the first listed row to its detail view (decoding the chunks it needs).
TIME_FOLLOW = """
const done = arguments[0];
const body = document.body, before = body.dataset.shown, start = performance.now();
document.querySelector('#list li').click();
(function wait() {
  if (body.dataset.shown !== before) { body.offsetHeight; done(performance.now() - start); }
  else setTimeout(wait, 1);
})();
"""


def build(folder: Path, topics: int) -> Path:
    write_simulated_study(folder, Design(samples=1, reviewers=3), topics=topics, seed=topics)
    with Study.open(folder) as study, study.transaction() as conn:
        conn.execute("UPDATE items SET display_text = 'Idea ' || item_id || '. ' || ?", (FILLER,))
        conn.execute("UPDATE outputs SET text = 'Output ' || output_id || '. ' || ?", (FILLER,))
        rows = conn.execute("SELECT item_id, reviewer_id FROM reviews").fetchall()
        conn.executemany(
            "INSERT INTO searches (search_id, item_id, reviewer_id, database, query, filters, "
            "run_at, total_hits, hits, relevant_ids, dedup_key, source) VALUES (?, ?, ?, "
            "'local', ?, '{}', '2026-01-01T00:00:00Z', 120, ?, '[]', ?, 'automated')",
            [
                (
                    f"s{n}",
                    item,
                    reviewer,
                    f"concept one AND concept two {n % 97}",
                    json.dumps(
                        [
                            {
                                "id": f"W{n}-{k}",
                                "doi": f"10.1/{n}.{k}",
                                "title": f"A retrieved work on topic {n % 1000}, part {k}",
                                "year": 2010 + k,
                                "score": 3.0 - k,
                                "rank": k + 1,
                            }
                            for k in range(3)
                        ]
                    ),
                    f"k{n}",
                )
                for n, (item, reviewer) in enumerate(rows)
            ],
        )
    return folder


def measure(driver, page: Path, unblinded: bool) -> dict[str, object]:
    start = time.perf_counter()
    open_page(driver, page, timeout=120)
    wall = time.perf_counter() - start
    ready_ms = float(driver.execute_script("return document.body.dataset.readyMs"))
    filters = {}
    for label, element, value, event in FILTERS:
        if element == "f-condition" and not unblinded:
            continue
        ms, count = driver.execute_async_script(TIME_FILTER, element, value, event)
        filters[label] = (ms / 1000, count)
    follow = driver.execute_async_script(TIME_FOLLOW) / 1000
    return {
        "wall": wall,
        "ready": ready_ms / 1000,
        "filters": filters,
        "follow": follow,
        "mb": page.stat().st_size / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=10_000)
    args = parser.parse_args()
    if browser_paths() is None:
        print("no chromium/chromedriver: install the Debian packages chromium and chromium-driver")
        return
    worst_open = worst_filter = 0.0
    with tempfile.TemporaryDirectory() as tmp, chromium() as driver:
        driver.set_script_timeout(120)
        for topics in sorted({1_000, args.topics}):
            study = build(Path(tmp) / f"s{topics}", topics)
            for unblinded in (False, True):
                if unblinded:
                    with Study.open(study) as s:
                        mark_unblinded(s)
                start = time.perf_counter()
                page = write_explorer(study, Path(tmp) / f"p{topics}{unblinded}.html")
                write_s = time.perf_counter() - start
                m = measure(driver, page, unblinded)
                kind = "unblinded" if unblinded else "blinded"
                print(
                    f"{topics} topics, {kind}: page {m['mb']:.1f} MB written in "
                    f"{write_s:.2f} s; ready {m['ready']:.2f} s after navigation "
                    f"(driver load {m['wall']:.2f} s)"
                )
                for label, (seconds, count) in m["filters"].items():
                    print(f"    filter {label:<28} {1000 * seconds:8.1f} ms  ({count})")
                print(f"    follow the first row to its detail {1000 * m['follow']:8.1f} ms")
                if topics == args.topics:
                    worst_open = max(worst_open, m["ready"], m["wall"])
                    worst_filter = max([worst_filter, *(s for s, _ in m["filters"].values())])
    print(
        f"{args.topics} topics: slowest open {worst_open:.2f} s = {worst_open / GOAL_S:.2f} x "
        f"the {GOAL_S:.0f} s goal, slowest filter {worst_filter:.3f} s = "
        f"{worst_filter / GOAL_S:.3f} x -> "
        f"{'PASS' if max(worst_open, worst_filter) < GOAL_S else 'FAIL'}"
    )


if __name__ == "__main__":
    main()
