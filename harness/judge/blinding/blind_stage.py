"""The blinding stage, `blind` (`harness judge --blind`): items, routing, packets, the blinding
commitment and the leak audit. The key it commits to (item -> condition) and that key's canonical
form and SHA-256 are in `harness.study.blinding`, which `analyze` reads too.

Each step resumes: items and their steps are committed one by one; once items are routed they are
frozen, and a rerun only rewrites the packets from the stored assignment (same commitment).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from harness.analysis.plan.plan_file import Adjudication, load_plan
from harness.analysis.planning.decisive_design import design_note, differential_note
from harness.defaults import DEFAULT_SEED, materials_dir
from harness.errors import HarnessError, PartialWork
from harness.judge.blinding import commitment as C
from harness.judge.blinding.gold_draw import (
    Draw,
    check_tiers,
    draw_sample,
    plan_section,
    sample_items,
    store_tiers,
)
from harness.judge.blinding.gold_draw import summary as adjudication_summary
from harness.judge.blinding.leak_audit import (
    Finding,
    LeakAudit,
    classifier_audit,
    control_audit,
    control_findings,
    scan_packets,
)
from harness.judge.blinding.leak_models import model_audit
from harness.judge.blinding.steps_model import steps_line
from harness.judge.controls.control_plan import (
    ControlSettings,
    ControlsReport,
    add_controls,
    assigned_per_reviewer,
    calibration_per_reviewer,
    candidate_pool,
    control_settings,
    controls_needed,
    fidelity,
    one_kind_warning,
    stored_counts,
    stored_settings,
    wanted_per_reviewer,
)
from harness.judge.controls.control_routing import merged_positions, reserved_roster, route_controls
from harness.judge.controls.control_sources import Pool
from harness.judge.controls.controls_file import load_controls_file
from harness.judge.cutoff import settle_cutoff, store_cutoff
from harness.judge.items.blinded_items import (
    ItemsReport,
    Progress,
    StepOptions,
    StepSummary,
    create_items,
    make_items,
    open_model,
    step_specs,
    step_summary,
)
from harness.judge.judge_defaults import JUDGING_FILES
from harness.judge.judge_settings import BlindSettings, settings_or_options
from harness.judge.packets.packet_write import write_packets
from harness.judge.routing.roster import Roster, load_roster, store_roster, stored_roster
from harness.judge.routing.route_items import RoutingResult, balance_table, plan_routing
from harness.progress import status, tracker
from harness.study.clock import utc_now
from harness.study.lock import study_lock, writes_study
from harness.study.manifest import (
    change_manifest,
    made_section,
    read_manifest,
    record_command,
    record_materials,
    record_section,
)
from harness.study.manifest_sections import Adjudication as AdjudicationRecord
from harness.study.manifest_sections import BlindedStep, Blinding, Controls, Manifest, Routing
from harness.study.manifest_sections import LeakAudit as LeakAuditRecord
from harness.study.running import running_command
from harness.study.store import Study
from harness.study.tables.assignments import assignments_frame, count_assignments
from harness.study.tables.controls import control_labels, count_controls
from harness.study.tables.items import item_sources
from harness.study.tables.judge_reads import (
    count_late_outputs,
    count_ok_outputs,
    pending_outputs,
    routing_items,
)
from harness.study.tables.outputs import most_samples, output_models

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BlindResult", "blind", "blind_study"]


@dataclass
class BlindResult:
    """What `blind` did; `summary()` is what the command prints."""

    items: ItemsReport
    routing: RoutingResult | None
    balance: pd.DataFrame  # one row per reviewer
    packets: list[Path]
    commitment: Blinding
    leak: LeakAudit
    warnings: list[Finding] = field(default_factory=list)
    late_outputs: int = 0
    notes: list[str] = field(default_factory=list)
    controls: ControlsReport | None = None
    steps: dict[str, StepSummary] = field(default_factory=dict)  # `step_summary`

    def summary(self) -> str:
        lines = [self._items_line()]
        line = steps_line(self.steps)
        if line is not None:
            lines.append(line)
        if self.routing is not None:
            head = self.routing.summary().splitlines()[0]  # the line of totals
            lines += [head, balance_view(self.routing.balance).to_string(index=False)]
        else:
            lines.append(balance_view(self.balance).to_string(index=False))
        if self.packets:
            lines.append(
                f"Packets: {len(self.packets)} files in packets/ "
                f"({len(self.packets) // 4} human reviewers)"
            )
        else:
            lines.append(
                "No human reviewers, no packets; automated reviewers run with "
                "`harness judge --auto`."
            )
        if self.controls is not None:
            lines.append(self.controls.summary())
        lines.extend(f"note: {note}" for note in self.notes)
        if self.late_outputs:
            lines.append(
                f"warning: {self.late_outputs} outputs arrived after routing; they are "
                "not part of this study's review"
            )
        lines.append(C.describe(self.commitment))
        lines.append(self.leak.summary())
        for finding in self.warnings[:10]:
            lines.append(f"warning: {finding}")
        if len(self.warnings) > 10:
            lines.append(f"warning: ... {len(self.warnings) - 10} more in item texts")
        return "\n".join(lines)

    def _items_line(self) -> str:
        it = self.items
        if it.frozen:
            return "Items were already routed; packets rewritten from the stored assignment."
        steps = [f"{k}: {v['done']} run" for k, v in it.steps.items() if v["done"]]
        return f"Real items: {it.created} new ({it.skipped_blank} blank outputs skipped)" + "".join(
            f"; {s}" for s in steps
        )


def balance_view(balance: pd.DataFrame) -> pd.DataFrame:
    """The routing's balance table as printed: its `assigned` (real items only) shown as `real
    items`, and `assigned` the reviewer's every assignment, control items included, as `judge
    --status` counts it."""
    view = balance.rename(columns={"assigned": "real items"})
    controls = view["controls"] if "controls" in view.columns else 0
    return view.assign(assigned=view["real items"] + controls)


@writes_study
def blind(
    study: Study | str | Path,
    settings: BlindSettings | None = None,
    *,
    progress: Progress | bool | None = None,
    **options: object,
) -> BlindResult:
    """Make blinded items, route them, write packets, commit to the key and audit for leaks.

    `study`: an open study, or its folder (opened here). `settings`
    (`harness.judge.judge_settings.BlindSettings`), or its fields as keyword options
    (`blind(study, reviewers="roster.yaml", k=3)`; the model by a provider string,
    `model="openai/gpt-4o-mini"`, with `base_url` and `concurrency` for OpenAI-compatible ones).
    `progress`: a callback (step, done, total), or True for a progress bar on the terminal.

    The cut-off is stored with the first packets and fixed from then on. Control items come from
    the bank's known links (unless `bank_controls` is False) and the `controls` file, in the
    numbers of the `controls:` section of the preregistered plan (else `plan`, else the bundled
    one). A study with outputs still pending (`harness collect` not finished) is refused before
    its first routing unless `review_what_exists`, which the manifest's routing record keeps.
    """
    settings = settings_or_options(BlindSettings, settings, options)
    if isinstance(study, Study):
        return blind_study(study, settings, progress=progress)
    # the lock before the store opens: opening may migrate the schema, which is a write
    with study_lock(study, running_command()), Study.open(study) as opened:
        return blind_study(opened, settings, progress=progress)


@writes_study
def blind_study(
    study: Study, settings: BlindSettings, *, progress: Progress | bool | None = None
) -> BlindResult:
    """`blind` on an open study with its settings built (`harness judge --blind`)."""
    if progress is True:
        with _progress_bar() as bar:
            return _blind(study, settings, bar)
    return _blind(study, settings, progress or None)


def _blind(study: Study, asked: BlindSettings, progress: Progress | None) -> BlindResult:
    judging_dir = Path(asked.judging) if asked.judging is not None else materials_dir("judging")
    seed = DEFAULT_SEED if asked.seed is None else asked.seed
    steps: StepOptions = {
        "extract": asked.extract,
        "normalise": asked.normalise,
        "backend": asked.backend,
        "model": asked.model,
        "progress": progress,
        "options": asked.server.given(),  # checked against the backend when `asked` was built
    }
    cutoff = settle_cutoff(study, asked.cutoff)
    routed = bool(count_assignments(study))
    control = stored_settings(study) if routed else control_settings(study, asked.plan)
    entries = load_controls_file(asked.controls, cutoff) if asked.controls and not routed else []
    if not count_ok_outputs(study):
        raise HarnessError(
            "no model outputs to judge (run `harness collect` first)", file=study.path
        )
    pending = {} if routed else _pending(study, asked.review_what_exists)
    roster = _roster(study, asked.reviewers)
    gold = None if routed else plan_section(control.plan_path, roster)
    pool = (
        None
        if routed
        else candidate_pool(
            study,
            cutoff,
            entries,
            Path(asked.controls).name if asked.controls is not None else None,
            asked.bank_controls,
        )
    )
    items = _blinded_items(
        study,
        roster,
        routed,
        gold,
        steps,
        k=asked.k,
        distinct_topics=asked.distinct_topics,
        controls=control if pool is not None and _plants(study, pool) else None,
    )
    store_roster(study, roster, source=asked.reviewers)
    routing = None
    notes = _unapplied(study, routed, asked.k, seed, asked.distinct_topics)
    report = ControlsReport(control)
    if pool is not None:
        report.notes.extend(pool.notes)
        routing, draw = _route_with_controls(
            study,
            roster,
            gold,
            pool,
            report,
            k=asked.k,
            seed=seed,
            distinct_topics=asked.distinct_topics,
            steps=steps,
        )
        items.steps = _add_steps(items.steps, report.steps)
        made = {"review_what_exists": asked.review_what_exists, "pending_outputs": pending}
        record_section(
            study.path,
            "routing",
            made_section(Routing, {**routing.manifest_section(), **made}, study),
        )
        if draw is not None:
            unsure = _unsure_coding(control.plan_path)
            drawn = made_section(
                AdjudicationRecord, {**draw.manifest_section(), "unsure": unsure}, study
            )
            record_section(study.path, "adjudication", drawn)
            notes.append(adjudication_summary(draw))
            notes.append(_design_note(study, control.plan_path, draw.n_topics))
            notes.append(_differential_note(study, control.plan_path))
        _record_steps(study)
        report.counts = stored_counts(study)
        report.assigned = assigned_per_reviewer(study)
        report.calibration = calibration_per_reviewer(study)
        report.notes.extend(report.shortfalls())
        report.warning = (
            one_kind_warning(report.counts.get("expected", {}), cutoff, pool.years)
            or report.none_kept()
        )
        report.fidelity = fidelity(study)
        record_section(
            study.path, "controls", made_section(Controls, report.manifest_section(), study)
        )
    else:
        report = _stored_report(study, control)
    # the record holds what this run settled: seed, cut-off, reviewer texts and plan
    ran = replace(asked, seed=seed, cutoff=cutoff, judging=judging_dir, plan=control.plan_path)
    record_command(study.path, "judge.blind", ran.record())
    _record_materials(study, judging_dir, asked)
    packets, section, leak, findings = _publish(study, cutoff, judging_dir, seed)
    balance = routing.balance if routing else _stored_balance(study, roster)
    late = count_late_outputs(study)
    return BlindResult(
        items,
        routing,
        balance,
        packets,
        section,
        leak,
        findings,
        late,
        notes,
        report,
        step_summary(study),
    )


def _unsure_coding(plan_path: str) -> str:
    """The plan's coding of `unsure`, kept with the draw: what settles an item's majority for
    `judge --escalate` and `analyze` alike."""

    return load_plan(plan_path).plan.outcome.unsure


def _record_steps(study: Study) -> None:
    """Manifest section `blinded_steps`: one record per blinded text step."""
    steps = {name: made_section(BlindedStep, s, study) for name, s in step_summary(study).items()}

    def change(manifest: Manifest) -> None:
        manifest.blinded_steps = steps

    change_manifest(study.path, change)


def _pending(study: Study, review_what_exists: bool) -> dict[str, int]:
    """Outputs still pending per model; refused unless the researcher reviews what exists
    (outputs that arrive after the routing are never reviewed)."""

    pending = pending_outputs(study)
    if pending and not review_what_exists:
        shown = ", ".join(f"{key} {n}" for key, n in sorted(pending.items()))
        raise HarnessError(
            f"{sum(pending.values())} output(s) are still pending ({shown}): finish "
            "`harness collect` first (outputs collected after routing are never reviewed), or "
            "rerun with --review-what-exists to blind only the outputs collected so far",
            file=study.path,
        )
    return pending


def _plants(study: Study, pool: Pool) -> bool:
    """Whether this routing plants controls (candidates, or controls stored by an earlier run
    that stopped before routing)."""

    return bool(pool.candidates or count_controls(study))


def _blinded_items(
    study: Study,
    roster: Roster,
    routed: bool,
    gold: Adjudication | None,
    steps: StepOptions,
    *,
    k: int,
    distinct_topics: bool,
    controls: ControlSettings | None,
) -> ItemsReport:
    """Items with their blinded steps run. Before the first routing, the roster is checked
    against the items first (adjudicators with room for their controls when `controls`), so a
    routing problem is found before any model runs."""
    created = 0
    if not routed:
        created, _ = create_items(study)
        check_tiers(study, roster, gold, k=k, distinct_topics=distinct_topics, controls=controls)
    items = make_items(study, **steps)
    items.created += created
    if items.errors:
        raise PartialWork(
            f"{len(items.errors)} blinded step(s) failed; finished work is "
            f"kept, rerun to retry (first: {items.errors[0]})"
        )
    return items


def _publish(
    study: Study, cutoff: str | None, judging_dir: Path, seed: int
) -> tuple[list[Path], Blinding, LeakAudit, list[Finding]]:
    """Packets written and scanned, the commitment to the key, and the classifier leak audit."""

    made_at = _existing_commitment(study) or utc_now()
    store_cutoff(study, cutoff)  # the date the packets state
    with status("writing packets"):
        packets = write_packets(study, made_at=made_at, cutoff=cutoff, judging_dir=judging_dir)
    with status("scanning packets and controls for leaks"):
        findings = scan_packets(study) + control_findings(study)
    _refuse_leaks(study, findings, packets)
    section = C.write_commitment(study, made_at)
    with status("leak audit: condition from what reviewers see"):
        leak = classifier_audit(study, seed=seed)
    with status("leak audit: controls from real items"):
        leak.controls = control_audit(study, seed=seed)
    with status("leak audit: configurations and models"):
        leak.models = model_audit(study, seed=seed)
    audited = {**leak.as_dict(), "at": utc_now(), "packet_warnings": len(findings)}
    record_section(study.path, "leak_audit", made_section(LeakAuditRecord, audited, study))
    return packets, section, leak, findings


def _route_with_controls(
    study: Study,
    roster: Roster,
    gold: Adjudication | None,
    pool: Pool,
    report: ControlsReport,
    *,
    k: int,
    seed: int,
    distinct_topics: bool,
    steps: StepOptions,
) -> tuple[RoutingResult, Draw | None]:
    """Route the real items (room kept for controls), add the planned controls, run the blinded
    steps on them, route them, and store one assignment with one random order per reviewer.

    Two tiers, each routed by the same rules: primary reviewers over every item (k each), and
    adjudicators over the gold sample's items (`per_item` each). Each tier's controls are
    planned from its own real items and routed after them (capacity counted together, a human
    never sees two items of one topic); one control item may go to both tiers (a primary
    reviewer and an adjudicator are different people), so the controls made are those the
    larger tier needs. Which topics were drawn plays no part in which controls are chosen."""

    everyone, roster = roster, roster.with_role("primary")
    if not _plants(study, pool):
        real = plan_routing(study, roster, k=k, seed=seed, distinct_topics=distinct_topics)
        return store_tiers(study, everyone, real, gold)
    real = _plan_real(study, roster, report, k=k, seed=seed, distinct_topics=distinct_topics)
    tiers = [(roster, real.assignments, k)]
    draw = None
    if gold is not None:
        draw = draw_sample(study, gold)
        adjudicators = everyone.with_role("adjudicator")
        sample = _plan_real(
            study,
            adjudicators,
            report,
            k=gold.first_round,
            seed=seed,
            distinct_topics=distinct_topics,
            items=sample_items(study, draw),
        )
        tiers.append((adjudicators, sample.assignments, gold.first_round))
    report.wanted = {
        reviewer: n
        for tier, assigned, _ in tiers
        for reviewer, n in wanted_per_reviewer(study, tier, assigned, report.settings).items()
    }
    # the model serves the blinded steps alone: without them it is not opened (a local one
    # would load torch for nothing)
    backend = (
        open_model(steps["backend"], steps["model"], steps["options"] or {})
        if steps["extract"] or steps["normalise"]
        else None
    )
    errors = add_controls(
        study,
        pool,
        report,
        k=k,
        seed=seed,
        backend=backend,
        extract=steps["extract"],
        need=controls_needed(report.wanted, [(tier, n) for tier, _, n in tiers]),
    )
    if errors:
        raise PartialWork(
            f"{len(errors)} control text(s) failed; finished work is kept, rerun "
            f"to retry (first: {errors[0]})"
        )
    more = make_items(
        study,
        extract=steps["extract"],
        normalise=steps["normalise"],
        backend=steps["backend"] if backend is None else backend,
        progress=steps["progress"],
    )
    if more.errors:
        raise PartialWork(
            f"{len(more.errors)} blinded step(s) failed; finished work is "
            f"kept, rerun to retry (first: {more.errors[0]})"
        )
    report.steps = more.steps
    keys = item_sources(study)
    merged = [
        merged_positions(
            assigned,
            route_controls(
                study,
                tier,
                assigned,
                report.wanted,
                k=n,
                seed=seed,
                distinct_topics=distinct_topics,
            ),
            keys,
            seed,
        )
        for tier, assigned, n in tiers
    ]
    result = RoutingResult(merged[0], None, seed, k, distinct_topics, real.solver)
    return store_tiers(
        study, everyone, result, gold, (draw, merged[1]) if draw is not None else None
    )


def _plan_real(
    study: Study,
    roster: Roster,
    report: ControlsReport,
    *,
    k: int,
    seed: int,
    distinct_topics: bool,
    items: pd.DataFrame | None = None,
) -> RoutingResult:
    """The real items' routing with room kept for controls; without it when capacity is short.
    `items`: the adjudication sample's (the roster then holds the adjudicators)."""

    s = report.settings
    try:
        return plan_routing(
            study,
            reserved_roster(roster, s.share_for(roster), s.min_per_reviewer),
            k=k,
            seed=seed,
            distinct_topics=distinct_topics,
            items=items,
        )
    except HarnessError:
        who = "the primary reviewers'" if items is None else "the adjudicators'"
        report.notes.append(
            f"{who} capacity leaves no room kept for controls: their real items were routed "
            "first and controls fill what capacity remains"
        )
        return plan_routing(
            study, roster, k=k, seed=seed, distinct_topics=distinct_topics, items=items
        )


def _add_steps(
    first: dict[str, dict[str, int]], second: dict[str, dict[str, int]]
) -> dict[str, dict[str, int]]:
    out = {name: dict(counts) for name, counts in first.items()}
    for name, counts in second.items():
        for key, value in counts.items():
            out.setdefault(name, {})[key] = out.get(name, {}).get(key, 0) + value
    return out


def _stored_report(study: Study, settings: ControlSettings) -> ControlsReport:
    report = ControlsReport(settings)
    report.counts = stored_counts(study)
    report.assigned = assigned_per_reviewer(study)
    report.calibration = calibration_per_reviewer(study)
    report.fidelity = fidelity(study)
    controls = read_manifest(study).controls
    report.warning = controls.warning if controls is not None else None
    return report


@contextmanager
def _progress_bar() -> Iterator[Progress]:
    """A progress row per blinded step (harness.progress), as a (step, done, total) callback."""

    with tracker() as bars:
        yield lambda step, done, total: bars(f"{step} (blind to condition)", done, total)


def _unapplied(study: Study, routed: bool, k: int, seed: int, distinct: bool) -> list[str]:
    """Routing settings of this run that differ from the stored routing (which stays)."""
    if not routed:
        return []

    stored = read_manifest(study.path).routing or Routing()
    asked = {"k": k, "seed": seed, "distinct_topics": distinct}
    was = {"k": stored.k, "seed": stored.seed, "distinct_topics": stored.distinct_topics}
    changed = [
        f"{key}={was[key]} (asked {value})"
        for key, value in asked.items()
        if was[key] is not None and was[key] != value
    ]
    return [f"routing was made earlier and stays: {', '.join(changed)}"] if changed else []


def _roster(study: Study, reviewers: str | Path | None) -> Roster:
    if reviewers is not None:
        return load_roster(reviewers)
    stored = stored_roster(study)
    if stored is None:
        raise HarnessError(
            "no reviewer roster: give --reviewers FILE (see "
            "judging/roster.example.yaml; judging/roster.demo.yaml has "
            "automated reviewers only)",
            column="--reviewers",
        )
    return stored


def _existing_commitment(study: Study) -> str | None:
    blinding = read_manifest(study).blinding
    return blinding.made_at if blinding is not None else None


def _refuse_leaks(study: Study, findings: list[Finding], packets: list[Path]) -> None:
    """Blinded information outside item texts is never sent out: remove the packets, stop."""
    errors = [f for f in findings if not f.in_item_text]
    if not errors:
        return
    for path in packets:
        path.unlink(missing_ok=True)
    raise HarnessError(
        f"{len(errors)} blinded term(s) found in packets outside item texts, "
        f"packets removed; first: {errors[0]}",
        file=study.packets_dir,
    )


def _stored_balance(study: Study, roster: Roster) -> pd.DataFrame:
    return balance_table(
        routing_items(study),
        assignments_frame(study),
        sorted(roster.reviewers, key=lambda r: r.id),
    )


def _record_materials(study: Study, judging: Path, s: BlindSettings) -> None:
    files = {name: judging / name for name in JUDGING_FILES}
    if s.reviewers is not None:
        files["roster"] = Path(s.reviewers)
    if s.controls is not None:
        files["controls"] = Path(s.controls)
    for spec in step_specs(s.extract, s.normalise):
        files[f"prompt:{spec.name}"] = spec.template
    record_materials(study.path, "judge", files)


def _design_note(study: Study, plan_path: str | None, topics: int) -> str:
    """What the drawn design can decide (simulated), said before any review."""
    outputs = (most_samples(study) or 1) * max(len(output_models(study)), 1)
    return design_note(load_plan(plan_path).plan, topics, outputs)


def _differential_note(study: Study, plan_path: str | None) -> str:
    """Whether the planted controls measure the adjudicators' differential error."""
    mode = load_plan(plan_path).plan.adjudication.differential_error
    return differential_note(mode, [(c.expected, c.kind) for c in control_labels(study)])
