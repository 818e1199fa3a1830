"""`harness power`: what the design can detect and decide (analytic, and simulated on request).

A module of its own, so that `power` loads the planning statistics alone, not the analysis and
its report."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.analysis.planning.power_analysis import power as plan_power
from harness.cli._app import app
from harness.cli._params import check_positive


@app.command()
def power(
    topics: int | None = typer.Option(
        None, "--topics", min=2, help="Number of topics (default: the plan's planning.topics)."
    ),
    p_single: float | None = typer.Option(
        None,
        "--p-single",
        min=0.0,
        max=1.0,
        help="Proportion judged novel after single-field prompts.",
    ),
    effect: float | None = typer.Option(
        None, "--effect", min=-1.0, max=1.0, help="Difference to detect (cross - single)."
    ),
    sesoi: float | None = typer.Option(
        None,
        "--sesoi",
        callback=check_positive,
        help="Smallest effect size of interest (equivalence margin).",
    ),
    rho: float | None = typer.Option(
        None,
        "--rho",
        min=-1.0,
        max=1.0,
        help="Correlation of a topic's cross and single consensus outcomes.",
    ),
    alpha: float | None = typer.Option(None, "--alpha", min=0.0, max=1.0, help="One-sided alpha."),
    target: float | None = typer.Option(None, "--target", min=0.0, max=1.0, help="Target power."),
    simulate: bool = typer.Option(
        False,
        "--simulate",
        help="Also simulate the full design through the exact primary analysis.",
    ),
    reps: int | None = typer.Option(None, "--reps", min=1, help="Simulated studies per condition."),
    samples: int | None = typer.Option(
        None, "--samples", min=1, help="Outputs per prompt (simulation)."
    ),
    reviewers: int | None = typer.Option(
        None, "--reviewers", min=1, help="Reviewers per item (simulation)."
    ),
    seed: int | None = typer.Option(None, "--seed", min=0, help="Simulation seed."),
    plan: Path | None = typer.Option(
        None,
        "--plan",
        help="Plan whose planning section gives the defaults (default: the bundled plan).",
    ),
    sensitivity: float | None = typer.Option(
        None,
        "--sensitivity",
        min=0.0,
        max=1.0,
        help="Reviewer sensitivity on published controls "
        "(default: the plan's planning.sensitivity).",
    ),
    specificity: float | None = typer.Option(
        None,
        "--specificity",
        min=0.0,
        max=1.0,
        help="Reviewer specificity on unpublished controls "
        "(default: the plan's planning.specificity).",
    ),
    bank: bool = typer.Option(
        False,
        "--bank",
        help="Also report for all topics of the topic "
        "bank (its size replaces --topics' default), with the plan's "
        "equivalence test simulated (about a minute).",
    ),
    bank_file: Path | None = typer.Option(
        None, "--bank-file", help="Topic bank for --bank: a YAML file or folder (default: bundled)."
    ),
    bank_reps: int = typer.Option(
        400, "--bank-reps", min=10, help="Simulated studies per equivalence figure of --bank."
    ),
    models: int | None = typer.Option(
        None,
        "--models",
        min=1,
        help="Models answering the same prompts (default: the plan's planning.models); above 1 "
        "adds the pooled and per-model (Holm) designs.",
    ),
    model_correlation: float | None = typer.Option(
        None,
        "--model-correlation",
        min=0.0,
        max=1.0,
        help="Correlation of a topic's difference between two models "
        "(default: the plan's planning.model_correlation, 0.5).",
    ),
    config: Path | None = typer.Option(
        None,
        "--config",
        help="Study file (study.yaml): its topics, models, outputs per prompt, plan and bank "
        "are the defaults; the flags above override them.",
    ),
    adjudicated: str | None = typer.Option(
        None,
        "--adjudicated",
        metavar="N_OR_SHARE",
        help="Topics adjudicated by careful reviewers: a share (0.25) or a count (90); adds the "
        "prediction-powered design's power, sample size needed and careful judgments saved "
        "(default: the plan's adjudication.topics; 0: none).",
    ),
    agreement: float | None = typer.Option(
        None,
        "--agreement",
        min=0.5,
        max=1.0,
        help="Primary reviewers' accuracy on real items (sensitivity = specificity; the "
        "adjudicators' is taken as 0.95) for the adjudicated design (default: 0.7, 0.85 and "
        "0.95).",
    ),
    control_correlation: float | None = typer.Option(
        None,
        "--control-correlation",
        min=0.0,
        max=0.99,
        help="Correlation of two adjudicators' calls on one control (controls that differ in "
        "difficulty) for the adjudicated design search (default: the plan's "
        "planning.control_correlation).",
    ),
) -> None:
    """Power, topics needed and minimal detectable effect for the paired design (Connor 1987;
    normal approximation; simulation searched until it reaches the target power).

    \b
    Example: harness power --topics 50 --p-single 0.3 --effect 0.1 --simulate
    Example: harness power --bank --sensitivity 0.85 --specificity 0.9
    Example: harness power --models 3 --model-correlation 0.5
    Example: harness power --config study.yaml --simulate
    Example: harness power --bank --adjudicated 0.25 --agreement 0.85
    """
    result = plan_power(
        topics=topics,
        p_single=p_single,
        effect=effect,
        sesoi=sesoi,
        rho=rho,
        alpha=alpha,
        target=target,
        simulate=simulate,
        reps=reps,
        samples=samples,
        reviewers=reviewers,
        seed=seed,
        plan=plan,
        sensitivity=sensitivity,
        specificity=specificity,
        bank=bank_file or bank or None,
        bank_reps=bank_reps,
        models=models,
        model_correlation=model_correlation,
        study_file=config,
        adjudicated=adjudicated,
        agreement=agreement,
        control_correlation=control_correlation,
    )
    typer.echo(result.summary())
