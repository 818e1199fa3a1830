"""Blinded items: one per usable output, with a random id, and optional recorded steps.

The steps (extraction of the core combination, style normalisation) see only the output text,
never the prompt, topic or condition. Each is recorded in `items.steps` with the prompt file's
hash, the backend, the model and the parameters; the original text is always kept. Every
completion is committed on arrival, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from harness.defaults import materials_dir
from harness.errors import HarnessError
from harness.judge import judge_defaults as D
from harness.judge.items import step_fidelity
from harness.models import open_backend, open_spec
from harness.models.base import ChatRequest, GenerationParams
from harness.models.grouped import complete_groups
from harness.models.providers import is_provider_string
from harness.models.throughput import Meter, record_decoding
from harness.progress import counted
from harness.study.clock import utc_now
from harness.study.records import JsonObject
from harness.study.step_counts import count_steps
from harness.study.store import Study
from harness.study.tables.assignments import count_assignments
from harness.study.tables.items import (
    NewItem,
    count_items,
    insert_items,
    item_ids,
    item_steps,
    recorded_steps,
    set_core_combination,
    set_display_text,
    show_original_text,
    steps_of,
)
from harness.study.tables.judge_reads import outputs_without_items
from harness.study.text import storable

if TYPE_CHECKING:
    import jinja2

    from harness.models.base import Completion, ModelAPI

STEPS = ("extract", "normalise")
_BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
SENTENCE_END = re.compile(r"[.!?][\"')\]]?(?=\s|$)")

Progress = Callable[[str, int, int], None]

#: A recorded step's entry (`items.steps`): prompt, backend, model, params, outcome, fidelity.
StepEntry = dict[str, object]


class StepOptions(TypedDict):
    """How `blind` runs the blinded steps (`make_items`'s keywords but `prompts_dir`)."""

    extract: bool
    normalise: bool
    backend: str | ModelAPI
    model: str | None
    progress: Progress | None
    options: dict[str, object] | None


class StepSummary(TypedDict):
    """One step in `step_summary` (manifest section `blinded_steps`)."""

    items: int
    outcomes: dict[str, int]
    runs: list[dict[str, object]]
    fidelity: dict[str, int]


def new_item_id() -> str:
    """`I-` + 10 base32 characters from the OS random source: no order, topic or condition in it."""
    return D.ITEM_PREFIX + "".join(secrets.choice(_BASE32) for _ in range(D.ITEM_ID_CHARS))


@dataclass
class ItemsReport:
    """What `make_items` did: items created, outputs skipped, and per step done/failed/removed."""

    created: int = 0
    skipped_blank: int = 0
    frozen: bool = False
    steps: dict[str, dict[str, int]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class StepSpec:
    """One blinded step: its template and how it is run."""

    name: str
    template: Path
    max_tokens: int

    @property
    def prompt_sha256(self) -> str:
        return hashlib.sha256(self.template.read_bytes()).hexdigest()


def step_specs(extract: bool, normalise: bool, prompts_dir: Path | None = None) -> list[StepSpec]:
    folder = prompts_dir or materials_dir("prompts")
    specs = []
    if extract:
        specs.append(StepSpec("extract", folder / D.EXTRACT_TEMPLATE, D.EXTRACT_MAX_TOKENS))
    if normalise:
        specs.append(StepSpec("normalise", folder / D.NORMALISE_TEMPLATE, D.NORMALISE_MAX_TOKENS))
    for spec in specs:
        if not spec.template.is_file():
            raise HarnessError("prompt template of a blinded step not found", file=spec.template)
    return specs


# -- creating items -------------------------------------------------------------------------------
def create_items(study: Study) -> tuple[int, int]:
    """One item per ok output that has none yet, inserted in random order; (created, blank)."""
    rows = outputs_without_items(study)
    usable = [(r.output_id, r.text) for r in rows if r.text and r.text.strip()]
    secrets.SystemRandom().shuffle(usable)  # store order must not follow prompt order either
    taken = item_ids(study)
    values = []
    for output_id, text in usable:
        item_id = new_item_id()
        while item_id in taken:
            item_id = new_item_id()
        taken.add(item_id)
        values.append(NewItem(item_id, text, output_id=output_id))
    with study.transaction() as conn:
        insert_items(conn, values)
    return len(values), len(rows) - len(usable)


# -- running steps --------------------------------------------------------------------------------
def make_items(
    study: Study,
    *,
    extract: bool = True,
    normalise: bool = True,
    backend: str | ModelAPI = "local",
    model: str | None = None,
    prompts_dir: Path | None = None,
    progress: Progress | None = None,
    options: dict[str, Any] | None = None,
) -> ItemsReport:
    """Create missing items and bring every item's steps in line with the ones asked for.

    `backend` is a backend name for `harness.models.open_backend` or an object with the Backend
    interface; `options` go to `open_backend` with a name. Once items are routed they are
    frozen: nothing changes and `frozen` is set.
    """
    report = ItemsReport()
    if count_assignments(study):
        report.frozen = True
        return report
    report.created, report.skipped_blank = create_items(study)
    specs = step_specs(extract, normalise, prompts_dir)
    report.steps = {name: {"done": 0, "failed": 0, "removed": 0} for name in STEPS}
    for name in STEPS:
        if name not in {s.name for s in specs}:
            report.steps[name]["removed"] = _remove_step(study, name)
    if specs and count_items(study):
        opened = open_model(backend, model, options or {})
        for name, (done, failed) in _run_steps(study, specs, opened, progress, report).items():
            report.steps[name].update(done=done, failed=failed)
    return report


def open_model(backend: str | ModelAPI, model: str | None, options: dict[str, Any]) -> ModelAPI:
    """The model of the blinded steps: an opened backend as given, a provider string (`--model
    vllm/NAME`) as every stage opens it, or the older backend name and model name."""
    if not isinstance(backend, str):
        return backend

    if model and is_provider_string(model):
        return open_spec(model, **options)
    return open_backend(backend, model, **options)


def _signature(spec: StepSpec, backend: ModelAPI, params: dict[str, object]) -> StepEntry:
    return {
        "prompt_sha256": spec.prompt_sha256,
        "backend": backend.name,
        "model": backend.model,
        "params": params,
    }


def _params(spec: StepSpec) -> GenerationParams:
    return GenerationParams(temperature=0.0, top_p=1.0, max_tokens=spec.max_tokens, seed=0)


def _pending(study: Study, spec: StepSpec, want: StepEntry) -> list[tuple[str, str]]:
    """Items whose step is missing, was made with another prompt, backend, model or params, or
    before the fidelity check (rerun: the same seeded request gives the same text, now checked)."""
    pending = []
    for item in item_steps(study):
        entry = next((s for s in item.steps if s["step"] == spec.name), None)
        unchecked = entry is not None and entry["outcome"] != "empty" and "fidelity" not in entry
        if entry is None or unchecked or any(entry.get(k) != v for k, v in want.items()):
            pending.append((item.item_id, item.original_text))
    return pending


def _requests(spec: StepSpec, texts: list[tuple[str, str]]) -> list[ChatRequest]:
    """The step's request per (key, text): seeded by the text, not the random item id, so the
    same outputs get the same steps in any run."""

    template = _template(spec.template)
    return [
        ChatRequest(
            key=key,
            messages=[{"role": "user", "content": template.render(text=text)}],
            seed_key=hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest(),
        )
        for key, text in texts
    ]


def _run_steps(
    study: Study,
    specs: list[StepSpec],
    backend: ModelAPI,
    progress: Progress | None,
    report: ItemsReport,
) -> dict[str, tuple[int, int]]:
    """Every step's pending items in one call, decoded in shared batches where the backend
    can (`harness.models.grouped`); step name -> (done, failed). Each completion is stored as
    it arrives, in the place in the item's steps that running the steps one after another
    gives it."""

    work = []
    for spec in specs:
        signature = _signature(spec, backend, asdict(_params(spec)))
        pending = _pending(study, spec, signature)
        if pending:
            work.append((spec, signature, _requests(spec, pending)))
    rerun: dict[str, list[str]] = {}
    for spec, _, requests in work:
        for request in requests:
            rerun.setdefault(request.key, []).append(spec.name)
    done = {spec.name: 0 for spec, _, _ in work}
    settings: JsonObject | None = None  # read once the backend has run
    meter = Meter("+".join(spec.name for spec, _, _ in work))
    groups = [(requests, _params(spec)) for spec, _, requests in work]
    for index, completion in meter.timed(complete_groups(backend, groups)):
        spec, signature, requests = work[index]
        if completion.error is not None or completion.text is None:
            report.errors.append(f"{spec.name} {completion.key}: {completion.error or 'no text'}")
            continue
        meter.count(completion)
        settings = backend.run_settings() if settings is None else settings
        entry = {**signature, "run_settings": settings}
        _store_result(study, spec, completion, entry, rerun[completion.key])
        done[spec.name] += 1
        if progress is not None:
            progress(spec.name, done[spec.name], len(requests))
    record_decoding(study.path, "judge.blind", meter)
    return {spec.name: (done[spec.name], len(r) - done[spec.name]) for spec, _, r in work}


def _template(path: Path) -> jinja2.Template:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, TemplateError

    env = Environment(
        loader=FileSystemLoader(str(path.parent)),
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
    )
    try:
        return env.get_template(path.name)
    except TemplateError as error:
        raise HarnessError(f"bad template: {error}", file=path) from None


def clean_result(text: str, finish_reason: str | None) -> tuple[str, str]:
    """(text, outcome): stripped; when cut by the token limit, trimmed to its last full sentence."""
    text = text.strip()
    if not text:
        return "", "empty"
    if finish_reason == "length":
        ends = [m.end() for m in SENTENCE_END.finditer(text)]
        if ends and ends[-1] >= len(text) // 3:
            return text[: ends[-1]].strip(), "trimmed"
        return text, "cut"
    return text, "ok"


def step_on_texts(
    spec: StepSpec, backend: ModelAPI, texts: dict[str, str], study_dir: Path | None = None
) -> tuple[dict[str, tuple[str, StepEntry]], list[str]]:
    """The step run on texts that are not items yet (control texts before they are kept):
    key -> (result text, the step entry `_run_steps` would record), and errors. Requests are the
    ones `_run_steps` sends for the same texts (same prompt, params and text-derived seeds);
    with `study_dir`, its throughput goes to that study's manifest."""

    params = _params(spec)
    signature = _signature(spec, backend, asdict(params))
    requests = _requests(spec, list(texts.items()))
    results: dict[str, tuple[str, StepEntry]] = {}
    errors: list[str] = []
    settings: JsonObject | None = None
    meter = Meter(f"control {spec.name}")
    with counted(f"{spec.name} of control texts", len(requests)) as advance:
        for completion in meter.timed(backend.complete(requests, params) if requests else []):
            advance(len(results) + len(errors) + 1)
            if completion.error is not None or completion.text is None:
                errors.append(f"{spec.name} {completion.key}: {completion.error or 'no text'}")
                continue
            meter.count(completion)
            settings = backend.run_settings() if settings is None else settings
            signed = {**signature, "run_settings": settings}
            results[completion.key] = _entry(spec, completion, signed, texts[completion.key])
    if study_dir is not None:
        record_decoding(study_dir, "judge.blind", meter)
    return results, errors


def _entry(
    spec: StepSpec, completion: Completion, signature: StepEntry, original: str
) -> tuple[str, StepEntry]:
    """(text to show, step entry). A text that fails the fidelity check against `original` is
    kept in the entry (`rejected`) and not shown: "" for an extraction (no core), and the original
    text for a normalisation."""
    text, outcome = clean_result(storable(completion.text) or "", completion.finish_reason)
    fidelity = step_fidelity.check(text, original, spec.template) if text else None
    entry = {
        "step": spec.name,
        "prompt": f"prompts/{spec.template.parent.name}/{spec.template.name}",
        **signature,
        "model_reported": completion.model_reported,
        "at": completion.finished_at,
        "finish_reason": completion.finish_reason,
        "outcome": outcome,
        "completion_tokens": completion.completion_tokens,
        "recorded_at": utc_now(),
    }
    if fidelity is not None:
        entry["fidelity"] = fidelity.record()
        if not fidelity.passed:
            entry.update(shown="original", rejected=text)
            text = ""
    return text, entry


def _store_result(
    study: Study,
    spec: StepSpec,
    completion: Completion,
    signature: StepEntry,
    rerun: list[str],
) -> None:
    """Store a step's result; the steps of this run (`rerun`, in STEPS order) go after the
    item's other steps, as when each step is run over all items in turn."""
    with study.transaction() as conn:
        item = steps_of(study, completion.key)
        if item is None:
            return
        text, entry = _entry(spec, completion, signature, item.original_text)
        steps = [s for s in item.steps if s["step"] != spec.name] + [entry]
        steps.sort(key=lambda s: s["step"] in rerun and rerun.index(s["step"]) + 1)
        if spec.name == "extract":
            set_core_combination(conn, completion.key, text or None, steps)
        else:  # an empty rewrite keeps the original text on display
            set_display_text(conn, completion.key, text or item.original_text, steps)


def _remove_step(study: Study, name: str) -> int:
    """Undo a step that is no longer asked for (items not yet routed)."""
    removed = 0
    with study.transaction() as conn:
        for item in item_steps(study):
            kept = [s for s in item.steps if s["step"] != name]
            if len(kept) == len(item.steps):
                continue
            if name == "extract":
                set_core_combination(conn, item.item_id, None, kept)
            else:
                show_original_text(conn, item.item_id, kept)
            removed += 1
    return removed


def step_summary(study: Study) -> dict[str, StepSummary]:
    """Per step: items that have it, the backends, models and prompt hashes used, and the
    fidelity checks (checked, failed, and why)."""
    summary: dict[str, StepSummary] = {}
    entries: dict[str, list[StepEntry]] = {}
    for steps in recorded_steps(study):
        for entry in steps:
            s = summary.setdefault(
                entry["step"], {"items": 0, "outcomes": {}, "runs": [], "fidelity": {}}
            )
            entries.setdefault(entry["step"], []).append(entry)
            s["items"] += 1
            s["outcomes"][entry["outcome"]] = s["outcomes"].get(entry["outcome"], 0) + 1
            run = {k: entry[k] for k in ("prompt", "prompt_sha256", "backend", "model", "params")}
            if entry.get("run_settings"):  # threads, precision: the texts depend on them
                run["run_settings"] = entry["run_settings"]
            if run not in s["runs"]:
                s["runs"].append(run)
    for step, s in summary.items():
        # the manifest records the checks that ran; an empty output is counted in `outcomes`
        s["fidelity"] = count_steps(entries[step], empty_fails=False).manifest_counts()
    return summary
