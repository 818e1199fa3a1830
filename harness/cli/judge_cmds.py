"""`harness judge`: blinded items and routing, packets out and in, status, automated reviewers.

One command, six modes. `MODES` declares once which options each mode uses: an option given to
a mode that does not use it is refused (one line, exit 2) before anything is read or written,
and `--help` lists the options in one section per set of modes, named from the same table.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from harness.cli._app import STUDY_HELP, app
from harness.cli._cutoff import check_cutoff
from harness.cli._next import echo_next
from harness.cli._panels import PanelCommand
from harness.collection.model_removal import removal_hint
from harness.errors import HarnessError, PartialWork
from harness.judge.automated.auto_review import (
    calibrate_automated,
    refuse_after_unblinding,
    refuse_unrouted,
    run_automated,
    unfinished,
)
from harness.judge.automated.auto_settings import check_accepted_reviewers, check_reviewer_models
from harness.judge.blinding.blind_stage import blind_study
from harness.judge.blinding.steps_model import capable_model_advice
from harness.judge.judge_settings import AutoSettings, BlindSettings
from harness.judge.packets.packet_import import ImportProblems, import_reviews
from harness.judge.review_status import adjudication_summary, review_status, status_summary
from harness.judge.routing.escalation import escalate
from harness.judge.routing.roster import load_roster
from harness.models.providers import model_flags
from harness.study.files import is_study
from harness.study.lock import study_lock
from harness.study.running import running_command
from harness.study.store import Study
from harness.study.tables.assignments import count_assignments
from harness.study.tables.collect_models import model_counts

if TYPE_CHECKING:
    import pandas as pd

#: mode flag -> the options (parameter names of `judge`) it uses; --study goes with every mode
MODES: dict[str, tuple[str, ...]] = {
    "--blind": (
        "reviewers",
        "k",
        "seed",
        "extract",
        "normalise",
        "model",
        "backend",
        "cutoff",
        "base_url",
        "concurrency",
        "same_topic",
        "review_what_exists",
        "controls",
        "bank_controls",
        "plan",
    ),
    "--import": ("files", "replace", "after_unblinding"),
    "--status": (),
    "--auto": (
        "sources",
        "threshold",
        "cutoff",
        "max_queries",
        "backend",
        "base_url",
        "concurrency",
        "after_unblinding",
        "accept_unsure",
    ),
    "--calibrate": ("sources", "cutoff", "max_queries", "backend", "base_url", "concurrency"),
    "--escalate": ("seed",),
}
#: mode flag -> its parameter name
MODE_FLAGS = {
    "--blind": "blind",
    "--import": "import_",
    "--status": "status",
    "--auto": "auto",
    "--calibrate": "calibrate",
    "--escalate": "escalate",
}
MODE_PANEL = "Modes (choose one)"
#: what a refusal adds where the option's absence from a mode is easy to misread
REFUSAL_HINTS = {
    ("model", "--auto"): "an automated reviewer's model is its roster method, e.g. "
    "method: llm:openai/gpt-4o-mini",
    ("model", "--calibrate"): "an automated reviewer's model is its roster method, e.g. "
    "method: llm:openai/gpt-4o-mini",
    ("threshold", "--calibrate"): "--threshold fixes the threshold that --calibrate chooses",
}


def modes_of(option: str) -> list[str]:
    """The modes that use `option`, in the table's order."""
    return [mode for mode, options in MODES.items() if option in options]


def panel(option: str) -> str:
    """The `--help` section of `option`: the modes that use it."""
    return " / ".join(modes_of(option))


class _JudgeCommand(PanelCommand):
    other_panel = "All modes"


@app.command(cls=_JudgeCommand)
def judge(
    ctx: typer.Context,
    study: Path = typer.Option(..., "--study", help=STUDY_HELP),
    blind: bool = typer.Option(
        False,
        "--blind",
        help="Make blinded items, route them to "
        "reviewers, write packets and the blinding commitment.",
        rich_help_panel=MODE_PANEL,
    ),
    import_: bool = typer.Option(
        False,
        "--import",
        help="Import returned packets: the FILES (.xlsx, or items.csv with searches.csv).",
        rich_help_panel=MODE_PANEL,
    ),
    status: bool = typer.Option(
        False,
        "--status",
        help="Per reviewer: assigned, returned, missing.",
        rich_help_panel=MODE_PANEL,
    ),
    auto: bool = typer.Option(
        False,
        "--auto",
        help="Run the automated reviewers of the roster "
        "(calibrating each first when the study has calibration controls).",
        rich_help_panel=MODE_PANEL,
    ),
    calibrate: bool = typer.Option(
        False,
        "--calibrate",
        help="Calibrate the automated "
        "reviewers' thresholds on the calibration-split controls "
        "(refused once a reviewer has reviewed other items).",
        rich_help_panel=MODE_PANEL,
    ),
    escalate: bool = typer.Option(
        False,
        "--escalate",
        help="Route the sample items whose adjudicators disagree to more adjudicators "
        "(plan adjudication.escalate) and write their packets of the new round.",
        rich_help_panel=MODE_PANEL,
    ),
    reviewers: Path | None = typer.Option(
        None,
        "--reviewers",
        help="Roster YAML; default: the roster already stored in the study.",
        rich_help_panel=panel("reviewers"),
    ),
    k: int = typer.Option(
        2,
        "--k",
        min=1,
        help="Distinct reviewers per item (below 2 only in a pilot).",
        rich_help_panel=panel("k"),
    ),
    seed: int | None = typer.Option(
        None,
        "--seed",
        min=0,
        help="Seed of the routing (default: the harness default seed).",
        rich_help_panel=panel("seed"),
    ),
    extract: bool = typer.Option(
        True,
        "--extract/--no-extract",
        help="Extract each output's core combination with a model (blind to condition).",
        rich_help_panel=panel("extract"),
    ),
    normalise: bool = typer.Option(
        True,
        "--normalise/--no-normalise",
        help="Rewrite outputs in a neutral style with a model (original kept).",
        rich_help_panel=panel("normalise"),
    ),
    model: str | None = typer.Option(
        None,
        "--model",
        help="Provider string of the model of the blinded steps, whose texts reviewers read "
        "(default: local, the embedded 135M one; name a capable model when the study tests a "
        "larger one, e.g. openai/gpt-4o-mini, vllm/NAME).",
        rich_help_panel=panel("model"),
    ),
    same_topic: bool = typer.Option(
        False,
        "--same-topic",
        help="Let a human reviewer see several items of one topic.",
        rich_help_panel=panel("same_topic"),
    ),
    review_what_exists: bool = typer.Option(
        False,
        "--review-what-exists",
        help="Blind a study whose collect is unfinished (refused without it); outputs "
        "collected later are never reviewed. Recorded in the manifest's routing record.",
        rich_help_panel=panel("review_what_exists"),
    ),
    controls: Path | None = typer.Option(
        None,
        "--controls",
        help="Controls file (YAML; see judging/controls.example.yaml).",
        rich_help_panel=panel("controls"),
    ),
    bank_controls: bool = typer.Option(
        True,
        "--bank-controls/--no-bank-controls",
        help="Build control items from the bank's known links, split by the cut-off's year.",
        rich_help_panel=panel("bank_controls"),
    ),
    plan: Path | None = typer.Option(
        None,
        "--plan",
        help="Analysis plan whose `controls:` numbers apply (default: the preregistered "
        "one, else the bundled one).",
        rich_help_panel=panel("plan"),
    ),
    files: list[Path] | None = typer.Argument(
        None,
        help="Returned packets (.xlsx, or items.csv with searches.csv).",
        show_default=False,
        rich_help_panel=panel("files"),
    ),
    replace: bool = typer.Option(
        False,
        "--replace",
        help="Replace a reviewer's earlier import with this corrected file.",
        rich_help_panel=panel("replace"),
    ),
    after_unblinding: bool = typer.Option(
        False,
        "--after-unblinding",
        help="Store reviews that come in after `harness analyze` unblinded the study (refused "
        "without it) as post-unblinding reviews: counted in the report, never analysed.",
        rich_help_panel=panel("after_unblinding"),
    ),
    accept_unsure: list[str] | None = typer.Option(
        None,
        "--accept-unsure",
        metavar="REVIEWER",
        help="Keep the reviews of this automated reviewer although its share of unsure "
        "reviews passes the plan's limit (outcome.max_unsure_share), which else discards "
        "them; recorded in the manifest and the report (repeatable).",
        rich_help_panel=panel("accept_unsure"),
    ),
    threshold: float | None = typer.Option(
        None,
        "--threshold",
        help="Match score for a published verdict, fixed instead of calibrated.",
        rich_help_panel=panel("threshold"),
    ),
    sources: list[str] | None = typer.Option(
        None,
        "--source",
        help="Literature source (repeatable; default: local corpus).",
        rich_help_panel=panel("sources"),
    ),
    max_queries: int = typer.Option(
        3, "--max-queries", min=1, help="Queries per item.", rich_help_panel=panel("max_queries")
    ),
    cutoff: str | None = typer.Option(
        None,
        "--cutoff",
        callback=check_cutoff,
        help="Publication-date cut-off (YYYY-MM-DD, or YYYY = 31 December): stated on the "
        "packets and stored by the first blinding; later runs use the stored one.",
        rich_help_panel=panel("cutoff"),
    ),
    backend: str | None = typer.Option(
        None,
        "--backend",
        help="Deprecated: name models by provider strings (--model openai/NAME; roster "
        "method: llm:openai/NAME). Still read as the provider of a bare model name.",
        rich_help_panel=panel("backend"),
    ),
    base_url: str | None = typer.Option(
        None,
        "--base-url",
        help="Server URL of every OpenAI-compatible model (default: its provider's; openai: "
        "$OPENAI_BASE_URL or api.openai.com).",
        rich_help_panel=panel("base_url"),
    ),
    concurrency: int | None = typer.Option(
        None,
        "--concurrency",
        min=1,
        help="Parallel requests to an OpenAI-compatible model (default 16).",
        rich_help_panel=panel("concurrency"),
    ),
) -> None:
    """Blind outputs and route them to reviewers; import returned packets; show progress.

    \b
    Example: harness judge --blind --study runs/s1 --reviewers judging/roster.example.yaml
    """
    mode = _mode(ctx)
    if mode == "--blind":
        _blind(study, _blind_settings(ctx.params))
    elif mode == "--import":
        _import(study, files or [], replace, after_unblinding)
    elif mode == "--status":
        _status(study)
    elif mode == "--calibrate":
        _calibrate(study, _auto_settings(ctx.params))
    elif mode == "--escalate":
        _escalate(study, seed)
    else:
        _auto(study, _auto_settings(ctx.params))
    echo_next(study)


def _mode(ctx: typer.Context) -> str:
    """The one mode asked for; an option of another mode is refused, not ignored."""

    chosen = [mode for mode, name in MODE_FLAGS.items() if ctx.params[name]]
    if len(chosen) != 1:
        raise HarnessError(
            "choose one of --blind, --import FILE..., --status, --auto, "
            "--calibrate, --escalate" + (f" (got {', '.join(chosen)})" if chosen else "")
        )
    mode = chosen[0]
    for name in _given(ctx):
        if name != "study" and name not in MODE_FLAGS.values() and name not in MODES[mode]:
            hint = REFUSAL_HINTS.get((name, mode))
            raise HarnessError(
                f"{_spelled(ctx, name)} belongs to {', '.join(modes_of(name))}; not to {mode}"
                + (f" ({hint})" if hint else "")
            )
    return mode


def _given(ctx: typer.Context) -> list[str]:
    """The parameters given on the command line (not left at their defaults), in `judge`'s
    order."""
    given = []
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name or "")
        if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
            given.append(param.name or "")
    return given


def _spelled(ctx: typer.Context, name: str) -> str:
    """A parameter as the user typed it: `--no-extract`, `--k`, or a file argument."""
    param = next(p for p in ctx.command.params if p.name == name)
    value = ctx.params[name]
    if param.param_type_name == "argument":
        return f"argument {str(value[0])!r} (FILES)"
    secondary = getattr(param, "secondary_opts", [])
    return secondary[0] if secondary and value is False else param.opts[0]


def _blind_settings(params: dict[str, Any]) -> BlindSettings:
    """--blind's settings from its options (the model named by its provider string)."""

    spec = model_flags(params["model"], params["backend"])  # the CLI's spellings, noted
    special = ("model", "backend", "same_topic")
    return BlindSettings.from_options(
        model=spec.key,
        distinct_topics=not params["same_topic"],
        **{name: params[name] for name in MODES["--blind"] if name not in special},
    )


def _auto_settings(params: dict[str, Any]) -> AutoSettings:
    """--auto's or --calibrate's settings from their options."""

    return AutoSettings.from_options(**{name: params[name] for name in MODES["--auto"]})


def _blind(study: Path, settings: BlindSettings) -> None:
    # a bad roster is refused before the lock and the command log (a missing study first)
    if settings.reviewers is not None and is_study(study):
        load_roster(settings.reviewers)
    if is_study(study):
        steps_on = settings.extract or settings.normalise
        advice = capable_model_advice(study, settings.model, steps_on)
        if advice is not None:
            typer.echo(advice, err=True)
    # the lock before the store opens: opening may migrate the schema, which is a write
    with study_lock(study, running_command()), Study.open(study) as opened:
        try:
            result = blind_study(opened, settings, progress=True)
        except HarnessError as error:
            raise _naming_models(opened, error) from None
    typer.echo(result.summary())


#: refusals of `judge --blind` that count the items, which a model collected by mistake inflates
_ITEM_COUNTS = frozenset({"capacity", "reviewers", "adjudication.per_item"})


def _naming_models(study: Study, error: HarnessError) -> HarnessError:
    """A refusal of an unrouted study for outputs still pending, or for more items than the
    roster can take, names the study's models and how to take one out (`collect --remove`)."""
    pending = "still pending" in error.message
    if not (pending or error.column in _ITEM_COUNTS):
        return error
    if count_assignments(study) or (not pending and len(model_counts(study)) < 2):
        return error
    return HarnessError(
        f"{error.message}; {removal_hint(study.path)}",
        file=error.file,
        row=error.row,
        column=error.column,
    )


def _import(study: Path, files: list[Path], replace: bool, after_unblinding: bool) -> None:
    with Study.open(study) as opened:
        try:
            frame = import_reviews(
                opened, files, replace=replace, after_unblinding=after_unblinding
            )
        except ImportProblems as error:  # the problems a line each (an unfilled file's first)
            listed = error.listing()
            for line in listed:
                sys.stderr.write(f"{line}\n")
            shown = "listed above" if len(listed) == len(error.problems) else "summarised above"
            raise HarnessError(f"{error.summary} ({shown}){error.unfilled}") from None
    typer.echo(frame.drop(columns="sha256").to_string(index=False))
    for row in frame.to_dict("records"):
        if row["searches_before_packet"]:
            typer.echo(
                f"warning: {row['file']}: {row['searches_before_packet']} search row(s) dated before "
                "the packet was made; a search for an item is run after its packet arrives: "
                "check the Date column (the rows are stored as given)",
                err=True,
            )


def _escalate(study: Path, seed: int | None) -> None:
    with study_lock(study, running_command()), Study.open(study) as opened:
        result = escalate(opened, seed)
    typer.echo(result.summary())
    if result.packets:
        folders = sorted({str(p.parent) for p in result.packets})
        typer.echo(f"packets of round {result.round_}: {', '.join(folders)}")


def _status(study: Path) -> None:
    with Study.open(study) as opened:
        frame = review_status(opened)
        gold = adjudication_summary(opened)
    if not frame.empty:
        typer.echo(frame.to_string(index=False))
    typer.echo(status_summary(frame))
    if gold is not None:
        typer.echo(gold)


def _auto(study: Path, settings: AutoSettings) -> None:

    # the settings were checked when built; the roster's models before the study is opened
    check_reviewer_models(study, settings.backend)
    check_accepted_reviewers(study, settings.accept_unsure)
    with Study.open(study) as opened:
        refuse_unrouted(opened)  # before the lock is taken
        refuse_after_unblinding(opened, settings.after_unblinding)
        frame = run_automated(opened, settings)
    typer.echo(_fitted(frame) if not frame.empty else NO_AUTOMATED)
    if (left := unfinished(frame)) is not None:
        raise PartialWork(left)


NO_AUTOMATED = "No automated reviewers in the roster."
#: the least width of a shortened `failed` cell
_FAILED_MIN = 24


def _fitted(frame: pd.DataFrame) -> str:
    """The reviewers' table with each `failed` line cut to what the terminal's width leaves for
    it (the whole line ends the command, once)."""
    columns = shutil.get_terminal_size((100, 24)).columns
    if "failed" not in frame or not (frame["failed"] != "").any():
        return frame.to_string(index=False)
    others = frame.drop(columns="failed").to_string(index=False).splitlines()[0]
    room = max(_FAILED_MIN, columns - len(others) - 2)
    cut = [
        _cut(_unnamed(text, reviewer, method), room)
        for text, reviewer, method in zip(
            frame["failed"], frame["reviewer_id"], frame["method"], strict=True
        )
    ]
    return frame.assign(failed=cut).to_string(index=False)


def _unnamed(text: str, reviewer_id: str, method: str) -> str:
    """A failure's line without the reviewer and method its row names already."""
    return text.removeprefix(f"reviewer {reviewer_id!r} (method: {method}): ")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _calibrate(study: Path, settings: AutoSettings) -> None:
    check_reviewer_models(study, settings.backend)
    with Study.open(study) as opened:
        refuse_unrouted(opened)  # before the lock is taken
        frame, lines = calibrate_automated(opened, settings)
    if frame.empty:
        typer.echo(NO_AUTOMATED)
        return
    failed = frame[frame["rule"] == "failed"]
    # a failure's line ends the command, once
    for line in lines:
        if not _failed_line(line, failed):
            typer.echo(line)
    if not failed.empty:
        said = "; ".join(f"{row.reviewer_id}: {row.failed}" for row in failed.itertuples())
        raise PartialWork(
            f"calibration of {len(failed)} of {len(frame)} automated reviewer(s) failed; {said}"
        )


def _failed_line(line: str, failed: pd.DataFrame) -> bool:
    return any(line.startswith(f"{r}: calibration failed: ") for r in failed["reviewer_id"])
