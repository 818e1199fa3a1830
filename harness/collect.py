"""`collect`: run a model backend over the study's pending prompts and store every completion.

Each completion is committed in its own transaction the moment it arrives, under an output id
fixed by (prompt, sample), so a run killed at any moment resumes where it stopped and ends with
exactly the completions an uninterrupted run would have: none lost, none duplicated. Failed
requests are stored as `status='failed'` with their reason; `retry_errors` retries only those.
The settings of the first run (backend, model, sampling parameters) are kept in the study, so a
rerun without flags resumes with them and a rerun with different ones is refused.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from harness.errors import HarnessError
from harness.models import Backend, ChatRequest, Completion, GenerationParams, open_backend
from harness.models._redact import public_url
from harness.models.budget import Budget, worst_case_cost
from harness.study import Study
from harness.study.clock import utc_now
from harness.study.lock import writes_study
from harness.study.manifest import load_manifest, record_command, record_section
from harness.study.text import storable

SETTINGS_KEY = "collect_settings"
BATCHES_KEY = "collect_batches"
IDENTITY = ("backend", "model", "temperature", "top_p", "max_tokens", "seed")
DEFAULTS: dict[str, Any] = {"backend": "local", "samples": 1, **GenerationParams().as_dict()}


class CollectResult(BaseModel):
    """What one `collect` run did; `summary()` prints it."""

    study: str
    backend: str
    model: str
    params: dict[str, Any]
    samples: int
    total: int  # prompts x samples
    done_before: int  # completions (ok or failed) already stored when the run began
    completed: int  # ok completions written by this run
    failed: int  # failed completions written by this run
    retries: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    elapsed_s: float
    stopped: str | None = None  # None (finished), "max_cost" or "interrupted"
    outputs_ok: int  # in the store after the run
    outputs_failed: int
    notes: list[str] = Field(default_factory=list)

    @property
    def pending(self) -> int:
        return self.total - self.outputs_ok - self.outputs_failed

    def summary(self) -> str:
        cost = "unknown" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        lines = [
            f"collect: {self.backend} / {self.model}, {self.samples} sample(s) per prompt, "
            f"params {json.dumps(self.params, sort_keys=True)}",
            f"  this run: {self.completed} completed, {self.failed} failed, {self.retries} "
            f"retries, {self.prompt_tokens + self.completion_tokens} tokens, cost {cost}, "
            f"{self.elapsed_s:.1f} s",
            f"  study: {self.outputs_ok} ok, {self.outputs_failed} failed, {self.pending} pending "
            f"of {self.total}",
        ]
        if self.stopped == "max_cost":
            lines.append("  stopped: the cost limit was reached (a request is sent only if its "
                         "worst-case cost fits what is left); rerun to continue")
        elif self.stopped == "interrupted":
            lines.append("  stopped: interrupted; everything done so far is kept, rerun to resume")
        if self.outputs_failed and not self.stopped:
            lines.append("  failed completions keep their reason; rerun with --retry-errors")
        lines.extend(f"  note: {note}" for note in self.notes)
        return "\n".join(lines)


def output_id(prompt_id: str, sample: int) -> str:
    """Stable id of a completion. Reviewers never see it (items get random ids)."""
    return f"o-{prompt_id}-{sample}"


# -- settings ----------------------------------------------------------------------------------
def resolve_settings(study: Study, requested: dict[str, Any]) -> dict[str, Any]:
    """Requested settings, filled in from the study's earlier runs, then from the defaults.

    Once outputs exist, the backend, model and sampling parameters are fixed for the study.
    """
    stored = json.loads(study.meta(SETTINGS_KEY) or "{}")
    has_outputs = study.count("outputs") > 0
    settings = {}
    for name in ("backend", "model", "samples", "temperature", "top_p", "max_tokens", "seed"):
        value = requested.get(name)
        before = stored.get(name)
        if value is None:
            value = before if before is not None else DEFAULTS.get(name)
        elif has_outputs and name in IDENTITY and before is not None and value != before:
            raise HarnessError(
                f"this study's outputs were collected with {name}={before!r}, not {value!r}; "
                "rerun with the same settings to resume, or collect into a new study",
                file=study.path, column=name,
            )
        settings[name] = value
    _check_ranges(settings)
    return settings


#: Allowed values of the sampling settings, checked before anything is stored.
RANGES: dict[str, tuple[float, float]] = {
    "samples": (1, 10_000), "temperature": (0.0, 2.0), "top_p": (0.0, 1.0),
    "max_tokens": (1, 1_000_000),
}


def _check_ranges(settings: dict[str, Any]) -> None:
    for name, (low, high) in RANGES.items():
        value = settings.get(name)
        if value is not None and not low <= value <= high:
            raise HarnessError(f"{name} must be between {low:g} and {high:g} (got {value!r})",
                               column=name)
    if settings.get("top_p") == 0:
        raise HarnessError("top_p must be above 0 (got 0)", column="top_p")


class StudyBatchState:
    """Batch API bookkeeping in the study's meta table (own connection: called off-thread)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> list[dict[str, Any]]:
        with Study.open(self.path) as study:
            result: list[dict[str, Any]] = json.loads(study.meta(BATCHES_KEY) or "[]")
            return result

    def save(self, batches: list[dict[str, Any]]) -> None:
        with Study.open(self.path) as study:
            study.set_meta(BATCHES_KEY, json.dumps(batches))


# -- the run -----------------------------------------------------------------------------------
def pending_requests(
    study: Study, samples: int, retry_errors: bool
) -> tuple[list[ChatRequest], set[tuple[str, int]], int]:
    """(requests, the (prompt, sample) pairs to store, count of pairs already done)."""
    status = {(r["prompt_id"], r["sample"]): r["status"]
              for r in study.rows("SELECT prompt_id, sample, status FROM outputs")}
    wanted: set[tuple[str, int]] = set()
    requests, done = [], 0
    for row in study.rows("SELECT prompt_id, system, text FROM prompts ORDER BY prompt_id"):
        todo = set()
        for sample in range(samples):
            state = status.get((row["prompt_id"], sample))
            if state is None or (retry_errors and state == "failed"):
                todo.add((row["prompt_id"], sample))
            else:
                done += 1
        if todo:
            messages = ([{"role": "system", "content": row["system"]}] if row["system"] else [])
            messages.append({"role": "user", "content": row["text"]})
            # only the missing span of sample numbers is asked for; a sample already stored
            # inside it (rare: a gap left by --retry-errors) comes back and is skipped
            first = min(sample for _, sample in todo)
            count = max(sample for _, sample in todo) - first + 1
            requests.append(ChatRequest(row["prompt_id"], messages, count, first))
            wanted |= todo
    return requests, wanted, done


def store(study: Study, group: list[Completion], backend: str, model: str,
          params_json: str) -> None:
    """The completions of one request, one transaction: a crash never keeps some samples of a
    request without the others, so a resumed run asks for the whole request again and gets what
    an uninterrupted run got. An ok row is never replaced; a failed one may be."""
    with study.transaction() as conn:
        for c in group:
            _insert(conn, c, backend, model, params_json)


def _insert(conn: Any, c: Completion, backend: str, model: str, params_json: str) -> None:
    conn.execute(
        "INSERT INTO outputs (output_id, prompt_id, sample, status, backend, model, "
        "model_reported, system_fingerprint, params, text, finish_reason, prompt_tokens, "
        "completion_tokens, cost_usd, latency_s, attempts, error, started_at, finished_at) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
        "ON CONFLICT DO UPDATE SET status=excluded.status, backend=excluded.backend, "
        "model=excluded.model, model_reported=excluded.model_reported, "
        "system_fingerprint=excluded.system_fingerprint, params=excluded.params, "
        "text=excluded.text, finish_reason=excluded.finish_reason, "
        "prompt_tokens=excluded.prompt_tokens, completion_tokens=excluded.completion_tokens, "
        "cost_usd=excluded.cost_usd, latency_s=excluded.latency_s, "
        "attempts=outputs.attempts + excluded.attempts, error=excluded.error, "
        "started_at=excluded.started_at, finished_at=excluded.finished_at "
        "WHERE outputs.status = 'failed'",
        (output_id(c.key, c.sample), c.key, c.sample, "ok" if c.ok else "failed", backend,
         model, c.model_reported, c.system_fingerprint, params_json, storable(c.text),
         c.finish_reason,
         c.prompt_tokens, c.completion_tokens, c.cost_usd, c.latency_s, c.attempts,
         storable(c.error),
         c.started_at, c.finished_at),
    )


@writes_study
def collect(
    study: str | Path, *, backend: str | Backend | None = None, model: str | None = None,
    samples: int | None = None, temperature: float | None = None, top_p: float | None = None,
    max_tokens: int | None = None, seed: int | None = None, max_cost: float | None = None,
    retry_errors: bool = False, progress: bool = False, new_endpoint: bool = False,
    **options: Any,
) -> CollectResult:
    """Collect completions for every pending (prompt, sample) of a study; resumable.

    `backend` is "local", "openai" or a Backend object; `options` go to `open_backend`
    (e.g. concurrency, rpm, tpm, timeout, base_url, batch_api, batch_size). Secrets come from
    the environment and are never stored.
    """
    handle = Study.open(study)
    try:
        return _collect(handle, backend, model, samples, temperature, top_p, max_tokens, seed,
                        max_cost, retry_errors, progress, options, new_endpoint)
    finally:
        handle.close()


def _collect(study: Study, backend: Any, model: Any, samples: Any, temperature: Any, top_p: Any,
             max_tokens: Any, seed: Any, max_cost: float | None, retry_errors: bool,
             progress: bool, options: dict[str, Any], new_endpoint: bool = False
             ) -> CollectResult:
    if study.count("prompts") == 0:
        raise HarnessError("the study has no prompts (run `harness generate` first)",
                           file=study.path)
    given = backend if backend is not None and not isinstance(backend, str) else None
    settings = resolve_settings(study, {
        "backend": given.name if given else backend, "model": given.model if given else model,
        "samples": samples, "temperature": temperature, "top_p": top_p,
        "max_tokens": max_tokens, "seed": seed})
    params = GenerationParams(settings["temperature"], settings["top_p"],
                              settings["max_tokens"], settings["seed"])
    notes = []
    if given is None:
        _check_options(settings["backend"], options)
        if settings["backend"] == "openai":
            notes += _settle_endpoint(study, options, new_endpoint)
            options.setdefault("batch_state", StudyBatchState(study.path))
    engine = given or open_backend(settings["backend"], settings["model"], **options)
    settings["model"] = engine.model
    _check_budget(engine, max_cost)
    with study.transaction() as conn:
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                     (SETTINGS_KEY, json.dumps(settings, sort_keys=True)))
    run_info = _run_info(engine, settings, options, max_cost, retry_errors)
    record_command(study.path, "collect", run_info)
    requests, wanted, done = pending_requests(study, settings["samples"], retry_errors)
    total = study.count("prompts") * settings["samples"]
    params_json = json.dumps({**params.as_dict(), **_extra_params(engine)}, sort_keys=True)
    tally = _Tally(engine, max_cost)
    if max_cost is not None and getattr(engine, "batch_api", False):
        requests = _within_budget(engine, requests, params, max_cost, tally)
    elif max_cost is not None and hasattr(engine, "budget"):
        engine.budget = Budget(max_cost)  # direct requests: worst case reserved before sending
    display = _Progress(total, done, tally) if progress else None
    stream = engine.complete(requests, params)
    try:
        if display:
            display.start()
        _drain(stream, wanted, tally, display,
               lambda c: store(study, c, engine.name, engine.model, params_json))
    except KeyboardInterrupt:
        tally.stopped = "interrupted"
    finally:
        _close(stream)
        if hasattr(engine, "budget") and engine.budget is not None:
            tally.stopped = tally.stopped or ("max_cost" if engine.budget.refused else None)
            engine.budget = None
        if display:
            display.stop()
        if given is None and hasattr(engine, "close"):
            engine.close()
    result = _result(study, engine, settings, params, total, done, tally)
    result.notes.extend(notes)
    _record(study, run_info, result, getattr(getattr(engine, "stats", None), "batch_ids", []))
    return result


def _drain(stream: Iterator[Completion], wanted: set[tuple[str, int]], tally: _Tally,
           display: _Progress | None, write: Callable[[list[Completion]], None]) -> None:
    """Store completions as they arrive, a request's samples together: backends emit the
    samples of one request one after another, so a change of key closes a group."""
    group: list[Completion] = []
    try:
        for completion in stream:
            unit = (completion.key, completion.sample)
            if unit not in wanted:  # a sample done earlier, returned again with its siblings
                continue
            wanted.discard(unit)
            if group and group[-1].key != completion.key:
                write(group)
                group = []
            group.append(completion)
            tally.add(completion)
            if display:
                display.update()
            if tally.over_budget():
                tally.stopped = "max_cost"
                return
    finally:  # also on Ctrl-C: what has arrived is kept
        if group:
            write(group)


def _close(stream: Iterator[Completion]) -> None:
    close = getattr(stream, "close", None)
    if close is not None:
        with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C while stopping
            close()


LOCAL_ONLY = frozenset({"batch_size", "threads"})
OPENAI_ONLY = frozenset({"concurrency", "base_url", "rpm", "tpm", "timeout", "max_attempts",
                         "batch_api"})


def _settle_endpoint(study: Study, options: dict[str, Any], new_endpoint: bool) -> list[str]:
    """A rerun goes to the server the study's outputs came from, unless told otherwise.

    Without this, a rerun that forgot --base-url would send the study's prompts to
    $OPENAI_BASE_URL or api.openai.com, another provider, with whatever key is set.
    """
    recorded = load_manifest(study.path).get("collect", {}).get("base_url")
    if not recorded or study.count("outputs") == 0:
        return []
    asked = options.get("base_url") or os.environ.get("OPENAI_BASE_URL")
    if asked is None:
        options["base_url"] = recorded
        return [f"endpoint {recorded}, as recorded in the study"]
    shown = public_url(asked.rstrip("/"))
    if shown == recorded:
        return []
    if not new_endpoint:
        raise HarnessError(
            f"this study's outputs came from {recorded}, not {shown}; pass --new-endpoint to "
            "collect from another server (the change is recorded in the manifest)",
            file=study.path, column="base_url")
    return [f"endpoint {shown} is new: the study's earlier outputs came from {recorded}"]


def _check_options(backend: str, options: dict[str, Any]) -> None:
    """Refuse an option the chosen backend would silently ignore."""
    foreign = OPENAI_ONLY if backend == "local" else LOCAL_ONLY if backend == "openai" else set()
    for name in sorted(foreign & {k for k, v in options.items() if v is not None}):
        flag = "--" + name.replace("_", "-")
        raise HarnessError(f"{flag} does not apply to the {backend} backend", column=name)


def _check_budget(engine: Any, max_cost: float | None) -> None:
    if max_cost is None:
        return
    if max_cost <= 0:
        raise HarnessError(f"--max-cost must be positive (got {max_cost})")
    prices = getattr(engine, "prices", None)
    if prices is not None and prices.price(engine.model) is None:
        raise HarnessError(
            f"no price known for model {engine.model!r}, so --max-cost cannot be enforced; add it "
            "to a price table (YAML or JSON file named by HARNESS_PRICES)", column="max_cost")


def _within_budget(engine: Any, requests: list[ChatRequest], params: GenerationParams,
                   max_cost: float, tally: _Tally) -> list[ChatRequest]:
    """A submitted batch cannot be stopped, so submit only what fits the budget at worst
    (every sample using all of max_tokens); the rest stays pending for a later run."""
    price, discount = engine.prices.price(engine.model), engine.prices.batch_discount
    budget = Budget(max_cost)  # refusal is sticky: what is kept is a prefix, in order
    kept = [r for r in requests if budget.reserve(worst_case_cost(r, params, price, discount))]
    if budget.refused:
        tally.stopped = "max_cost"
    return kept


def _extra_params(engine: Any) -> dict[str, Any]:
    return {"batch_api": True} if getattr(engine, "batch_api", False) else {}


def _run_info(engine: Any, settings: dict[str, Any], options: dict[str, Any],
              max_cost: float | None, retry_errors: bool) -> dict[str, Any]:
    """Parameters of this run for the manifest: no keys, no batch state objects."""
    info = {**settings, "max_cost": max_cost, "retry_errors": retry_errors}
    for name in ("concurrency", "rpm", "tpm", "timeout", "batch_api", "batch_size", "threads",
                 "max_attempts"):
        if options.get(name) is not None:
            info[name] = options[name]
    if getattr(engine, "public_base_url", None):
        info["base_url"] = engine.public_base_url
    if getattr(engine, "fingerprint", None) and engine.name == "local":
        info["weights"] = engine.fingerprint
    return info


class _Tally:
    """Running totals of this run."""

    def __init__(self, engine: Any, max_cost: float | None) -> None:
        self.engine, self.max_cost = engine, max_cost
        self.ok = self.failed = self.prompt_tokens = self.completion_tokens = 0
        self.cost = 0.0
        self.cost_known = True
        self.attempt_retries = 0
        self.stopped: str | None = None
        self.t0 = time.perf_counter()

    def add(self, c: Completion) -> None:
        if c.ok:
            self.ok += 1
        else:
            self.failed += 1
        self.prompt_tokens += c.prompt_tokens or 0
        self.completion_tokens += c.completion_tokens or 0
        if c.cost_usd is None:
            self.cost_known = self.cost_known and not c.ok
        else:
            self.cost += c.cost_usd
        if c.sample == 0:
            self.attempt_retries += max(0, c.attempts - 1)

    @property
    def retries(self) -> int:
        stats = getattr(self.engine, "stats", None)
        return stats.retries if stats is not None else self.attempt_retries

    def over_budget(self) -> bool:
        return self.max_cost is not None and self.cost >= self.max_cost


class _Progress:
    """A rich progress bar: done/total, rate, ETA, retries, errors, tokens, cost."""

    def __init__(self, total: int, done: int, tally: _Tally) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )
        from rich.text import Text

        class Rate(ProgressColumn):
            def render(self, task: Any) -> Text:
                return Text(f"{task.speed or 0:.1f}/s" if task.speed else "-/s")

        self.tally, self.done_before = tally, done
        self.bar = Progress(
            BarColumn(bar_width=16), MofNCompleteColumn(), Rate(), TextColumn("ETA"),
            TimeRemainingColumn(), TextColumn("{task.fields[info]}"),
            console=Console(stderr=True), refresh_per_second=4,
        )
        self.task = self.bar.add_task("collect", total=total, completed=done, info="")

    def start(self) -> None:
        self.bar.start()

    def stop(self) -> None:
        self.update()
        self.bar.stop()

    def update(self) -> None:
        t = self.tally
        cost = f"${t.cost:.4f}" if t.cost_known else "cost ?"
        stats = getattr(t.engine, "stats", None)
        extra = f" | {stats.status}" if stats is not None and stats.status else ""
        info = (f"retries {t.retries}  errors {t.failed}  "
                f"{t.prompt_tokens + t.completion_tokens:,} tok  {cost}{extra}")
        self.bar.update(self.task, completed=self.done_before + t.ok + t.failed, info=info)


def _result(study: Study, engine: Any, settings: dict[str, Any], params: GenerationParams,
            total: int, done: int, tally: _Tally) -> CollectResult:
    counts = {r["status"]: r["n"] for r in study.rows(
        "SELECT status, COUNT(*) AS n FROM outputs GROUP BY status")}
    return CollectResult(
        study=str(study.path), backend=engine.name, model=engine.model, params=params.as_dict(),
        samples=settings["samples"], total=total, done_before=done, completed=tally.ok,
        failed=tally.failed, retries=tally.retries, prompt_tokens=tally.prompt_tokens,
        completion_tokens=tally.completion_tokens,
        cost_usd=tally.cost if tally.cost_known else None,
        elapsed_s=time.perf_counter() - tally.t0, stopped=tally.stopped,
        outputs_ok=counts.get("ok", 0), outputs_failed=counts.get("failed", 0),
    )


def _record(study: Study, run_info: dict[str, Any], result: CollectResult,
            batch_ids: list[str]) -> None:
    """The manifest's `collect` section: settings, what the servers reported, totals, runs."""
    reported = study.rows(
        "SELECT model_reported, system_fingerprint, COUNT(*) AS n, SUM(cost_usd) AS cost, "
        "SUM(prompt_tokens) AS pt, SUM(completion_tokens) AS ct FROM outputs "
        "WHERE status = 'ok' GROUP BY model_reported, system_fingerprint")
    previous: dict[str, Any] = load_manifest(study.path).get("collect", {})
    run: dict[str, Any] = {
        "finished_at": utc_now(), "completed": result.completed, "failed": result.failed,
        "retries": result.retries, "cost_usd": result.cost_usd, "stopped": result.stopped,
        "elapsed_s": round(result.elapsed_s, 3),
        **{k: run_info[k] for k in ("base_url", "concurrency", "batch_api") if k in run_info},
    }
    runs: list[dict[str, Any]] = previous.get("runs", []) + [run]
    batches = sorted({*previous.get("batch_ids", []), *batch_ids})
    record_section(study.path, "collect", {
        **{k: v for k, v in run_info.items() if k not in ("max_cost", "retry_errors")},
        "params": result.params, "samples": result.samples,
        "reported": [{"model": r["model_reported"], "system_fingerprint": r["system_fingerprint"],
                      "outputs": r["n"]} for r in reported],
        "outputs": {"ok": result.outputs_ok, "failed": result.outputs_failed,
                    "pending": result.pending, "total": result.total},
        "tokens": {"prompt": sum(r["pt"] or 0 for r in reported),
                   "completion": sum(r["ct"] or 0 for r in reported)},
        "cost_usd": sum(r["cost"] or 0.0 for r in reported),
        "batch_ids": batches, "runs": runs,
    })
