"""A seeded subset of a topic bank that keeps its spread (`--subset N --subset-seed S`).

The first N topics of a bank reflect the order in which they were written; a small study (the
demo) should instead cover as many domain pairs and field pairs as N allows. The rule:

1. group the topics by domain pair, and within a domain pair by field pair (unordered);
2. shuffle, with the seed, the order of the domain pairs, the order of the field pairs inside
   each domain pair, and the topics inside each field pair;
3. go round the domain pairs, taking from each, in turn, one topic of its next field pair that
   still has topics (field pairs are visited in a cycle), until N topics are taken;
4. keep the chosen topics in bank order.

So every domain pair is covered once N reaches their number, each domain pair gets about N / 6
topics (fewer only when it has no more), and within a domain pair no field pair repeats before
all of its field pairs have one topic.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from typing import TypedDict

from harness.errors import HarnessError
from harness.materials.taxonomy import Taxonomy
from harness.materials.topics import Topic

SUBSET_RULE = (
    "round robin over domain pairs, one topic per visit from the next field pair of "
    "that domain pair; domain pairs, field pairs and topics shuffled with the seed; "
    "chosen topics kept in bank order"
)


#: Two names in sorted order: a field pair or a domain pair.
Pair = tuple[str, str]


def _pair(a: str, b: str) -> Pair:
    return (a, b) if a <= b else (b, a)


def pairs_of(topic: Topic, taxonomy: Taxonomy) -> tuple[tuple[str, str], tuple[str, str]]:
    """(domain pair, field pair) of a topic, each as a sorted tuple of names."""
    fa, fb = taxonomy.known_field(topic.field_a), taxonomy.known_field(topic.field_b)
    domains = _pair(taxonomy.domain_name(fa.domain), taxonomy.domain_name(fb.domain))
    return domains, _pair(fa.name, fb.name)


def choose_subset(topics: list[Topic], taxonomy: Taxonomy, size: int, seed: int) -> list[Topic]:
    """`size` topics chosen by the rule above; the same bank, size and seed give the same ids."""
    if size < 1 or size > len(topics):
        raise HarnessError(
            f"--subset {size}: the bank has {len(topics)} topics (choose 1 to {len(topics)})",
            column="subset",
        )
    rng = random.Random(seed)
    groups: dict[tuple[str, str], dict[tuple[str, str], list[int]]] = {}
    for index, topic in enumerate(topics):
        domains, fields = pairs_of(topic, taxonomy)
        groups.setdefault(domains, {}).setdefault(fields, []).append(index)
    queues = []
    for domains in _shuffled(groups, rng):
        field_pairs = [list(groups[domains][f]) for f in _shuffled(groups[domains], rng)]
        for members in field_pairs:
            rng.shuffle(members)
        queues.append(field_pairs)
    chosen: list[int] = []
    while len(chosen) < size:
        for field_pairs in queues:
            if field_pairs and len(chosen) < size:
                members = field_pairs.pop(0)
                chosen.append(members.pop(0))
                if members:  # the field pair goes to the back of its domain pair's cycle
                    field_pairs.append(members)
    return [topics[i] for i in sorted(chosen)]


def _shuffled(keys: Iterable[Pair], rng: random.Random) -> list[Pair]:
    ordered = sorted(keys)  # a fixed order first, so the shuffle depends only on the seed
    rng.shuffle(ordered)
    return ordered


class Coverage(TypedDict):
    """What a set of topics covers: its size, distinct field and domain pairs, and the topics
    of each domain pair ("A x B")."""

    topics: int
    field_pairs: int
    domain_pairs: int
    per_domain_pair: dict[str, int]


def coverage(topics: list[Topic], taxonomy: Taxonomy) -> Coverage:
    """Topics, distinct field pairs and domain pairs (with counts) of a set of topics."""
    domains: Counter[tuple[str, str]] = Counter()
    fields: set[tuple[str, str]] = set()
    for topic in topics:
        d, f = pairs_of(topic, taxonomy)
        domains[d] += 1
        fields.add(f)
    return {
        "topics": len(topics),
        "field_pairs": len(fields),
        "domain_pairs": len(domains),
        "per_domain_pair": {f"{a} x {b}": c for (a, b), c in sorted(domains.items())},
    }
