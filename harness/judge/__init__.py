"""Blinded review: items, routing to reviewers, packets out and in, automated reviewers.

The public functions are re-exported lazily so that importing the package stays cheap.
"""

from __future__ import annotations

from harness._lazy import lazy_exports

_API = {
    "blind": "harness.judge.blind",
    "BlindResult": "harness.judge.blind",
    "import_reviews": "harness.judge.sheets_in",
    "ImportProblems": "harness.judge.sheets_in",
    "review_status": "harness.judge.status",
    "load_roster": "harness.judge.roster",
    "Roster": "harness.judge.roster",
    "Reviewer": "harness.judge.roster",
    "make_items": "harness.judge.items",
    "route": "harness.judge.routing",
    "plan_routing": "harness.judge.routing",
    "write_packets": "harness.judge.sheets_out",
    "write_commitment": "harness.judge.commitment",
    "classifier_audit": "harness.judge.leak",
    "scan_packets": "harness.judge.leak",
    "run_automated": "harness.judge.automated",
    "calibrate_automated": "harness.judge.automated",
}


__getattr__, __dir__ = lazy_exports(__name__, _API)


__all__ = list(_API)
