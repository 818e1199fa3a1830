"""`harness judge`: blinded items and routing, packets out and in, status, automated reviewers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from harness.cli._app import STUDY_HELP, app
from harness.cli._next import echo_next
from harness.cli._params import check_cutoff


@app.command()
def judge(
    study: Path = typer.Option(..., "--study", help=STUDY_HELP),
    blind: bool = typer.Option(
        False,
        "--blind",
        help="Make blinded items, route them to "
        "reviewers, write packets and the blinding commitment.",
    ),
    import_: bool = typer.Option(
        False,
        "--import",
        help="Import returned packets: the FILES (.xlsx, or items.csv with searches.csv).",
    ),
    status: bool = typer.Option(
        False, "--status", help="Per reviewer: assigned, returned, missing."
    ),
    auto: bool = typer.Option(
        False,
        "--auto",
        help="Run the automated reviewers of the roster "
        "(calibrating each first when the study has calibration controls).",
    ),
    calibrate: bool = typer.Option(
        False,
        "--calibrate",
        help="Calibrate the automated "
        "reviewers' thresholds on the calibration-split controls "
        "(refused once a reviewer has reviewed other items).",
    ),
    files: list[Path] | None = typer.Argument(None, help="Files for --import.", show_default=False),
    reviewers: Path | None = typer.Option(
        None,
        "--reviewers",
        help="Roster YAML (--blind); default: the roster already stored in the study.",
    ),
    k: int = typer.Option(
        2, "--k", min=1, help="Distinct reviewers per item (below 2 only in a pilot)."
    ),
    seed: int | None = typer.Option(
        None, "--seed", min=0, help="Seed of the routing (default: the harness default seed)."
    ),
    extract: bool = typer.Option(
        True,
        "--extract/--no-extract",
        help="Extract each output's core combination with a model (blind to condition).",
    ),
    normalise: bool = typer.Option(
        True,
        "--normalise/--no-normalise",
        help="Rewrite outputs in a neutral style with a model (original kept).",
    ),
    backend: str | None = typer.Option(
        None,
        "--backend",
        help="Deprecated: name models by provider strings (--model openai/NAME; roster "
        "method: llm:openai/NAME). Still read as the provider of a bare model name.",
    ),
    model: str | None = typer.Option(
        None,
        "--model",
        help="--blind: provider string of the model of the blinded steps (default: local, "
        "the embedded one; e.g. openai/gpt-4o-mini, vllm/NAME).",
    ),
    cutoff: str | None = typer.Option(
        None,
        "--cutoff",
        callback=check_cutoff,
        help="Publication-date cut-off "
        "(YYYY-MM-DD, or YYYY = 31 December): --blind states it "
        "on packets and stores it; --auto uses the stored one.",
    ),
    base_url: str | None = typer.Option(
        None,
        "--base-url",
        help="Server URL of every OpenAI-compatible model (default: its provider's; openai: "
        "$OPENAI_BASE_URL or api.openai.com).",
    ),
    concurrency: int | None = typer.Option(
        None,
        "--concurrency",
        min=1,
        help="Parallel requests to an OpenAI-compatible model (default 16).",
    ),
    same_topic: bool = typer.Option(
        False, "--same-topic", help="Let a human reviewer see several items of one topic."
    ),
    replace: bool = typer.Option(
        False,
        "--replace",
        help="--import: replace a reviewer's earlier import with this corrected file.",
    ),
    review_what_exists: bool = typer.Option(
        False,
        "--review-what-exists",
        help="--blind: blind a study whose collect is unfinished (refused without it); outputs "
        "collected later are never reviewed. Recorded in the manifest's routing record.",
    ),
    after_unblinding: bool = typer.Option(
        False,
        "--after-unblinding",
        help="--import, --auto: store reviews that come in after `harness analyze` unblinded "
        "the study (refused without it) as post-unblinding reviews: counted in the report, never "
        "analysed.",
    ),
    source: list[str] | None = typer.Option(
        None, "--source", help="--auto: literature source (repeatable; default: local corpus)."
    ),
    threshold: float | None = typer.Option(
        None,
        "--threshold",
        help="--auto: match score for a published verdict, fixed instead of calibrated.",
    ),
    max_queries: int = typer.Option(3, "--max-queries", min=1, help="--auto: queries per item."),
    controls: Path | None = typer.Option(
        None, "--controls", help="--blind: controls file (YAML; see judging/controls.example.yaml)."
    ),
    bank_controls: bool = typer.Option(
        True,
        "--bank-controls/--no-bank-controls",
        help="--blind: build control items from the bank's "
        "known links, split by the cut-off's year.",
    ),
    plan: Path | None = typer.Option(
        None,
        "--plan",
        help="--blind: analysis plan whose "
        "`controls:` numbers apply (default: the preregistered "
        "one, else the bundled one).",
    ),
) -> None:
    """Blind outputs and route them to reviewers; import returned packets; show progress.

    Example: harness judge --blind --study runs/s1 --reviewers judging/roster.example.yaml
    """
    server = {"base_url": base_url, "concurrency": concurrency}
    modes = [
        name
        for name, on in (
            ("--blind", blind),
            ("--import", import_),
            ("--status", status),
            ("--auto", auto),
            ("--calibrate", calibrate),
        )
        if on
    ]
    if len(modes) != 1:
        from harness.errors import HarnessError

        raise HarnessError(
            "choose one of --blind, --import FILE..., --status, --auto, "
            "--calibrate" + (f" (got {', '.join(modes)})" if modes else "")
        )
    if files and not import_:
        from harness.errors import HarnessError

        raise HarnessError(f"unexpected argument {str(files[0])!r} (files go with --import)")
    if blind:
        _blind(
            study,
            reviewers,
            k,
            seed,
            extract,
            normalise,
            backend,
            model,
            cutoff,
            not same_topic,
            {
                **server,
                "controls": controls,
                "bank_controls": bank_controls,
                "plan": plan,
                "review_what_exists": review_what_exists,
            },
        )
    elif import_:
        _import(study, files or [], replace, after_unblinding)
    elif status:
        _status(study)
    elif calibrate:
        if threshold is not None:
            from harness.errors import HarnessError

            raise HarnessError(
                "--threshold fixes the threshold and --calibrate chooses it; use one",
                column="--threshold",
            )
        _calibrate(study, source, cutoff, max_queries, _auto_backend(backend, model), server)
    else:
        auto_backend = _auto_backend(backend, model)
        _auto(study, source, threshold, cutoff, max_queries, auto_backend, server, after_unblinding)
    echo_next(study)


def _auto_backend(backend: str | None, model: str | None) -> str | None:
    """--auto and --calibrate take their reviewers' models from the roster (method: llm:MODEL);
    --backend only names the provider of a roster's bare model names."""
    if model is not None:
        from harness.errors import HarnessError

        raise HarnessError(
            "--model names the model of the blinded steps (--blind); an automated reviewer's "
            "model is its roster method, e.g. method: llm:openai/gpt-4o-mini",
            column="--model",
        )
    return backend


def _blind(
    study: Path,
    reviewers: Path | None,
    k: int,
    seed: int | None,
    extract: bool,
    normalise: bool,
    backend: str | None,
    model: str | None,
    cutoff: str | None,
    distinct: bool,
    options: dict[str, Any],
) -> None:
    from harness.judge.blinding.blind_stage import blind
    from harness.models.providers import model_flags

    spec = model_flags(model, backend)  # the one resolver: provider strings, older spellings

    result = blind(
        study,
        reviewers=reviewers,
        k=k,
        seed=seed,
        extract=extract,
        normalise=normalise,
        backend=spec.backend,
        model=None if spec.key == "local" else spec.key,
        cutoff=cutoff,
        distinct_topics=distinct,
        progress=True,
        **options,
    )
    typer.echo(result.summary())


def _import(study: Path, files: list[Path], replace: bool, after_unblinding: bool) -> None:
    from harness.judge.packets.packet_import import ImportProblems, import_reviews
    from harness.study.store import Study

    with Study.open(study) as opened:
        try:
            frame = import_reviews(
                opened, files, replace=replace, after_unblinding=after_unblinding
            )
        except ImportProblems as error:
            for problem in error.problems:
                sys.stderr.write(f"{problem}\n")
            raise
    typer.echo(frame.drop(columns="sha256").to_string(index=False))


def _status(study: Path) -> None:
    from harness.judge.review_status import adjudication_summary, review_status, status_summary
    from harness.study.store import Study

    with Study.open(study) as opened:
        frame = review_status(opened)
        gold = adjudication_summary(opened)
    if not frame.empty:
        typer.echo(frame.to_string(index=False))
    typer.echo(status_summary(frame))
    if gold is not None:
        typer.echo(gold)


def _auto(
    study: Path,
    sources: list[str] | None,
    threshold: float | None,
    cutoff: str | None,
    max_queries: int,
    backend: str | None,
    server: dict[str, Any],
    after_unblinding: bool = False,
) -> None:
    from harness.errors import PartialWork
    from harness.judge.automated.auto_review import (
        refuse_after_unblinding,
        run_automated,
        unfinished,
    )
    from harness.judge.automated.auto_settings import check_auto_settings, check_reviewer_models
    from harness.study.store import Study

    # refused here, before the study is opened, locked or its manifest written
    check_auto_settings(
        backend=backend, sources=sources, threshold=threshold, max_queries=max_queries, **server
    )
    check_reviewer_models(study, backend)
    with Study.open(study) as opened:
        refuse_after_unblinding(opened, after_unblinding)  # before the lock is taken
        frame = run_automated(
            opened,
            sources=sources or None,
            threshold=threshold,
            cutoff=cutoff,
            max_queries=max_queries,
            backend=backend,
            after_unblinding=after_unblinding,
            **server,
        )
    typer.echo(frame.to_string(index=False))
    if (left := unfinished(frame)) is not None:
        raise PartialWork(left)


def _calibrate(
    study: Path,
    sources: list[str] | None,
    cutoff: str | None,
    max_queries: int,
    backend: str | None,
    server: dict[str, Any],
) -> None:
    from harness.errors import PartialWork
    from harness.judge.automated.auto_review import calibrate_automated
    from harness.judge.automated.auto_settings import check_auto_settings, check_reviewer_models
    from harness.study.store import Study

    check_auto_settings(backend=backend, sources=sources, max_queries=max_queries, **server)
    check_reviewer_models(study, backend)
    with Study.open(study) as opened:
        frame, lines = calibrate_automated(
            opened,
            sources=sources or None,
            cutoff=cutoff,
            max_queries=max_queries,
            backend=backend,
            **server,
        )
    typer.echo("\n".join(lines) if lines else "No automated reviewers in the roster.")
    if not frame.empty and (frame["rule"] == "failed").any():
        failed = int((frame["rule"] == "failed").sum())
        raise PartialWork(
            f"calibration of {failed} of {len(frame)} automated reviewer(s) failed; rerun to retry"
        )
