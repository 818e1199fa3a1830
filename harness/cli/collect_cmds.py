"""`harness collect`: model outputs for every pending prompt of a study."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli._app import STUDY_HELP, app
from harness.cli._model_names import check_model_names
from harness.cli._next import echo_next
from harness.cli._params import check_positive
from harness.collection.collect_settings import CollectSettings
from harness.collection.collect_stage import collect_models
from harness.collection.model_removal import remove_model
from harness.collection.stopped_models import STOPPED
from harness.errors import HarnessError
from harness.models.providers import parse_model, remote_usage
from harness.study.manifest import read_manifest

#: The options not passed on by their own name: the study, `--remove`, and those renamed or
#: reshaped on the way to CollectSettings.
_RENAMED = ("study", "remove", "model", "model_arg", "base_url", "batch_api")


@app.command()
def collect(
    ctx: typer.Context,
    study: Path = typer.Option(..., "--study", help=STUDY_HELP),
    model: list[str] | None = typer.Option(
        None,
        "--model",
        help="A provider string, repeatable: local (the embedded "
        f"SmolLM2-135M-Instruct), local/PATH (folder or .gguf), {remote_usage(url_note=True)}. "
        "MODEL#LABEL "
        "names one configuration of a model run under several settings (local#greedy, "
        "local#sampled: each its own key, reported as configurations of one model). With "
        "--backend, a plain model name. Default: every model the study holds, else local.",
    ),
    model_arg: list[str] | None = typer.Option(
        None,
        "--model-arg",
        help="KEY=VALUE for every model, or MODEL@KEY=VALUE for one (MODEL: its --model "
        "string, or a configuration's LABEL alone), "
        "repeatable. Keys: temperature, top_p, seed (a number or omit), max_tokens, token_param "
        "(max_tokens or max_completion_tokens), reasoning_effort, stop (text or JSON list), "
        "extra.NAME (any request body field), samples, base_url, concurrency, rpm, tpm, timeout, "
        "max_attempts, batch_size, threads, precision (local: auto, float32, bfloat16 or int8), "
        "max_cost, prices (a price table file).",
    ),
    backend: str | None = typer.Option(
        None, help="Older form: local or openai (or a provider) with a plain --model name."
    ),
    samples: int | None = typer.Option(None, min=1, help="Completions per prompt (default 1)."),
    concurrency: int | None = typer.Option(
        None,
        min=1,
        help="openai: parallel requests to start with, per replica (default 16); cut on 429s.",
    ),
    max_tokens: int | None = typer.Option(
        None, min=1, help="Longest completion in tokens (default 256)."
    ),
    temperature: float | None = typer.Option(
        None, min=0.0, help="Sampling temperature (default 0.7)."
    ),
    top_p: float | None = typer.Option(
        None, min=0.0, max=1.0, help="Nucleus sampling mass (default 0.95)."
    ),
    seed: int | None = typer.Option(None, min=0, help="Sampling seed (default 0)."),
    max_cost: float | None = typer.Option(
        None,
        min=0.0,
        help="Cap each model's cost in this run, in USD: a request is sent only "
        "if its worst case fits.",
    ),
    retry_errors: bool = typer.Option(
        False, "--retry-errors", help="Retry only completions that failed before."
    ),
    batch_api: bool = typer.Option(
        False, "--batch-api", help="openai: use the Batch API (resumable; half price)."
    ),
    base_url: list[str] | None = typer.Option(
        None,
        "--base-url",
        help="Server URL of the OpenAI-compatible model (default: the provider's usual "
        "local URL; openai/: $OPENAI_BASE_URL or api.openai.com). Repeatable (or URLs "
        "separated by commas): replicas of one model; each request goes to the replica with "
        "the fewest in flight, and a failing replica is taken out and probed again later.",
    ),
    new_endpoint: bool = typer.Option(
        False,
        "--new-endpoint",
        help="openai: collect from a server other than the one the "
        "study's outputs came from (a rerun otherwise goes to the recorded one).",
    ),
    rpm: float | None = typer.Option(
        None, callback=check_positive, help="openai: requests-per-minute limit."
    ),
    tpm: float | None = typer.Option(
        None, callback=check_positive, help="openai: tokens-per-minute limit."
    ),
    timeout: float | None = typer.Option(
        None, callback=check_positive, help="openai: seconds per attempt (default 120)."
    ),
    max_attempts: int | None = typer.Option(
        None, min=1, help="openai: attempts per request (default 6)."
    ),
    batch_size: int | None = typer.Option(
        None, min=1, help="local: prompts per batch (default 8)."
    ),
    threads: int | None = typer.Option(
        None, min=1, help="local: CPU threads (default: idle CPUs)."
    ),
    remove: str | None = typer.Option(
        None,
        "--remove",
        metavar="MODEL",
        help="Take MODEL (as --model named it) out of the study before `judge --blind`, "
        "e.g. a mistyped name: its outputs are kept aside (table removed_outputs), never "
        "deleted, and the removal is recorded in the manifest (collect.removed). Refused once "
        "the study is blinded. Takes no option but --study.",
    ),
) -> None:
    """Collect model completions for every pending prompt; a rerun resumes where it stopped.

    Several models may share a study: each is filed under its provider string with its own
    settings, and adding a model later collects only its outputs. A rerun without flags keeps
    each model's settings and run options, concurrency included (the defaults shown apply to a
    model's first run; a value given again applies and is noted). API keys come from
    OPENAI_API_KEY only (sent to openai/ and openai-compatible/ servers) and are never stored.

    \b
    Example: harness collect --study runs/s1 --model openai/gpt-4o-mini --model local --samples 3
    """
    if remove is not None:
        _remove(ctx, study, remove)
        return

    check_model_names(study, model or None, backend)
    # every other option is a CollectSettings field, or a ServerOptions one, of the same name
    given = {k: v for k, v in ctx.params.items() if k not in _RENAMED}
    settings = CollectSettings.from_keywords(
        models=model or None,
        model_args=model_arg or None,
        base_url=(base_url[0] if len(base_url) == 1 else tuple(base_url)) if base_url else None,
        batch_api=batch_api or None,
        **given,
    )
    results = collect_models(
        study,
        settings=settings,
        progress=True,
        on_result=lambda result: typer.echo(result.summary()),
    )
    if any(r.stopped == "interrupted" for r in results):
        raise typer.Exit(130)
    for result in results:  # the server's words that stopped a model, on one line each
        if result.stopped == STOPPED:
            typer.echo(
                f"error: {result.model_key}: stopped after {result.failed} failed requests: "
                f"{result.stop_reason}",
                err=True,
            )
    failed, pending = sum(r.failed for r in results), sum(r.pending for r in results)
    if failed or pending:  # scripts must be able to tell partial work from done
        typer.echo(
            f"error: the run left {failed} failed and {pending} pending completions (exit 1)",
            err=True,
        )
        raise typer.Exit(1)
    echo_next(study)


def _remove(ctx: typer.Context, study: Path, model: str) -> None:
    """`--remove MODEL`: the model out of the study; any other option is refused, not ignored."""
    others = [
        "--" + (param.name or "").replace("_", "-")
        for param in ctx.command.params
        if param.name not in ("study", "remove")
        and (source := ctx.get_parameter_source(param.name or "")) is not None
        and source.name not in ("DEFAULT", "DEFAULT_MAP")
    ]
    if others:
        raise HarnessError(
            f"--remove takes no option but --study (got {', '.join(others)}); collect the "
            "other models in a run of their own"
        )
    try:
        removal = remove_model(study, model)
    except HarnessError as error:
        earlier = _removed_before(study, model) if "no such model" in error.message else None
        if earlier is None:
            raise
        typer.echo(earlier)  # asked twice: the study is already as asked
    else:
        typer.echo(removal.summary())
    echo_next(study)


def _removed_before(study: Path, model: str) -> str | None:
    """The line for a model that an earlier `--remove` took out (manifest `collect.removed`),
    named as `remove_model` takes it: its key, provider string or bare model name."""
    section = read_manifest(study).collect
    try:
        key = parse_model(model).key
    except HarnessError:
        key = None
    for entry in reversed((section.removed or []) if section is not None else []):
        if not isinstance(entry, dict):
            continue
        record = entry.get("record")
        named = record.get("model") if isinstance(record, dict) else None
        if model in (entry.get("model_key"), named) or key == entry.get("model_key"):
            outputs = entry.get("outputs")
            kept = (
                f" ({outputs.get('ok')} ok and {outputs.get('failed')} failed output(s) kept "
                "aside in removed_outputs)"
                if isinstance(outputs, dict)
                else ""
            )
            return (
                f"{entry.get('model_key')} was already removed at {entry.get('removed_at')}"
                f"{kept}; nothing changed (manifest: collect.removed)"
            )
    return None
