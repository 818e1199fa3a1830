"""Ordered steps that move a study store from one schema version to the next.

`MIGRATIONS[v]` turns a version-v store into version v + 1. `Study.open` runs the missing steps in
order, each in one transaction together with the new version number, so a store is never left
between versions.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from harness.defaults import EMBEDDED_MODEL_NAME
from harness.study.clock import utc_now


def _v1_to_v2(conn: sqlite3.Connection) -> None:
    """Controls: a `controls` table, and items that show an output or a control.

    SQLite cannot relax a NOT NULL column in place, so `items` is rebuilt with the same rows.
    """
    conn.execute("""
        CREATE TABLE controls (
            control_id TEXT PRIMARY KEY, statement TEXT NOT NULL, text TEXT NOT NULL,
            expected TEXT NOT NULL CHECK (expected IN ('published', 'not_published')),
            kind TEXT NOT NULL CHECK (kind IN ('cross', 'single')), source TEXT NOT NULL,
            topic_id TEXT, evidence TEXT NOT NULL,
            split TEXT CHECK (split IN ('calibration', 'held_out')))""")
    conn.execute("""
        CREATE TABLE items_v2 (
            item_id TEXT PRIMARY KEY, output_id TEXT UNIQUE REFERENCES outputs(output_id),
            control_id TEXT UNIQUE REFERENCES controls(control_id),
            original_text TEXT NOT NULL, core_combination TEXT, display_text TEXT NOT NULL,
            steps TEXT NOT NULL, CHECK ((output_id IS NULL) <> (control_id IS NULL)))""")
    conn.execute("""
        INSERT INTO items_v2 (item_id, output_id, original_text, core_combination, display_text,
                              steps)
        SELECT item_id, output_id, original_text, core_combination, display_text, steps
        FROM items""")
    conn.execute("DROP TABLE items")
    conn.execute("ALTER TABLE items_v2 RENAME TO items")


def _v2_to_v3(conn: sqlite3.Connection) -> None:
    """Calibrations: the decision rule of each automated reviewer (no existing rows change)."""
    conn.execute("""
        CREATE TABLE calibrations (
            reviewer_id TEXT PRIMARY KEY REFERENCES reviewers(reviewer_id),
            method TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('calibrated', 'uncalibrated', 'fixed')),
            threshold REAL NOT NULL, default_threshold REAL NOT NULL, youden REAL,
            sensitivity REAL, specificity REAL, youden_default REAL,
            n_published INTEGER NOT NULL, n_not_published INTEGER NOT NULL, unsure TEXT,
            scores TEXT NOT NULL, settings TEXT NOT NULL, note TEXT, decided_at TEXT NOT NULL)""")


OUTPUTS_V4 = """
    CREATE TABLE outputs_v4 (
        output_id TEXT PRIMARY KEY, prompt_id TEXT NOT NULL REFERENCES prompts(prompt_id),
        sample INTEGER NOT NULL, status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
        backend TEXT NOT NULL, model TEXT NOT NULL, model_key TEXT NOT NULL,
        model_reported TEXT, system_fingerprint TEXT, params TEXT NOT NULL, text TEXT,
        finish_reason TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, cost_usd REAL,
        latency_s REAL, attempts INTEGER NOT NULL DEFAULT 1, error TEXT,
        started_at TEXT NOT NULL, finished_at TEXT NOT NULL,
        UNIQUE (prompt_id, model_key, sample))"""
OUTPUT_COLUMNS = (
    "output_id, prompt_id, sample, status, backend, model, model_reported, "
    "system_fingerprint, params, text, finish_reason, prompt_tokens, "
    "completion_tokens, cost_usd, latency_s, attempts, error, started_at, "
    "finished_at"
)


def old_output_key(backend: str, model: str) -> str:
    """The model key of outputs a version-3 store recorded as (backend, model as requested).

    The rule of `harness.models.providers.stored_key`, which collect applies to an older
    store's settings, stated here so that the store does not import the model layer;
    tests/models/test_providers.py checks that the two agree.
    """
    if backend == "local":
        return "local" if model in ("", EMBEDDED_MODEL_NAME) else f"local/{model}"
    return f"{backend}/{model}"


def _v3_to_v4(conn: sqlite3.Connection) -> None:
    """Several models per study: outputs get a model key (their provider string) and are unique
    per (prompt, model, sample); the one model's collect settings are filed under its key.

    Output ids are kept, so items, reviews and the blinding commitment are untouched.
    """
    conn.create_function("stored_key", 2, old_output_key, deterministic=True)
    conn.execute(OUTPUTS_V4)
    conn.execute(
        f"INSERT INTO outputs_v4 ({OUTPUT_COLUMNS}, model_key) "
        f"SELECT {OUTPUT_COLUMNS}, stored_key(backend, model) FROM outputs"
    )
    conn.execute("DROP TABLE outputs")
    conn.execute("ALTER TABLE outputs_v4 RENAME TO outputs")
    conn.execute("CREATE INDEX outputs_prompt ON outputs(prompt_id)")
    conn.execute("CREATE INDEX outputs_model ON outputs(model_key)")
    row = conn.execute("SELECT value FROM meta WHERE key = 'collect_settings'").fetchone()
    if row is not None:
        settings = json.loads(row[0])
        key = old_output_key(settings.get("backend") or "local", settings.get("model") or "")
        conn.execute(
            "INSERT OR REPLACE INTO meta VALUES ('collect_models', ?)",
            (json.dumps({key: {**settings, "id_suffix": ""}}),),
        )
        conn.execute("DELETE FROM meta WHERE key = 'collect_settings'")


def _v4_to_v5(conn: sqlite3.Connection) -> None:
    """Adjudication: reviewers get a role (every earlier reviewer is primary) and the drawn gold
    sample gets its table (empty: no earlier study drew one, so its key is unchanged)."""
    conn.execute(
        "ALTER TABLE reviewers ADD COLUMN role TEXT NOT NULL DEFAULT 'primary' "
        "CHECK (role IN ('primary', 'adjudicator'))"
    )
    conn.execute("""
        CREATE TABLE adjudication_sample (
            topic_id TEXT PRIMARY KEY REFERENCES topics(topic_id),
            stratum TEXT NOT NULL)""")


def _v5_to_v6(conn: sqlite3.Connection) -> None:
    """Post-unblinding reviews: reviews get a mark (every earlier review is one made before the
    study was unblinded, unless it was stored after the store's `unblinded_at`)."""
    conn.execute("ALTER TABLE reviews ADD COLUMN after_unblinding INTEGER NOT NULL DEFAULT 0")
    conn.execute(
        "UPDATE reviews SET after_unblinding = 1 WHERE created_at > "
        "(SELECT value FROM meta WHERE key = 'unblinded_at')"
    )


def _v6_to_v7(conn: sqlite3.Connection) -> None:
    """Controls record which of the study's models wrote their text (unknown, NULL, for controls
    stored before: the store kept only the text)."""
    conn.execute("ALTER TABLE controls ADD COLUMN writer_model TEXT")


def _v7_to_v8(conn: sqlite3.Connection) -> None:
    """A model removed before blinding keeps its outputs aside (no earlier study removed one, so
    the table starts empty)."""
    conn.execute("""
        CREATE TABLE removed_outputs (
            removed_at TEXT NOT NULL, output_id TEXT NOT NULL, prompt_id TEXT NOT NULL,
            sample INTEGER NOT NULL, status TEXT NOT NULL, backend TEXT NOT NULL,
            model TEXT NOT NULL, model_key TEXT NOT NULL, model_reported TEXT,
            system_fingerprint TEXT, params TEXT NOT NULL, text TEXT, finish_reason TEXT,
            prompt_tokens INTEGER, completion_tokens INTEGER, cost_usd REAL, latency_s REAL,
            attempts INTEGER NOT NULL, error TEXT, started_at TEXT NOT NULL,
            finished_at TEXT NOT NULL,
            PRIMARY KEY (removed_at, output_id))""")


def _v8_to_v9(conn: sqlite3.Connection) -> None:
    """Rounds: assignments and imports of a later adjudication round (existing rows: round 1)."""
    conn.execute("ALTER TABLE assignments ADD COLUMN round INTEGER NOT NULL DEFAULT 1")
    conn.execute("ALTER TABLE imports ADD COLUMN round INTEGER NOT NULL DEFAULT 1")


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: _v1_to_v2,
    2: _v2_to_v3,
    3: _v3_to_v4,
    4: _v4_to_v5,
    5: _v5_to_v6,
    6: _v6_to_v7,
    7: _v7_to_v8,
    8: _v8_to_v9,
}


def migrate(conn: sqlite3.Connection, found: int, target: int) -> list[str]:
    """Run the steps from `found` to `target`; returns one line per step for the manifest."""
    done = []
    # Rebuilding a referenced table needs foreign-key enforcement off (SQLite's documented
    # procedure); it cannot change inside a transaction, so it is switched around each step.
    conn.execute("PRAGMA foreign_keys=OFF")
    try:
        for version in range(found, target):
            conn.execute("BEGIN IMMEDIATE")
            try:
                MIGRATIONS[version](conn)
                broken = conn.execute("PRAGMA foreign_key_check").fetchall()
                if broken:
                    raise sqlite3.IntegrityError(
                        f"migration {version}->{version + 1} broke {len(broken)} references"
                    )
                conn.execute(
                    "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version + 1),)
                )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            done.append(f"{utc_now()} schema {version} -> {version + 1}")
    finally:
        conn.execute("PRAGMA foreign_keys=ON")
    return done
