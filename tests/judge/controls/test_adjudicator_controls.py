"""Adjudicators are measured like primary reviewers: planted controls in their assignments, by
the same routing rules, with room kept in their capacity, and nothing that names the sample."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.judge.blinding.leak_audit import control_findings, scan_packets
from harness.study.manifest import read_manifest
from harness.study.store import Study
from harness.study.tables.adjudication import sample_item_ids
from tests.cli_run import run_subprocess
from tests.judge.conftest import fill_study
from tests.judge.controls_study import (
    ADJUDICATORS,
    CUTOFF,
    ROSTER,
    make_controlled,
    small_plan,
)

MINIMUM = 3  # controls per reviewer at least (plan `controls.min_per_reviewer`)
TIERS_SQL = """
SELECT a.item_id, a.reviewer_id, r.role, r.kind, r.capacity, i.control_id, c.expected, c.kind AS control_kind,
       c.split, COALESCE(p.topic_id, c.topic_id) AS topic_id, a.position
FROM assignments a JOIN items i USING (item_id) JOIN reviewers r USING (reviewer_id)
LEFT JOIN outputs o ON o.output_id = i.output_id LEFT JOIN prompts p ON p.prompt_id = o.prompt_id
LEFT JOIN controls c ON c.control_id = i.control_id
"""


@pytest.fixture(scope="module")
def tiers_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_controlled(
        tmp_path_factory.mktemp("tiers"),
        roster=ROSTER + ADJUDICATORS,
        adjudicated=3,
        minimum=MINIMUM,
    )


@pytest.fixture
def tiers(tiers_template: Path, tmp_path: Path) -> Study:
    shutil.copytree(tiers_template, tmp_path / "study")
    study = Study.open(tmp_path / "study")
    yield study
    study.close()


def test_every_adjudicator_gets_controls_of_both_answers(tiers: Study) -> None:
    rows = tiers.frame(TIERS_SQL)
    adjudicators = rows[rows.role == "adjudicator"]
    assert adjudicators.reviewer_id.nunique() == 7
    controls = adjudicators[adjudicators.control_id.notna()]
    for reviewer, mine in controls.groupby("reviewer_id"):
        assert len(mine) >= MINIMUM, reviewer
        assert set(mine.expected) == {"published", "not_published"}, reviewer
    assert set(controls.control_kind) == {"cross", "single"}  # the bank's single-field ones too
    # their real items are the sample's, per_item (2) adjudicators each, as without controls
    real = adjudicators[adjudicators.control_id.isna()]
    sample = sample_item_ids(tiers)
    assert len(sample) == 9
    assert set(real.item_id) == sample and set(real.groupby("item_id").size()) == {2}
    # the planned numbers and what was routed, in the manifest (counts only)
    section = read_manifest(tiers.path).record()["controls"]
    for reviewer, n in Counter(controls.reviewer_id).items():
        assert section["per_reviewer"][reviewer] == n
        assert section["planned_per_reviewer"][reviewer] >= MINIMUM
    assert not any("fewer controls than planned" in note for note in section["notes"])


def test_the_routing_rules_of_primary_reviewers_hold_for_adjudicators(tiers: Study) -> None:
    rows = tiers.frame(TIERS_SQL)
    for reviewer, mine in rows.groupby("reviewer_id"):
        assert len(mine) <= mine.capacity.iat[0], reviewer  # real and control items together
        assert sorted(mine.position) == list(range(1, len(mine) + 1)), reviewer  # one order
        if mine.kind.iat[0] == "human":  # never two items of one topic, real or control
            topics = mine.topic_id.dropna()
            assert topics.is_unique, reviewer
    # controls and real items interleaved in each adjudicator's order, not in blocks
    blocks = 0
    for _, mine in rows[rows.role == "adjudicator"].groupby("reviewer_id"):
        flags = mine.sort_values("position").control_id.notna().tolist()
        blocks += flags in (sorted(flags), sorted(flags, reverse=True))
    assert blocks < 7
    # each control goes to at most per_item (2) adjudicators; a control may also be a primary's
    adj = rows[(rows.role == "adjudicator") & rows.control_id.notna()]
    assert adj.groupby("control_id").size().max() <= 2
    primary = set(rows[(rows.role == "primary") & rows.control_id.notna()].control_id)
    assert primary and primary & set(adj.control_id)


def test_no_packet_names_the_sample_and_the_leak_audit_ran(tiers: Study) -> None:
    assert not [f for f in scan_packets(tiers) if not f.in_item_text]
    assert not [f for f in control_findings(tiers) if not f.in_item_text]
    audit = read_manifest(tiers.path).record()["leak_audit"]
    assert audit["controls"] is not None and "auc" in audit["controls"]
    # an adjudicator's packet looks like a primary reviewer's: the same columns, items only
    packets = {p.name for p in tiers.packets_dir.iterdir()}
    assert {f"adj-{n}" for n in range(1, 7)} <= packets and "adj-auto" not in packets


def test_adjudicators_without_room_for_controls_are_refused_before_any_model_runs(
    tmp_path: Path,
) -> None:
    from harness.judge.blinding.blind_stage import blind
    from tests.judge.fakes import ScriptedBackend

    tight = ADJUDICATORS.replace("capacity: 8", "capacity: 3").split("  - {id: adj-auto")[0]
    fill_study(tmp_path / "s", n_topics=10).close()
    (tmp_path / "roster.yaml").write_text(ROSTER + tight, encoding="utf-8")
    (tmp_path / "controls.yaml").write_text(
        "controls:\n"
        '  - {statement: "Joins soil moisture sensing with auction design for water.", '
        "expected: not_published, kind: cross, text: "
        '"Irrigation water sold in auctions that read soil sensors."}\n',
        encoding="utf-8",
    )
    backend = ScriptedBackend()
    with pytest.raises(HarnessError, match="room kept for their control items") as caught:
        blind(
            tmp_path / "s",
            reviewers=tmp_path / "roster.yaml",
            backend=backend,
            cutoff=CUTOFF,
            controls=tmp_path / "controls.yaml",
            plan=small_plan(tmp_path, adjudicated=3, minimum=MINIMUM),
        )
    assert caught.value.column == "capacity" and "short by" in str(caught.value)
    assert not backend.seen
    with Study.open(tmp_path / "s") as study:
        assert study.count("assignments") == 0 and study.count("controls") == 0
    # without controls the same roster takes the sample: three items each, no room needed
    blind(
        tmp_path / "s",
        reviewers=tmp_path / "roster.yaml",
        backend=backend,
        extract=False,
        normalise=False,
        bank_controls=False,
        plan=small_plan(tmp_path, adjudicated=3, minimum=MINIMUM),
    )


def test_an_automated_adjudicator_is_calibrated_and_scored_like_a_primary(
    tiers: Study, tmp_path: Path
) -> None:
    from harness.analysis.statistics.accuracy import accuracy_table, coded_controls
    from harness.judge.automated.auto_review import run_automated

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        json.dumps({"id": "W1", "title": "Alpha 1 gamma 1", "year": 1971, "abstract": "x"}) + "\n",
        encoding="utf-8",
    )
    table = run_automated(tiers, sources=[f"local:{corpus}"]).set_index("reviewer_id")
    assert table.loc["adj-auto", "pending"] == 0 and not table.loc["adj-auto", "failed"]
    rule = tiers.rows("SELECT status FROM calibrations WHERE reviewer_id = 'adj-auto'")
    assert rule and rule[0][0] in ("calibrated", "uncalibrated")
    held_out = tiers.count(
        "assignments a JOIN items i USING (item_id) JOIN controls c USING (control_id)",
        "a.reviewer_id = 'adj-auto' AND c.split = 'held_out'",
    )
    assert held_out >= 1
    frame = tiers.frame(
        "SELECT r.item_id, i.control_id, r.reviewer_id, rv.kind AS reviewer_kind, r.verdict, "
        "c.expected, c.kind AS control_kind, c.split FROM reviews r JOIN items i USING (item_id) "
        "JOIN controls c USING (control_id) JOIN reviewers rv USING (reviewer_id) "
        "WHERE r.reviewer_id = 'adj-auto'"
    )
    counted = accuracy_table(coded_controls(frame, "not_novel"), 0.95)[0]
    assert counted.label == "adj-auto"
    assert counted.published + counted.unpublished == held_out  # held-out controls only


def test_cli_blind_with_adjudicators_and_controls_in_a_child_process(tmp_path: Path) -> None:
    fill_study(tmp_path / "s", n_topics=8).close()
    roster = tmp_path / "roster.yaml"
    roster.write_text(ROSTER + ADJUDICATORS, encoding="utf-8")
    entries = "".join(
        f'  - {{statement: "Combines method {n} with material {n} in a new design.", '
        f"expected: {'published' if n % 2 else 'not_published'}, kind: cross, "
        f"evidence: {{title: Work number {n}, year: {1990 if n % 2 else 2010}}}, "
        f'text: "Material {n} could be shaped by method {n}. A trial would compare it."}}\n'
        for n in range(8)
    )
    (tmp_path / "controls.yaml").write_text("controls:\n" + entries, encoding="utf-8")
    study = str(tmp_path / "s")
    done = run_subprocess(
        "judge", "--blind", "--study", study, "--reviewers", str(roster),
        "--no-extract", "--no-normalise", "--no-bank-controls",
        "--controls", str(tmp_path / "controls.yaml"), "--cutoff", CUTOFF,
        "--plan", str(small_plan(tmp_path, adjudicated=2, minimum=2)),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "adjudication: 2 of 8 topics drawn" in done.stdout
    assert "Controls: " in done.stdout and "per reviewer: adj-1 " in done.stdout
    # the total adds up its parts: real items x k, controls of both tiers, adjudicators
    counted = re.search(
        r"Routing: 24 real items x k=2 = 48, plus (\d+) assignments of (\d+) control items, "
        r"plus 12 adjudicator assignments = (\d+) assignments",
        done.stdout,
    )
    assert counted is not None, done.stdout
    assert int(counted[3]) == 48 + int(counted[1]) + 12
    with Study.open(tmp_path / "s") as s:
        per = dict(
            s.rows(
                "SELECT a.reviewer_id, COUNT(*) FROM assignments a JOIN items i USING (item_id) "
                "JOIN reviewers r USING (reviewer_id) WHERE i.control_id IS NOT NULL "
                "AND r.role = 'adjudicator' GROUP BY a.reviewer_id"
            )
        )
    assert len(per) == 7 and min(per.values()) >= 2
    status = run_subprocess("judge", "--status", "--study", study)
    assert status.returncode == 0, status.stderr
    # every assignment of the adjudicators counts, their controls too (which stay unnamed)
    assigned = 12 + sum(per.values())
    assert f"Adjudication: 2 topics drawn, 6 sample items; 0 of {assigned}" in status.stdout
