"""`harness collect`: model outputs for every pending prompt of a study."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli._app import STUDY_HELP, app
from harness.cli._params import check_positive


@app.command()
def collect(
    study: Path = typer.Option(..., "--study", help=STUDY_HELP),
    backend: str | None = typer.Option(None, help="local (default) or openai."),
    model: str | None = typer.Option(
        None, help="local: a model folder or .gguf file (default: embedded SmolLM2-135M-Instruct);"
        " openai: the model name."),
    samples: int | None = typer.Option(None, min=1, help="Completions per prompt (default 1)."),
    concurrency: int | None = typer.Option(
        None, min=1, help="openai: parallel requests to start with (default 16); cut on 429s."),
    max_tokens: int | None = typer.Option(None, min=1,
                                          help="Longest completion in tokens (default 256)."),
    temperature: float | None = typer.Option(None, min=0.0,
                                             help="Sampling temperature (default 0.7)."),
    top_p: float | None = typer.Option(None, min=0.0, max=1.0,
                                       help="Nucleus sampling mass (default 0.95)."),
    seed: int | None = typer.Option(None, min=0, help="Sampling seed (default 0)."),
    max_cost: float | None = typer.Option(
        None, min=0.0,
        help="Cap this run's cost in USD: a request is sent only if its worst case fits."),
    retry_errors: bool = typer.Option(False, "--retry-errors",
                                      help="Retry only completions that failed before."),
    batch_api: bool = typer.Option(False, "--batch-api",
                                   help="openai: use the Batch API (resumable; half price)."),
    base_url: str | None = typer.Option(
        None, help="openai: server URL (default $OPENAI_BASE_URL or api.openai.com)."),
    new_endpoint: bool = typer.Option(
        False, "--new-endpoint", help="openai: collect from a server other than the one the "
        "study's outputs came from (a rerun otherwise goes to the recorded one)."),
    rpm: float | None = typer.Option(None, callback=check_positive,
                                     help="openai: requests-per-minute limit."),
    tpm: float | None = typer.Option(None, callback=check_positive,
                                     help="openai: tokens-per-minute limit."),
    timeout: float | None = typer.Option(None, callback=check_positive,
                                         help="openai: seconds per attempt (default 120)."),
    max_attempts: int | None = typer.Option(None, min=1,
                                            help="openai: attempts per request (default 6)."),
    batch_size: int | None = typer.Option(None, min=1,
                                          help="local: prompts per batch (default 8)."),
    threads: int | None = typer.Option(None, min=1,
                                       help="local: CPU threads (default: idle CPUs)."),
) -> None:
    """Collect model completions for every pending prompt; a rerun resumes where it stopped.

    A rerun without flags keeps the backend, model and sampling settings of the study's first
    collect run (the defaults shown apply to that first run). API keys come from
    OPENAI_API_KEY only and are never stored.

    Example: harness collect --study runs/s1 --backend openai --model gpt-4o-mini --samples 3
    """
    from harness.collect import collect as run

    options = {"concurrency": concurrency, "base_url": base_url, "rpm": rpm, "tpm": tpm,
               "timeout": timeout, "max_attempts": max_attempts, "batch_size": batch_size,
               "threads": threads, "batch_api": batch_api or None}
    result = run(
        study, backend=backend, model=model, samples=samples, temperature=temperature,
        top_p=top_p, max_tokens=max_tokens, seed=seed, max_cost=max_cost,
        retry_errors=retry_errors, progress=True, new_endpoint=new_endpoint,
        **{k: v for k, v in options.items() if v is not None},
    )
    typer.echo(result.summary())
    if result.stopped == "interrupted":
        raise typer.Exit(130)
    if result.failed or result.pending:  # scripts must be able to tell partial work from done
        typer.echo(f"error: the run left {result.failed} failed and {result.pending} pending "
                   "completions (exit 1)", err=True)
        raise typer.Exit(1)
