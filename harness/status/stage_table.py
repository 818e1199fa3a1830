"""`harness status`: one row per stage, what it holds and how complete it is."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.collection.stopped_models import StoppedModel, stopped_models
from harness.status.next_command import next_step
from harness.status.started import check_started
from harness.study import Study
from harness.study.manifest import read_manifest
from harness.study.tables.collect_models import wanted_samples
from harness.study.tables.outputs import outputs_by_model, repeated_texts
from harness.study.tables.removed_outputs import removed_models
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
        pilot = " (pilot)" if s.pilot else ""
        unblinded = unblinded_at(s)
        manifest = read_manifest(path)
        collected = _collect_rows(s, prompts, stopped_models(manifest.collect))
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
            f"{_items(items, counts.control_items)}, {assigned} assignments, {searches} searches",
            "blinding key committed"
            if manifest.blinding is not None and manifest.blinding.sha256
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


def _collect_rows(s: Study, prompts: int, stopped: list[StoppedModel]) -> list[StageStatus]:
    """One row per model (provider string) of the study; one plain row when it has one. A
    model whose latest collect stopped on failures no retry heals says so, in the server's
    words, with its counts as `collect` gave them (ok, failed, pending)."""
    stops = {m.key: m for m in stopped}
    wanted = wanted_samples(s)
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
        total = prompts * samples
        pending = max(0, total - ok - failed)  # as `collect` counts them
        stop = stops.get(key)
        rows.append(
            StageStatus(
                f"collect {key}" if len(keys) > 1 else "collect",
                (f"{key}: " if len(keys) == 1 and key else "")
                + f"{ok} ok, {failed} failed"
                + (f", {pending} pending of {total}" if pending else "")
                + " outputs"
                + (f", {again} repeating an earlier sample's text" if again else "")
                + (f"; collect stopped on {stop.reason}" if stop else ""),
                ("stopped, " if stop else "") + (_frac(ok, total) if prompts else "-"),
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


def _items(items: int, controls: int) -> str:
    """The items, split as `judge --blind` and the report count them: real items (one per
    output routed) and control items."""
    if not controls:
        return f"{items} items"
    return f"{items} items ({items - controls} real, {controls} control)"


def _frac(done: int, total: int) -> str:
    return f"{done}/{total} ({100 * done / total:.0f}%)" if total else "-"


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
