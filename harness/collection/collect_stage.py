"""`collect`: run model backends over the study's pending prompts and store every completion.

Each completion is committed the moment it arrives, under an output id fixed by (prompt, model,
sample), so a run killed at any moment resumes where it stopped and ends with exactly the
completions an uninterrupted run would have: none lost, none duplicated. Failed requests are
stored as `status='failed'` with their reason; `retry_errors` retries only those. A study holds
one or several models, each filed under its provider string (`harness/collection/model_plan.py`); the
models of a run are collected one after another, each with its own settings, endpoint, cost cap
and provenance, and a model added later collects only its own outputs. A run's options arrive
as one `CollectSettings` (`harness/collection/collect_settings.py`), built where they enter.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, cast, overload

from pydantic import JsonValue

from harness.collection.collect_result import CollectResult
from harness.collection.collect_settings import CollectSettings
from harness.collection.model_plan import RUN_OPTIONS_KEY, ModelRun, plan
from harness.collection.stopped_models import STOPPED
from harness.errors import HarnessError
from harness.models import ChatRequest, Completion, GenerationParams, ModelAPI, open_configured
from harness.models._answer_text import shorten
from harness.models._redact import public_url
from harness.models.batch import BatchRecord
from harness.models.budget import Budget, worst_case_cost
from harness.models.openai_api import ParameterRejected, ServerRefused
from harness.models.prices import PriceTable
from harness.models.providers import ModelSpec, api_key, endpoint, stored_key
from harness.models.replicas import split_urls
from harness.models.settings import OpenAISettings
from harness.models.throughput import rates
from harness.progress import tracker
from harness.study import Study
from harness.study.clock import utc_now
from harness.study.lock import writes_study
from harness.study.manifest import made_section, read_manifest, record_command, record_section
from harness.study.manifest_sections import Collect, CollectedModel
from harness.study.records import JsonObject
from harness.study.tables.collect_models import MODELS_KEY, stored_models
from harness.study.tables.meta import write_meta
from harness.study.tables.outputs import (
    OutputRecord,
    output_count,
    output_states,
    reported_models,
    status_counts,
    store_outputs,
)
from harness.study.tables.prompts import prompt_count, prompt_messages
from harness.study.text import storable

BATCHES_KEY = "collect_batches"
#: Seconds between refreshes of the progress row while no completion arrives.
TICK_S = 0.5


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

    def load(self) -> list[BatchRecord]:
        with Study.open(self.path) as study:
            batches: list[BatchRecord] = json.loads(study.meta(self.key) or "[]")
            return batches

    def save(self, batches: list[BatchRecord]) -> None:
        with Study.open(self.path) as study:
            study.set_meta(self.key, json.dumps(batches))


# -- the run -----------------------------------------------------------------------------------
def pending_requests(
    study: Study, key: str, samples: int, retry_errors: bool
) -> tuple[list[ChatRequest], set[tuple[str, int]], int]:
    """(requests, the (prompt, sample) pairs to store, count of pairs already done) of one
    model."""
    status = output_states(study, key)
    wanted: set[tuple[str, int]] = set()
    requests, done = [], 0
    for prompt in prompt_messages(study):
        todo = set()
        for sample in range(samples):
            state = status.get((prompt.prompt_id, sample))
            if state is None or (retry_errors and state == "failed"):
                todo.add((prompt.prompt_id, sample))
            else:
                done += 1
        if todo:
            messages = [{"role": "system", "content": prompt.system}] if prompt.system else []
            messages.append({"role": "user", "content": prompt.text})
            # only the missing span of sample numbers is asked for; a sample already stored
            # inside it (rare: a gap left by --retry-errors) comes back and is skipped
            first = min(sample for _, sample in todo)
            count = max(sample for _, sample in todo) - first + 1
            requests.append(ChatRequest(prompt.prompt_id, messages, count, first))
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
        store_outputs(conn, [_output_record(c, filing) for c in group])


def _output_record(c: Completion, f: Filing) -> OutputRecord:
    return OutputRecord(
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
    )


@writes_study
def collect_one(
    study: str | Path,
    *,
    backend: str | ModelAPI | None = None,
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
    settings: CollectSettings | None = None,
    **options: object,
) -> CollectResult:
    """Collect completions for every pending (prompt, sample) of one model; resumable (as
    `collect(study, model=...)`).

    `model` is a provider string (`openai/gpt-4o-mini`, `vllm/NAME`, `local`, ...) or, with
    `backend` ("local", "openai" or a provider), a plain name; `backend` may also be a ModelAPI
    object. `options` are backend settings (the fields of LocalSettings or OpenAISettings:
    concurrency, rpm, tpm, timeout, base_url, batch_api, batch_size, ...); `model_args` are
    `--model-arg` strings. Without a model, a study's one model resumes. Secrets come from the
    environment and are never stored. `settings`, built by the caller, stands for every other
    keyword but `backend` objects and `progress`.
    """
    engine, name = _backend(backend)
    if settings is None:
        settings = CollectSettings.from_keywords(
            backend=name,
            model=model,
            samples=samples,
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            seed=seed,
            max_cost=max_cost,
            retry_errors=retry_errors,
            new_endpoint=new_endpoint,
            model_args=model_args,
            **options,
        )
    return _run_models(study, settings, engine=engine, progress=progress, single=True)[0]


@writes_study
def collect_models(
    study: str | Path,
    *,
    models: list[str] | None = None,
    backend: str | ModelAPI | None = None,
    model: str | None = None,
    max_cost: float | None = None,
    retry_errors: bool = False,
    progress: bool = False,
    new_endpoint: bool = False,
    model_args: list[str] | None = None,
    on_result: Callable[[CollectResult], None] | None = None,
    settings: CollectSettings | None = None,
    **options: object,
) -> list[CollectResult]:
    """Collect for several models, one after another (each as `collect` does for one).

    `models` are provider strings; none means every model the study already holds (or the
    embedded model in a new study). `max_cost` caps each model's cost; `MODEL@max_cost=X` in
    `model_args` sets one model's own cap. Sampling settings (samples, temperature, top_p,
    max_tokens, seed) in `options` apply to every model unless a model argument says otherwise.
    `on_result` is called with each model's result as soon as it is done. `settings`, built by
    the caller, stands for every other keyword but `backend` objects, `progress` and
    `on_result`.
    """
    engine, name = _backend(backend)
    if settings is None:
        settings = CollectSettings.from_keywords(
            models=models,
            backend=name,
            model=model,
            max_cost=max_cost,
            retry_errors=retry_errors,
            new_endpoint=new_endpoint,
            model_args=model_args,
            **options,
        )
    return _run_models(study, settings, engine=engine, progress=progress, on_result=on_result)


@overload
def collect(study: str | Path, *, models: None = None, **settings: Any) -> CollectResult: ...


@overload
def collect(
    study: str | Path, *, models: Sequence[str], **settings: Any
) -> list[CollectResult]: ...


def collect(
    study: str | Path, *, models: Sequence[str] | None = None, **settings: Any
) -> CollectResult | list[CollectResult]:
    """Collect for one model or several: `harness.collect(study, model="local")` returns that
    model's CollectResult (settings as `collect_one`); `harness.collect(study, models=[...])`
    returns one per model, collected one after another (settings as `collect_models`)."""
    if models is None:
        return collect_one(study, **settings)
    if isinstance(models, str):  # a lone provider string is one model, not its characters
        models = [models]
    return collect_models(study, models=list(models), **settings)


def _backend(backend: object) -> tuple[ModelAPI | None, str | None]:
    """(a backend object given, a backend name given) of the `backend` keyword."""
    if backend is not None and not isinstance(backend, (str, ModelAPI)):
        raise HarnessError(
            f"backend {backend!r} is neither a backend name nor a harness.models.ModelAPI",
            column="backend",
        )
    return (backend, None) if isinstance(backend, ModelAPI) else (None, backend)


def _run_models(
    study: str | Path,
    settings: CollectSettings,
    *,
    engine: ModelAPI | None = None,
    progress: bool = False,
    on_result: Callable[[CollectResult], None] | None = None,
    single: bool = False,
) -> list[CollectResult]:
    """Each model of the run, one after another; `engine`: a backend object the caller made,
    filed under its own name and model. `single`: the run must serve one model."""
    handle = Study.open(study)
    try:
        if prompt_count(handle) == 0:
            raise HarnessError(
                "the study has no prompts (run `harness generate` first)", file=handle.path
            )
        if engine is not None:
            settings = replace(settings, model=stored_key(engine.name, engine.model))
        runs = plan(handle, settings)
        if single and len(runs) > 1:
            raise HarnessError(
                f"this study holds several models ({', '.join(r.key for r in runs)})"
                "; name one, or collect them all with collect_models",
                file=handle.path,
                column="model",
            )
        if engine is None:
            _check_prices(runs)
        results = []
        for run in runs:
            result = _collect(handle, run, engine, settings, progress)
            results.append(result)
            if on_result is not None:
                on_result(result)
            if result.stopped == "interrupted":
                break
        return results
    finally:
        handle.close()


def study_models(study: Study, keys: list[str] | None = None) -> list[ModelRun]:
    """The study's models (those of `keys` if given) as a resumed `collect` runs them: their
    stored settings, nothing written. Control items are made with these (`harness.judge`)."""
    return plan(study, CollectSettings(models=tuple(keys) if keys else None))


def open_model(study: Study, run: ModelRun) -> ModelAPI:
    """The backend of one of the study's models, as `collect` opens it (recorded endpoint)."""
    return _open_engine(study, run, False)[0]


def _open_engine(study: Study, run: ModelRun, new_endpoint: bool) -> tuple[ModelAPI, list[str]]:
    """The backend of one model, its endpoint settled against the study's record."""
    settings = run.backend_settings
    if not isinstance(settings, OpenAISettings):
        return open_configured(run.spec.name, settings), []
    base_url, notes = _settle_endpoint(study, run.spec, settings.base_url, new_endpoint)
    engine = open_configured(
        run.spec.name,
        replace(settings, base_url=base_url),
        # OPENAI_API_KEY stays with OpenAI's servers
        api_key=api_key(run.spec),
        batch_state=StudyBatchState(study.path, run.id_suffix),
    )
    return engine, notes


def _collect(
    study: Study,
    run: ModelRun,
    given: ModelAPI | None,
    asked: CollectSettings,
    progress: bool,
) -> CollectResult:
    engine, notes = (
        (given, list[str]()) if given is not None else _open_engine(study, run, asked.new_endpoint)
    )
    settings, params, max_cost = run.settings, run.params, run.max_cost
    _check_budget(engine, max_cost)
    refusals_stop, engine.stop_on_refusals = engine.stop_on_refusals, True  # a few requests
    models = stored_models(study)
    if run.key not in models and models:
        notes.append(f"{run.key} is new in this study, which also holds {', '.join(models)}")
    notes.extend(_option_notes(run))
    with study.transaction() as conn:
        # the run options too, so that a rerun without flags runs as this one did
        stored = {**settings, RUN_OPTIONS_KEY: run.run_options}
        write_meta(conn, MODELS_KEY, json.dumps({**models, run.key: stored}))
    retry_errors = asked.retry_errors
    run_info = _run_info(engine, run, max_cost, retry_errors)
    record_command(study.path, "collect", run_info)
    requests, wanted, done = pending_requests(study, run.key, run.samples, retry_errors)
    total = prompt_count(study) * run.samples
    filing = Filing(
        run.key,
        run.id_suffix,
        engine.name,
        engine.model,
        json.dumps(run.recorded_params(_extra_params(engine)), sort_keys=True),
    )
    tally = _Tally(engine, max_cost)
    if max_cost is not None and engine.batch_api:
        requests = _within_budget(engine, requests, params, max_cost, tally)
    elif max_cost is not None:
        engine.budget = Budget(max_cost)  # direct requests: worst case reserved before sending
    # the model's name only where the key does not spell it (a label, an older store)
    label = f"collect {run.key}" + ("" if engine.model in run.key else f" ({engine.model})")
    display = _Progress(total, done, tally, label) if progress else None
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
    except ServerRefused as error:  # the requests not sent stay pending
        tally.stopped, tally.refused = STOPPED, error.status
        tally.refusal, tally.stop_reason = error.lasting, error.reason
    finally:
        _close(stream)
        engine.stop_on_refusals = refusals_stop
        if engine.budget is not None:
            tally.stopped = tally.stopped or ("max_cost" if engine.budget.refused else None)
            engine.budget = None
        if display:
            display.stop()
        if given is None:
            engine.close()
    result = _result(study, engine, run, total, done, tally)
    result.notes.extend(notes)
    batch_ids = engine.stats.batch_ids if engine.stats else []
    _record(study, run, run_info, result, batch_ids, engine.replica_record(), engine.run_settings())
    return result


def _option_notes(run: ModelRun) -> list[str]:
    """What a rerun took from the model's earlier runs, and what it was given otherwise."""
    notes = []
    if run.kept:
        kept = ", ".join(f"{k} {v}" for k, v in sorted(run.kept.items()))
        notes.append(f"{run.key}: kept from its earlier runs: {kept}")
    for name, (before, now) in sorted(run.changed.items()):
        notes.append(f"{run.key}: {name} {now}, not {before} as in its earlier runs")
    return notes


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
    study: Study, spec: ModelSpec, base_url: str | tuple[str, ...] | None, new_endpoint: bool
) -> tuple[str | tuple[str, ...] | None, list[str]]:
    """(the base URL to use, notes): a rerun goes to the server a model's outputs came from,
    unless told otherwise.

    Without this, a rerun that forgot --base-url would send the study's prompts to
    $OPENAI_BASE_URL or api.openai.com, another provider, with whatever key is set.
    """
    section = recorded_section(read_manifest(study).collect, spec.key)
    recorded = _recorded_urls(section)
    asked = base_url or (os.environ.get("OPENAI_BASE_URL") if spec.provider == "openai" else None)
    if not recorded or output_count(study, spec.key) == 0:
        if asked is None:
            return endpoint(spec, None)[0], []
        return base_url, []
    if asked is None:
        latest = _base_url(section) or recorded[0]
        shown = ", ".join(latest) if isinstance(latest, tuple) else latest
        return latest, [f"{spec.key}: endpoint {shown}, as recorded in the study"]
    # replicas the model's outputs came from may be left out (a node that is down); a new
    # server needs --new-endpoint, unless no output came from the recorded one (it refused
    # connections, it was the wrong address): the failures it left carry no text
    new = [u for u in (public_url(u) or u for u in split_urls(asked)) if u not in recorded]
    if not new:
        return base_url, []
    if not status_counts(study, spec.key).get("ok"):
        return base_url, [
            f"{spec.key}: endpoint {', '.join(new)}; no output came from {', '.join(recorded)}"
        ]
    if not new_endpoint:
        raise HarnessError(
            f"{spec.key}: this model's outputs came from {', '.join(recorded)}, not "
            f"{', '.join(new)}; pass --new-endpoint to collect from another server (the change "
            "is recorded in the manifest)",
            file=study.path,
            column="base_url",
        )
    return base_url, [
        f"{spec.key}: endpoint {', '.join(new)} is new: its earlier outputs came from "
        f"{', '.join(recorded)}"
    ]


def _recorded_urls(section: CollectedModel) -> list[str]:
    """Every server a model's runs recorded (one URL or a list of replicas per run), in order."""
    urls: list[str] = []
    runs = [r for r in section.runs or [] if isinstance(r, dict)]
    for value in [section.record().get("base_url"), *(r.get("base_url") for r in runs)]:
        for url in [value] if isinstance(value, str) else value if isinstance(value, list) else []:
            if isinstance(url, str) and url not in urls:
                urls.append(url)
    return urls


def _base_url(section: CollectedModel) -> str | tuple[str, ...] | None:
    """The server (or replicas) the model's record names last; None where it names none."""
    value = section.record().get("base_url")
    if isinstance(value, list):
        return tuple(str(url) for url in value) or None
    return value if isinstance(value, str) and value else None


def recorded_models(collect: Collect | None) -> dict[str, CollectedModel]:
    """The manifest's record of each model: `collect.models`, or the one-model section an older
    study wrote, filed under its key."""
    if collect is None:
        return {}
    if "models" in collect.model_fields_set:
        return dict(collect.models or {})
    record = collect.record()
    if record:
        key = stored_key(collect.backend or "local", collect.model or "")
        return {key: CollectedModel.from_record(record)}
    return {}


def recorded_section(collect: Collect | None, key: str) -> CollectedModel:
    return recorded_models(collect).get(key) or CollectedModel()


def _check_budget(engine: ModelAPI, max_cost: float | None) -> None:
    if max_cost is None:
        return
    if max_cost <= 0:
        raise HarnessError(f"--max-cost must be positive (got {max_cost})")
    prices = engine.prices
    if prices is not None and prices.price(engine.model) is None:
        raise HarnessError(
            f"no price known for model {engine.model!r}, so --max-cost cannot be enforced; add it "
            "to a price table (YAML or JSON file named by HARNESS_PRICES)",
            column="max_cost",
        )


def _check_prices(runs: list[ModelRun]) -> None:
    """Every capped remote model needs a price, checked before any model runs."""
    for run in runs:
        if run.max_cost is None or not isinstance(run.backend_settings, OpenAISettings):
            continue
        if PriceTable.load(run.backend_settings.prices).price(run.spec.name or "") is None:
            raise HarnessError(
                f"no price known for model {run.spec.name!r}, so a cost cap cannot be "
                "enforced; add it to a price table (YAML or JSON file named by "
                "HARNESS_PRICES) or cap only priced models with MODEL@max_cost=X",
                column="max_cost",
            )


def _within_budget(
    engine: ModelAPI,
    requests: list[ChatRequest],
    params: GenerationParams,
    max_cost: float,
    tally: _Tally,
) -> list[ChatRequest]:
    """A submitted batch cannot be stopped, so submit only what fits the budget at worst
    (every sample using all of max_tokens); the rest stays pending for a later run."""
    prices = engine.prices
    price = prices.price(engine.model) if prices is not None else None
    if prices is None or price is None:  # a batch backend that declares no prices
        raise HarnessError(
            f"no price known for model {engine.model!r}, so --max-cost cannot be enforced",
            column="max_cost",
        )
    discount = prices.batch_discount
    budget = Budget(max_cost)  # refusal is sticky: what is kept is a prefix, in order
    kept = [r for r in requests if budget.reserve(worst_case_cost(r, params, price, discount))]
    if budget.refused:
        tally.stopped = "max_cost"
    return kept


def _extra_params(engine: ModelAPI) -> JsonObject:
    return {"batch_api": True} if engine.batch_api else {}


def _run_info(
    engine: ModelAPI, run: ModelRun, max_cost: float | None, retry_errors: bool
) -> JsonObject:
    """Parameters of this run for the manifest: no keys, no batch state objects."""
    info: JsonObject = {
        "model_key": run.key,
        "provider_string": run.spec.model_string,  # the model itself; the key adds its label
        **({"label": run.spec.label} if run.spec.label else {}),
        **{k: v for k, v in run.settings.items() if k not in ("id_suffix", "run_options")},
        "model": engine.model,
        "max_cost": max_cost,
        "retry_errors": retry_errors,
    }
    chosen = asdict(run.backend_settings)
    for name in (
        "concurrency",
        "rpm",
        "tpm",
        "timeout",
        "batch_api",
        "batch_size",
        "threads",
        "max_attempts",
        "precision",
        "prices",
    ):
        if name in run.given and name in chosen:
            info[name] = str(chosen[name]) if isinstance(chosen[name], Path) else chosen[name]
    if isinstance(run.backend_settings, OpenAISettings):
        info["concurrency"] = run.backend_settings.concurrency  # the default too: runs differ
    if run.changed:
        # run options kept in the study's settings: numbers and text
        info["changed"] = {
            k: cast(list[JsonValue], list(v)) for k, v in sorted(run.changed.items())
        }
    if len(engine.replica_urls) > 1:
        info["base_url"] = list[JsonValue](engine.replica_urls)
    elif engine.public_base_url:
        info["base_url"] = engine.public_base_url
    if engine.fingerprint:
        info["weights"] = engine.fingerprint
    return info


class _Tally:
    """Running totals of this run."""

    def __init__(self, engine: ModelAPI, max_cost: float | None) -> None:
        self.engine, self.max_cost = engine, max_cost
        self.ok = self.failed = self.prompt_tokens = self.completion_tokens = 0
        self.cost = 0.0
        self.cost_known = True
        self.attempt_retries = 0
        self.stopped: str | None = None
        self.refused: int | None = None  # the status the server refused the run with
        self.refusal: str | None = None  # the kind of failure that stopped the run
        self.stop_reason: str | None = None  # the server's words that stopped it
        self.first_error: str | None = None  # the first failure's reason, the server's words
        self.last_error: str | None = None  # the latest failure's, for the progress line
        self.t0 = time.perf_counter()

    def add(self, c: Completion) -> None:
        if c.ok:
            self.ok += 1
        else:
            self.failed += 1
            self.first_error = self.first_error or c.error
            self.last_error = c.error
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
        stats = self.engine.stats
        return stats.retries if stats is not None else self.attempt_retries

    def over_budget(self) -> bool:
        return self.max_cost is not None and self.cost >= self.max_cost


class _Progress:
    """The run's row in the shared progress display (`harness.progress`): its model label,
    done/total, rate, ETA, retries, errors, tokens, cost."""

    def __init__(self, total: int, done: int, tally: _Tally, label: str) -> None:
        self.tally, self.done_before, self.total, self.label = tally, done, total, label
        self.display = tracker(transient=False)

    def start(self) -> None:
        self.bars = self.display.__enter__()
        self.bars.update(self.label, self.done_before, self.total)
        self._stopping = threading.Event()
        self._ticker = threading.Thread(target=self._tick, daemon=True, name="collect-progress")
        self._ticker.start()

    def _tick(self) -> None:
        """Between completions too, so that a retried attempt's reason (and a batch's status)
        shows while requests wait."""
        while not self._stopping.wait(TICK_S):
            self.update()

    def stop(self) -> None:
        self._stopping.set()
        self._ticker.join()
        self.update()
        self.bars.finish(self.label)
        self.display.__exit__(None, None, None)

    def update(self) -> None:
        t = self.tally
        cost = f"${t.cost:.4f}" if t.cost_known else "cost ?"
        stats = t.engine.stats
        extra = f" | {stats.status}" if stats is not None and stats.status else ""
        # the latest failure's reason first (a failed request's, else a retried attempt's):
        # what a failing run most needs to show, and the first to stay on a narrow terminal
        retried = stats.retried if stats is not None else ""
        errors, retries = f"errors {t.failed}", f"retries {t.retries}"
        if t.last_error:
            errors += f" ({shorten(t.last_error, 60)})"
        elif retried:
            retries += f" ({shorten(retried, 60)})"
        info = f"{errors}  {retries}  {t.prompt_tokens + t.completion_tokens:,} tok  {cost}{extra}"
        self.bars.update(self.label, self.done_before + t.ok + t.failed, self.total, info)


def _result(
    study: Study, engine: ModelAPI, run: ModelRun, total: int, done: int, tally: _Tally
) -> CollectResult:
    counts = status_counts(study, run.key)
    return CollectResult(
        study=str(study.path),
        model_key=run.key,
        backend=engine.name,
        model=engine.model,
        params=run.recorded_params({}),
        samples=run.samples,
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
        refused=tally.refused,
        refusal=tally.refusal,
        stop_reason=tally.stop_reason,
        first_error=tally.first_error,
        outputs_ok=counts.get("ok", 0),
        outputs_failed=counts.get("failed", 0),
    )


def _record(
    study: Study,
    run: ModelRun,
    run_info: JsonObject,
    result: CollectResult,
    batch_ids: list[str],
    replicas: JsonObject | None = None,
    chosen: JsonObject | None = None,
) -> None:
    """The manifest's `collect.models[KEY]`: settings, what the server reported, totals, runs
    (each with what the backend chose for itself, such as the CPU threads it used)."""
    reported = reported_models(study, run.key)
    collect = read_manifest(study).collect
    previous = recorded_section(collect, run.key)
    this_run: JsonObject = {
        "finished_at": utc_now(),
        "completed": result.completed,
        "failed": result.failed,
        "retries": result.retries,
        "cost_usd": result.cost_usd,
        "stopped": result.stopped,
        **({"refused": result.refused} if result.refused else {}),
        **({"refusal": result.refusal} if result.refusal else {}),
        **({"stop_reason": result.stop_reason} if result.stop_reason else {}),
        **({"first_error": result.first_error} if result.first_error else {}),
        "elapsed_s": round(result.elapsed_s, 3),
        **rates(result.prompt_tokens, result.completion_tokens, result.elapsed_s),
        **{
            k: run_info[k]
            for k in ("base_url", "concurrency", "batch_api", "rpm", "tpm", "changed")
            if k in run_info
        },
    }
    this_run.update(chosen or {})
    if replicas and len(replicas) > 1:
        this_run["replicas"] = replicas  # answers and times taken out, per replica
    runs: list[JsonValue] = [*(previous.runs or []), this_run]
    batches = sorted({*(str(b) for b in previous.batch_ids or []), *batch_ids})
    models: JsonObject = {k: m.record() for k, m in recorded_models(collect).items()}
    models[run.key] = {
        **{k: v for k, v in run_info.items() if k not in ("max_cost", "retry_errors", "changed")},
        "params": result.params,
        "samples": result.samples,
        "reported": [
            {
                "model": r.model_reported,
                "system_fingerprint": r.system_fingerprint,
                "outputs": r.outputs,
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
            "prompt": sum(r.prompt_tokens or 0 for r in reported),
            "completion": sum(r.completion_tokens or 0 for r in reported),
        },
        "cost_usd": sum(r.cost_usd or 0.0 for r in reported),
        "batch_ids": list[JsonValue](batches),
        "runs": runs,
    }
    # models taken out of the study (`collect --remove`) stay on record beside the others
    removed = (
        {"removed": collect.removed}
        if collect is not None and {"models", "removed"} <= collect.model_fields_set
        else {}
    )
    record_section(
        study.path, "collect", made_section(Collect, {"models": models, **removed}, study)
    )
