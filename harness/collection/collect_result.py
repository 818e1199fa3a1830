"""What one `collect` run did for one model (`harness.collect` returns it)."""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field

from harness.collection.stopped_models import STOPPED, stop_advice
from harness.models.retry import NO_SERVER, NOT_JSON, REFUSED
from harness.study.records import JsonObject


class CollectResult(BaseModel):
    """What one `collect` run did for one model; `summary()` prints it."""

    model_config = ConfigDict(protected_namespaces=())  # model_key: pydantic < 2.10 warns

    study: str
    model_key: str
    backend: str
    model: str
    params: JsonObject
    samples: int
    total: int  # prompts x samples
    done_before: int  # completions (ok or failed) already stored when the run began
    completed: int  # ok completions written by this run
    failed: int  # failed completions written by this run
    retries: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    elapsed_s: float
    #: None (finished), "max_cost", "interrupted" or "refused" (several requests in a row
    #: failed alike for a reason no retry heals, `refusal` its kind (`retry.REFUSED`, NO_SERVER,
    #: NOT_JSON), `refused` the HTTP status, `stop_reason` the server's words: the rest were
    #: not sent)
    stopped: str | None = None
    refused: int | None = None
    refusal: str | None = None
    stop_reason: str | None = None
    first_error: str | None = None  # the reason of this run's first failure, the server's words
    outputs_ok: int  # of this model, in the store after the run
    outputs_failed: int
    notes: list[str] = Field(default_factory=list)

    @property
    def pending(self) -> int:
        return self.total - self.outputs_ok - self.outputs_failed

    def summary(self) -> str:
        cost = "unknown" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        lines = [
            f"collect: {self.model_key}, {self.samples} sample(s) per prompt, "
            f"params {json.dumps(self.params, sort_keys=True)}",
            f"  this run: {self.completed} completed, {self.failed} failed, {self.retries} "
            f"retries, {self.prompt_tokens + self.completion_tokens} tokens, cost {cost}, "
            f"{self.elapsed_s:.1f} s",
            f"  study: {self.outputs_ok} ok, {self.outputs_failed} failed, {self.pending} pending "
            f"of {self.total}",
        ]
        if self.stopped == "max_cost":
            lines.append(
                "  stopped: the cost limit was reached (a request is sent only if its "
                "worst-case cost fits what is left); rerun to continue"
            )
        elif self.stopped == "interrupted":
            lines.append("  stopped: interrupted; everything done so far is kept, rerun to resume")
        if self.first_error:
            count = f"first of {self.failed} failures" if self.failed > 1 else "1 failure"
            lines.append(f"  {self.model_key}: {self.first_error} ({count})")
        if self.stopped == STOPPED:
            lines.append(
                f"  stopped: {self._stop_cause()}, so the other {self.pending} were not sent "
                f"and stay pending; {self._refusal_advice()}"
            )
        if self.outputs_failed and not self.stopped:
            lines.append("  failed completions keep their reason; rerun with --retry-errors")
        lines.extend(f"  note: {note}" for note in self.notes)
        return "\n".join(lines)

    def _stop_cause(self) -> str:
        if self.refusal == NO_SERVER:
            return f"no server answered {self.failed} requests in a row"
        if self.refusal == NOT_JSON:
            return f"the server did not answer {self.failed} requests in a row in JSON"
        return f"the server refused {self.failed} requests in a row alike"

    def _refusal_advice(self) -> str:
        return stop_advice(
            self.study, self.model_key, self.model, self.refusal or REFUSED, self.refused
        )
