"""Ordered steps that move a study store from one schema version to the next.

`MIGRATIONS[v]` turns a version-v store into version v + 1. `Study.open` runs the missing steps in
order, each in one transaction together with the new version number, so a store is never left
between versions.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

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


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _v1_to_v2, 2: _v2_to_v3}


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
                    raise sqlite3.IntegrityError(f"migration {version}->{version + 1} broke "
                                                 f"{len(broken)} references")
                conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
                             (str(version + 1),))
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            done.append(f"{utc_now()} schema {version} -> {version + 1}")
    finally:
        conn.execute("PRAGMA foreign_keys=ON")
    return done
