"""The Snowball stemmer beside the suffix stemmer it replaced, measured in the same run.

On the demonstration corpus vocabulary (the topic bank's known links, every content word of
their titles and summaries), it counts the singular/plural pairs present in the vocabulary
(w and w+s, w+es, or y -> ies) that each stemmer splits into two terms, so that BM25 and the
lexical match score treat them as different words, and lists them. It then times `tokenize`
over the corpus with each stemmer.

    python benchmarks/bench_stemmer.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterable
from functools import lru_cache

from harness.literature.demo_corpus import corpus_records
from harness.literature.text import stem, words
from harness.materials.bank import load_topic_bank

# The suffix stemmer used before Snowball, kept here only as the baseline of this comparison.
_SUFFIXES = (
    "ational",
    "ization",
    "fulness",
    "iveness",
    "ations",
    "ation",
    "ments",
    "ness",
    "ings",
    "ment",
    "ing",
    "ies",
    "ied",
    "ers",
    "ed",
    "er",
    "es",
    "ly",
    "s",
)


@lru_cache(maxsize=500_000)
def suffix_stem(word: str) -> str:
    if len(word) <= 4 or word.isdigit():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                return base + "y"
            if suffix == "s" and base.endswith(("s", "u", "i")):
                return word
            return base
    return word


def plural_pairs(vocabulary: Iterable[str]) -> list[tuple[str, str]]:
    """(singular, plural) pairs whose both forms occur in the vocabulary."""
    vocab = set(vocabulary)
    pairs = set()
    for word in vocab:
        forms = {word + "s", word + "es"} | ({word[:-1] + "ies"} if word.endswith("y") else set())
        pairs.update((word, form) for form in forms if form in vocab)
    return sorted(pairs)


def split(pairs: list[tuple[str, str]], stemmer: Callable[[str], str]) -> list[tuple[str, str]]:
    return [(a, b) for a, b in pairs if stemmer(a) != stemmer(b)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="passes over the corpus to time")
    args = parser.parse_args()
    texts = [
        f"{r['title']} {r.get('abstract') or ''}" for r in corpus_records(load_topic_bank().topics)
    ]
    vocabulary = {w for text in texts for w in words(text)}
    pairs = plural_pairs(vocabulary)
    n_plain = sum(not b.endswith("ies") for _, b in pairs)
    print(
        f"demonstration corpus: {len(texts)} works, {len(vocabulary)} distinct content words, "
        f"{len(pairs)} singular/plural pairs"
    )
    for name, stemmer in (("suffix stemmer (replaced)", suffix_stem), ("Snowball English", stem)):
        apart = split(pairs, stemmer)
        shown = ", ".join(f"{a}/{b}" for a, b in apart[:12]) + (" ..." if len(apart) > 12 else "")
        plain = [(a, b) for a, b in apart if not b.endswith("ies")]
        print(
            f"{name:<26} splits {len(apart):3d} of {len(pairs)} pairs ({len(plain)} of "
            f"{n_plain} -s/-es pairs): {shown}"
        )
    tokens = [words(text) for text in texts] * args.repeat
    timings = {}
    for name, stemmer in (("suffix", suffix_stem), ("snowball", stem)):
        start = time.perf_counter()
        for sentence in tokens:
            [stemmer(w) for w in sentence]
        timings[name] = time.perf_counter() - start
    n = sum(len(t) for t in tokens)
    print(
        f"stemming {n:,} words: suffix {timings['suffix']:.3f} s, Snowball "
        f"{timings['snowball']:.3f} s (ratio {timings['snowball'] / timings['suffix']:.2f}x; "
        "both cached per word)"
    )


if __name__ == "__main__":
    main()
