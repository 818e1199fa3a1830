"""The seeded subset rule: its promises checked on the bundled bank for many sizes and seeds."""

from __future__ import annotations

from collections import Counter

import pytest

from harness.errors import HarnessError
from harness.materials.bank import load_topic_bank
from harness.materials.subset import choose_subset, coverage, pairs_of

BANK = load_topic_bank()


def _by_domain(topics):
    return Counter(pairs_of(t, BANK.taxonomy)[0] for t in topics)


@pytest.mark.parametrize("size", [1, 5, 6, 30, 60, 100, len(BANK.topics)])
@pytest.mark.parametrize("seed", [0, 7, 20261202])
def test_subset_keeps_the_spread(size, seed):
    chosen = choose_subset(BANK.topics, BANK.taxonomy, size, seed)
    ids = [t.id for t in chosen]
    assert len(set(ids)) == size
    order = {t.id: i for i, t in enumerate(BANK.topics)}
    assert ids == sorted(ids, key=order.__getitem__)  # bank order
    available, taken = _by_domain(BANK.topics), _by_domain(chosen)
    assert len(taken) == min(size, len(available))  # every domain pair once N allows
    # round robin: a domain pair gets fewer than another only when it has run out
    for pair, count in taken.items():
        for other, more in taken.items():
            if more > count + 1:
                assert count == available[pair], (pair, other)
    # within a domain pair, no field pair repeats before all of its field pairs have a topic
    for pair in taken:
        fields = Counter(
            pairs_of(t, BANK.taxonomy)[1] for t in chosen if pairs_of(t, BANK.taxonomy)[0] == pair
        )
        every = {
            pairs_of(t, BANK.taxonomy)[1]
            for t in BANK.topics
            if pairs_of(t, BANK.taxonomy)[0] == pair
        }
        if max(fields.values()) > 1:
            assert set(fields) == every


def test_same_seed_same_ids_other_seed_other_ids():
    a = choose_subset(BANK.topics, BANK.taxonomy, 60, 3)
    assert [t.id for t in a] == [t.id for t in choose_subset(BANK.topics, BANK.taxonomy, 60, 3)]
    assert {t.id for t in a} != {t.id for t in choose_subset(BANK.topics, BANK.taxonomy, 60, 4)}


def test_the_subset_spreads_wider_than_the_first_topics():
    first = coverage(BANK.topics[:60], BANK.taxonomy)
    chosen = coverage(choose_subset(BANK.topics, BANK.taxonomy, 60, 20261202), BANK.taxonomy)
    assert chosen["domain_pairs"] == 6
    assert chosen["domain_pairs"] >= first["domain_pairs"]
    assert min(chosen["per_domain_pair"].values()) >= min(
        8, min(coverage(BANK.topics, BANK.taxonomy)["per_domain_pair"].values())
    )


@pytest.mark.parametrize("size", [0, len(BANK.topics) + 1])
def test_sizes_outside_the_bank_are_refused(size):
    with pytest.raises(HarnessError, match="--subset"):
        choose_subset(BANK.topics, BANK.taxonomy, size, 1)
