"""`harness run`: every stage in order on the embedded defaults, resuming where a study stopped.

This is the demonstration pipeline: the embedded 135M-parameter model at two sampling
configurations, the bundled topic bank, the offline demonstration corpus and automated reviewers.
The study is marked `demo` so that its report says its verdict demonstrates the machinery and is
not evidence.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, Unpack

from harness.analysis.plan.plan_file import load_plan
from harness.analysis.planning.preregister import prereg
from harness.analysis.run import analyze
from harness.collection.collect_settings import CollectSettings
from harness.collection.collect_stage import collect_models, collect_one
from harness.errors import PartialWork
from harness.generation.generate_stage import generate
from harness.geometry.compare import compare_split
from harness.geometry.probe_stage import run_probe
from harness.judge.automated.auto_review import run_automated, unfinished
from harness.judge.blinding.blind_stage import blind
from harness.judge.cutoff import normalise_cutoff
from harness.judge.judge_settings import AutoSettings, BlindSettings
from harness.judge.routing.escalation import escalate, waiting_for_escalation
from harness.judge.routing.roster import demo_roster_path, load_roster
from harness.materials.bank import load_topic_bank
from harness.models import open_backend
from harness.models.model_args import parse_model_args
from harness.models.providers import LABEL_MARK, resolve_model
from harness.models.throughput import stage_rates
from harness.pipeline.run_settings import RunOptions, RunSettings
from harness.progress import tracker
from harness.study import Study, is_study, manifest_path
from harness.study.lock import creates_study
from harness.study.manifest import made_section, read_manifest, record_section
from harness.study.manifest_sections import Section
from harness.study.tables.collect_models import stored_models
from harness.study.tables.views import store_counts


class _RunStudy(Protocol):
    """`run_study` as Python callers see it: settings, or RunSettings' fields as keywords."""

    def __call__(
        self,
        study: str | Path,
        settings: RunSettings | None = None,
        *,
        echo: Callable[[str], None] = print,
        **options: Unpack[RunOptions],
    ) -> RunResult: ...


#: The demo's local model runs at two configurations, each filed under MODEL#LABEL: the default
#: sampling (temperature 0.7, top_p 0.95) and greedy decoding. `harness run --one-configuration`
#: runs it once, at the default sampling, filed under the model's own key.
DEMO_CONFIGURATIONS: dict[str, list[str]] = {"sampled": [], "greedy": ["temperature=0"]}
#: Prompts per batch of the local model in the demo's collect and blinded steps. On a CPU each
#: decoding step reads every weight whatever the batch, so 32 rows give more tokens per second
#: than the backend's default 8 (benchmarks/bench_local.py prints the ratios); a completion does
#: not depend on its batch (its own generator, cache and batch-invariant matrix shapes).
DEMO_BATCH_SIZE = 32


@dataclass
class RunResult:
    study: Path
    verdict: str
    headline: str
    report_html: Path
    timings: dict[str, float] = field(default_factory=dict)

    def summary(self) -> str:
        """The report's path and the stage times (the analyze stage has printed the verdict)."""
        rate = stage_rates(read_manifest(self.study))  # tokens/s of the stages that decode
        steps = ", ".join(
            f"{k} {v:.0f} s" + (f" ({rate[k]:.0f} tok/s)" if k in rate else "")
            for k, v in self.timings.items()
        )
        return f"report: {self.report_html}\nstage times: {steps}"


def checked_first(
    function: Callable[[str | Path, RunSettings, Callable[[str], None]], RunResult],
) -> _RunStudy:
    """`run_study` as Python calls it: `settings` (default RunSettings()) with keyword `options`
    set over them, every setting checked before the study folder is made or anything runs."""

    @functools.wraps(function)
    def checked(
        study: str | Path,
        settings: RunSettings | None = None,
        *,
        echo: Callable[[str], None] = print,
        **options: Unpack[RunOptions],
    ) -> RunResult:
        chosen = (settings or RunSettings()).with_options(options)
        check_run_settings(chosen)
        return function(study, chosen, echo)

    return checked


def check_run_settings(settings: RunSettings) -> None:
    """Refuse a bad model, roster, topic bank, plan or cut-off before anything is written."""
    s = settings
    for text in ([s.model] if s.model else []) + list(s.models or []):
        resolve_model(text)
    normalise_cutoff(s.cutoff)
    if s.reviewers is not None:
        load_roster(s.reviewers)
    if s.plan is not None:
        load_plan(s.plan)
    if s.topics is not None:
        load_topic_bank(Path(s.topics))
    if s.model_args:
        parse_model_args(list(s.model_args), list(s.models or []))


@checked_first
@creates_study
def run_study(
    study: str | Path, settings: RunSettings, echo: Callable[[str], None] = print
) -> RunResult:
    """Run generate, collect, judge --blind, prereg, judge --auto, probe and analyze in order.

    Called as `run_study(study, settings, echo=...)` or with RunSettings' fields as keywords
    (`run_study(study, pilot=True, limit=4)`). `echo` prints each stage's lines.
    `limit` / `subset` (seeded by `subset_seed`, default `seed`) choose the topics as
    `harness generate` does. `cutoff` is stated on the items and splits the bank's known links
    into published and unpublished control items (`controls`); automated reviewers search
    before it. `plan` is the analysis plan to preregister (default: bundled); `study_file` is
    the manifest record of a study file the settings came from (`harness.materials.study_file`). `models`
    (provider strings) and `model_args` (`MODEL@KEY=VALUE`) collect several models, as
    `harness collect` does; the blind steps and the probe use the local `model`. Without
    `models`, `configurations` collects the local model at each of DEMO_CONFIGURATIONS (a study
    begun with other models resumes them instead).
    """
    folder = Path(study)
    timings: dict[str, float] = {}

    def stage(name: str, work: Callable[[], str | None]) -> None:
        echo(f"== {name}")
        start = time.perf_counter()
        message = work()
        timings[name] = time.perf_counter() - start
        logging.getLogger(__name__).info("stage %s finished in %.2f s", name, timings[name])
        if message:
            echo(message)

    s = settings
    choice = {"limit": s.limit, "subset": s.subset, "subset_seed": s.subset_seed}
    stage("generate", lambda: _generate(folder, s.topics, s.seed, s.pilot, choice))
    if s.demo:  # whatever made the prompts, this run's verdict is a demo
        with Study.open(folder) as opened:
            opened.set_meta("demo", "1")
    if s.study_file is not None:
        record_section(folder, "study_file", made_section(Section, dict(s.study_file), folder))
    models: Sequence[str] | None = s.models
    model_args: Sequence[str] | None = s.model_args
    if models is None and s.configurations:
        models, model_args = _configurations(folder, s.model)
    stage("collect", lambda: _collect(folder, s, models, model_args))
    stage(
        "judge --blind",
        lambda: _blind(
            folder,
            s.reviewers,
            s.seed,
            s.extract,
            s.normalise,
            s.model,
            s.cutoff,
            s.controls,
            s.plan,
        ),
    )
    stage("prereg", lambda: _prereg(folder, s.plan))
    stage("judge --auto", lambda: _auto(folder))
    if s.probe:
        stage("geometry probe", lambda: _probe(folder, s.model))
    result: dict[str, object] = {}
    stage("analyze", lambda: _analyze(folder, result))
    return RunResult(
        folder, str(result["verdict"]), str(result["headline"]), Path(str(result["html"])), timings
    )


def _generate(
    folder: Path, topics: Path | None, seed: int, pilot: bool, choice: dict[str, int | None]
) -> str:
    if is_study(folder):
        with Study.open(folder) as s:
            counts = store_counts(s)
            if counts.prompts:
                return f"already generated: {counts.topics} topics, {counts.prompts} prompts"
    audit = generate(
        folder,
        topics=topics,
        seed=seed,
        pilot=pilot,
        limit=choice["limit"],
        subset=choice["subset"],
        subset_seed=choice["subset_seed"],
    )
    return (
        f"{audit.n_topics} topics x 3 conditions{_chosen(folder)}; mean tokens "
        + ", ".join(f"{c} {v:.1f}" for c, v in audit.tokens_mean.items())
        + f"; structure identical outside slots: {'yes' if audit.structure_ok else 'NO'}"
    )


def _chosen(folder: Path) -> str:
    """How the topics were chosen, as recorded by generate (empty for the whole bank)."""
    with Study.open(folder) as s:
        selection = json.loads(s.meta("topic_selection") or "{}")
    if selection.get("rule") == "subset":
        return (
            f" (subset of {selection['of']}, seed {selection['seed']}: "
            f"{selection['field_pairs']} field pairs, {selection['domain_pairs']} domain "
            "pairs)"
        )
    if selection.get("rule") == "limit":
        return f" (the first {selection['size']} of {selection['of']})"
    return ""


def _configurations(folder: Path, model: str | None) -> tuple[list[str] | None, list[str]]:
    """The --model and --model-arg values of the demo's configurations of the local `model`."""
    base = resolve_model(model).model_string if model else "local"
    keys = [base + LABEL_MARK + label for label in DEMO_CONFIGURATIONS]
    with Study.open(folder) as s:
        stored = set(stored_models(s))
    if stored - set(keys):  # a study collected otherwise goes on as it began
        return None, []
    args = [f"{label}@{arg}" for label, values in DEMO_CONFIGURATIONS.items() for arg in values]
    return keys, [f"batch_size={DEMO_BATCH_SIZE}", *args]


def _collect(
    folder: Path,
    settings: RunSettings,
    models: Sequence[str] | None,
    model_args: Sequence[str] | None,
) -> str:
    s = settings
    if models:
        asked = CollectSettings(
            models=tuple(models),
            model_args=tuple(model_args or ()),
            samples=s.samples,
            max_tokens=s.max_tokens,
            seed=s.seed,
        )
        results = collect_models(folder, settings=asked, progress=True)
    else:  # the local model alone, under its own key
        asked = CollectSettings(
            backend="local",
            model=s.model,
            samples=s.samples,
            max_tokens=s.max_tokens,
            seed=s.seed,
            batch_size=DEMO_BATCH_SIZE,
        )
        results = [collect_one(folder, settings=asked, progress=True)]
    if any(r.stopped == "interrupted" for r in results):
        raise KeyboardInterrupt
    failed, pending = sum(r.failed for r in results), sum(r.pending for r in results)
    if failed or pending:  # later stages would work on a partial study
        raise PartialWork(
            f"collect left {failed} failed and {pending} pending completions; "
            "rerun to resume (failures: harness collect --retry-errors)"
        )
    return "\n".join(r.summary() for r in results)


def _blind(
    folder: Path,
    reviewers: Path | None,
    seed: int,
    extract: bool,
    normalise: bool,
    model: str | None,
    cutoff: str | None,
    controls: bool,
    plan: Path | None = None,
) -> str:
    """`plan`: the plan the run preregisters, whose `controls:` and `adjudication:` (the draw,
    adjudicators per item, escalation) the blinding follows."""
    settings = BlindSettings(
        reviewers=reviewers or demo_roster_path(),
        seed=seed,
        extract=extract,
        normalise=normalise,
        backend=open_backend("local", model, batch_size=DEMO_BATCH_SIZE),
        model=model,
        cutoff=cutoff,
        bank_controls=controls,
        plan=plan,
    )
    return blind(folder, settings, progress=True).summary()


def _prereg(folder: Path, plan: Path | None) -> str:
    if read_manifest(folder).prereg is not None:
        return f"already preregistered (plan hash in {manifest_path(folder).name})"
    return prereg(folder, plan).summary()


def _auto(folder: Path) -> str:
    with Study.open(folder) as s:
        table = run_automated(s, AutoSettings())
    if (left := unfinished(table)) is not None:  # no verdict on reviews that are missing
        raise PartialWork(f"judge --auto: {accept_hint(folder, left)}")
    return "\n".join([table.to_string(index=False), *_escalated(folder)])


def _escalated(folder: Path) -> list[str]:
    """With `adjudication.escalate`, the later rounds: route the items the automated
    adjudicators disagree on and run them, until every item has its majority."""
    lines: list[str] = []
    while True:
        with Study.open(folder) as s:
            if not waiting_for_escalation(s):
                return lines
        with Study.open(folder) as s:
            done = escalate(s)
        lines.append(done.summary())
        if not done.routed:
            return lines
        with Study.open(folder) as s:
            table = run_automated(s, AutoSettings())
        if (left := unfinished(table)) is not None:
            raise PartialWork(f"judge --auto: {accept_hint(folder, left)}")


def accept_hint(folder: Path, left: str) -> str:
    """`left` with the way to accept a reviewer stopped by the unsure limit from a whole run:
    `harness run` has no --accept-unsure; the acceptance, once recorded, holds for its rerun."""
    if "--accept-unsure" not in left:
        return left
    return (
        f"{left}; within harness run, accept it with `harness judge --auto --study {folder} "
        "--accept-unsure ID`, then rerun harness run, which resumes"
    )


def _probe(folder: Path, model: str | None) -> str:
    with tracker() as bars:
        run = run_probe(folder, model, on_prompt=lambda i, n: bars("probe", i, n))
    return run.summary() + "\n" + compare_split(folder).summary()


def _analyze(folder: Path, out: dict[str, object]) -> str:
    result = analyze(folder)
    out["verdict"] = result.verdict.label
    out["headline"] = result.headline()
    out["html"] = result.report_files.get("html", folder / "report" / "report.html")
    return result.summary()
