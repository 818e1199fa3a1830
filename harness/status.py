"""What a study holds, stage by stage, and whether its materials changed since it was made."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.judge.blinding.steps_model import served_models
from harness.study import Study
from harness.study.history import MANIFEST_NAME, check_history
from harness.study.manifest import environment, read_manifest, verify_materials
from harness.study.manifest_sections import Command, LockRecord
from harness.study.store import DB_NAME
from harness.study.tables.adjudication import escalation_due
from harness.study.tables.assignments import count_assignments, outstanding_reviews
from harness.study.tables.judge_reads import pending_outputs
from harness.study.tables.outputs import outputs_by_model, repeated_texts
from harness.study.tables.prompts import prompt_count
from harness.study.tables.removed_outputs import removed_models
from harness.study.tables.reviews import late_reviews
from harness.study.tables.views import store_counts
from harness.study.unblinding import unblinded_at


@dataclass(frozen=True)
class StageStatus:
    stage: str
    holds: str
    complete: str


def study_status(path: str | Path) -> list[StageStatus]:
    with Study.open(path) as s:
        counts = store_counts(s)
        prompts, topics, probed = counts.prompts, counts.topics, counts.probed_prompts
        items, assigned, reviews = counts.items, counts.assignments, counts.reviews
        searches = counts.searches
        returned = counts.reviews_assigned  # what `judge --status` counts as returned
        extra = reviews - returned  # calibration reviews of controls not assigned, late ones
        collected = _collect_rows(s, prompts)
        pilot = " (pilot)" if s.pilot else ""
        unblinded = unblinded_at(s)
    manifest = read_manifest(path)
    reported = (Path(path) / "report" / "report.json").exists()
    return [
        StageStatus(
            "generate",
            f"{topics} topics{pilot}, {prompts} prompts",
            "done" if prompts else "not run",
        ),
        *collected,
        StageStatus(
            "judge",
            f"{items} items, {assigned} assignments, {searches} searches",
            "blinding key committed"
            if manifest.blinding is not None
            else ("items made" if items else "not run"),
        ),
        StageStatus(
            "reviews",
            f"{reviews} reviews" + (f" ({extra} outside the assignments)" if extra else ""),
            _frac(returned, assigned) if assigned else "-",
        ),
        StageStatus(
            "prereg",
            "plan hash recorded" if manifest.prereg is not None else "-",
            "done" if manifest.prereg is not None else "not run",
        ),
        StageStatus(
            "analyze",
            ("report" if reported else "-") + (f", unblinded {unblinded}" if unblinded else ""),
            "done" if reported else "not run",
        ),
        StageStatus(
            "geometry", f"{probed} prompts probed", _frac(probed, prompts) if prompts else "-"
        ),
    ]


def _collect_rows(s: Study, prompts: int) -> list[StageStatus]:
    """One row per model (provider string) of the study; one plain row when it has one."""
    wanted = {
        key: int(settings.get("samples") or 1)
        for key, settings in json.loads(s.meta("collect_models") or "{}").items()
    }
    counts = outputs_by_model(s)
    # samples of one prompt with the very same text: a server that ignored the seed or n
    repeated = repeated_texts(s)
    keys = [*wanted, *sorted(k for k in counts if k not in wanted)] or [""]
    rows = []
    for key in keys:
        found = counts.get(key)
        ok, failed = (found.ok, found.failed) if found else (0, 0)
        samples = wanted.get(key) or (found.samples if found else 1)
        again = repeated.get(key)
        rows.append(
            StageStatus(
                f"collect {key}" if len(keys) > 1 else "collect",
                (f"{key}: " if len(keys) == 1 and key else "")
                + f"{ok} ok, {failed} failed outputs"
                + (f", {again} repeating an earlier sample's text" if again else ""),
                _frac(ok, prompts * samples) if prompts else "-",
            )
        )
    for removed in removed_models(s):  # taken out before blinding (`collect --remove`)
        rows.append(
            StageStatus(
                f"removed {removed.model_key}",
                f"{removed.ok} ok, {removed.failed} failed outputs kept aside",
                f"removed {removed.removed_at}",
            )
        )
    return rows


def _frac(done: int, total: int) -> str:
    return f"{done}/{total} ({100 * done / total:.0f}%)" if total else "-"


def next_step(path: str | Path) -> str:
    """Which stage comes next and why, as one line."""
    manifest = read_manifest(path)
    flag = f"--study {path}"
    with Study.open(path) as s:
        counts = store_counts(s)
        prompts, ok = counts.prompts, counts.outputs_ok
        pending = pending_outputs(s)
        assigned = count_assignments(s)
        missing = sum(r.outstanding for r in outstanding_reviews(s))
        unblinded = unblinded_at(s)
        late = late_reviews(s).count
        served = [] if assigned else served_models(s)  # the blinded steps' advice needs them
        disputed = (
            len(escalation_due(s, manifest.adjudication)) if assigned and not unblinded else 0
        )
    if not prompts:
        return f"Next: harness generate {flag} (the study has no prompts yet)"
    if not assigned and (pending or not ok):
        n = sum(pending.values()) if pending else prompts
        return f"Next: harness collect {flag} ({n} output(s) pending)"
    if not assigned:
        steps = (
            f" --model PROVIDER/NAME (a capable model for the blinded steps; the study tests "
            f"{', '.join(served[:3])}, the default is the embedded 135M model)"
            if served
            else ""
        )
        return (
            f"Next: harness judge --blind {flag} --reviewers ROSTER{steps} (every output is "
            "collected; nothing is blinded yet)"
        )
    if manifest.prereg is None:
        return (
            f"Next: harness prereg {flag} (register the analysis plan before the reviews are "
            "analysed)"
        )
    made = str(manifest.blinding.made_at or "") if manifest.blinding else ""
    if not unblinded and made and str(manifest.prereg.at or "") < made:
        return (
            f"Next: harness prereg {flag} (rerun it: the plan was registered at "
            f"{manifest.prereg.at}, before the blinding of {made}, so prereg.md does "
            "not record the blinding commitment)"
        )
    if unblinded:
        report = Path(path) / "report"
        return (
            f"Done: unblinded {unblinded} by harness analyze; read {report / 'report.html'}, "
            f"follow the items in {report / 'explorer.html'} (harness explore {flag} rewrites "
            f"it), or write the tables with harness export judgments {flag}"
            + (f"; {late} review(s) came in after the unblinding (not analysed)" if late else "")
        )
    escalate = (
        f"harness judge --escalate {flag} ({disputed} item(s) the adjudicators disagree on "
        "need another adjudicator)"
    )
    if missing and disputed:
        return f"Next: {escalate}; {missing} of {assigned} assigned reviews are outstanding"
    if disputed:
        return f"Next: {escalate}"
    if missing:
        return (
            f"Next: reviews: {missing} of {assigned} assigned reviews outstanding (harness judge "
            f"--status {flag} lists them; harness judge --import or --auto adds them); "
            "harness analyze waits for them"
        )
    return f"Next: harness analyze {flag} (every assigned review is in)"


def check_started(path: str | Path) -> None:
    """Refuse, as one line, a folder that is no study, a study whose manifest is gone although
    it has data, and a store in which nothing has run (no manifest, no prompts)."""
    folder = Path(path)
    start = f"start one with `harness generate --study {folder}` or `harness run --study {folder}`"
    if not (folder / DB_NAME).exists():
        raise HarnessError(f"no study here ({DB_NAME} is missing); {start}", file=folder)
    with Study.open(folder) as s:  # a damaged store or a newer schema: its own line
        prompts = prompt_count(s)
    check_history(folder)  # a study with data but no manifest: exit 2
    if not prompts and not (folder / MANIFEST_NAME).exists():
        raise HarnessError(
            f"nothing has run in this study yet (no manifest, no prompts); {start}", file=folder
        )


def print_status(path: str | Path) -> None:
    from rich.console import Console
    from rich.table import Table

    check_started(path)
    table = Table(title=f"Study {path}")
    for column in ("stage", "holds", "complete"):
        table.add_column(column)
    for row in study_status(path):
        table.add_row(row.stage, row.holds, row.complete)
    Console().print(table)
    print(next_step(path))


def print_verify(path: str | Path) -> int:
    """Print each materials file's status; return 1 when anything changed or went missing."""
    check_started(path)  # "0 changed" must not hide a manifest that is gone
    changes = verify_materials(path)
    bad = [c for c in changes if c["status"] != "unchanged"]
    for c in changes:
        mark = "ok     " if c["status"] == "unchanged" else c["status"].upper().ljust(7)
        print(f"{mark} {c['role']}: {c['name']}  ({c['path']})")
    print(f"{len(changes)} materials files checked, {len(bad)} changed or missing")
    for line in environment_lines(read_manifest(path).commands or []):
        print(line)
    return 1 if bad else 0


def environment_lines(commands: list[Command]) -> list[str]:
    """The study's recorded environment (lock hash, versions) against the running one."""
    if not commands:
        return []
    first, now = commands[0], environment()
    running = LockRecord.from_record(now["lock"]) if now["lock"] else None
    lines = [
        f"environment of {first.stage} ({first.at}): "
        f"{_lock_text(first.lock)}; this process: {_lock_text(running)}"
    ]
    then = first.packages or {}
    changed = [
        f"{name} {then[name]} -> {version}"
        for name, version in now["packages"].items()
        if name in then and then[name] != version
    ]
    lines.append(
        "package versions as recorded"
        if not changed
        else "package versions changed: " + ", ".join(changed)
    )
    return lines


def _lock_text(lock: LockRecord | None) -> str:
    if lock is None or not lock.record():
        return "no lock file"
    text = f"{lock.file} sha256 {(lock.sha256 or '')[:16]}"
    differs = lock.differs or {}
    return text + (f" ({len(differs)} packages installed at other versions)" if differs else "")
