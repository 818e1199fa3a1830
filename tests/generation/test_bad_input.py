"""Every bad input gives one line naming file, line or topic and field; exit 2; nothing written."""

from __future__ import annotations

import sqlite3

import pytest

from harness.cli import main
from harness.study.schema import SCHEMA_VERSION
from tests.generation.conftest import write_bank

BAD = {
    "malformed_yaml": ("topics:\n  - id: x\n    field_a: [unclosed\n", "malformed YAML", ":4"),
    "duplicate_id": (None, "duplicate topic id 't000'", "id"),
    "missing_concept": (
        "  - id: bad\n    field_a: Mathematics\n    field_b: Psychology\n"
        "    concepts_a: [graph colouring]\n    concepts_b: [priming, memory]\n"
        "    relation: an analogy\n",
        "concepts_a",
        "topic bad",
    ),
    "same_field": (
        "  - id: bad\n    field_a: Mathematics\n    field_b: Mathematics\n"
        "    concepts_a: [graphs, groups]\n    concepts_b: [rings, fields]\n"
        "    relation: an analogy\n",
        "field_a equals field_b",
        "field_b",
    ),
    "same_domain": (
        "  - id: bad\n    field_a: Mathematics\n    field_b: Physics and Astronomy\n"
        "    concepts_a: [graphs, groups]\n    concepts_b: [lasers, plasma]\n"
        "    relation: an analogy\n",
        "different domains",
        "field_b",
    ),
    "unknown_field": (
        "  - id: bad\n    field_a: Alchemy\n    field_b: Psychology\n"
        "    concepts_a: [graphs, groups]\n    concepts_b: [priming, memory]\n"
        "    relation: an analogy\n",
        "'Alchemy' is not in the taxonomy",
        "field_a",
    ),
}


def run(argv: list[str], capsys) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    return int(exit_info.value.code), capsys.readouterr().err


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_topic_bank(case, tmp_path, capsys):
    extra, message, place = BAD[case]
    if case == "malformed_yaml":
        bank = tmp_path / "bank.yaml"
        bank.write_text(extra, encoding="utf-8")
    elif case == "duplicate_id":
        bank = write_bank(
            tmp_path, 2, extra=write_bank(tmp_path / "x", 1).read_text().split("topics:\n", 1)[1]
        )
    else:
        bank = write_bank(tmp_path, 2, extra=extra)
    study = tmp_path / "study"
    code, err = run(["generate", "--study", str(study), "--topics", str(bank), "--pilot"], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert str(bank) in lines[0] and message in lines[0] and place in lines[0]
    assert "Traceback" not in err
    assert not study.exists()


def test_template_with_undefined_variable(tmp_path, capsys):
    bank = write_bank(tmp_path, 2)
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "f.j2").write_text(
        "{{ concept_1 }} {{ field_1 }} {{ concept_2 }} {{ field_2 }} {{ relation }} {{ colour }}"
    )
    study = tmp_path / "study"
    code, err = run(
        [
            "generate",
            "--study",
            str(study),
            "--topics",
            str(bank),
            "--prompts",
            str(templates),
            "--pilot",
        ],
        capsys,
    )
    assert code == 2
    assert "f.j2" in err and "undefined variable" in err and "colour" in err
    assert not study.exists()


def test_study_from_newer_schema(tmp_path, capsys):
    study = tmp_path / "study"
    study.mkdir()
    conn = sqlite3.connect(study / "study.sqlite")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION + 1),))
    conn.commit()
    conn.close()
    code, err = run(["status", "--study", str(study)], capsys)
    assert code == 2
    assert "study.sqlite" in err and f"schema version {SCHEMA_VERSION + 1}" in err
    assert "newer harness" in err


def test_missing_study_is_one_line(tmp_path, capsys):
    code, err = run(["status", "--study", str(tmp_path / "nope")], capsys)
    assert code == 2 and "no study here" in err and len(err.strip().splitlines()) == 1


def test_verify_names_the_changed_file(tmp_path, capsys):
    bank = write_bank(tmp_path / "bank", 2)
    study = tmp_path / "study"
    main(["generate", "--study", str(study), "--topics", str(bank), "--pilot"])
    main(["verify", "--study", str(study)])  # unchanged: returns without an exit code
    bank.write_text(bank.read_text() + "# edited\n")
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["verify", "--study", str(study)])
    out = capsys.readouterr().out
    assert "CHANGED topics: topics/bank.yaml" in out
    assert "1 changed or missing" in out
