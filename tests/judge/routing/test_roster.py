from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.judge.routing.roster import (
    demo_roster_path,
    example_roster_path,
    load_roster,
    store_roster,
    stored_roster,
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "roster.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_bundled_rosters_load() -> None:
    example = load_roster(example_roster_path())
    assert {r.kind for r in example.reviewers} == {"human", "automated"}
    assert "Economics, Econometrics and Finance" in example.get("rev-chen").expertise
    demo = load_roster(demo_roster_path())
    assert [(r.id, r.method, r.role) for r in demo.reviewers] == [
        ("retrieval", "retrieval", "primary"),
        ("retrieval-dense", "retrieval-dense", "primary"),
        ("adjudicator-hybrid", "retrieval-hybrid", "adjudicator"),
        ("adjudicator-dense", "retrieval-dense", "adjudicator"),
    ]
    # the adjudicated scale is not the primary scale again: a method no primary reviewer uses
    primary = {r.method for r in demo.with_role("primary").reviewers}
    assert {r.method for r in demo.with_role("adjudicator").reviewers} - primary
    assert all(r.kind == "automated" for r in demo.reviewers)
    assert len(example.with_role("adjudicator").reviewers) == 6


def test_expertise_is_spelled_as_the_taxonomy_spells_it(tmp_path: Path) -> None:
    roster = load_roster(
        write(
            tmp_path,
            "reviewers:\n  - {id: a, kind: human, expertise: [computer science], capacity: 3}\n",
        )
    )
    assert roster.reviewers[0].expertise == ("Computer Science",)


@pytest.mark.parametrize(
    ("text", "row", "column", "message"),
    [
        (
            "reviewers:\n  - {id: a, kind: human, capacity: 3}\n  - {id: b, kind: robot, capacity: 3}\n",
            3,
            "kind",
            "'human' or 'automated'",
        ),
        (
            "reviewers:\n  - {id: a, kind: human, capacity: 0}\n",
            2,
            "capacity",
            "greater than or equal",
        ),
        (
            "reviewers:\n  - {id: a, kind: human, capacity: 2}\n  - {id: a, kind: human, capacity: 2}\n",
            3,
            "id",
            "duplicate reviewer id",
        ),
        (
            "reviewers:\n  - {id: a, kind: human, method: retrieval, capacity: 2}\n",
            2,
            None,
            "method is for automated reviewers only",
        ),
        (
            "reviewers:\n  - {id: a, kind: automated, capacity: 2}\n",
            2,
            None,
            "automated reviewers need method",
        ),
        (
            "reviewers:\n  - {id: a, kind: human, expertise: [Medecine], capacity: 2}\n",
            2,
            "expertise",
            "did you mean 'Medicine'",
        ),
        ("reviewers:\n  - {id: 'a b/c', kind: human, capacity: 2}\n", 2, "id", "pattern"),
        ("reviewers:\n  - {id: a, kind: human, capacity: 2, email: x@y}\n", 2, "email", "Extra"),
    ],
)
def test_errors_name_file_row_and_field(
    tmp_path: Path, text: str, row: int, column: str | None, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(HarnessError) as caught:
        load_roster(path)
    error = caught.value
    assert error.file == str(path)
    assert error.row == row
    if column:
        assert error.column == column
    assert message in str(error)


def test_not_a_roster(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="list `reviewers:`"):
        load_roster(write(tmp_path, "- just a list\n"))
    with pytest.raises(HarnessError, match="malformed YAML") as caught:
        load_roster(write(tmp_path, "reviewers:\n  - {id: a\n"))
    assert caught.value.row is not None


def test_store_and_freeze_after_routing(make_study) -> None:
    study = make_study()
    roster = load_roster(demo_roster_path())
    store_roster(study, roster)
    assert stored_roster(study) == roster
    example = load_roster(example_roster_path())
    store_roster(study, example)  # not routed yet: replaced
    assert stored_roster(study) == example
    with study.transaction() as conn:
        conn.execute(
            "INSERT INTO items (item_id, output_id, original_text, core_combination, "
            "display_text, steps) VALUES ('I-AAAAAAAAAA', 'O00000', 't', NULL, 't', '[]')"
        )
        conn.execute(
            "INSERT INTO assignments (item_id, reviewer_id, position) "
            "VALUES ('I-AAAAAAAAAA', 'rev-ada', 1)"
        )
    store_roster(study, example)  # the same roster again is fine
    with pytest.raises(HarnessError, match="already routed"):
        store_roster(study, roster)
