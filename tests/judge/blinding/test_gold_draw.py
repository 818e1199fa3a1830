"""The gold (adjudication) sample: drawn reproducibly with equal inclusion probabilities, kept
proportional per domain pair, sealed in the key, routed to adjudicators only, never named in a
packet, and reviewed through the usual packets."""

from __future__ import annotations

import hashlib
import shutil
from collections import Counter
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.judge.blinding.blind_stage import blind
from harness.judge.blinding.gold_draw import systematic_draw
from harness.judge.blinding.leak_audit import scan_packets
from harness.judge.packets.packet_import import import_reviews
from harness.study.blinding import KEY_SQL, canonical_key, commitment, key_rows, salt
from harness.study.manifest import read_manifest
from harness.study.store import Study
from harness.study.tables.adjudication import count_sample, sample_item_ids, sample_topics
from tests.cli_run import run_subprocess
from tests.judge.conftest import fill_study
from tests.judge.fakes import fill_workbook
from tests.plans import primary_only_plan

N_TOPICS = 12  # the bundled plan draws 0.25 of them: 3 topics, 9 items, 18 adjudications
ROSTER = """reviewers:
  - {id: ann, kind: human, capacity: 12}
  - {id: ben, kind: human, capacity: 12}
  - {id: auto, kind: automated, method: retrieval, capacity: 100}
  - {id: dense, kind: automated, method: retrieval-dense, capacity: 100}
""" + "".join(
    f"  - {{id: adj-{n}, kind: human, role: adjudicator, capacity: 5}}\n" for n in range(1, 7)
)


def _roster(folder: Path, text: str = ROSTER) -> Path:
    path = folder / "roster.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def gold_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gold")
    fill_study(root / "study", n_topics=N_TOPICS).close()
    blind(root / "study", reviewers=_roster(root), extract=False, normalise=False, seed=3)
    return root / "study"


@pytest.fixture
def gold(gold_template: Path, tmp_path: Path) -> Study:
    shutil.copytree(gold_template, tmp_path / "study")
    study = Study.open(tmp_path / "study")
    yield study
    study.close()


# -- the draw -------------------------------------------------------------------------------------
STRATA = {f"t{i:03d}": f"pair-{i % 5}" for i in range(37)} | {"t900": "rare"}


def test_the_draw_is_reproducible_and_depends_on_the_seed() -> None:
    first = systematic_draw(STRATA, 9, seed=7)
    assert first == systematic_draw(dict(reversed(list(STRATA.items()))), 9, seed=7)
    assert len(set(first)) == 9 and set(first) <= set(STRATA)
    assert any(systematic_draw(STRATA, 9, seed=s) != first for s in range(8, 12))


def test_each_stratum_gets_its_proportional_share_within_one() -> None:
    sizes = Counter(STRATA.values())
    for seed in range(200):
        drawn = Counter(STRATA[t] for t in systematic_draw(STRATA, 9, seed))
        for stratum, size in sizes.items():
            assert abs(drawn[stratum] - size * 9 / len(STRATA)) < 1


def test_every_topic_has_inclusion_probability_n_over_n() -> None:
    runs, n = 4000, 9
    counts = Counter(t for seed in range(runs) for t in systematic_draw(STRATA, n, seed))
    expected = n / len(STRATA)  # 0.237; one binomial sd over 4000 runs is 0.0067
    assert set(counts) == set(STRATA)
    assert all(abs(c / runs - expected) < 0.03 for c in counts.values())


def test_size_of_the_plan_section() -> None:
    from harness.analysis.plan.plan_file import Adjudication

    assert Adjudication().size(12) == 3 and Adjudication().size(2) == 2
    assert Adjudication(topics=0.25).size(1) == 1  # never more than there are
    assert Adjudication(topics=5).size(3) == 3 and Adjudication(topics=5).size(40) == 5
    assert Adjudication(topics=0).size(40) == 0 and Adjudication(topics=1.0).size(7) == 7


# -- the study ------------------------------------------------------------------------------------
def test_blind_draws_stores_and_routes_the_sample(gold: Study) -> None:
    drawn = sample_topics(gold)
    assert count_sample(gold) == len(drawn) == 3
    section = read_manifest(gold.path).record()["adjudication"]
    assert section["seed"] == 20261202 and section["size"] == 3 and section["population"] == 12
    assert sum(section["strata"].values()) == 3 and "systematic" in section["method"]
    sample = sample_item_ids(gold)
    assert len(sample) == 9  # every condition of each drawn topic
    rows = gold.rows(
        "SELECT a.item_id, a.reviewer_id, r.role FROM assignments a "
        "JOIN reviewers r ON r.reviewer_id = a.reviewer_id"
    )
    gold_items = Counter(r["item_id"] for r in rows if r["role"] == "adjudicator")
    assert set(gold_items) == sample and set(gold_items.values()) == {2}
    primary = Counter(r["item_id"] for r in rows if r["role"] == "primary")
    assert len(primary) == gold.count("items") and set(primary.values()) == {2}


def test_the_sample_is_sealed_and_committed(gold: Study) -> None:
    rows = [r for r in key_rows(gold.conn) if r[0].startswith("sample:")]
    assert sorted(rows) == [(f"sample:{t}", s, "adjudication") for t, s in sample_topics(gold)]
    before = commitment(gold.conn)
    assert read_manifest(gold.path).record()["blinding"]["sha256"] == before
    (topic, stratum), *_ = sample_topics(gold)
    others = [r[0] for r in gold.rows("SELECT topic_id FROM topics")]
    swap = next(t for t in others if t not in dict(sample_topics(gold)))
    with gold.transaction() as conn:  # another topic in the sample: another commitment
        conn.execute(
            "UPDATE adjudication_sample SET topic_id = ? WHERE topic_id = ?", (swap, topic)
        )
    assert commitment(gold.conn) != before
    with pytest.raises(HarnessError, match="differs from the commitment"):
        blind(gold.path, extract=False, normalise=False)


def test_a_study_without_a_sample_keeps_its_key_bytes(blinded: Study) -> None:
    assert count_sample(blinded) == 0
    old_rows = [tuple(r) for r in blinded.conn.execute(KEY_SQL)]
    old_rows += [r for r in key_rows(blinded.conn) if r[2].startswith("control:")]
    expected = hashlib.sha256(canonical_key(old_rows, salt(blinded.conn))).hexdigest()
    assert commitment(blinded.conn) == expected


# -- packets --------------------------------------------------------------------------------------
def test_no_packet_reveals_sample_membership(gold: Study) -> None:
    assert {p.name for p in gold.packets_dir.iterdir()} == {"ann", "ben"} | {
        f"adj-{n}" for n in range(1, 7)
    }
    assert not [f for f in scan_packets(gold) if not f.in_item_text]
    packet = next((gold.packets_dir / "ann").glob("*.csv"))
    with open(packet, "a", encoding="utf-8") as handle:  # a header that names the sample
        handle.write("adjudication sample,,\r\n")
    found = [f for f in scan_packets(gold) if f.kind == "sample membership"]
    assert found and not found[0].in_item_text and "ann" in found[0].file


def test_adjudicator_packets_round_trip_through_import(gold: Study, tmp_path: Path) -> None:
    back = tmp_path / "adj-1.xlsx"
    ids = fill_workbook(gold.packets_dir / "adj-1" / "adj-1.xlsx", back)
    assert ids and set(ids) <= sample_item_ids(gold)
    frame = import_reviews(gold, [back])
    assert frame.reviewer.tolist() == ["adj-1"] and frame.reviews.tolist() == [len(ids)]
    from harness.judge.review_status import adjudication_summary

    assert adjudication_summary(gold) == (
        f"Adjudication: 3 topics drawn, 9 sample items; {len(ids)} of 18 adjudicator "
        "reviews returned"
    )


# -- refusals -------------------------------------------------------------------------------------
def test_plan_and_roster_must_agree_about_adjudicators(tmp_path: Path) -> None:
    fill_study(tmp_path / "s", n_topics=N_TOPICS).close()
    primary = ROSTER.split("  - {id: adj-1")[0]
    with pytest.raises(HarnessError, match="no reviewer with role: adjudicator") as caught:
        blind(tmp_path / "s", reviewers=_roster(tmp_path, primary), extract=False)
    assert caught.value.column == "adjudication.topics" and "\n" not in str(caught.value)
    with pytest.raises(HarnessError, match=r"2 adjudicator\(s\) but the analysis plan disables"):
        blind(
            tmp_path / "s",
            reviewers=_roster(tmp_path, ROSTER.split("  - {id: adj-3")[0]),
            plan=primary_only_plan(tmp_path),
            extract=False,
        )
    with Study.open(tmp_path / "s") as study:
        assert study.count("assignments") == 0 and study.count("adjudication_sample") == 0


def test_too_few_human_adjudicators_is_refused_before_any_model_runs(tmp_path: Path) -> None:
    fill_study(tmp_path / "s", n_topics=N_TOPICS).close()
    few = ROSTER.split("  - {id: adj-3")[0]  # two people, one item per topic each: 6 of 18
    with pytest.raises(HarnessError, match="adjudication: 3 drawn topics with 9 items") as caught:
        blind(tmp_path / "s", reviewers=_roster(tmp_path, few), extract=False, normalise=False)
    assert "short by" in str(caught.value) and caught.value.column == "adjudication.per_item"


def test_cli_blind_and_status_in_a_child_process(tmp_path: Path) -> None:
    fill_study(tmp_path / "s", n_topics=N_TOPICS).close()
    study = str(tmp_path / "s")
    done = run_subprocess(
        "judge", "--blind", "--study", study, "--reviewers", str(_roster(tmp_path)),
        "--no-extract", "--no-normalise",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "adjudication: 3 of 12 topics drawn" in done.stdout
    # what the drawn design can decide, before any review: 12 topics cannot refute
    assert "this design (simulated, planning assumptions)" in done.stdout
    assert "it cannot refute: `harness power --adjudicated`" in done.stdout
    # the bank's single-field links are all published: the error cannot be measured
    assert "differential error (adjudication.differential_error: auto): no" in done.stdout
    assert "unpublished single-field control" in done.stdout
    status = run_subprocess("judge", "--status", "--study", study)
    assert "Adjudication: 3 topics drawn, 9 sample items; 0 of 18" in status.stdout
