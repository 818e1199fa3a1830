"""`harness geometry ...`: the group, and the seed's attention experiments (numpy alone).

The commands that load a real model (heatmap, probe) are in `geometry_model_cmds`, imported only
when one of them runs (harness.cli._commands), so `harness geometry scaling` starts as fast as
the experiment allows."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli._app import app
from harness.errors import HarnessError
from harness.geometry.plots import scaling_figure
from harness.geometry.seeds import fields_experiment, scaling_experiment

geometry = typer.Typer(
    name="geometry",
    help=(
        "Attention geometry: the seed experiments, a real model's attention, and the probe of "
        "a study's prompts.\n\n\b\nExample: harness geometry scaling"
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.add_typer(geometry, name="geometry")


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

    \b
    Example: harness geometry scaling --plot --out scaling.png
    """

    result = scaling_experiment(seed, trials, keys, ints(dims, "--dims"))
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

    \b
    Example: harness geometry fields --seed 4
    """

    result = fields_experiment(seed, names.split(","), dims, keys_per_field, noise, scale)
    typer.echo("\n".join(result.lines()))


def ints(text: str, option: str) -> list[int]:

    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise HarnessError(
            f"expected comma-separated whole numbers, got {text!r}", column=option
        ) from None
    if not values:
        raise HarnessError("give at least one value", column=option)
    return values
