"""Speed of the local corpus source beside `rank_bm25`, measured in the same run.

On 100,000 generated records (title + abstract drawn from a Zipf-distributed vocabulary), it
times index building and query throughput for the harness's local source (bm25s) and for
rank_bm25's BM25Okapi over the same tokens, and prints the ratios. Goal: >= 20x rank_bm25's
query throughput, measured end to end through `LocalSource.search` (search record included).

    python benchmarks/bench_bm25.py [--records 100000] [--queries 300] [--baseline-queries 30]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from harness.literature.corpus import load_corpus
from harness.literature.defaults import BM25_B, BM25_K1
from harness.literature.local import LocalSource
from harness.literature.text import tokenize

GOAL = 20.0


def make_records(n: int, seed: int = 7) -> list[dict[str, object]]:
    """Synthetic works: pronounceable words with Zipf frequencies, like real term statistics."""
    rng = np.random.default_rng(seed)
    syllables = [
        "ka",
        "lo",
        "mi",
        "ter",
        "san",
        "vo",
        "pre",
        "dic",
        "tion",
        "gra",
        "nu",
        "lar",
        "pho",
        "ton",
        "bio",
        "geo",
        "neu",
        "ral",
        "ma",
        "rix",
    ]
    vocab = sorted({"".join(rng.choice(syllables, size=rng.integers(2, 5))) for _ in range(60_000)})
    weights = 1.0 / np.arange(1, len(vocab) + 1) ** 1.07
    weights /= weights.sum()
    title_words = rng.choice(len(vocab), size=(n, 8), p=weights)
    abstract_words = rng.choice(len(vocab), size=(n, 60), p=weights)
    years = rng.integers(1950, 2026, size=n)
    return [
        {
            "id": f"R{i}",
            "title": " ".join(vocab[j] for j in title_words[i]),
            "abstract": " ".join(vocab[j] for j in abstract_words[i]),
            "year": int(years[i]),
        }
        for i in range(n)
    ]


def make_queries(records: list[dict[str, object]], n: int, seed: int = 11) -> list[str]:
    """Queries of 3-8 words taken from random records' titles and abstracts."""
    rng = np.random.default_rng(seed)
    queries = []
    for i in rng.integers(0, len(records), size=n):
        words = f"{records[i]['title']} {records[i]['abstract']}".split()
        queries.append(" ".join(rng.choice(words, size=int(rng.integers(3, 9)), replace=False)))
    return queries


def timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--baseline-queries",
        type=int,
        default=30,
        help="queries for rank_bm25 (it is slow; its rate is per query)",
    )
    args = parser.parse_args()
    from rank_bm25 import BM25Okapi

    records, made = timed(make_records, args.records)
    queries = make_queries(records, args.queries)
    corpus, loaded = timed(lambda: load_corpus(records, name="generated"))
    print(f"{args.records:,} generated records in {made:.1f} s; validated in {loaded:.1f} s")

    import bm25s

    tokens, tokenized = timed(lambda: [tokenize(w.text()) for w in corpus.works])
    _, ours_index = timed(
        lambda: bm25s.BM25(k1=BM25_K1, b=BM25_B).index(tokens, show_progress=False)
    )
    baseline, theirs_index = timed(lambda: BM25Okapi(tokens))
    source, build = timed(lambda: LocalSource(corpus))  # tokenize + index, end to end
    print(f"\ntokenize (shared)               {tokenized:6.2f} s")
    print(
        f"index build     harness (bm25s) {ours_index:6.2f} s  (LocalSource end to end "
        f"{build:.2f} s)"
    )
    print(f"                rank_bm25       {theirs_index:6.2f} s")
    print(
        f"                ratio           {ours_index / theirs_index:6.1f}x rank_bm25's time "
        "(bm25s scores every term at build time; rank_bm25 defers that to each query)"
    )

    source.search(queries[0], limit=10)  # warm up
    _, elapsed = timed(lambda: [source.search(q, limit=10) for q in queries])
    ours = len(queries) / elapsed
    sample = queries[: args.baseline_queries]

    def rank_bm25_search(query: str) -> list[int]:
        scores = baseline.get_scores(tokenize(query))
        return list(np.argsort(-scores)[:10])

    _, base_elapsed = timed(lambda: [rank_bm25_search(q) for q in sample])
    theirs = len(sample) / base_elapsed
    agree = sum(
        source.search(q, limit=1).hits[0].id == f"R{rank_bm25_search(q)[0]}" for q in sample[:10]
    )
    print(
        f"\nqueries/s       harness search  {ours:8.1f}  ({len(queries)} queries, top 10, "
        "search record included)"
    )
    print(f"                rank_bm25       {theirs:8.1f}  ({len(sample)} queries, top 10)")
    ratio = ours / theirs
    print(
        f"                ratio           {ratio:8.1f}x  (goal >= {GOAL:.0f}x: "
        f"{'met' if ratio >= GOAL else 'NOT met'})"
    )
    print(f"top hit agrees with rank_bm25 on {agree}/10 queries (BM25 variants differ slightly)")


if __name__ == "__main__":
    main()
