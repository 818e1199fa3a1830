"""The blinding key (item -> output -> condition) and its SHA-256 commitment.

It lives in `study/` because both `judge` (which makes it) and `analyze` (which checks it before
unblinding) need the same canonical form, and stages must not import each other.
"""

from __future__ import annotations

import hashlib
import sqlite3

KEY_SQL = """
SELECT i.item_id, i.output_id, p.condition
FROM items i JOIN outputs o ON o.output_id = i.output_id
             JOIN prompts p ON p.prompt_id = o.prompt_id
ORDER BY i.item_id
"""


def key_rows(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    return [(r[0], r[1], r[2]) for r in conn.execute(KEY_SQL)]


def canonical_key(rows: list[tuple[str, str, str]]) -> bytes:
    """One line per item, sorted by item id: `item_id<TAB>output_id<TAB>condition\\n` (UTF-8)."""
    return "".join(f"{i}\t{o}\t{c}\n" for i, o, c in sorted(rows)).encode("utf-8")


def commitment(conn: sqlite3.Connection) -> str:
    """SHA-256 (hex) of the canonical blinding key as it stands in the store now."""
    return hashlib.sha256(canonical_key(key_rows(conn))).hexdigest()
