"""Where reviewing stands: per reviewer, items assigned, returned and missing."""

from __future__ import annotations

from typing import Any

from harness.study.store import Study

STATUS_SQL = """
SELECT r.reviewer_id AS reviewer, r.kind,
       (SELECT COUNT(*) FROM assignments a WHERE a.reviewer_id = r.reviewer_id) AS assigned,
       (SELECT COUNT(*) FROM reviews v JOIN assignments a
            ON a.item_id = v.item_id AND a.reviewer_id = v.reviewer_id
        WHERE v.reviewer_id = r.reviewer_id) AS returned,
       (SELECT COUNT(*) FROM searches s WHERE s.reviewer_id = r.reviewer_id) AS searches,
       (SELECT i.file_name || ' (' || i.imported_at || ')' FROM imports i
        WHERE i.reviewer_id = r.reviewer_id AND i.replaced_by IS NULL) AS last_import
FROM reviewers r ORDER BY r.kind DESC, r.reviewer_id
"""


def review_status(study: Study) -> Any:
    """DataFrame: reviewer, kind, assigned, returned, missing, searches, last_import."""
    frame = study.frame(STATUS_SQL)
    frame.insert(4, "missing", frame.assigned - frame.returned)
    frame["last_import"] = frame.last_import.fillna("")
    return frame


def status_summary(frame: Any) -> str:
    if frame.empty:
        return "No reviewers yet: run `harness judge --blind --study DIR --reviewers FILE`."
    total = frame[["assigned", "returned", "missing"]].sum()
    return (f"{int(total.returned)} of {int(total.assigned)} assigned reviews returned, "
            f"{int(total.missing)} missing, across {len(frame)} reviewers")
