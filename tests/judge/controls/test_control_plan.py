"""Choosing controls: the cut-off's year, the planned numbers, balance, split."""

from __future__ import annotations

from collections import Counter

import pytest

from harness.judge.controls import control_sources as K


@pytest.mark.parametrize(
    ("year", "cutoff", "expected"),
    [
        (1999, "2000-01-01", "published"),
        (2001, "2000-01-01", "not_published"),
        (2000, "2000-01-01", None),  # a year alone cannot place it
        (2000, "2000-06-30", None),
        (2000, "2000-12-31", "published"),  # a 31 December cut-off covers its whole year
        (2001, "2000-12-31", "not_published"),
        (2018, None, "published"),  # no cut-off: everything known is published
    ],
)
def test_expected_verdict_from_the_year(
    year: int, cutoff: str | None, expected: str | None
) -> None:
    assert K._expected(year, K._cut_year(cutoff)) == expected


def test_first_sentence_of_a_summary() -> None:
    assert K.first_sentence("Carried A over to B. Then C.") == "Carried A over to B."
    assert K.first_sentence("No full stop here") == "No full stop here"


def test_targets_follow_share_minimum_and_capacity() -> None:
    got = K.targets({"a": 100, "b": 10, "c": 100}, 0.2, 5, {"a": 50, "b": 50, "c": 3})
    assert got == {"a": 20, "b": 5, "c": 3}
    assert K.items_needed({"a": 20, "b": 5, "c": 3}, 2) == 14
    assert K.items_needed({"a": 7, "b": 0}, 2) == 7  # only one reviewer can take them
    assert K.items_needed({"a": 0}, 2) == 0


def _pool(n_pub: int, n_not: int, n_topics: int = 5) -> list[K.Candidate]:
    out = []
    for n in range(n_pub + n_not):
        expected = "published" if n < n_pub else "not_published"
        kind = "cross" if n % 3 else "single"
        topic = f"t{n % n_topics}"
        out.append(
            K.Candidate(
                K.control_id("bank", topic, f"s{n}"),
                f"s{n}",
                expected,
                kind,
                "bank",
                topic,
                {"title": f"w{n}", "year": 1990},
            )
        )
    return out


def test_select_is_balanced_mixed_seeded_and_spread() -> None:
    pool = _pool(20, 12)
    chosen = K.select(pool, 10, seed=3)
    assert Counter(c.expected for c in chosen) == {"published": 5, "not_published": 5}
    assert {c.kind for c in chosen} == {"cross", "single"}
    assert [c.control_id for c in chosen] == [c.control_id for c in K.select(pool, 10, seed=3)]
    assert [c.control_id for c in chosen] != [c.control_id for c in K.select(pool, 10, seed=4)]
    pub = [c.topic_id for c in chosen if c.expected == "published"]
    assert len(set(pub)) == len(pub)  # 5 published controls from 5 different topics


def test_select_fills_from_the_other_verdict_when_one_runs_short() -> None:
    chosen = K.select(_pool(20, 2), 10, seed=1)
    assert Counter(c.expected for c in chosen) == {"published": 8, "not_published": 2}
    assert len(K.select(_pool(3, 2), 10, seed=1)) == 5


def test_file_controls_come_first() -> None:
    from harness.judge.controls.controls_file import ControlEntry, FileControl

    entry = ControlEntry(
        statement="Combines x with y for z.",
        expected="published",
        kind="cross",
        evidence={"title": "Work", "year": 1990},
        concepts=["x", "y"],
        fields=["Mathematics", "Medicine"],
    )
    file_pool = K.file_pool([FileControl(entry, 2)], "mine.yaml")
    chosen = K.select(_pool(10, 10) + file_pool.candidates, 4, seed=1)
    assert chosen[0].source == "file:mine.yaml"


def test_split_is_stratified_and_seeded() -> None:
    chosen = _pool(10, 6)
    split = K.splits(chosen, 0.5, seed=9)
    for expected, n in (("published", 10), ("not_published", 6)):
        values = [split[c.control_id] for c in chosen if c.expected == expected]
        assert values.count("calibration") == n // 2
    assert split == K.splits(chosen, 0.5, seed=9)
    assert split != K.splits(chosen, 0.5, seed=10)


def test_bank_pool_without_cutoff_says_there_are_no_unpublished_controls(tmp_path) -> None:
    import json

    from tests.judge.conftest import fill_study
    from tests.judge.controls_study import links

    study = fill_study(tmp_path / "s", n_topics=2)
    with study.transaction() as conn:
        for t in range(2):
            conn.execute(
                "UPDATE topics SET data = ? WHERE topic_id = ?",
                (json.dumps(links(t)), f"topic-{t:03d}"),
            )
    pool = K.bank_pool(study, None)
    assert {c.expected for c in pool.candidates} == {"published"} and len(pool.candidates) == 7
    assert any("no time-split unpublished controls" in n for n in pool.notes)
    split = K.bank_pool(study, "2000-12-31")  # the cut-off's year counts as published
    assert Counter(c.expected for c in split.candidates) == {"published": 5, "not_published": 2}
    assert not split.notes
    study.close()
