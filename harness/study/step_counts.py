"""The blinded steps' fidelity counted over recorded step entries (`items.steps`).

One count serves both readers of the entries: `judge blind` writes it to the manifest
(`blinded_steps[step].fidelity`) and the report's blinded-steps table
(`harness.analysis.blinded_steps`) shows it per condition. The two differ in one rule, which the
caller states (`empty_fails`): whether a step that wrote nothing counts as a failed check.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import cast

__all__ = ["StepCounts", "count_steps"]


@dataclass
class StepCounts:
    """Fidelity checks over some step entries: how many, how many failed, and why."""

    checked: int = 0
    failed: int = 0
    low_support: int = 0
    added: int = 0
    echoed: int = 0
    #: entries whose step wrote nothing (outcome `empty`): no text, so no fidelity check
    empty: int = 0
    #: entries shown to reviewers in their original form (a failed check; an empty output too
    #: when `empty_fails`)
    shown_original: int = 0
    #: each checked entry's support, in entry order
    support: list[float] = field(default_factory=list)

    def manifest_counts(self) -> dict[str, int]:
        """The counts `blinded_steps[step].fidelity` holds, in its key order."""
        return {
            "checked": self.checked,
            "failed": self.failed,
            "low_support": self.low_support,
            "added": self.added,
            "echoed": self.echoed,
        }


def count_steps(entries: Iterable[Mapping[str, object]], *, empty_fails: bool) -> StepCounts:
    """The fidelity checks recorded on `entries`. With `empty_fails`, an entry whose step wrote
    nothing counts as checked, failed and shown in its original form (the report: reviewers see
    the original text for it, as for a failed check); without, it is left out of the checks (the
    manifest: it records the checks that ran, and the outcomes count the empty ones)."""
    counts = StepCounts()
    for entry in entries:
        empty = entry.get("outcome") == "empty"
        counts.empty += empty
        counts.shown_original += (entry.get("shown") == "original") + (empty and empty_fails)
        if empty and empty_fails:
            counts.checked += 1
            counts.failed += 1
        f = cast("Mapping[str, object] | None", entry.get("fidelity"))
        if f is None:
            continue
        support = cast("float", f["support"])
        counts.checked += 1
        counts.failed += not f["passed"]
        counts.low_support += support < cast("float", f["min_support"])
        counts.added += bool(f["added"])
        counts.echoed += bool(f["echoed"])
        counts.support.append(support)
    return counts
