"""Automated reviewers whose last run failed, kept on record for `harness status` (manifest
section `auto_failures`).

A reviewer stopped by its server or its sources, refused a calibration on unsure replies, or
discarded by the unsure limit is recorded with the run's line about it and the way out of it
(`way_out`); a later run in which it settles its rule and finishes without a failure takes it
off. `harness status` reads the section to name the way out, not the command that failed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from harness.study.clock import utc_now
from harness.study.manifest import change_manifest, read_manifest
from harness.study.manifest_sections import AutoFailure, Manifest

if TYPE_CHECKING:
    from harness.models.providers import ModelSpec

#: calibration: no rule (the server failed, or its replies were unsure); stopped: a failure
#: during the reviews; discarded: its work passed the plan's unsure limit
Stage = Literal["calibration", "stopped", "discarded"]


@dataclass(frozen=True)
class Failed:
    """One reviewer's failure in a run, and the way out of it."""

    reviewer_id: str
    method: str
    stage: Stage
    message: str  # the run's line about it (the server's words, the counts)
    fix: str

    @property
    def line(self) -> str:
        """What the run says of it: a failed calibration's message names the way out too (the
        unsure limit's and a server's already say what to do)."""
        return f"{self.message}; {self.fix}" if self.stage == "calibration" else self.message

    def record(self) -> AutoFailure:
        return AutoFailure(
            at=utc_now(), fix=self.fix, message=self.message, method=self.method, stage=self.stage
        )


def way_out(
    study_dir: str | Path,
    reviewer_id: str,
    model: ModelSpec | None,
    *,
    protocol: bool,
    discarded: bool = False,
) -> str:
    """What gets the reviewer's items reviewed: its server or sources fixed (the roster's method,
    its model included, is fixed once items are routed), or the analysis run without them.
    `protocol`: the replies broke the reviewer's reply protocol (else the server or a source
    failed); `discarded`: the unsure limit discarded its work, which --accept-unsure keeps."""
    flag = f"--study {study_dir}"
    rerun = f"harness judge --auto {flag}"
    if model is None:
        first = f"check its sources and rerun {rerun} (--source names others)"
    elif model.backend == "openai":
        does = "follows the reviewer's reply protocol" if protocol else "answers"
        first = f"rerun {rerun} --base-url URL of a server whose {model.model_string} {does}"
    else:
        first = f"fix how {model.model_string} is served, then rerun {rerun}"
    keep = f", or keep what it produces with --accept-unsure {reviewer_id}" if discarded else ""
    return (
        f"{first}{keep}; or leave its items out: harness analyze {flag} --partial (a recorded "
        "deviation)"
    )


#: every stage: a run through the items clears whatever failure the reviewer had
ALL_STAGES: tuple[Stage, ...] = ("calibration", "stopped", "discarded")


def record_outcome(
    study_dir: str | Path,
    failed: Iterable[Failed],
    finished: Iterable[str],
    clears: tuple[Stage, ...] = ALL_STAGES,
) -> None:
    """Put this run's failures on record and take off the reviewers that `finished` (a
    recorded failure of theirs at one of the stages `clears`: `judge --calibrate` clears only a
    failed calibration); the manifest is left alone when nothing changes."""
    failures = {f.reviewer_id: f.record() for f in failed}
    before = read_manifest(study_dir).auto_failures or {}
    done = {r for r in finished if r in before and before[r].stage in clears} - set(failures)
    if not failures and not done:
        return

    def change(manifest: Manifest) -> None:
        kept = {k: v for k, v in (manifest.auto_failures or {}).items() if k not in done}
        manifest.auto_failures = {**kept, **failures}

    change_manifest(study_dir, change)


def recorded(manifest: Manifest, outstanding: Mapping[str, int]) -> list[tuple[str, AutoFailure]]:
    """The recorded failures of reviewers that still have assigned reviews `outstanding`
    (reviewer_id -> count), most outstanding first."""
    found = (manifest.auto_failures or {}).items()
    held = [(r, f) for r, f in found if outstanding.get(r, 0)]
    return sorted(held, key=lambda pair: (-outstanding[pair[0]], pair[0]))
