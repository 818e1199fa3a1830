"""`harness judge --blind`: items, routing, packets, the blinding commitment and the leak audit.

Each step resumes: items and their steps are committed one by one; once items are routed they are
frozen, and a rerun only rewrites the packets from the stored assignment (same commitment).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.defaults import DEFAULT_SEED, materials_dir
from harness.errors import HarnessError
from harness.judge import commitment as C
from harness.judge.backend import backend_options, public_options
from harness.judge.cutoff import normalise_cutoff, settle_cutoff, store_cutoff
from harness.judge.defaults import DEFAULT_K, JUDGING_FILES
from harness.judge.items import (
    ItemsReport,
    Progress,
    create_items,
    make_items,
    step_specs,
    step_summary,
)
from harness.judge.leak import Finding, LeakAudit, classifier_audit, scan_packets
from harness.judge.roster import Roster, load_roster, store_roster, stored_roster
from harness.judge.routing import RoutingResult, balance_table, check_routing, route
from harness.judge.sheets_out import write_packets
from harness.study.clock import utc_now
from harness.study.lock import writes_study
from harness.study.manifest import record_command, record_materials, record_section
from harness.study.store import Study


@dataclass
class BlindResult:
    """What `blind` did; `summary()` is what the command prints."""

    items: ItemsReport
    routing: RoutingResult | None
    balance: Any
    packets: list[Path]
    commitment: dict[str, Any]
    leak: LeakAudit
    warnings: list[Finding] = field(default_factory=list)
    late_outputs: int = 0
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        lines = []
        it = self.items
        if it.frozen:
            lines.append("Items were already routed; packets rewritten from the stored assignment.")
        else:
            steps = [f"{k}: {v['done']} run" for k, v in it.steps.items() if v["done"]]
            lines.append(f"Items: {it.created} new ({it.skipped_blank} blank outputs skipped)"
                         + "".join(f"; {s}" for s in steps))
        if self.routing is not None:
            lines.append(self.routing.summary())
        else:
            lines.append(self.balance.to_string(index=False))
        if self.packets:
            lines.append(f"Packets: {len(self.packets)} files in packets/ "
                         f"({len(self.packets) // 4} human reviewers)")
        else:
            lines.append("No human reviewers, no packets; automated reviewers run with "
                         "`harness judge --auto`.")
        lines.extend(f"note: {note}" for note in self.notes)
        if self.late_outputs:
            lines.append(f"warning: {self.late_outputs} outputs arrived after routing; they are "
                         "not part of this study's review")
        lines.append(C.describe(self.commitment))
        lines.append(self.leak.summary())
        for finding in self.warnings[:10]:
            lines.append(f"warning: {finding}")
        if len(self.warnings) > 10:
            lines.append(f"warning: ... {len(self.warnings) - 10} more in item texts")
        return "\n".join(lines)


@writes_study
def blind(
    study_dir: str | Path,
    *,
    reviewers: str | Path | None = None,
    k: int = DEFAULT_K,
    seed: int | None = None,
    extract: bool = True,
    normalise: bool = True,
    backend: Any = "local",
    model: str | None = None,
    cutoff: str | None = None,
    distinct_topics: bool = True,
    judging: str | Path | None = None,
    progress: Progress | bool | None = None,
    base_url: str | None = None,
    concurrency: int | None = None,
) -> BlindResult:
    """Make blinded items, route them, write packets, commit to the key and audit for leaks.

    `judging` is a folder with the reviewer texts (instructions.md, codebook.md,
    search-protocol.md); default: the bundled `judging/`. `progress`: a callback
    (step, done, total), or True for a progress bar on the terminal. `cutoff` (YYYY-MM-DD or
    YYYY) is stored with the first packets and fixed from then on. `base_url` and
    `concurrency` go to the `openai` backend of the blinded steps.
    """
    if progress is True:
        with _progress_bar() as bar:
            return blind(study_dir, reviewers=reviewers, k=k, seed=seed, extract=extract,
                         normalise=normalise, backend=backend, model=model, cutoff=cutoff,
                         distinct_topics=distinct_topics, judging=judging, progress=bar,
                         base_url=base_url, concurrency=concurrency)
    judging_dir = Path(judging) if judging is not None else materials_dir("judging")
    seed = DEFAULT_SEED if seed is None else seed
    cutoff = normalise_cutoff(cutoff)
    options = backend_options(backend, base_url=base_url, concurrency=concurrency)
    with Study.open(study_dir) as study:
        cutoff = settle_cutoff(study, cutoff)
        if not study.count("outputs", "status = 'ok'"):
            raise HarnessError("no model outputs to judge (run `harness collect` first)",
                               file=study_dir)
        roster = _roster(study, reviewers)
        routed = bool(study.count("assignments"))
        items = _blinded_items(study, roster, routed, k=k, distinct_topics=distinct_topics,
                               extract=extract, normalise=normalise, backend=backend,
                               model=model, progress=progress or None, options=options)
        store_roster(study, roster, source=reviewers)
        routing = None
        notes = _unapplied(study, routed, k, seed, distinct_topics)
        if not routed:
            routing = route(study, roster, k=k, seed=seed, distinct_topics=distinct_topics)
            record_section(study.path, "routing", routing.manifest_section())
            record_section(study.path, "blinded_steps", step_summary(study))
        record_command(study.path, "judge.blind", {
            "reviewers": str(reviewers) if reviewers else None, "k": k, "seed": seed,
            "extract": extract, "normalise": normalise, "model": model, "cutoff": cutoff,
            "backend": backend if isinstance(backend, str) else backend.name,
            "distinct_topics": distinct_topics, "judging": str(judging_dir),
            **public_options(options)})
        _record_materials(study, judging_dir, reviewers, extract, normalise)
        packets, section, leak, findings = _publish(study, cutoff, judging_dir, seed)
        balance = routing.balance if routing else _stored_balance(study, roster)
        late = study.count("outputs o", "o.status = 'ok' AND TRIM(COALESCE(o.text, '')) != '' "
                           "AND NOT EXISTS (SELECT 1 FROM items i WHERE i.output_id = o.output_id)")
        return BlindResult(items, routing, balance, packets, section, leak, findings, late, notes)


def _blinded_items(study: Study, roster: Roster, routed: bool, *, k: int, distinct_topics: bool,
                   **steps: Any) -> ItemsReport:
    """Items with their blinded steps run. Before the first routing, the roster is checked
    against the items first, so a routing problem is found before any model runs."""
    created = 0
    if not routed:
        created, _ = create_items(study)
        check_routing(study, roster, k=k, distinct_topics=distinct_topics)
    items = make_items(study, **steps)
    items.created += created
    if items.errors:
        raise HarnessError(f"{len(items.errors)} blinded step(s) failed; finished work is "
                           f"kept, rerun to retry (first: {items.errors[0]})")
    return items


def _publish(study: Study, cutoff: str | None, judging_dir: Path, seed: int
             ) -> tuple[list[Path], dict[str, Any], LeakAudit, list[Finding]]:
    """Packets written and scanned, the commitment to the key, and the classifier leak audit."""
    made_at = _existing_commitment(study) or utc_now()
    store_cutoff(study, cutoff)  # the date the packets state
    packets = write_packets(study, made_at=made_at, cutoff=cutoff, judging_dir=judging_dir)
    findings = scan_packets(study)
    _refuse_leaks(study, findings, packets)
    section = C.write_commitment(study, made_at)
    leak = classifier_audit(study, seed=seed)
    record_section(study.path, "leak_audit", {**leak.as_dict(), "at": utc_now(),
                                              "packet_warnings": len(findings)})
    return packets, section, leak, findings


@contextmanager
def _progress_bar() -> Iterator[Progress]:
    """A rich progress bar per blinded step, as a (step, done, total) callback."""
    from rich.progress import Progress as Bar

    with Bar(transient=True) as bar:
        tasks: dict[str, Any] = {}

        def update(step: str, done: int, total: int) -> None:
            if step not in tasks:
                tasks[step] = bar.add_task(f"{step} (blind to condition)", total=total)
            bar.update(tasks[step], completed=done)

        yield update


def _unapplied(study: Study, routed: bool, k: int, seed: int, distinct: bool) -> list[str]:
    """Routing settings of this run that differ from the stored routing (which stays)."""
    if not routed:
        return []
    from harness.study.manifest import load_manifest

    stored = load_manifest(study.path).get("routing") or {}
    asked = {"k": k, "seed": seed, "distinct_topics": distinct}
    changed = [f"{key}={stored[key]} (asked {value})" for key, value in asked.items()
               if key in stored and stored[key] != value]
    return [f"routing was made earlier and stays: {', '.join(changed)}"] if changed else []


def _roster(study: Study, reviewers: str | Path | None) -> Roster:
    if reviewers is not None:
        return load_roster(reviewers)
    stored = stored_roster(study)
    if stored is None:
        raise HarnessError("no reviewer roster: give --reviewers FILE (see "
                           "judging/roster.example.yaml; judging/roster.demo.yaml has "
                           "automated reviewers only)", column="--reviewers")
    return stored


def _existing_commitment(study: Study) -> str | None:
    from harness.study.manifest import load_manifest

    return (load_manifest(study.path).get("blinding") or {}).get("made_at")


def _refuse_leaks(study: Study, findings: list[Finding], packets: list[Path]) -> None:
    """Blinded information outside item texts is never sent out: remove the packets, stop."""
    errors = [f for f in findings if not f.in_item_text]
    if not errors:
        return
    for path in packets:
        path.unlink(missing_ok=True)
    raise HarnessError(f"{len(errors)} blinded term(s) found in packets outside item texts, "
                       f"packets removed; first: {errors[0]}", file=study.packets_dir)


def _stored_balance(study: Study, roster: Roster) -> Any:
    from harness.judge.routing import ITEMS_SQL

    return balance_table(study.frame(ITEMS_SQL), study.frame(
        "SELECT item_id, reviewer_id, position FROM assignments"),
        sorted(roster.reviewers, key=lambda r: r.id))


def _record_materials(study: Study, judging: Path, reviewers: str | Path | None,
                      extract: bool, normalise: bool) -> None:
    files = {name: judging / name for name in JUDGING_FILES}
    if reviewers is not None:
        files["roster"] = Path(reviewers)
    for spec in step_specs(extract, normalise):
        files[f"prompt:{spec.name}"] = spec.template
    record_materials(study.path, "judge", files)
