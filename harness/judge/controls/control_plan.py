"""`judge --blind` with controls: the preregistered numbers, the choice of controls and their texts.

The numbers come from the `controls:` section of the plan the study is preregistered with (manifest
section `prereg`), else of the plan given, else of the bundled one. The real items are routed first
(with room kept for controls); each reviewer's planned number follows from its real items.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from pydantic import JsonValue

from harness.analysis.plan.plan_file import load_plan
from harness.errors import HarnessError
from harness.judge.controls import control_sources as K
from harness.judge.controls.controls_file import FileControl
from harness.judge.routing.roster import Roster
from harness.study.manifest import read_manifest
from harness.study.manifest_sections import Controls, Prereg
from harness.study.records import JsonObject
from harness.study.store import Study
from harness.study.tables.assignments import (
    calibration_controls_per_automated,
    control_assignments_per_reviewer,
)
from harness.study.tables.controls import control_labels, controls_shown, count_controls

if TYPE_CHECKING:
    import pandas as pd

    from harness.models.base import ModelAPI


@dataclass(frozen=True)
class ControlSettings:
    """The plan's `controls:` numbers and where they came from."""

    share: float
    min_per_reviewer: int
    calibration_share: float
    plan_path: str
    plan_sha256: str
    preregistered: bool
    adjudicator_share: float | None = None  # None: `share`

    def share_for(self, roster: Roster) -> float:
        """The share of controls per real item of a tier's reviewers (adjudicators have their
        own where the plan gives it)."""
        adjudicators = roster.reviewers and all(r.role == "adjudicator" for r in roster.reviewers)
        if adjudicators and self.adjudicator_share is not None:
            return self.adjudicator_share
        return self.share


@dataclass
class ControlsReport:
    """What the controls step did; counts only, never which item is a control."""

    settings: ControlSettings
    created: int = 0
    wanted: dict[str, int] = field(default_factory=dict)
    assigned: dict[str, int] = field(default_factory=dict)
    #: of `assigned`, the automated reviewers' controls of the calibration split (not scored)
    calibration: dict[str, int] = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    made: JsonObject | None = None  # how the texts were made, kept and dropped (`Made.record`)
    fidelity: dict[str, float] = field(default_factory=dict)  # `fidelity`
    steps: dict[str, dict[str, int]] = field(default_factory=dict)
    #: controls of one expected verdict only (`one_kind_warning`), or none kept (`none_kept`)
    warning: str | None = None

    def summary(self) -> str:
        total = sum(self.counts.get("expected", {}).values())
        if not total:
            none = "Controls: none" + "".join(f"; {n}" for n in self.notes)
            return none + (f"\nwarning: {self.warning}" if self.warning else "")
        parts = [
            ", ".join(f"{v} {k}" for k, v in sorted(self.counts[name].items()))
            for name in ("expected", "kind", "source", "split")
        ]
        per = ", ".join(self._routed(r, n) for r, n in sorted(self.assigned.items()))
        held = (
            "automated reviewers are scored on their held-out controls only; "
            if self.calibration
            else ""
        )
        s = self.settings
        lines = [
            f"Controls: {total} items ({'; '.join(parts)}); routed per reviewer: {per} "
            f"({held}plan: share {s.share}{self._adjudicators()}, at least {s.min_per_reviewer}; "
            f"{'preregistered' if s.preregistered else 'not yet preregistered'} plan "
            f"{s.plan_sha256[:12]})"
        ]
        if self.made and self.made.get("generated"):
            m = self.made
            drops = cast("dict[str, int]", m["dropped"])
            dropped = ", ".join(f"{n} {why}" for why, n in drops.items()) or "none"
            models = cast("dict[str, JsonValue]", m["models"])
            lines.append(
                f"Control texts by the model under test ({', '.join(models)}): "
                f"{m['generated']} written, {m['kept']} kept; dropped: {dropped}"
            )
        if self.fidelity:
            f = self.fidelity
            lines.append(
                f"Control texts keep {f['mean_word_share']:.0%} of their statements' "
                f"content words on average ({f['below_0.25']} of {f['n']} keep under "
                "25%: there the writer drifted and the expected verdict may not fit)"
            )
        lines.extend(f"note: {n}" for n in self.notes)
        if self.warning:
            lines.append(f"warning: {self.warning}")
        return "\n".join(lines)

    def _adjudicators(self) -> str:
        s = self.settings.adjudicator_share
        return "" if s is None or s == self.settings.share else f" (adjudicators {s:g})"

    def _routed(self, reviewer: str, n: int) -> str:
        """A reviewer's routed controls; an automated one's split into those held out (scored:
        the `controls scored` of `judge --status` and the report) and those that calibrate it."""
        if reviewer not in self.calibration:
            return f"{reviewer} {n}"
        calibrating = self.calibration[reviewer]
        return f"{reviewer} {n} ({n - calibrating} held out, {calibrating} calibration)"

    def none_kept(self) -> str | None:
        """One line when controls were planned and candidates chosen but not one was kept (every
        text dropped): no reviewer's accuracy can be measured. Controls are made only by the
        first routing, so it says how a new study gets them."""
        planned = sum(self.wanted.values())
        kept: int = sum(self.counts.get("expected", {}).values())
        if not planned or kept or not self.made:
            return None
        drops = cast("dict[str, int]", self.made.get("dropped") or {})
        why = "; ".join(f"{n}: {reason}" for reason, n in drops.items()) or "none written"
        writers = ", ".join(cast("dict[str, JsonValue]", self.made.get("models") or {}))
        return (
            f"no control item was kept: the {self.made.get('generated', 0)} control text(s) "
            f"written by {writers or 'the model under test'} were all dropped ({why}), so "
            "reviewers' sensitivity and specificity cannot be measured, "
            "automated reviewers stay uncalibrated and the verdict cannot be `refuted`; "
            "controls are made only by a study's first routing: to have them, blind a new "
            "study with --controls FILE whose entries bring their own `text` (see "
            "judging/controls.example.yaml), or with a model under test whose texts state the "
            "planted pairs (checked by --extract with a capable --model PROVIDER/NAME)"
        )

    def shortfalls(self) -> list[str]:
        short = [
            f"{r} {self.assigned.get(r, 0)} of {n}"
            for r, n in sorted(self.wanted.items())
            if self.assigned.get(r, 0) < n
        ]
        return (
            [
                f"fewer controls than planned ({', '.join(short)}): capacity, the controls "
                "available or the one-item-per-topic rule"
            ]
            if short
            else []
        )

    def manifest_section(self) -> JsonObject:
        counts: dict[str, JsonValue] = {name: dict(c) for name, c in self.counts.items()}
        return {
            "n_items": sum(self.counts.get("expected", {}).values()),
            "counts": counts,
            "per_reviewer": dict(sorted(self.assigned.items())),
            "planned_per_reviewer": dict(sorted(self.wanted.items())),
            "share": self.settings.share,
            "adjudicator_share": self.settings.adjudicator_share,
            "min_per_reviewer": self.settings.min_per_reviewer,
            "calibration_share": self.settings.calibration_share,
            "plan_path": self.settings.plan_path,
            "plan_sha256": self.settings.plan_sha256,
            "preregistered": self.settings.preregistered,
            "made": self.made,
            "fidelity": dict(self.fidelity),
            "notes": list(self.notes),
            "warning": self.warning,
        }


def one_kind_warning(expected: dict[str, int], cutoff: str | None, years: list[int]) -> str | None:
    """One line when the planted controls are all published or all unpublished: reviewers'
    specificity (unpublished controls judged novel) or sensitivity (published ones judged not
    novel) cannot be measured, nor their J, so no reviewer can be shown to discriminate and the
    verdict cannot be `refuted`. It names the cut-off that splits the study's known links (with
    a planted pair) most evenly (`splitting_cutoff`)."""
    published, unpublished = expected.get("published", 0), expected.get("not_published", 0)
    if not published + unpublished or (published and unpublished):
        return None
    missing, measure, have = (
        ("unpublished", "specificity", f"{published} published")
        if published
        else ("published", "sensitivity", f"{unpublished} unpublished")
    )
    at = f"cut-off {cutoff}" if cutoff else "no --cutoff"
    split = K.splitting_cutoff(years)
    fix = (
        f"--cutoff {split[0]} would split the study's known links {split[1]} published, "
        f"{split[2]} unpublished"
        if split
        else f"add {missing} controls with --controls FILE (the study's known links have no "
        "two years to split them at)"
    )
    return (
        f"no {missing} controls at {at} ({have}): reviewers' {measure}, and so their J, "
        f"cannot be measured, and the verdict cannot be `refuted`; {fix}"
    )


def control_settings(study: Study, plan: str | Path | None) -> ControlSettings:
    """The preregistered plan's numbers; a plan given that differs from it is refused."""

    prereg = read_manifest(study.path).prereg or Prereg()
    if prereg.plan_path:
        loaded = load_plan(prereg.plan_path)
        if loaded.sha256 != prereg.plan_sha256:
            raise HarnessError(
                "the preregistered analysis plan has changed since `prereg` "
                f"(sha256 {prereg.plan_sha256})",
                file=loaded.path,
            )
        if plan is not None and load_plan(plan).sha256 != loaded.sha256:
            raise HarnessError(
                f"--plan differs from the plan this study is preregistered with ({loaded.path})",
                column="--plan",
            )
    else:
        loaded = load_plan(plan)
    c = loaded.plan.controls
    return ControlSettings(
        c.share,
        c.min_per_reviewer,
        c.calibration_share,
        loaded.path,
        loaded.sha256,
        bool(prereg.plan_path),
        c.adjudicator_share,
    )


def stored_settings(study: Study) -> ControlSettings:
    """The numbers a routed study's controls were made with (manifest section `controls`)."""

    section = read_manifest(study.path).controls or Controls()
    return ControlSettings(
        section.share if section.share is not None else 0.0,
        section.min_per_reviewer or 0,
        section.calibration_share if section.calibration_share is not None else 0.0,
        section.plan_path or "",
        section.plan_sha256 or "",
        bool(section.preregistered),
        float(section.adjudicator_share) if section.adjudicator_share is not None else None,
    )


def candidate_pool(
    study: Study, cutoff: str | None, entries: list[FileControl], file_name: str | None, bank: bool
) -> K.Pool:
    pool = K.bank_pool(study, cutoff) if bank else K.Pool()
    if file_name is not None:
        extra = K.file_pool(entries, file_name)
        pool.candidates.extend(extra.candidates)
    return pool


def wanted_per_reviewer(
    study: Study, roster: Roster, real: pd.DataFrame, settings: ControlSettings
) -> dict[str, int]:
    """Each reviewer's planned controls, within the capacity its real items leave."""
    used = real.reviewer_id.value_counts().to_dict()
    counts = {r.id: int(used.get(r.id, 0)) for r in roster.reviewers}
    room = {r.id: max(0, r.capacity - counts[r.id]) for r in roster.reviewers}
    return K.targets(counts, settings.share_for(roster), settings.min_per_reviewer, room)


def controls_needed(wanted: dict[str, int], tiers: list[tuple[Roster, int]]) -> int:
    """Control items to make: enough for every tier of reviewers (the primary reviewers with k
    each, the adjudicators with `per_item` each), each tier's reviewers their planned numbers.
    One control item may go to reviewers of both tiers, so the largest tier's need is enough."""
    return max(
        (
            K.items_needed({r.id: wanted.get(r.id, 0) for r in tier.reviewers}, k)
            for tier, k in tiers
        ),
        default=0,
    )


def add_controls(
    study: Study,
    pool: K.Pool,
    report: ControlsReport,
    *,
    k: int,
    seed: int,
    backend: ModelAPI | None,
    extract: bool = True,
    rounds: int = 3,
    need: int | None = None,
) -> list[str]:
    """Choose, make and store the controls (once: a rerun keeps the stored ones); errors.

    `need`: how many control items (`controls_needed`); by default enough for `report.wanted`
    with k reviewers each. The texts come from the study's models (K.make_texts); `backend` is
    the blinded steps' backend (None without extraction), whose extraction decides which are
    kept (K.check_pairs). A dropped control is replaced by the next candidate with the same
    expected verdict, for at most `rounds` rounds.
    """
    if count_controls(study):
        return []
    if need is None:
        need = K.items_needed(report.wanted, k)
    chosen = K.select(pool.candidates, need, seed)
    if need > len(chosen):
        report.notes.append(f"{need} control items planned, {len(chosen)} available")
    if not chosen:
        return []
    groups = K.ordered_groups(pool.candidates, seed)
    wanted: Counter[str] = Counter(c.expected for c in chosen)
    made, tried, batch = K.Made(), list[K.Candidate](), chosen
    for _ in range(rounds):
        errors = K.make_texts(study, batch, seed, made) or K.check_pairs(
            batch, made, backend if extract else None
        )
        if errors:
            return errors
        tried.extend(batch)
        kept: Counter[str] = Counter(c.expected for c in tried if c.control_id in made.kept)
        seen = {c.control_id for c in tried}
        batch = [
            c
            for expected, group in groups.items()
            for c in [c for c in group if c.control_id not in seen][
                : max(0, wanted[expected] - kept[expected])
            ]
        ]
        if not batch:
            break
    final = [c for c in tried if c.control_id in made.kept]
    if len(final) < len(chosen):
        report.notes.append(
            f"{len(chosen)} controls wanted, {len(final)} kept: "
            + ", ".join(f"{n} dropped ({why})" for why, n in sorted(made.dropped.items()))
        )
    if not final:
        report.made = made.record()
        return []
    report.created = K.store_controls(
        study,
        final,
        made.texts,
        K.splits(final, report.settings.calibration_share, seed),
        made.cores,
        made.model_of,
    )
    report.made = made.record()
    return []


def stored_counts(study: Study) -> dict[str, dict[str, int]]:
    labels = control_labels(study)
    return {
        name: dict(Counter(getattr(label, name) for label in labels))
        for name in ("expected", "kind", "source", "split")
    }


def fidelity(study: Study, low: float = 0.25) -> dict[str, float]:
    """How much of each statement survives in what reviewers see: the share of the statement's
    content words (4+ letters) found in the display text or core combination. A weak writer
    model can drift from the statement, and then the expected verdict may not fit the text.
    Aggregates only: naming items would unblind."""

    shares = []
    for control in controls_shown(study):
        words = set(re.findall(r"[a-z]{4,}", control.statement.lower()))
        shown = set(
            re.findall(r"[a-z]{4,}", f"{control.display_text} {control.core_combination}".lower())
        )
        shares.append(len(words & shown) / len(words) if words else 1.0)
    if not shares:
        return {}
    return {
        "mean_word_share": round(sum(shares) / len(shares), 3),
        f"below_{low}": sum(v < low for v in shares),
        "n": len(shares),
    }


def assigned_per_reviewer(study: Study) -> dict[str, int]:
    return control_assignments_per_reviewer(study)


def calibration_per_reviewer(study: Study) -> dict[str, int]:
    return calibration_controls_per_automated(study)
