"""`harness geometry heatmap` and `harness geometry probe`: attention in a real model."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli._app import STUDY_HELP
from harness.cli.geometry_cmds import geometry, ints
from harness.errors import HarnessError
from harness.geometry.compare import TESTS, compare_split
from harness.geometry.heatmap import draw_heatmap, sentence_attention
from harness.geometry.probe_stage import run_probe
from harness.progress import tracker

MODEL_HELP = "Local model folder or .gguf file (default: the embedded SmolLM2-135M-Instruct)."


@geometry.command()
def heatmap(
    sentence: str = typer.Argument(..., help="Sentence whose attention to draw."),
    model: str = typer.Option(None, "--model", help=MODEL_HELP),
    layer: int = typer.Option(None, help="Layer to draw (default: the middle layer)."),
    heads: str = typer.Option(None, help="Two heads 'A,B' (default: most focused, most diffuse)."),
    out: Path = typer.Option(Path("attention_heatmap.png"), help="PNG file to write."),
) -> None:
    """Draw a real model's attention over a sentence: mean over heads, per-head distributions,
    two heads side by side.

    \b
    Example: harness geometry heatmap "The cat sat on the mat" --out cat.png
    """

    pair = ints(heads, "--heads") if heads else None
    if pair is not None and len(pair) != 2:
        raise HarnessError("give exactly two heads, e.g. --heads 0,5", column="--heads")
    attention = sentence_attention(sentence, model)
    path = draw_heatmap(
        attention, out, layer=layer, heads=(pair[0], pair[1]) if pair is not None else None
    )
    typer.echo(f"wrote {path} ({attention.model}, {len(attention.tokens)} tokens)")


@geometry.command()
def probe(
    study: Path = typer.Option(..., "--study", help=STUDY_HELP),
    model: str = typer.Option(None, "--model", help=MODEL_HELP),
    limit: int = typer.Option(None, help="Measure at most this many pending prompts."),
    test: str = typer.Option("wilcoxon", help="Paired test over topics: wilcoxon or t."),
) -> None:
    """Measure each prompt's attention in a real model, then compare cross vs single-field.

    \b
    Example: harness geometry probe --study runs/demo
    """

    if test not in TESTS:  # refused before any prompt is measured
        raise HarnessError(f"unknown test {test!r} (choose {', '.join(TESTS)})", column="--test")
    with tracker() as bars:  # stderr: stdout has the results only
        run = run_probe(study, model, limit=limit, on_prompt=lambda i, n: bars("probe", i, n))
    typer.echo(run.summary())
    typer.echo(compare_split(study, run.model, test=test).summary())
