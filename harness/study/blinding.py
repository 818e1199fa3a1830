"""The blinding key (item -> output -> condition, item -> control -> expected verdict) and its
SHA-256 commitment.

It lives in `study/` because both `judge` (which makes it) and `analyze` (which checks it before
unblinding) need the same canonical form, and stages must not import each other. The stage
that makes items and packets and writes the commitment is `harness.judge.blinding.blind_stage.blind`.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
from typing import TYPE_CHECKING

from harness.study.tables.adjudication import has_sample_table

if TYPE_CHECKING:
    from harness.study.store import Study

#: Meta key of the random salt that is hashed with the key. Without it a small study's key could be
#: recovered from the published hash by trying every assignment of conditions to items.
SALT_KEY = "blinding_salt"

KEY_SQL = """
SELECT i.item_id, i.output_id, p.condition
FROM items i JOIN outputs o ON o.output_id = i.output_id
             JOIN prompts p ON p.prompt_id = o.prompt_id
ORDER BY i.item_id
"""

#: Control items enter the key as `control:EXPECTED:KIND`, so the commitment seals which items are
#: controls and their expected verdicts; a study without controls keeps its key bytes unchanged.
CONTROL_KEY_SQL = """
SELECT i.item_id, i.control_id, 'control:' || c.expected || ':' || c.kind
FROM items i JOIN controls c ON c.control_id = i.control_id
ORDER BY i.item_id
"""


#: The gold sample enters the key as `sample:TOPIC<TAB>STRATUM<TAB>adjudication`, so the commitment
#: seals which topics were drawn before any review; a study without a sample keeps its key bytes.
SAMPLE_KEY_SQL = """
SELECT 'sample:' || topic_id, stratum, 'adjudication' FROM adjudication_sample ORDER BY topic_id
"""


def key_rows(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    rows = [(r[0], r[1], r[2]) for r in conn.execute(KEY_SQL)]
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'controls'").fetchone():
        return rows  # a store of schema version 1, before its migration
    rows += [(r[0], r[1], r[2]) for r in conn.execute(CONTROL_KEY_SQL)]
    if has_sample_table(conn):  # else a store before schema version 5
        rows += [(r[0], r[1], r[2]) for r in conn.execute(SAMPLE_KEY_SQL)]
    return rows


def canonical_key(rows: list[tuple[str, str, str]], salt: str | None = None) -> bytes:
    """`salt<TAB>SALT\\n` (when salted), then one line per item sorted by item id:
    `item_id<TAB>output_id<TAB>condition\\n`, or for a control item
    `item_id<TAB>control_id<TAB>control:EXPECTED:KIND\\n`, and for a topic of the gold sample
    `sample:TOPIC<TAB>STRATUM<TAB>adjudication\\n`, UTF-8."""
    head = f"salt\t{salt}\n" if salt else ""
    return (head + "".join(f"{i}\t{o}\t{c}\n" for i, o, c in sorted(rows))).encode("utf-8")


def salt(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (SALT_KEY,)).fetchone()
    return row[0] if row else None


def ensure_salt(conn: sqlite3.Connection) -> str:
    """The study's salt, made (128 random bits) and stored on first use."""
    found = salt(conn)
    if found:
        return found
    made = secrets.token_hex(16)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (SALT_KEY, made))
    conn.execute("COMMIT")
    return salt(conn) or made


def commitment(conn: sqlite3.Connection) -> str:
    """SHA-256 (hex) of the canonical blinding key, with the study's salt, as stored now."""
    return hashlib.sha256(canonical_key(key_rows(conn), salt(conn))).hexdigest()


def study_commitment(study: Study) -> str:
    """The commitment of an open study (stages outside harness/study/ never see its connection)."""
    return commitment(study.conn)


def ensure_study_salt(study: Study) -> str:
    return ensure_salt(study.conn)
