"""Models whose latest `collect` stopped because the server failed several requests in a row
for a reason no retry heals (a model name it does not know, nothing listening at its address, an
HTML page instead of JSON), and what to do about each: one text for `collect`'s summary and for
`harness status` alike. Reads the manifest's record only (no backend, no HTTP client).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.models.retry import NO_SERVER, NOT_JSON, REFUSED
from harness.study.manifest_sections import Collect

#: `CollectResult.stopped` (and a run's `stopped` in the manifest) of such a run
STOPPED = "refused"


@dataclass(frozen=True)
class StoppedModel:
    """A model whose latest run stopped on failures no retry heals."""

    key: str
    model: str  # the model's name as the server is asked for it
    lasting: str  # retry.REFUSED, NO_SERVER or NOT_JSON
    status: int | None  # the HTTP status of the answers, None without one
    reason: str  # the server's words (or "connection refused at URL")


def stopped_models(collect: Collect | None) -> list[StoppedModel]:
    """The study's models (those still in it) whose latest recorded run stopped so."""
    if collect is None or not collect.models:
        return []
    found = []
    for key, section in collect.models.items():
        runs = [r for r in section.runs or [] if isinstance(r, dict)]
        last = runs[-1] if runs else {}
        if last.get("stopped") != STOPPED:
            continue
        status = last.get("refused")
        found.append(
            StoppedModel(
                key,
                section.model or key,
                str(last.get("refusal") or REFUSED),
                status if isinstance(status, int) else None,
                str(last.get("stop_reason") or last.get("first_error") or "no reason recorded"),
            )
        )
    return found


def stop_advice(study: str | Path, key: str, model: str, lasting: str, status: int | None) -> str:
    """What to do next, with the commands to type."""
    remove = f"harness collect --study {study} --remove {key}"
    retry = f"harness collect --study {study} --retry-errors"
    if lasting == NO_SERVER:
        return (
            f"start the model's server, or give its address with --base-url, then `{retry}` "
            f"(`{remove}` takes the model out of the study)"
        )
    if lasting == NOT_JSON:
        return (
            "the address answers, but not as an OpenAI-compatible server (a web page or proxy): "
            f"check --base-url (it usually ends in /v1), then `{retry}` (`{remove}` takes the "
            "model out of the study)"
        )
    if status == 404:
        return (
            f"the server knows no model {model!r}: collect the right name with --model (and "
            f"check --base-url), and take this one out with `{remove}`"
        )
    if status in (401, 403):
        return (
            f"check OPENAI_API_KEY and the server's access to this model, then `{retry}` "
            f"(`{remove}` takes the model out of the study)"
        )
    return (
        "no request can succeed as it is sent: fix what the server names (the model, a "
        f"--model-arg, --base-url), then `{retry}` (`{remove}` takes the model out of the study)"
    )


def stop_line(study: str | Path, stopped: StoppedModel) -> str:
    """One line: the model, why its collect stopped, and what to do."""
    advice = stop_advice(study, stopped.key, stopped.model, stopped.lasting, stopped.status)
    return f"{stopped.key}: collect stopped on {stopped.reason}; {advice}"
