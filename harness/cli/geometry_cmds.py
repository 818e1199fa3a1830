"""`harness geometry ...`: the seed's attention experiments, attention heatmaps, the study probe."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli._app import STUDY_HELP, app
from harness.errors import HarnessError
from harness.geometry.compare import TESTS, compare_split
from harness.geometry.heatmap import draw_heatmap, sentence_attention
from harness.geometry.plots import scaling_figure
from harness.geometry.seeds import fields_experiment, scaling_experiment
from harness.probing import run_probe
from harness.progress import tracker

geometry = typer.Typer(
    name="geometry",
    help=(
        "Attention geometry: the seed experiments, a real model's attention, and the probe of "
        "a study's prompts.\n\nExample: harness geometry scaling"
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.add_typer(geometry, name="geometry")

MODEL_HELP = "Local model folder or .gguf file (default: the embedded SmolLM2-135M-Instruct)."


@geometry.command()
def scaling(
    seed: int = typer.Option(1, help="Seed of Python's random module, as in the seed program."),
    trials: int = typer.Option(200, help="Random query/key sets per dimension."),
    keys: int = typer.Option(16, help="Keys per query."),
    dims: str = typer.Option("16,64,256,1024", help="Comma-separated key dimensions d_k."),
    plot: bool = typer.Option(False, "--plot", help="Also draw score and weight distributions."),
    out: Path = typer.Option(Path("geometry_scaling.png"), help="PNG file for --plot."),
) -> None:
    """Mean attention entropy without and with 1/sqrt(d_k) scaling (the seed's table).

    Example: harness geometry scaling --plot --out scaling.png
    """

    result = scaling_experiment(seed, trials, keys, _ints(dims, "--dims"))
    typer.echo("\n".join(result.lines()))
    if plot:
        typer.echo(f"wrote {scaling_figure(result, out)}")


@geometry.command()
def fields(
    seed: int = typer.Option(4, help="Seed of Python's random module, as in the seed program."),
    names: str = typer.Option(
        "acoustics,control theory,Buddhist texts",
        "--fields",
        help="Comma-separated field names (two or more).",
    ),
    dims: int = typer.Option(12, help="Embedding dimensions, shared out evenly among fields."),
    keys_per_field: int = typer.Option(4, help="Keys in each field's cluster."),
    noise: float = typer.Option(0.25, help="Standard deviation of the keys around their field."),
    scale: float = typer.Option(3.0, help="Multiplier of the dot products (stands for |q||k|/√d)."),
) -> None:
    """The toy model: what a query inside one field, across two, or with no direction gathers.

    Example: harness geometry fields --seed 4
    """

    result = fields_experiment(seed, names.split(","), dims, keys_per_field, noise, scale)
    typer.echo("\n".join(result.lines()))


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

    Example: harness geometry heatmap "The cat sat on the mat" --out cat.png
    """

    pair = _ints(heads, "--heads") if heads else None
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

    Example: harness geometry probe --study runs/demo
    """

    if test not in TESTS:  # refused before any prompt is measured
        raise HarnessError(f"unknown test {test!r} (choose {', '.join(TESTS)})", column="--test")
    with tracker() as bars:  # stderr: stdout has the results only
        run = run_probe(study, model, limit=limit, on_prompt=lambda i, n: bars("probe", i, n))
    typer.echo(run.summary())
    typer.echo(compare_split(study, run.model, test=test).summary())


def _ints(text: str, option: str) -> list[int]:

    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise HarnessError(
            f"expected comma-separated whole numbers, got {text!r}", column=option
        ) from None
    if not values:
        raise HarnessError("give at least one value", column=option)
    return values
