"""Blinded review: items, routing to reviewers, packets out and in, automated reviewers.

The public functions are re-exported lazily so that importing the package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

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


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'harness.judge' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])


__all__ = list(_API)
