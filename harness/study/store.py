"""The study store: one SQLite file per study folder, WAL mode, one transaction per unit of work."""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import HarnessError, SchemaVersionError
from harness.logs import log_to_study
from harness.study.clock import utc_now
from harness.study.files import STORE_NAME
from harness.study.migrations import migrate
from harness.study.schema import SCHEMA, SCHEMA_VERSION

if TYPE_CHECKING:
    import pandas as pd

DB_NAME = STORE_NAME
#: A value SQLite stores or gives back (a parameter, a cell of a row).
SqlValue = str | int | float | bytes | None


class Study:
    """A study folder: `study.sqlite`, `manifest.json`, `packets/`, `report/`."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn

    # -- opening -------------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, *, create: bool = False) -> Study:
        """Open a study folder; with `create`, make it (and its store) when it does not exist."""
        folder = Path(path)
        db = folder / DB_NAME
        if not db.exists():
            if not create:
                raise HarnessError("no study here (run `harness generate` first)", file=folder)
            folder.mkdir(parents=True, exist_ok=True)
        try:
            conn = _connect(db)
            study = cls(folder, conn)
            if create and study.meta("schema_version") is None:
                study._initialise()
            study._check_version(db)
        except sqlite3.DatabaseError as error:
            raise _damaged(db, error) from None
        log_to_study(folder)
        return study

    def _initialise(self) -> None:
        with self.transaction() as conn:
            for statement in _statements(SCHEMA):
                conn.execute(statement)
            conn.execute(
                "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('study_id', ?)", (uuid.uuid4().hex,))
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('created_at', ?)", (utc_now(),))

    def _check_version(self, db: Path) -> None:
        found = self.meta("schema_version")
        if found is None:
            raise HarnessError("not a study store (no schema version)", file=db)
        if not found.isdigit():
            raise HarnessError(f"corrupt schema version {found!r} in the study store", file=db)
        if int(found) > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"study store has schema version {found}, this harness reads version "
                f"{SCHEMA_VERSION} and older (the study was made by a newer harness)",
                file=db,
            )
        if int(found) < SCHEMA_VERSION:
            steps = migrate(self.conn, int(found), SCHEMA_VERSION)
            history = self.meta("migrations")
            self.set_meta("migrations", "\n".join(filter(None, [history, *steps])))

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Study:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -------------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """All statements inside commit together or not at all (BEGIN IMMEDIATE ... COMMIT)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- reading -------------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:
            return None
        return row[0] if row else None

    @property
    def study_id(self) -> str:
        return self.meta("study_id") or ""

    @property
    def pilot(self) -> bool:
        return self.meta("pilot") == "1"

    def count(self, table: str, where: str = "", params: tuple[SqlValue, ...] = ()) -> int:
        sql = f"SELECT COUNT(*) FROM {table}" + (f" WHERE {where}" if where else "")
        return int(self.conn.execute(sql, params).fetchone()[0])

    def rows(self, sql: str, params: tuple[SqlValue, ...] = ()) -> list[sqlite3.Row]:
        return list(self.conn.execute(sql, params))

    def frame(self, sql: str, params: tuple[SqlValue, ...] = ()) -> pd.DataFrame:
        import pandas as pd

        return pd.read_sql_query(sql, self.conn, params=params)

    # -- folders -------------------------------------------------------------------------------
    @property
    def packets_dir(self) -> Path:
        return self.path / "packets"

    @property
    def report_dir(self) -> Path:
        return self.path / "report"


def _connect(db: Path) -> sqlite3.Connection:
    # isolation_level=None: we issue BEGIN/COMMIT ourselves so that each unit of work is explicit.
    if db.exists() and not os.access(db.parent, os.W_OK):
        # A read-only folder (an archived study): read without the WAL files SQLite cannot make.
        # Unmerged WAL content is read through the WAL files (mode=ro); without any, the file
        # alone is the whole store (immutable=1 needs no -shm file).
        wal = db.with_name(db.name + "-wal")
        mode = "mode=ro" if wal.exists() and wal.stat().st_size else "immutable=1"
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?{mode}", uri=True, isolation_level=None)
        conn.row_factory = sqlite3.Row
        return conn
    conn = sqlite3.connect(db, isolation_level=None, timeout=30.0)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def _damaged(db: Path, error: sqlite3.DatabaseError) -> HarnessError:
    """One line for a store that cannot be opened, saying what to do."""
    text = str(error)
    if "not a database" in text or "malformed" in text:
        return HarnessError(
            "not a readable study store (the file is damaged or is not SQLite); "
            "restore study.sqlite from a backup",
            file=db,
        )
    if "readonly" in text or "unable to open" in text:
        return HarnessError(
            f"cannot open the study store for writing ({text}); make the study "
            "folder writable or work on a copy",
            file=db,
        )
    return HarnessError(f"cannot open the study store ({text})", file=db)


def _statements(script: str) -> list[str]:
    """Split the schema script into statements (no semicolons inside our DDL literals)."""
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
