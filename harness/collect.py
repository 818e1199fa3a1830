"""`collect`: run model backends over the study's pending prompts and store every completion.

Each completion is committed the moment it arrives, under an output id fixed by (prompt, model,
sample), so a run killed at any moment resumes where it stopped and ends with exactly the
completions an uninterrupted run would have: none lost, none duplicated. Failed requests are
stored as `status='failed'` with their reason; `retry_errors` retries only those. A study holds
one or several models, each filed under its provider string (`harness/collect_plan.py`); the
models of a run are collected one after another, each with its own settings, endpoint, cost cap
and provenance, and a model added later collects only its own outputs.
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

from harness.collect_plan import (
    LOCAL_ONLY,
    MODELS_KEY,
    OPENAI_ONLY,
    ModelRun,
    plan,
    stored_models,
)
from harness.errors import HarnessError
from harness.models import Backend, ChatRequest, Completion, GenerationParams, open_backend
from harness.models._redact import public_url
from harness.models.budget import Budget, worst_case_cost
from harness.models.endpoint import check_base_url
from harness.models.model_args import request_fields
from harness.models.openai_api import NO_KEY, ParameterRejected
from harness.models.providers import ModelSpec, stored_key
from harness.study import Study
from harness.study.clock import utc_now
from harness.study.lock import writes_study
from harness.study.manifest import load_manifest, record_command, record_section
from harness.study.text import storable

BATCHES_KEY = "collect_batches"


class CollectResult(BaseModel):
    """What one `collect` run did for one model; `summary()` prints it."""

    study: str
    model_key: str
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
    outputs_ok: int  # of this model, in the store after the run
    outputs_failed: int
    notes: list[str] = Field(default_factory=list)

    @property
    def pending(self) -> int:
        return self.total - self.outputs_ok - self.outputs_failed

    def summary(self) -> str:
        cost = "unknown" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        lines = [
            f"collect: {self.model_key}, {self.samples} sample(s) per prompt, "
            f"params {json.dumps(self.params, sort_keys=True)}",
            f"  this run: {self.completed} completed, {self.failed} failed, {self.retries} "
            f"retries, {self.prompt_tokens + self.completion_tokens} tokens, cost {cost}, "
            f"{self.elapsed_s:.1f} s",
            f"  study: {self.outputs_ok} ok, {self.outputs_failed} failed, {self.pending} pending "
            f"of {self.total}",
        ]
        if self.stopped == "max_cost":
            lines.append(
                "  stopped: the cost limit was reached (a request is sent only if its "
                "worst-case cost fits what is left); rerun to continue"
            )
        elif self.stopped == "interrupted":
            lines.append("  stopped: interrupted; everything done so far is kept, rerun to resume")
        if self.outputs_failed and not self.stopped:
            lines.append("  failed completions keep their reason; rerun with --retry-errors")
        lines.extend(f"  note: {note}" for note in self.notes)
        return "\n".join(lines)


def output_id(prompt_id: str, sample: int, suffix: str = "") -> str:
    """Stable id of a completion. Reviewers never see it (items get random ids). The study's
    first model has no suffix (so single-model studies keep their ids); later ones have theirs."""
    return f"o-{prompt_id}-{sample}" + (f"-{suffix}" if suffix else "")


class StudyBatchState:
    """Batch API bookkeeping in the study's meta table, one list per model (own connection:
    called off-thread). The first model keeps the key older studies used."""

    def __init__(self, path: Path, suffix: str = "") -> None:
        self.path = path
        self.key = BATCHES_KEY + (f":{suffix}" if suffix else "")

    def load(self) -> list[dict[str, Any]]:
        with Study.open(self.path) as study:
            batches: list[dict[str, Any]] = json.loads(study.meta(self.key) or "[]")
            return batches

    def save(self, batches: list[dict[str, Any]]) -> None:
        with Study.open(self.path) as study:
            study.set_meta(self.key, json.dumps(batches))


# -- the run -----------------------------------------------------------------------------------
def pending_requests(
    study: Study, key: str, samples: int, retry_errors: bool
) -> tuple[list[ChatRequest], set[tuple[str, int]], int]:
    """(requests, the (prompt, sample) pairs to store, count of pairs already done) of one
    model."""
    status = {
        (r["prompt_id"], r["sample"]): r["status"]
        for r in study.rows(
            "SELECT prompt_id, sample, status FROM outputs WHERE model_key = ?", (key,)
        )
    }
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
            messages = [{"role": "system", "content": row["system"]}] if row["system"] else []
            messages.append({"role": "user", "content": row["text"]})
            # only the missing span of sample numbers is asked for; a sample already stored
            # inside it (rare: a gap left by --retry-errors) comes back and is skipped
            first = min(sample for _, sample in todo)
            count = max(sample for _, sample in todo) - first + 1
            requests.append(ChatRequest(row["prompt_id"], messages, count, first))
            wanted |= todo
    return requests, wanted, done


class Filing:
    """Where one model's completions go: its key, output id suffix and recorded parameters."""

    def __init__(self, key: str, suffix: str, backend: str, model: str, params_json: str) -> None:
        self.key, self.suffix, self.backend, self.model = key, suffix, backend, model
        self.params_json = params_json


def store(study: Study, group: list[Completion], filing: Filing) -> None:
    """The completions of one request, one transaction: a crash never keeps some samples of a
    request without the others, so a resumed run asks for the whole request again and gets what
    an uninterrupted run got. An ok row is never replaced; a failed one may be."""
    with study.transaction() as conn:
        for c in group:
            _insert(conn, c, filing)


def _insert(conn: Any, c: Completion, f: Filing) -> None:
    conn.execute(
        "INSERT INTO outputs (output_id, prompt_id, sample, status, backend, model, model_key, "
        "model_reported, system_fingerprint, params, text, finish_reason, prompt_tokens, "
        "completion_tokens, cost_usd, latency_s, attempts, error, started_at, finished_at) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
        "ON CONFLICT DO UPDATE SET status=excluded.status, backend=excluded.backend, "
        "model=excluded.model, model_reported=excluded.model_reported, "
        "system_fingerprint=excluded.system_fingerprint, params=excluded.params, "
        "text=excluded.text, finish_reason=excluded.finish_reason, "
        "prompt_tokens=excluded.prompt_tokens, completion_tokens=excluded.completion_tokens, "
        "cost_usd=excluded.cost_usd, latency_s=excluded.latency_s, "
        "attempts=outputs.attempts + excluded.attempts, error=excluded.error, "
        "started_at=excluded.started_at, finished_at=excluded.finished_at "
        "WHERE outputs.status = 'failed'",
        (
            output_id(c.key, c.sample, f.suffix),
            c.key,
            c.sample,
            "ok" if c.ok else "failed",
            f.backend,
            f.model,
            f.key,
            c.model_reported,
            c.system_fingerprint,
            f.params_json,
            storable(c.text),
            c.finish_reason,
            c.prompt_tokens,
            c.completion_tokens,
            c.cost_usd,
            c.latency_s,
            c.attempts,
            storable(c.error),
            c.started_at,
            c.finished_at,
        ),
    )


GENERATION = ("samples", "temperature", "top_p", "max_tokens", "seed")


@writes_study
def collect(
    study: str | Path,
    *,
    backend: str | Backend | None = None,
    model: str | None = None,
    samples: int | None = None,
    temperature: float | None = None,
    top_p: float | None = None,
    max_tokens: int | None = None,
    seed: int | None = None,
    max_cost: float | None = None,
    retry_errors: bool = False,
    progress: bool = False,
    new_endpoint: bool = False,
    model_args: list[str] | None = None,
    **options: Any,
) -> CollectResult:
    """Collect completions for every pending (prompt, sample) of one model; resumable.

    `model` is a provider string (`openai/gpt-4o-mini`, `vllm/NAME`, `local`, ...) or, with
    `backend` ("local", "openai" or a provider), a plain name; `backend` may also be a Backend
    object. `options` go to the backend (concurrency, rpm, tpm, timeout, base_url, batch_api,
    batch_size, ...); `model_args` are `--model-arg` strings. Without a model, a study's one
    model resumes. Secrets come from the environment and are never stored.
    """
    results = _run_models(
        study,
        None,
        backend,
        model,
        max_cost,
        retry_errors,
        progress,
        new_endpoint,
        model_args,
        None,
        True,
        {
            "samples": samples,
            "temperature": temperature,
            "top_p": top_p,
            "max_tokens": max_tokens,
            "seed": seed,
            **options,
        },
    )
    return results[0]


@writes_study
def collect_models(
    study: str | Path,
    *,
    models: list[str] | None = None,
    backend: str | Backend | None = None,
    model: str | None = None,
    max_cost: float | None = None,
    retry_errors: bool = False,
    progress: bool = False,
    new_endpoint: bool = False,
    model_args: list[str] | None = None,
    on_result: Callable[[CollectResult], None] | None = None,
    **options: Any,
) -> list[CollectResult]:
    """Collect for several models, one after another (each as `collect` does for one).

    `models` are provider strings; none means every model the study already holds (or the
    embedded model in a new study). `max_cost` caps each model's cost; `MODEL@max_cost=X` in
    `model_args` sets one model's own cap. Sampling settings (samples, temperature, top_p,
    max_tokens, seed) in `options` apply to every model unless a model argument says otherwise.
    `on_result` is called with each model's result as soon as it is done.
    """
    return _run_models(
        study,
        models,
        backend,
        model,
        max_cost,
        retry_errors,
        progress,
        new_endpoint,
        model_args,
        on_result,
        False,
        options,
    )


def _run_models(
    study: str | Path,
    models: list[str] | None,
    backend: Any,
    model: str | None,
    max_cost: float | None,
    retry_errors: bool,
    progress: bool,
    new_endpoint: bool,
    model_args: list[str] | None,
    on_result: Callable[[CollectResult], None] | None,
    single: bool,
    options: dict[str, Any],
) -> list[CollectResult]:
    handle = Study.open(study)
    try:
        if handle.count("prompts") == 0:
            raise HarnessError(
                "the study has no prompts (run `harness generate` first)", file=handle.path
            )
        given = backend if backend is not None and not isinstance(backend, str) else None
        flags = {k: options.pop(k, None) for k in GENERATION}
        runs = plan(
            handle,
            models=models,
            backend=None if given else backend,
            model=stored_key(given.name, given.model) if given else model,
            flags=flags,
            model_args=model_args,
            options=options,
            max_cost=max_cost,
        )
        if single and len(runs) > 1:
            raise HarnessError(
                f"this study holds several models ({', '.join(r.key for r in runs)})"
                "; name one, or collect them all with collect_models",
                file=handle.path,
                column="model",
            )
        if given is None:
            _check_prices(runs)
        results = []
        for run in runs:
            result = _collect(handle, run, given, retry_errors, progress, new_endpoint)
            results.append(result)
            if on_result is not None:
                on_result(result)
            if result.stopped == "interrupted":
                break
        return results
    finally:
        handle.close()


def _open_engine(study: Study, run: ModelRun, new_endpoint: bool) -> tuple[Any, list[str]]:
    """The backend of one model, its endpoint settled against the study's record."""
    options = dict(run.options)
    _check_options(run.spec.backend, options)
    notes: list[str] = []
    if run.spec.backend == "openai":
        notes += _settle_endpoint(study, run.spec, options, new_endpoint)
        options.setdefault("batch_state", StudyBatchState(study.path, run.settings["id_suffix"]))
        body, omitted = request_fields(run.settings)
        options.update(
            extra_body=body, omit=omitted, token_param=run.settings.get("token_param", "max_tokens")
        )
        if not run.spec.sends_openai_key:  # OPENAI_API_KEY stays with OpenAI's servers
            options.setdefault("api_key", NO_KEY)
    return open_backend(run.spec.backend, run.spec.name, **options), notes


def _collect(
    study: Study, run: ModelRun, given: Any, retry_errors: bool, progress: bool, new_endpoint: bool
) -> CollectResult:
    engine, notes = (given, []) if given is not None else _open_engine(study, run, new_endpoint)
    settings, params, max_cost = run.settings, run.params, run.max_cost
    _check_budget(engine, max_cost)
    models = stored_models(study)
    if run.key not in models and models:
        notes.append(f"{run.key} is new in this study, which also holds {', '.join(models)}")
    with study.transaction() as conn:
        conn.execute(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            (MODELS_KEY, json.dumps({**models, run.key: settings})),
        )
    run_info = _run_info(engine, run, max_cost, retry_errors)
    record_command(study.path, "collect", run_info)
    requests, wanted, done = pending_requests(study, run.key, settings["samples"], retry_errors)
    total = study.count("prompts") * settings["samples"]
    filing = Filing(
        run.key,
        settings["id_suffix"],
        engine.name,
        engine.model,
        json.dumps(run.recorded_params(_extra_params(engine)), sort_keys=True),
    )
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
        _drain(stream, wanted, tally, display, lambda c: store(study, c, filing))
    except KeyboardInterrupt:
        tally.stopped = "interrupted"
    except ParameterRejected as error:
        raise HarnessError(
            f"{run.key}: {error.message}; {_advice(error.param)}", column=error.param
        ) from None
    finally:
        _close(stream)
        if hasattr(engine, "budget") and engine.budget is not None:
            tally.stopped = tally.stopped or ("max_cost" if engine.budget.refused else None)
            engine.budget = None
        if display:
            display.stop()
        if given is None and hasattr(engine, "close"):
            engine.close()
    result = _result(study, engine, run, total, done, tally)
    result.notes.extend(notes)
    _record(study, run, run_info, result, getattr(getattr(engine, "stats", None), "batch_ids", []))
    return result


def _advice(param: str) -> str:
    """How to stop sending a parameter the model refuses."""
    if param in ("max_tokens", "max_completion_tokens"):
        other = "max_completion_tokens" if param == "max_tokens" else "max_tokens"
        return f"send the limit as {other} with --model-arg token_param={other}"
    if param in ("temperature", "top_p", "seed", "stop", "reasoning_effort"):
        return f"leave it out with --model-arg {param}=omit"
    return f"leave it out with --model-arg extra.{param}=omit, or change its value"


def _drain(
    stream: Iterator[Completion],
    wanted: set[tuple[str, int]],
    tally: _Tally,
    display: _Progress | None,
    write: Callable[[list[Completion]], None],
) -> None:
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


def _settle_endpoint(
    study: Study, spec: ModelSpec, options: dict[str, Any], new_endpoint: bool
) -> list[str]:
    """A rerun goes to the server a model's outputs came from, unless told otherwise.

    Without this, a rerun that forgot --base-url would send the study's prompts to
    $OPENAI_BASE_URL or api.openai.com, another provider, with whatever key is set.
    """
    recorded = recorded_section(load_manifest(study.path), spec.key).get("base_url")
    asked = options.get("base_url") or (
        os.environ.get("OPENAI_BASE_URL") if spec.provider == "openai" else None
    )
    if not recorded or study.count("outputs", "model_key = ?", (spec.key,)) == 0:
        if asked is None and spec.default_url is not None:
            if not spec.default_url:
                raise HarnessError(
                    f"{spec.key} needs a server URL: pass --base-url (or "
                    f"--model-arg {spec.key}@base_url=URL)",
                    column="base_url",
                )
            options["base_url"] = spec.default_url
        return []
    if asked is None:
        options["base_url"] = recorded
        return [f"{spec.key}: endpoint {recorded}, as recorded in the study"]
    shown = public_url(check_base_url(asked))
    if shown == recorded:
        return []
    if not new_endpoint:
        raise HarnessError(
            f"{spec.key}: this model's outputs came from {recorded}, not {shown}; pass "
            "--new-endpoint to collect from another server (the change is recorded in the "
            "manifest)",
            file=study.path,
            column="base_url",
        )
    return [f"{spec.key}: endpoint {shown} is new: its earlier outputs came from {recorded}"]


def recorded_models(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The manifest's record of each model: `collect.models`, or the one-model section an older
    study wrote, filed under its key."""
    section = manifest.get("collect") or {}
    if "models" in section:
        return dict(section["models"])
    if section:
        return {stored_key(section.get("backend") or "local", section.get("model") or ""): section}
    return {}


def recorded_section(manifest: dict[str, Any], key: str) -> dict[str, Any]:
    return recorded_models(manifest).get(key) or {}


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
            "to a price table (YAML or JSON file named by HARNESS_PRICES)",
            column="max_cost",
        )


def _check_prices(runs: list[ModelRun]) -> None:
    """Every capped remote model needs a price, checked before any model runs."""
    from harness.models.prices import PriceTable

    for run in runs:
        if run.max_cost is None or run.spec.backend != "openai":
            continue
        if PriceTable.load(run.options.get("prices")).price(run.spec.name or "") is None:
            raise HarnessError(
                f"no price known for model {run.spec.name!r}, so a cost cap cannot be "
                "enforced; add it to a price table (YAML or JSON file named by "
                "HARNESS_PRICES) or cap only priced models with MODEL@max_cost=X",
                column="max_cost",
            )


def _within_budget(
    engine: Any,
    requests: list[ChatRequest],
    params: GenerationParams,
    max_cost: float,
    tally: _Tally,
) -> list[ChatRequest]:
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


def _run_info(
    engine: Any, run: ModelRun, max_cost: float | None, retry_errors: bool
) -> dict[str, Any]:
    """Parameters of this run for the manifest: no keys, no batch state objects."""
    info = {
        "model_key": run.key,
        "provider_string": run.spec.model_string,  # the model itself; the key adds its label
        **({"label": run.spec.label} if run.spec.label else {}),
        **{k: v for k, v in run.settings.items() if k != "id_suffix"},
        "model": engine.model,
        "max_cost": max_cost,
        "retry_errors": retry_errors,
    }
    for name in (
        "concurrency",
        "rpm",
        "tpm",
        "timeout",
        "batch_api",
        "batch_size",
        "threads",
        "max_attempts",
    ):
        if run.options.get(name) is not None:
            info[name] = run.options[name]
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
            BarColumn(bar_width=16),
            MofNCompleteColumn(),
            Rate(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[info]}"),
            console=Console(stderr=True),
            refresh_per_second=4,
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
        info = (
            f"retries {t.retries}  errors {t.failed}  "
            f"{t.prompt_tokens + t.completion_tokens:,} tok  {cost}{extra}"
        )
        self.bar.update(self.task, completed=self.done_before + t.ok + t.failed, info=info)


def _result(
    study: Study, engine: Any, run: ModelRun, total: int, done: int, tally: _Tally
) -> CollectResult:
    counts = {
        r["status"]: r["n"]
        for r in study.rows(
            "SELECT status, COUNT(*) AS n FROM outputs WHERE model_key = ? GROUP BY status",
            (run.key,),
        )
    }
    return CollectResult(
        study=str(study.path),
        model_key=run.key,
        backend=engine.name,
        model=engine.model,
        params=run.recorded_params({}),
        samples=run.settings["samples"],
        total=total,
        done_before=done,
        completed=tally.ok,
        failed=tally.failed,
        retries=tally.retries,
        prompt_tokens=tally.prompt_tokens,
        completion_tokens=tally.completion_tokens,
        cost_usd=tally.cost if tally.cost_known else None,
        elapsed_s=time.perf_counter() - tally.t0,
        stopped=tally.stopped,
        outputs_ok=counts.get("ok", 0),
        outputs_failed=counts.get("failed", 0),
    )


def _record(
    study: Study,
    run: ModelRun,
    run_info: dict[str, Any],
    result: CollectResult,
    batch_ids: list[str],
) -> None:
    """The manifest's `collect.models[KEY]`: settings, what the server reported, totals, runs."""
    reported = study.rows(
        "SELECT model_reported, system_fingerprint, COUNT(*) AS n, SUM(cost_usd) AS cost, "
        "SUM(prompt_tokens) AS pt, SUM(completion_tokens) AS ct FROM outputs "
        "WHERE status = 'ok' AND model_key = ? GROUP BY model_reported, system_fingerprint",
        (run.key,),
    )
    manifest = load_manifest(study.path)
    previous = recorded_section(manifest, run.key)
    this_run: dict[str, Any] = {
        "finished_at": utc_now(),
        "completed": result.completed,
        "failed": result.failed,
        "retries": result.retries,
        "cost_usd": result.cost_usd,
        "stopped": result.stopped,
        "elapsed_s": round(result.elapsed_s, 3),
        **{k: run_info[k] for k in ("base_url", "concurrency", "batch_api") if k in run_info},
    }
    runs: list[dict[str, Any]] = previous.get("runs", []) + [this_run]
    batches = sorted({*previous.get("batch_ids", []), *batch_ids})
    models = recorded_models(manifest)
    models[run.key] = {
        **{k: v for k, v in run_info.items() if k not in ("max_cost", "retry_errors")},
        "params": result.params,
        "samples": result.samples,
        "reported": [
            {
                "model": r["model_reported"],
                "system_fingerprint": r["system_fingerprint"],
                "outputs": r["n"],
            }
            for r in reported
        ],
        "outputs": {
            "ok": result.outputs_ok,
            "failed": result.outputs_failed,
            "pending": result.pending,
            "total": result.total,
        },
        "tokens": {
            "prompt": sum(r["pt"] or 0 for r in reported),
            "completion": sum(r["ct"] or 0 for r in reported),
        },
        "cost_usd": sum(r["cost"] or 0.0 for r in reported),
        "batch_ids": batches,
        "runs": runs,
    }
    record_section(study.path, "collect", {"models": models})
