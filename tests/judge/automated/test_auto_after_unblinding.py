"""`judge --auto` after the unblinding: refused in one line with the study unchanged, unless
`--after-unblinding`, which stores the reviews marked (never analysed)."""

from __future__ import annotations

import sqlite3

from harness.study.store import Study
from harness.study.unblinding import mark_unblinded
from tests.analysis.helpers import build_study
from tests.test_stage_order import ok, refused


def _study_with_pending(tmp_path):
    rows = [(f"t{t}", c, 0, "retrieval", "published") for t in range(2) for c in ("cross",)]
    study = build_study(tmp_path / "s", rows, reviewers={"retrieval": "automated"})
    with Study.open(study) as s, s.transaction() as conn:
        conn.execute("UPDATE reviewers SET method = 'retrieval'")
        # one assignment left without its review: work the automated reviewer still has
        conn.execute("DELETE FROM reviews WHERE item_id = (SELECT MIN(item_id) FROM reviews)")
    with Study.open(study) as s:
        mark_unblinded(s)
    (study / ".study.lock").unlink(missing_ok=True)  # as a finished command leaves the folder
    return study


def test_auto_after_unblinding_is_refused_then_marked(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    study = _study_with_pending(tmp_path)
    err = refused(study, "judge", "--auto", "--study", study)
    assert "the study was unblinded" in err and "--after-unblinding" in err
    ok("judge", "--auto", "--study", study, "--after-unblinding", "--threshold", "0.5")
    with sqlite3.connect(study / "study.sqlite") as conn:
        late = conn.execute("SELECT COUNT(*) FROM reviews WHERE after_unblinding = 1").fetchone()
    conn.close()
    assert late == (1,)
