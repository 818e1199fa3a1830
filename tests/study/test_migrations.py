"""A store made by the previous schema version opens, moves forward and keeps every row."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.study import Study
from harness.study.blinding import commitment
from harness.study.migrations import MIGRATIONS, migrate
from harness.study.schema import SCHEMA_VERSION
from harness.study.store import DB_NAME, _statements

V1 = (Path(__file__).parent / "schema_v1.sql").read_text()


def _v1_store(folder: Path) -> Path:
    """A version-1 store with one topic, prompt, output, item, reviewer, assignment and review."""
    folder.mkdir()
    db = folder / DB_NAME
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA foreign_keys=ON")
    for statement in _statements(V1):
        conn.execute(statement)
    conn.executemany(
        "INSERT INTO meta VALUES (?, ?)",
        [("schema_version", "1"), ("study_id", "s"), ("blinding_salt", "salt")],
    )
    conn.execute(
        "INSERT INTO topics VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        ("t1", "A", 1, "D1", "B", 2, "D2", "[]", "[]", "r", 3, 0.5, "{}"),
    )
    conn.execute(
        "INSERT INTO prompts VALUES (?,?,?,?,?,?,?,?,?)",
        ("p1", "t1", "cross", "f", "h", None, "text", 5, "{}"),
    )
    conn.execute(
        "INSERT INTO outputs (output_id, prompt_id, sample, status, backend, model, "
        "params, text, started_at, finished_at) "
        "VALUES ('o1','p1',0,'ok','local','m','{}','x','2026-01-01','2026-01-01')"
    )
    conn.execute("INSERT INTO items VALUES ('i1', 'o1', 'x', 'core', 'x', '{}')")
    conn.execute("INSERT INTO reviewers VALUES ('r1', 'human', NULL, '[]', 10)")
    conn.execute("INSERT INTO assignments VALUES ('i1', 'r1', 0)")
    conn.execute(
        "INSERT INTO reviews (item_id, reviewer_id, verdict, source, created_at) "
        "VALUES ('i1', 'r1', 'published', 'xlsx', '2026-01-02')"
    )
    conn.close()
    return db


def test_version_1_store_moves_forward_keeping_rows_and_commitment(tmp_path: Path) -> None:
    db = _v1_store(tmp_path / "s")
    before = commitment(sqlite3.connect(db))
    with Study.open(tmp_path / "s") as study:
        assert study.meta("schema_version") == str(SCHEMA_VERSION)
        assert "schema 1 -> 2" in (study.meta("migrations") or "")
        assert "schema 2 -> 3" in (study.meta("migrations") or "")
        assert study.count("calibrations") == 0
        row = study.rows("SELECT item_id, output_id, control_id, display_text FROM items")[0]
        assert tuple(row) == ("i1", "o1", None, "x")
        assert study.count("reviews") == 1 and study.count("controls") == 0
        assert study.rows("PRAGMA foreign_key_check") == []
        assert study.rows("PRAGMA integrity_check")[0][0] == "ok"
        # a real item keeps its key line, so the published commitment still verifies
        assert commitment(study.conn) == before
        # the new constraint holds: an item shows an output or a control, not neither
        with pytest.raises(sqlite3.IntegrityError):
            study.conn.execute("INSERT INTO items VALUES ('i2', NULL, NULL, 'y', NULL, 'y', '{}')")
    with Study.open(tmp_path / "s") as study:  # a second open runs nothing more
        assert (study.meta("migrations") or "").count("->") == SCHEMA_VERSION - 1


def _layout(study: Study) -> dict[str, object]:
    """Every table's columns (name, type, not null, key) and every index with its columns."""
    tables = [r[0] for r in study.rows("SELECT name FROM sqlite_master WHERE type = 'table'")]
    indexes = study.rows(
        "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
    )
    return {
        **{
            table: [
                (r["name"], r["type"], r["notnull"], r["pk"])
                for r in study.rows(f"PRAGMA table_info({table})")
            ]
            for table in sorted(tables)
        },
        **{
            f"index {name} on {table}": [
                r["name"] for r in study.rows(f"PRAGMA index_info({name})")
            ]
            for name, table in sorted(tuple(r) for r in indexes)
        },
    }


def test_migrated_store_has_the_tables_and_indexes_of_a_new_store(tmp_path: Path) -> None:
    _v1_store(tmp_path / "old")
    with Study.open(tmp_path / "old") as old, Study.open(tmp_path / "new", create=True) as new:
        assert _layout(old) == _layout(new)


def test_every_version_has_its_step_forward() -> None:
    assert sorted(MIGRATIONS) == list(range(1, SCHEMA_VERSION))


def test_newer_or_corrupt_version_is_refused(tmp_path: Path) -> None:
    db = _v1_store(tmp_path / "s")
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(
        "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),)
    )
    conn.close()
    with pytest.raises(HarnessError, match="newer harness"):
        Study.open(tmp_path / "s")
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("UPDATE meta SET value = 'abc' WHERE key = 'schema_version'")
    conn.close()
    with pytest.raises(HarnessError, match="corrupt schema version"):
        Study.open(tmp_path / "s")


def _v3_store(folder: Path, settings: dict) -> Path:
    """A version-3 store: the version-1 fixture moved forward by the released steps, holding a
    second output of an embedded-model run and that run's collect settings."""
    db = _v1_store(folder)
    conn = sqlite3.connect(db, isolation_level=None)
    migrate(conn, 1, 3)
    conn.execute("INSERT INTO prompts VALUES ('p2','t1','single_a','f','h',NULL,'t',5,'{}')")
    conn.execute(
        "INSERT INTO outputs (output_id, prompt_id, sample, status, backend, model, "
        "params, text, started_at, finished_at) VALUES ('o-p2-0','p2',0,'ok','local',"
        "'SmolLM2-135M-Instruct','{}','y','2026-01-01','2026-01-01')"
    )
    conn.execute("INSERT INTO meta VALUES ('collect_settings', ?)", (json.dumps(settings),))
    conn.close()
    return db


def test_version_3_store_gets_model_keys_and_keeps_ids_rows_and_commitment(tmp_path: Path) -> None:
    settings = {
        "backend": "local",
        "model": "SmolLM2-135M-Instruct",
        "samples": 1,
        "temperature": 0.7,
        "top_p": 0.95,
        "max_tokens": 256,
        "seed": 0,
    }
    db = _v3_store(tmp_path / "s", settings)
    before = commitment(sqlite3.connect(db))
    with Study.open(tmp_path / "s") as study:
        assert study.meta("schema_version") == str(SCHEMA_VERSION)
        assert "schema 3 -> 4" in (study.meta("migrations") or "")
        rows = {r[0]: r[1] for r in study.rows("SELECT output_id, model_key FROM outputs")}
        assert rows == {"o1": "local/m", "o-p2-0": "local"}  # ids kept; embedded is `local`
        assert commitment(study.conn) == before
        assert study.rows("PRAGMA foreign_key_check") == []
        assert study.meta("collect_settings") is None
        assert json.loads(study.meta("collect_models") or "") == {
            "local": {**settings, "id_suffix": ""}
        }
        # (prompt, model, sample) is the unit now: another model may answer the same prompt
        study.conn.execute(
            "INSERT INTO outputs (output_id, prompt_id, sample, status, backend, model, model_key,"
            " params, started_at, finished_at) VALUES ('o-p2-0-x','p2',0,'ok','openai','g',"
            "'openai/g','{}','t','t')"
        )
        with pytest.raises(sqlite3.IntegrityError):
            study.conn.execute(
                "INSERT INTO outputs (output_id, prompt_id, sample, status, backend, model, "
                "model_key, params, started_at, finished_at) VALUES ('o-p2-0-y','p2',0,'ok',"
                "'openai','g','openai/g','{}','t','t')"
            )


def _v2_store(folder: Path) -> Path:
    """A version-2 store as that version left it: the version-1 fixture moved forward one step,
    holding a control, its item and a review of it (controls came with version 2)."""
    db = _v1_store(folder)
    conn = sqlite3.connect(db, isolation_level=None)
    migrate(conn, 1, 2)
    conn.execute(
        "INSERT INTO controls VALUES ('c1', 'A with B', 'text', 'published', 'cross', 'bank', "
        "'t1', '{}', 'calibration')"
    )
    conn.execute("INSERT INTO items VALUES ('i2', NULL, 'c1', 'text', 'A with B', 'text', '{}')")
    conn.execute("INSERT INTO assignments VALUES ('i2', 'r1', 1)")
    conn.execute(
        "INSERT INTO reviews (item_id, reviewer_id, verdict, source, created_at) "
        "VALUES ('i2', 'r1', 'published', 'xlsx', '2026-01-02')"
    )
    conn.close()
    return db


def test_version_2_store_gets_calibrations_and_keeps_controls_and_commitment(
    tmp_path: Path,
) -> None:
    db = _v2_store(tmp_path / "s")
    before = commitment(sqlite3.connect(db))
    with Study.open(tmp_path / "s") as study:
        steps = study.meta("migrations") or ""
        assert "schema 2 -> 3" in steps and "schema 1 -> 2" not in steps
        assert study.meta("schema_version") == str(SCHEMA_VERSION)
        assert study.count("calibrations") == 0
        control = study.rows("SELECT item_id, control_id FROM items WHERE control_id IS NOT NULL")
        assert [tuple(r) for r in control] == [("i2", "c1")]
        assert study.count("reviews") == 2 and study.count("controls") == 1
        assert study.rows("PRAGMA foreign_key_check") == []
        # the control's key line (control:EXPECTED:KIND) is sealed as before
        assert commitment(study.conn) == before


def test_version_4_store_gets_roles_and_an_empty_sample_and_keeps_its_commitment(
    tmp_path: Path,
) -> None:
    db = _v1_store(tmp_path / "s")
    conn = sqlite3.connect(db, isolation_level=None)
    migrate(conn, 1, 4)
    conn.close()
    before = commitment(sqlite3.connect(db))
    with Study.open(tmp_path / "s") as study:
        steps = study.meta("migrations") or ""
        assert "schema 4 -> 5" in steps and "schema 3 -> 4" not in steps
        assert study.meta("schema_version") == str(SCHEMA_VERSION)
        assert [tuple(r) for r in study.rows("SELECT reviewer_id, role FROM reviewers")] == [
            ("r1", "primary")
        ]
        assert study.count("adjudication_sample") == 0
        assert commitment(study.conn) == before  # no sample: the key bytes are unchanged
        with pytest.raises(sqlite3.IntegrityError):
            study.conn.execute("UPDATE reviewers SET role = 'gold'")
        with pytest.raises(sqlite3.IntegrityError):  # a sample topic must be a study topic
            study.conn.execute("INSERT INTO adjudication_sample VALUES ('nope', 'A x B')")


def test_version_5_store_marks_reviews_stored_after_its_unblinding(tmp_path: Path) -> None:
    db = _v1_store(tmp_path / "s")
    conn = sqlite3.connect(db, isolation_level=None)
    migrate(conn, 1, 5)
    conn.execute("INSERT INTO meta VALUES ('unblinded_at', '2026-01-03')")
    conn.execute(
        "INSERT INTO reviewers (reviewer_id, kind, method, expertise, capacity) "
        "VALUES ('r2', 'human', NULL, '[]', 10)"
    )
    conn.execute(
        "INSERT INTO reviews (item_id, reviewer_id, verdict, source, created_at) "
        "VALUES ('i1', 'r2', 'unsure', 'xlsx', '2026-01-04')"
    )
    conn.close()
    before = commitment(sqlite3.connect(db))
    with Study.open(tmp_path / "s") as study:
        assert "schema 5 -> 6" in (study.meta("migrations") or "")
        marks = study.rows("SELECT reviewer_id, after_unblinding FROM reviews ORDER BY 1")
        assert [tuple(r) for r in marks] == [("r1", 0), ("r2", 1)]
        assert commitment(study.conn) == before
