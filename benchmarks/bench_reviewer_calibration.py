"""What calibration does to the retrieval reviewers on the demonstration corpus.

Builds a study of control items from the bundled topic bank, in the time split the controls of
`judge --blind` use by default: a known link published on or before the cut-off is a published
control, one published after it an unpublished control (a reviewer who respects the cut-off
must not find it). Each topic's cross-field concept pair ("Combines A with B: R"), which the
corpus does not contain, is an unpublished control too. The statement of a link is the first
sentence of its summary, verbatim, or with `--reword P` a stand-in for rewording: each word
of a link statement is dropped with probability P and three concept words of another topic are
added (the demonstration corpus holds every link verbatim, so verbatim published controls are
found whatever the threshold). A seeded half of the controls forms the calibration split.

`judge --calibrate` then calibrates the `retrieval`, `retrieval-dense` and `retrieval-hybrid`
reviewers (`--no-dense`: `retrieval` alone, no embedding model), and
`judge --auto` reviews the held-out half; the script prints each reviewer's threshold, J on the
calibration split, and sensitivity, specificity and J on the held-out controls at the
calibrated threshold beside those at the documented default. Held-out scores come from a
second study with the splits swapped, whose calibration scores every held-out control with all
queries (`judge --auto` stops searching once a hit reaches the threshold); the verdicts
`judge --auto` wrote are checked against them.

    python benchmarks/bench_reviewer_calibration.py [--cutoff 2005] [--reword 0.4] [--seed 1]
                                                    [--no-dense]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from harness.judge.automated.auto_calibration import plan_unsure, stored_rule
from harness.judge.automated.auto_review import calibrate_automated, run_automated
from harness.judge.automated.youden import Observation, accuracy
from harness.literature.review_methods import method_of
from harness.materials.bank import load_topic_bank
from harness.study.store import Study


def reword(sentence: str, others: list[str], p: float, rng: random.Random) -> str:
    """Each word dropped with probability p; three words of other topics' concepts added."""
    kept = [w for w in sentence.rstrip(".").split() if rng.random() >= p]
    return " ".join(kept + rng.sample(others, 3)) + "."


def controls(cutoff: int, p: float, seed: int) -> list[tuple[str, str, str]]:
    """(statement, expected, source) for every known link and every topic's cross pair."""
    rng = random.Random(seed)
    topics = load_topic_bank().topics
    rows = []
    for topic in topics:
        others = [
            w
            for t in topics
            if t.id != topic.id
            for c in (*t.concepts_a, *t.concepts_b)
            for w in c.split()
        ]
        for link in topic.known_links:
            sentence = link.summary.split(". ")[0].rstrip(".") + "."
            sentence = reword(sentence, others, p, rng) if p > 0 else sentence
            rows.append(
                (
                    sentence,
                    "published" if link.year <= cutoff else "not_published",
                    f"link {link.year}",
                )
            )
        rows.append(
            (
                f"Combines {topic.concepts_a[0]} with {topic.concepts_b[0]}: {topic.relation}.",
                "not_published",
                "concept pair",
            )
        )
    return rows


def build(
    folder: Path,
    rows: list[tuple[str, str, str]],
    cutoff: int,
    calibration: set[int],
    methods: list[str],
) -> Study:
    study = Study.open(folder, create=True)
    with study.transaction() as conn:
        conn.execute("INSERT INTO meta VALUES ('cutoff', ?)", (f"{cutoff}-12-31",))
        for method in methods:
            conn.execute(
                "INSERT INTO reviewers (reviewer_id, kind, method, expertise, capacity) "
                "VALUES (?, 'automated', ?, '[]', 10000)",
                (method, method),
            )
        for n, (statement, expected, source) in enumerate(rows):
            split = "calibration" if n in calibration else "held_out"
            conn.execute(
                "INSERT INTO controls VALUES (?, ?, ?, ?, 'cross', 'bank', NULL, ?, ?, NULL)",
                (f"c{n}", statement, statement, expected, json.dumps({"source": source}), split),
            )
            conn.execute(
                "INSERT INTO items (item_id, control_id, original_text, "
                "core_combination, display_text, steps) VALUES (?, ?, ?, ?, ?, '[]')",
                (f"i{n:04d}", f"c{n}", statement, statement, statement),
            )
            for method in methods:
                conn.execute("INSERT INTO assignments VALUES (?, ?, ?)", (f"i{n:04d}", method, n))
    return study


def held_out(
    scores: dict[str, float | None], expected: dict[str, str], threshold: float, unsure: str
) -> str:
    """Accuracy on the held-out controls at `threshold`, from their full scores."""
    obs = [Observation(expected[item], score, "not_published") for item, score in scores.items()]
    a = accuracy(obs, threshold, unsure)
    return (
        f"sens {a.sensitivity:.3f} spec {a.specificity:.3f} J {a.youden:.3f} "
        f"(n {a.n_published}+{a.n_not_published})"
    )


def auto_agrees(
    study: Study, reviewer: str, scores: dict[str, float | None], threshold: float
) -> bool:
    """Whether every held-out verdict of `judge --auto` is what its full score gives."""
    got = {
        r["item_id"]: r["verdict"]
        for r in study.rows(
            "SELECT item_id, verdict FROM reviews WHERE reviewer_id = ?", (reviewer,)
        )
    }
    return all(
        got[item] == ("published" if s is not None and s >= threshold else "not_published")
        for item, s in scores.items()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cutoff", type=int, default=2005)
    parser.add_argument("--reword", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-dense", action="store_true")
    args = parser.parse_args()
    methods = ["retrieval"] + ([] if args.no_dense else ["retrieval-dense", "retrieval-hybrid"])
    rows = controls(args.cutoff, args.reword, args.seed)
    n_pub = sum(r[1] == "published" for r in rows)
    print(
        f"{len(rows)} controls: {n_pub} published (known links <= {args.cutoff}), "
        f"{len(rows) - n_pub} unpublished (later links and concept pairs); half calibrate; "
        f"link statements {'reworded, p ' + str(args.reword) if args.reword else 'verbatim'}"
    )
    order = list(range(len(rows)))
    random.Random(args.seed).shuffle(order)
    calibration = set(order[: len(rows) // 2])
    expected = {f"i{n:04d}": r[1] for n, r in enumerate(rows)}
    with tempfile.TemporaryDirectory() as tmp:
        study = build(Path(tmp) / "study", rows, args.cutoff, calibration, methods)
        start = time.perf_counter()
        _, lines = calibrate_automated(study)
        print("\n".join(lines) + f"\n(calibration {time.perf_counter() - start:.1f} s)")
        run_automated(study)  # reviews the held-out controls with the calibrated rules
        swapped = build(
            Path(tmp) / "swapped", rows, args.cutoff, set(range(len(rows))) - calibration, methods
        )
        calibrate_automated(swapped)
        unsure = plan_unsure(study)
        for method in methods:
            rule, other = stored_rule(study, method), stored_rule(swapped, method)
            assert rule is not None and other is not None
            scores = {item: score for item, score in other.scores or []}
            default = method_of(method).default_threshold
            print(
                f"{method:<16} held out, default    {default:<6.4g} "
                f"{held_out(scores, expected, default, unsure)}"
            )
            agree = auto_agrees(study, method, scores, rule.threshold)
            print(
                f"{method:<16} held out, calibrated {rule.threshold:<6.4g} "
                f"{held_out(scores, expected, rule.threshold, unsure)}; judge --auto "
                f"verdicts {'agree' if agree else 'DISAGREE'}"
            )
        study.close()
        swapped.close()


if __name__ == "__main__":
    main()
