from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from harness.study import Study
from harness.study.blinding import canonical_key
from harness.study.manifest import read_manifest, record_command, record_section
from harness.study.manifest_sections import Blinding

WRITER = r"""
import json, sys
from harness.study import Study
study = Study.open(sys.argv[1], create=True)
i = study.count("topics")
first = True
for _ in range(20000):  # bounded: a writer that is never killed stops by itself (~40 MB)
    with study.transaction() as conn:   # one topic and its three prompts, all or nothing
        tid = f"t{i:06d}"
        conn.execute("INSERT INTO topics VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (tid, "A", 1, "D1", "B", 2, "D2", "[]", "[]", "r", 3, 0.5, "{}"))
        for cond in ("single_a", "single_b", "cross"):
            conn.execute("INSERT INTO prompts VALUES (?,?,?,?,?,?,?,?,?)",
                (f"{tid}.{cond}", tid, cond, "f", "h", None, "x" * 500, 1, "{}"))
    i += 1
    if first:
        print("ready", flush=True)
        first = False
"""


def test_killed_writer_leaves_a_consistent_store(tmp_path):
    folder = tmp_path / "study"
    rng = random.Random(5)
    counts = []
    for _ in range(5):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(folder)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.05, 0.4))  # kill at a random moment mid-write
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        with Study.open(folder) as study:
            assert study.rows("PRAGMA integrity_check")[0][0] == "ok"
            per_topic = study.rows(
                "SELECT t.topic_id, COUNT(p.prompt_id) FROM topics t "
                "LEFT JOIN prompts p USING (topic_id) GROUP BY t.topic_id"
            )
            assert all(n == 3 for _, n in per_topic)
            counts.append(len(per_topic))
    assert counts == sorted(counts) and counts[-1] > counts[0]


def test_transaction_rolls_back_on_error(tmp_path):
    with Study.open(tmp_path / "s", create=True) as study:
        with pytest.raises(RuntimeError), study.transaction() as conn:
            conn.execute("INSERT INTO meta VALUES ('x', '1')")
            raise RuntimeError("boom")
        assert study.meta("x") is None
        assert study.rows("PRAGMA journal_mode")[0][0] == "wal"


def test_foreign_keys_are_enforced(tmp_path):
    row = ("p", "no-topic", "cross", "f", "h", None, "t", 1, "{}")
    with (
        Study.open(tmp_path / "s", create=True) as study,
        pytest.raises(sqlite3.IntegrityError),
        study.transaction() as conn,
    ):
        conn.execute("INSERT INTO prompts VALUES (?,?,?,?,?,?,?,?,?)", row)


def test_manifest_updates_are_atomic_and_cumulative(tmp_path):
    record_command(tmp_path, "generate", {"seed": 1})
    record_command(tmp_path, "collect", {})
    record_section(tmp_path, "blinding", Blinding(sha256="ab"))
    data = read_manifest(tmp_path).record()
    assert [c["stage"] for c in data["commands"]] == ["generate", "collect"]
    assert data["blinding"] == {"sha256": "ab"}
    assert json.loads((tmp_path / "manifest.json").read_text())["created_at"]
    assert not (tmp_path / "manifest.json.tmp").exists()


def test_canonical_blinding_key_is_order_free():
    rows = [("I-b", "o2", "cross"), ("I-a", "o1", "single_a")]
    assert canonical_key(rows) == canonical_key(list(reversed(rows)))
    assert canonical_key(rows) == b"I-a\to1\tsingle_a\nI-b\to2\tcross\n"


def test_salt_changes_the_commitment_and_is_kept(tmp_path):
    from harness.study.blinding import commitment, ensure_salt

    with Study.open(tmp_path / "s", create=True) as study:
        unsalted = commitment(study.conn)
        first = ensure_salt(study.conn)
        assert len(first) == 32 and ensure_salt(study.conn) == first
        assert commitment(study.conn) != unsalted
    rows = [("I-a", "o1", "cross")]
    assert canonical_key(rows, "ab") == b"salt\tab\nI-a\to1\tcross\n"
