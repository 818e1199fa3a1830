"""`harness topics check` and `harness topics draft`: curating a topic bank."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from harness.cli._app import app
from harness.curation.check import check_bank
from harness.curation.draft import draft_topics
from harness.curation.rules import Rules
from harness.defaults import DEFAULT_SEED
from harness.errors import HarnessError
from harness.models import GenerationParams
from harness.models.providers import remote_usage

topics_app = typer.Typer(
    help="Curate a topic bank: check it against the curation rules, draft candidate topics.\n\n\b\n"
    "Example: harness topics check topics/bank.yaml --cutoff 2023",
    no_args_is_help=True,
)
app.add_typer(topics_app, name="topics")


@topics_app.command("check")
def check(
    banks: list[Path] | None = typer.Argument(
        None, help="Bank files or folders, checked as one bank (default: the bundled bank)."
    ),
    cutoff: list[str] | None = typer.Option(
        None,
        "--cutoff",
        help="Training cut-off (YYYY or YYYY-MM-DD), repeatable: counts the "
        "published (year <= cut-off) and unpublished controls a study would get "
        "(default: 2015, 2020, 2024).",
    ),
    taxonomy: Path | None = typer.Option(None, help="Field taxonomy (default: bundled)."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the report as JSON."),
    subset: int = typer.Option(
        60,
        "--subset",
        min=0,
        help="Also show what the seeded subset of "
        "N topics covers (`harness run --subset`; default: the demo's "
        "60; 0: skip).",
    ),
    subset_seed: int | None = typer.Option(
        None,
        "--subset-seed",
        min=0,
        help="Seed of --subset (default: the default study seed, as in the demo).",
    ),
) -> None:
    """Check a topic bank: schema (file:line), near duplicates, token balance, concept lengths,
    field and domain spread, links and controls by cut-off. Exits 1 when a rule fails.

    \b
    Example: harness topics check topics/bank.yaml drafts.yaml --cutoff 2024-06-01
    """

    rules = Rules(cutoffs=tuple(_year(c) for c in cutoff)) if cutoff else Rules()
    chosen = (subset, DEFAULT_SEED if subset_seed is None else subset_seed) if subset else None
    report = check_bank(banks or None, rules=rules, taxonomy=taxonomy, subset=chosen)
    typer.echo(report.to_text())
    if json_out is not None:
        json_out.write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
    if not report.ok:
        raise typer.Exit(1)


def _year(text: str) -> int:

    head = text.strip()[:4]
    if not head.isdigit() or len(text.strip()) not in (4, 10):
        raise HarnessError(f"cut-off {text!r} is not YYYY or YYYY-MM-DD", column="--cutoff")
    return int(head)


@topics_app.command("draft")
def draft(
    more_fields: list[str] | None = typer.Argument(
        None, metavar="[FIELD]...", help="Further field names after --fields."
    ),
    fields: list[str] | None = typer.Option(
        None,
        "--fields",
        help='Field names (taxonomy), e.g. --fields "Mathematics" "Dentistry"; '
        "every pair of them across domains gets candidates.",
    ),
    missing_pairs: int | None = typer.Option(
        None,
        "--missing-pairs",
        help="Draft for N cross-domain field pairs the bank lacks (least-used fields first).",
    ),
    out: Path = typer.Option(..., "--out", help="Review file to write (never a bank file)."),
    bank: list[Path] | None = typer.Option(
        None, "--bank", help="Bank the candidates join (default: bundled); repeatable."
    ),
    per_pair: int = typer.Option(1, "--per-pair", help="Candidates per field pair."),
    model: str | None = typer.Option(
        None,
        help=f"Provider string: local (default: the embedded model), local/PATH, {remote_usage()}.",
    ),
    backend: str | None = typer.Option(
        None, help="Deprecated: write --model PROVIDER/NAME.", hidden=True
    ),
    base_url: str | None = typer.Option(
        None, help="Server URL of an OpenAI-compatible model (default: its provider's)."
    ),
    temperature: float = typer.Option(0.8, help="Sampling temperature."),
    max_tokens: int = typer.Option(200, help="Longest reply in tokens."),
    seed: int = typer.Option(0, help="Sampling seed of the first attempt (then seed+1, ...)."),
    attempts: int = typer.Option(3, help="Tries per candidate before giving up."),
) -> None:
    """Propose candidate topics with a model and write them, checked, to a review file.

    \b
    Example: harness topics draft --fields "Mathematics" "Dentistry" --out drafts.yaml
    """

    if more_fields and fields is None:
        raise HarnessError("field names must follow --fields")
    chosen = [*fields, *(more_fields or [])] if fields is not None else None
    options = {"base_url": base_url} if base_url else {}
    result = draft_topics(
        out,
        fields=chosen,
        missing=missing_pairs,
        per_pair=per_pair,
        bank=bank or None,
        backend=backend,
        model=model,
        attempts=attempts,
        params=GenerationParams(temperature=temperature, max_tokens=max_tokens, seed=seed),
        **options,
    )
    typer.echo(result.summary())
    typer.echo(
        f"wrote candidates to {out}: review them, add verified links, then "
        "`harness topics check` the bank with them"
    )
