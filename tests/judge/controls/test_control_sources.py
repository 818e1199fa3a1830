"""Control items in the blinded stream: sources, numbers, sealing, packets, round trip."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from openpyxl import load_workbook

import harness
from harness.errors import HarnessError
from harness.judge.blinding.leak_audit import ID_PATTERN, control_findings, scan_packets
from harness.judge.controls import control_sources as K
from harness.models.base import ModelAPI
from harness.study.blinding import KEY_SQL, canonical_key, commitment, salt
from harness.study.manifest import read_manifest
from harness.study.store import Study
from tests.judge.controls_study import CUTOFF, N_TOPICS, make_controlled

CONTROL_SQL = """
SELECT r.item_id, i.control_id, r.reviewer_id, rv.kind AS reviewer_kind, r.verdict, c.expected,
       c.kind AS control_kind, c.split
FROM reviews r JOIN items i ON i.item_id = r.item_id
JOIN controls c ON c.control_id = i.control_id JOIN reviewers rv ON rv.reviewer_id = r.reviewer_id
"""


@pytest.fixture(scope="module")
def controlled_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_controlled(tmp_path_factory.mktemp("controlled"))


@pytest.fixture
def controlled(controlled_template: Path, tmp_path: Path) -> Study:
    target = tmp_path / "study"
    shutil.copytree(controlled_template, target)
    study = Study.open(target)
    yield study
    study.close()


# -- sources and numbers --------------------------------------------------------------------------
def test_bank_controls_are_split_by_the_cutoff_year(controlled: Study) -> None:
    rows = controlled.rows("SELECT * FROM controls")
    cut = int(CUTOFF[:4])
    bank = [r for r in rows if r["source"] == "bank"]
    assert bank and {r["expected"] for r in bank} == {"published", "not_published"}
    for r in bank:
        year = json.loads(r["evidence"])["year"]
        assert year != cut  # the cut-off's own year is left out
        assert (year < cut) == (r["expected"] == "published")
        title = json.loads(r["evidence"])["title"]
        assert (r["kind"] == "single") == title.startswith("Within")
    section = read_manifest(controlled.path).record()["controls"]
    made = section["made"]  # written by the model under test, not by the blinded steps' backend
    assert "writer" not in section
    assert set(made["models"]) == {"local/TestModel-7B-chat"}
    assert made["models"]["local/TestModel-7B-chat"]["run_settings"] == {}  # the fake: nothing
    assert made["kept"] == made["generated"] == len(rows) - 1  # the file's `text` control
    assert made["dropped"] == {} and "states both planted concepts" in made["rule"]
    assert made["templates"] == {
        "family-1": hashlib.sha256(
            (Path(harness.__file__).parent.parent / "prompts/generate/family-1.j2").read_bytes()
        ).hexdigest()
    }
    assert section["fidelity"]["n"] == len(rows)
    assert 0.0 <= section["fidelity"]["mean_word_share"] <= 1.0
    notes = section["notes"]
    assert any(f"own year {cut} left out" in n for n in notes)
    assert {r["source"] for r in rows} == {"bank", "file:controls.yaml"}
    # every control is an item, with an id from the same generator as real items
    items = controlled.rows(
        "SELECT item_id, control_id, original_text FROM items WHERE control_id IS NOT NULL"
    )
    assert sorted(r["control_id"] for r in items) == sorted(r["control_id"] for r in rows)
    assert all(ID_PATTERN.fullmatch(r["item_id"]) for r in items)
    texts = {r["control_id"]: r["text"] for r in rows}
    assert all(texts[r["control_id"]] == r["original_text"] for r in items)


def test_split_is_stratified_by_expected_verdict(controlled: Study) -> None:
    for expected in ("published", "not_published"):
        splits = [
            r[0]
            for r in controlled.rows("SELECT split FROM controls WHERE expected = ?", (expected,))
        ]
        assert abs(splits.count("calibration") - splits.count("held_out")) <= 1


def test_routing_gives_each_reviewer_the_planned_numbers(controlled: Study) -> None:
    section = read_manifest(controlled.path).record()["controls"]
    planned, got = section["planned_per_reviewer"], section["per_reviewer"]
    assert got == planned and planned["auto"] == 6 and planned["ann"] == 2
    counts = dict(
        controlled.rows(
            "SELECT a.reviewer_id, COUNT(*) FROM assignments a JOIN items i USING (item_id) "
            "WHERE i.control_id IS NOT NULL GROUP BY a.reviewer_id"
        )
    )
    assert counts == got
    per_control = controlled.rows(
        "SELECT COUNT(*) FROM assignments a JOIN items i USING "
        "(item_id) WHERE i.control_id IS NOT NULL GROUP BY item_id"
    )
    assert {r[0] for r in per_control} == {2}  # k reviewers each
    capacity = dict(controlled.rows("SELECT reviewer_id, capacity FROM reviewers"))
    for reviewer, n in controlled.rows(
        "SELECT reviewer_id, COUNT(*) FROM assignments GROUP BY reviewer_id"
    ):
        assert n <= capacity[reviewer]
    # a human reviewer never sees two items of one topic, real or control
    topics = controlled.rows(
        "SELECT a.reviewer_id, COALESCE(p.topic_id, c.topic_id) FROM assignments a "
        "JOIN items i USING (item_id) JOIN reviewers r USING (reviewer_id) "
        "LEFT JOIN outputs o ON o.output_id = i.output_id "
        "LEFT JOIN prompts p ON p.prompt_id = o.prompt_id "
        "LEFT JOIN controls c ON c.control_id = i.control_id "
        "WHERE r.kind = 'human' AND COALESCE(p.topic_id, c.topic_id) IS NOT NULL"
    )
    pairs = [tuple(r) for r in topics]
    assert len(pairs) == len(set(pairs))
    mix = controlled.rows(
        "SELECT a.reviewer_id, SUM(c.expected = 'published'), COUNT(*) FROM assignments a "
        "JOIN items i USING (item_id) JOIN controls c ON c.control_id = i.control_id "
        "GROUP BY a.reviewer_id"
    )
    for _, published, n in mix:  # both kinds of answer for every reviewer, near half each
        assert 1 <= published <= n - 1 and abs(2 * published - n) <= 2


def test_positions_mix_controls_with_real_items(controlled: Study) -> None:
    for (reviewer,) in controlled.rows("SELECT DISTINCT reviewer_id FROM assignments"):
        positions = [
            r[0]
            for r in controlled.rows(
                "SELECT position FROM assignments WHERE reviewer_id = ? ORDER BY position",
                (reviewer,),
            )
        ]
        assert positions == list(range(1, len(positions) + 1))
    flags = [
        r[0]
        for r in controlled.rows(
            "SELECT i.control_id IS NOT NULL FROM assignments a JOIN items i USING (item_id) "
            "WHERE a.reviewer_id = 'auto' ORDER BY a.position"
        )
    ]
    assert flags[:6] != [1] * 6 and flags[-6:] != [1] * 6


# -- packets --------------------------------------------------------------------------------------
def _style(cell) -> tuple:
    return (
        cell.font.b,
        cell.font.i,
        cell.font.sz,
        cell.font.color and cell.font.color.rgb,
        cell.fill.fgColor.rgb,
        cell.alignment.wrap_text,
        cell.alignment.vertical,
        cell.number_format,
        cell.protection.locked,
        cell.border.left.style,
    )


def test_controls_look_like_real_items_in_every_packet_file(controlled: Study) -> None:
    control_ids = {
        r[0] for r in controlled.rows("SELECT item_id FROM items WHERE control_id IS NOT NULL")
    }
    secrets = [r[0] for r in controlled.rows("SELECT control_id FROM controls")]
    secrets += ["control:", "held_out", "calibration"]
    for folder in sorted(p for p in controlled.packets_dir.iterdir() if p.is_dir()):
        wb = load_workbook(folder / f"{folder.name}.xlsx")
        ws = wb["Items"]
        styles: dict[bool, set[tuple]] = {True: set(), False: set()}
        filled: dict[bool, set[tuple]] = {True: set(), False: set()}
        seen = 0
        for row in range(2, ws.max_row + 1):
            label = ws.cell(row, 1).value
            if not label:
                continue
            is_control = label in control_ids
            seen += is_control
            cells = [ws.cell(row, c) for c in range(1, ws.max_column + 1)]
            styles[is_control].add(tuple(_style(c) for c in cells))
            filled[is_control].add(tuple(c.value is None for c in cells))
        assert seen == 2  # each human has its planned controls, in the packet
        assert styles[True] <= styles[False] and filled[True] <= filled[False]
        with open(folder / "items.csv", encoding="utf-8-sig", newline="") as handle:
            records = list(csv.reader(handle))
        column = records[0].index("item_id")
        shapes: dict[bool, set[tuple]] = {True: set(), False: set()}
        for r in records[1:]:
            shapes[r[column] in control_ids].add((len(r), tuple(not v for v in r)))
        assert len(shapes[True]) and shapes[True] <= shapes[False]
        for path in folder.iterdir():
            raw = path.read_bytes()
            if path.suffix == ".xlsx":
                import zipfile

                with zipfile.ZipFile(path) as archive:
                    raw = b"".join(archive.read(n) for n in archive.namelist())
            assert not any(s.encode() in raw for s in secrets), path
    assert [
        f for f in scan_packets(controlled) + control_findings(controlled) if not f.in_item_text
    ] == []


def test_leak_audit_reports_how_well_controls_can_be_told_apart(controlled: Study) -> None:
    audit = read_manifest(controlled.path).record()["leak_audit"]["controls"]
    assert audit["n_controls"] == controlled.count("controls")
    assert audit["n_items"] == controlled.count("items")
    assert 0.0 <= audit["ci_low"] <= audit["auc"] <= audit["ci_high"] <= 1.0


def test_controls_in_one_block_are_an_error_unless_chance_explains_it(controlled: Study) -> None:
    for reviewer in ("auto", "ann"):  # 6 controls of 30 items; 2 of 8
        flags = controlled.rows(
            "SELECT a.item_id, i.control_id IS NOT NULL FROM assignments a JOIN items i "
            "USING (item_id) WHERE a.reviewer_id = ?",
            (reviewer,),
        )
        ordered = sorted(flags, key=lambda r: r[1])  # real first, controls last
        with controlled.transaction() as conn:
            for position, (item_id, _) in enumerate(ordered, start=1):
                conn.execute(
                    "UPDATE assignments SET position = ? WHERE item_id = ? AND reviewer_id = ?",
                    (position, item_id, reviewer),
                )
    found = [f for f in control_findings(controlled) if f.kind == "controls in one block"]
    assert [f.file for f in found] == ["auto"]  # 2 of 8 at the end happens by chance (1 in 14)


# -- the commitment -------------------------------------------------------------------------------
def test_commitment_covers_controls_and_analyze_refuses_a_changed_one(controlled: Study) -> None:
    from harness.analysis.data import verify_blinding

    manifest = read_manifest(controlled.path).record()
    assert manifest["blinding"]["sha256"] == commitment(controlled.conn)
    assert manifest["blinding"]["n_items"] == controlled.count("items")
    section = read_manifest(controlled.path).blinding
    assert verify_blinding(controlled, section, allow_missing=False).status == "verified"
    (cid, expected) = controlled.rows("SELECT control_id, expected FROM controls LIMIT 1")[0]
    flipped = "published" if expected == "not_published" else "not_published"
    with controlled.transaction() as conn:
        conn.execute("UPDATE controls SET expected = ? WHERE control_id = ?", (flipped, cid))
    assert commitment(controlled.conn) != manifest["blinding"]["sha256"]
    with pytest.raises(HarnessError, match="does not match the commitment"):
        verify_blinding(controlled, section, allow_missing=False)


def test_a_study_without_controls_keeps_its_key_bytes(blinded: Study) -> None:
    assert blinded.count("controls") == 0
    old = [(r[0], r[1], r[2]) for r in blinded.conn.execute(KEY_SQL)]
    expected = hashlib.sha256(canonical_key(old, salt(blinded.conn))).hexdigest()
    assert (
        commitment(blinded.conn)
        == expected
        == read_manifest(blinded.path).record()["blinding"]["sha256"]
    )
    section = read_manifest(blinded.path).record()["controls"]
    assert section["n_items"] == 0 and section["per_reviewer"] == {}


# -- round trip and automated reviewers -----------------------------------------------------------
def test_packets_with_controls_round_trip(controlled: Study, tmp_path: Path) -> None:
    from harness.judge.packets.packet_import import import_reviews
    from tests.judge.fakes import fill_workbook

    back = tmp_path / "ann-back.xlsx"
    ids = fill_workbook(controlled.packets_dir / "ann" / "ann.xlsx", back)
    import_reviews(controlled, [back])
    assert controlled.count("reviews", "reviewer_id = 'ann'") == len(ids)
    judged = controlled.frame(CONTROL_SQL)
    assert len(judged) == 2 and set(judged.reviewer_id) == {"ann"}
    assert set(judged.split) <= {"calibration", "held_out"}


def test_automated_reviewers_review_their_controls(controlled: Study, tmp_path: Path) -> None:
    from harness.judge.automated.auto_review import run_automated

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        json.dumps(
            {
                "id": "W1",
                "title": "Spin glass memory",
                "year": 1982,
                "abstract": "Spin glass theory for associative memory.",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    assigned = controlled.count("assignments", "reviewer_id = 'auto'")
    # calibration reviews every calibration-split control, assigned to the reviewer or not
    unassigned_calibration = controlled.count(
        "items i JOIN controls c ON c.control_id = i.control_id",
        "c.split = 'calibration' AND i.item_id NOT IN "
        "(SELECT item_id FROM assignments WHERE reviewer_id = 'auto')",
    )
    table = run_automated(controlled, sources=[f"local:{corpus}"])
    assert assigned == 24 + 6
    assert int(table.loc[0, "reviewed"]) == assigned + unassigned_calibration
    judged = controlled.frame(CONTROL_SQL)
    assert len(judged) == 6 + unassigned_calibration
    assert set(judged.reviewer_kind) == {"automated"}


# -- the controls file ----------------------------------------------------------------------------
GOOD = """controls:
  - statement: "Combines spin glass theory with associative memory in networks."
    expected: published
    kind: cross
    evidence: {title: "Neural networks and physical systems", year: 1982}
"""
SECOND = {  # a second entry, from line 6 on: statement 6, expected 7, kind 8, evidence 9
    "statement": '  - statement: "Joins soil moisture sensing with auction design for water."',
    "expected": "    expected: not_published",
    "kind": "    kind: single",
    "evidence": '    evidence: {title: "Water auctions read soil sensors", year: 2011}',
}
BAD = [
    ("expected", "    expected: maybe", 7, "controls[1].expected"),
    ("kind", "    kind: triple", 8, "controls[1].kind"),
    (
        "evidence",
        '    evidence: {title: "Water auctions read soil sensors", year: 1990}',
        9,
        "controls[1].evidence.year",
    ),
    ("evidence", '    evidence: {title: "W", year: 2011}', 9, "controls[1].evidence.title"),
    ("kind", "    kind: single\n    colour: red", 9, "controls[1].colour"),
    ("statement", "  - statement: short", 6, "controls[1].statement"),
    (
        "statement",
        '  - statement: "Combines spin glass theory with associative memory in networks."',
        6,
        "controls[1].statement",
    ),
]


def _second(key: str, line: str) -> str:
    return "\n".join(line if k == key else v for k, v in SECOND.items()) + "\n"


@pytest.mark.parametrize(("key", "line", "row", "field"), BAD)
def test_every_bad_entry_gets_its_line_and_field_and_nothing_is_written(
    tmp_path: Path, key: str, line: str, row: int, field: str
) -> None:
    from harness.judge.blinding.blind_stage import blind
    from tests.judge.conftest import fill_study
    from tests.judge.controls_study import ROSTER

    bad = tmp_path / "controls.yaml"
    bad.write_text(GOOD + _second(key, line), encoding="utf-8")
    fill_study(tmp_path / "s", n_topics=N_TOPICS).close()
    (tmp_path / "roster.yaml").write_text(ROSTER, encoding="utf-8")
    manifest = tmp_path / "s" / "manifest.json"
    before = manifest.read_bytes() if manifest.exists() else None
    with pytest.raises(HarnessError) as caught:
        blind(
            tmp_path / "s",
            reviewers=tmp_path / "roster.yaml",
            cutoff=CUTOFF,
            controls=bad,
            backend=_NeverCalled(),
        )
    message = str(caught.value)
    assert "\n" not in message and "controls.yaml" in message
    assert f"controls.yaml:{row}:" in message and field in message
    with Study.open(tmp_path / "s") as study:
        assert study.count("items") == study.count("controls") == 0
        assert study.meta("cutoff") is None
    assert (manifest.read_bytes() if manifest.exists() else None) == before
    assert not (tmp_path / "s" / "packets").exists()


def test_a_good_second_entry_passes(tmp_path: Path) -> None:
    from harness.judge.controls.controls_file import load_controls_file

    good = tmp_path / "controls.yaml"
    good.write_text(GOOD + _second("kind", SECOND["kind"]), encoding="utf-8")
    entries = load_controls_file(good, CUTOFF)
    assert [e.line for e in entries] == [2, 6]


class _NeverCalled(ModelAPI):
    name, model = "never", "never"

    def complete(self, requests, params):
        raise AssertionError("no model may run when the controls file is bad")


def test_cli_prints_one_line_and_exits_2(tmp_path: Path, capsys) -> None:
    from tests.cli_run import run_cli
    from tests.judge.conftest import fill_study
    from tests.judge.controls_study import ROSTER

    fill_study(tmp_path / "s", n_topics=N_TOPICS).close()
    (tmp_path / "roster.yaml").write_text(ROSTER, encoding="utf-8")
    bad = tmp_path / "c.yaml"
    bad.write_text(GOOD.replace("kind: cross", "kind: both"), encoding="utf-8")
    code, out, err = run_cli(
        capsys,
        "judge",
        "--blind",
        "--study",
        str(tmp_path / "s"),
        "--reviewers",
        str(tmp_path / "roster.yaml"),
        "--controls",
        str(bad),
        "--cutoff",
        CUTOFF,
    )
    assert code == 2
    lines = [line for line in (out + err).splitlines() if line.strip()]
    assert len(lines) == 1 and "c.yaml" in lines[0] and "controls[0].kind" in lines[0]


def test_the_example_controls_file_is_valid() -> None:
    from harness.defaults import materials_dir
    from harness.judge.controls.controls_file import load_controls_file

    entries = load_controls_file(materials_dir("judging") / "controls.example.yaml", CUTOFF)
    assert {e.entry.expected for e in entries} == {"published", "not_published"}
    assert {e.entry.kind for e in entries} == {"cross", "single"}
    pool = K.file_pool(entries, "controls.example.yaml")  # each one can be written: a pair
    assert len(pool.candidates) == len(entries) and all(c.pair for c in pool.candidates)


def test_rerun_keeps_controls_and_commitment(controlled: Study) -> None:
    from harness.judge.blinding.blind_stage import blind

    before = read_manifest(controlled.path).record()
    rows = controlled.rows("SELECT * FROM controls ORDER BY control_id")
    result = blind(controlled.path, backend=_NeverCalled())
    after = read_manifest(controlled.path).record()
    assert after["blinding"] == before["blinding"] and after["controls"] == before["controls"]
    assert controlled.rows("SELECT * FROM controls ORDER BY control_id") == rows
    assert (
        result.controls is not None
        and result.controls.assigned == before["controls"]["per_reviewer"]
    )
    assert "Controls: 9 items" in result.summary()
