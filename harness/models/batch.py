"""The OpenAI Batch API: write JSONL, upload it, create the batch, poll, download, ingest.

Resumable: every batch is written to a `BatchState` (the collect stage keeps it in the study's
meta table) before and right after it is created, so a rerun after an interruption picks up the
running batch instead of paying for a second one. Results of a stored batch are taken again for
any request still pending (a crash may have come between download and commit); a request that
failed inside an already ingested batch is submitted afresh.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Final, NotRequired, Protocol, TypedDict, TypeVar

from pydantic import JsonValue

from harness.errors import HarnessError
from harness.models.base import ChatRequest, Completion, GenerationParams, failed
from harness.models.openai_replies import check_reply, classify, sub_object, to_completions
from harness.models.retry import AttemptError, RetriesExhausted, call_with_retry
from harness.study.clock import utc_now
from harness.study.records import JsonObject

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types import Batch

    from harness.models.openai_api import OpenAIBackend

T = TypeVar("T")

ENDPOINT: Final = "/v1/chat/completions"
MAX_REQUESTS = 50_000  # per batch, as the API allows
MAX_BYTES = 190 * 2**20  # input files may be up to 200 MB
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
TOKEN_KEY = "harness_token"


class BatchRecord(TypedDict):
    """One submitted batch as a `BatchState` remembers it (JSON)."""

    id: str | None  # None until the server has created it
    token: str  # in the batch's metadata, to find it again after a crash
    input_file_id: str
    keys: list[str]  # the requests it serves
    identity: JsonObject  # the model and parameters: a batch serves only its own
    submitted_at: str
    ingested: NotRequired[bool]


class BatchState(Protocol):
    """Where submitted batches are remembered between runs (a list of JSON records)."""

    def load(self) -> list[BatchRecord]: ...

    def save(self, batches: list[BatchRecord]) -> None: ...


class MemoryBatchState:
    """Remembers batches for the life of the process only."""

    def __init__(self) -> None:
        self.batches: list[BatchRecord] = []

    def load(self) -> list[BatchRecord]:
        return [BatchRecord(**b) for b in self.batches]

    def save(self, batches: list[BatchRecord]) -> None:
        self.batches = [BatchRecord(**b) for b in batches]


def identity(model: str, params: GenerationParams) -> JsonObject:
    return {"model": model, "params": dict[str, JsonValue](params.as_dict())}


def request_lines(
    backend: OpenAIBackend, requests: list[ChatRequest], params: GenerationParams
) -> list[bytes]:
    return [
        (
            json.dumps(
                {
                    "custom_id": r.key,
                    "method": "POST",
                    "url": ENDPOINT,
                    "body": backend.body(r, params),
                }
            )
            + "\n"
        ).encode()
        for r in requests
    ]


def chunked(requests: list[ChatRequest], lines: list[bytes]) -> list[list[int]]:
    """Indices of requests per batch, within the API's count and size limits."""
    groups: list[list[int]] = [[]]
    size = 0
    for i, line in enumerate(lines):
        if groups[-1] and (len(groups[-1]) >= MAX_REQUESTS or size + len(line) > MAX_BYTES):
            groups.append([])
            size = 0
        groups[-1].append(i)
        size += len(line)
    return [g for g in groups if g]


class _Run:
    """One call of `run_batches`: the requests still pending and where results go."""

    def __init__(
        self,
        backend: OpenAIBackend,
        requests: list[ChatRequest],
        params: GenerationParams,
        emit: Callable[[Completion], None],
    ) -> None:
        self.backend = backend
        self.params = params
        self.emit = emit
        self.pending = {r.key: r for r in requests}
        self.state: BatchState = backend.batch_state or MemoryBatchState()
        self.ident = identity(backend.model, params)
        self.records = [
            b
            for b in self.state.load()
            if b.get("identity") == self.ident and set(b.get("keys", ())) & self.pending.keys()
        ]
        self.state.save(self.records)

    async def api(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        async def attempt() -> T:
            try:
                return await call()
            except Exception as error:
                raise self.classify(error) from None

        def on_retry(_: AttemptError) -> None:
            self.backend.stats.retries += 1

        try:
            result, _ = await call_with_retry(attempt, self.backend.policy, on_retry=on_retry)
        except RetriesExhausted as error:
            raise HarnessError(f"Batch API: {what} failed: {error.reason}") from None
        return result

    def classify(self, error: Exception) -> AttemptError:
        """`classify`, and under `collect` (`stop_on_refusals`) a failure no retry heals (no
        server at the address, an HTML page) not retried: the run stops on it at once."""
        failure = classify(error, self.backend.redact)
        if failure.lasting and self.backend.stop_on_refusals:
            failure.retryable = False
        return failure

    def save(self) -> None:
        self.state.save(self.records)


async def run_batches(
    backend: OpenAIBackend,
    requests: list[ChatRequest],
    params: GenerationParams,
    emit: Callable[[Completion], None],
) -> None:
    """Serve `requests` through the Batch API, resuming batches recorded in the backend's state."""
    run = _Run(backend, requests, params, emit)
    client = backend.client()
    for record in list(run.records):
        if record.get("id") is None:
            await _find_created(run, client, record)
        batch_id = record.get("id")
        if batch_id:
            backend.stats.batch_ids.append(batch_id)
    await asyncio.gather(*(_settle(run, client, r) for r in run.records if r.get("id")))
    todo = [r for r in requests if r.key in run.pending]
    if not todo:
        return
    lines = request_lines(backend, todo, params)
    created = [
        await _submit(run, client, [todo[i] for i in group], [lines[i] for i in group])
        for group in chunked(todo, lines)
    ]
    await asyncio.gather(*(_settle(run, client, r) for r in created))


async def _find_created(run: _Run, client: AsyncOpenAI, record: BatchRecord) -> None:
    """A crash may have come between creating a batch and storing its id: look it up by token."""
    batch = await _lookup(run, client, record["token"])
    if batch is None:
        run.records.remove(record)
    else:
        record["id"] = batch.id
    run.save()


async def _submit(
    run: _Run, client: AsyncOpenAI, todo: list[ChatRequest], lines: list[bytes]
) -> BatchRecord:
    token = uuid.uuid4().hex
    data = b"".join(lines)
    upload = await run.api(
        "uploading requests",
        lambda: client.files.create(
            file=(f"harness-{token}.jsonl", data, "application/jsonl"), purpose="batch"
        ),
    )
    record = BatchRecord(
        id=None,
        token=token,
        input_file_id=upload.id,
        keys=[r.key for r in todo],
        identity=run.ident,
        submitted_at=utc_now(),
    )
    run.records.append(record)
    run.save()  # before creating: a crash right after create can still find the batch by token
    batch = await _create(run, client, upload.id, token)
    record["id"] = batch.id
    run.save()
    run.backend.stats.batch_ids.append(batch.id)
    return record


async def _create(run: _Run, client: AsyncOpenAI, file_id: str, token: str) -> Batch:
    """Create a batch. Creating is not idempotent: after a failed attempt (which the server may
    have carried out all the same) look for the batch by its token before trying again."""
    policy = run.backend.policy
    for attempt in range(1, policy.max_attempts + 1):
        try:
            async with asyncio.timeout(policy.timeout):
                return await client.batches.create(
                    input_file_id=file_id,
                    endpoint=ENDPOINT,
                    completion_window="24h",
                    metadata={TOKEN_KEY: token},
                )
        except Exception as caught:
            error = run.classify(caught)
        found = await _lookup(run, client, token)
        if found is not None:
            return found
        if not error.retryable or attempt == policy.max_attempts:
            raise HarnessError(f"Batch API: creating the batch failed: {error.reason}")
        run.backend.stats.retries += 1
        await asyncio.sleep(policy.delay(attempt, error.retry_after))
    raise AssertionError("unreachable")


async def _lookup(run: _Run, client: AsyncOpenAI, token: str) -> Batch | None:
    page = await run.api("listing batches", lambda: client.batches.list(limit=100))
    batches: list[Batch] = getattr(page, "data", []) or []
    for batch in batches:
        if (batch.metadata or {}).get(TOKEN_KEY) == token:
            return batch
    return None


async def _settle(run: _Run, client: AsyncOpenAI, record: BatchRecord) -> None:
    """Wait for a batch to end, then emit the results of every request it still owes."""
    batch = await _wait(run, client, str(record["id"]))  # settled once it has an id
    results: dict[JsonValue, JsonObject] = {}
    for file_id in (batch.output_file_id, batch.error_file_id):
        if file_id:
            content = await run.api("downloading results", partial(client.files.content, file_id))
            for line in content.content.decode("utf-8").splitlines():
                if line.strip():
                    item: JsonObject = json.loads(line)
                    results[item.get("custom_id")] = item
    started, finished = _iso(batch.created_at), _iso(_ended_at(batch))
    latency = max(0.0, float(_ended_at(batch) - batch.created_at))
    for key in record["keys"]:
        request = run.pending.get(key)
        if request is None:
            continue
        completions = _ingest(run, request, results.get(key), started, finished, latency)
        if completions is None or not any(c.ok for c in completions):
            if record.get("ingested"):
                continue  # failed in a batch already recorded: leave it for a fresh batch
            completions = completions or failed(
                request,
                _missing_reason(batch),
                started_at=started,
                finished_at=finished,
                latency_s=latency,
            )
        for completion in completions:
            run.emit(completion)
        del run.pending[key]
    record["ingested"] = True
    run.save()


async def _wait(run: _Run, client: AsyncOpenAI, batch_id: str) -> Batch:
    interval = run.backend.poll_interval
    ceiling = max(interval, 60.0)
    while True:
        batch = await run.api("polling", lambda: client.batches.retrieve(batch_id))
        counts = batch.request_counts
        done = f" {counts.completed + counts.failed}/{counts.total}" if counts else ""
        run.backend.stats.status = f"batch {batch_id}: {batch.status}{done}"
        if batch.status in TERMINAL:
            return batch
        await asyncio.sleep(interval)
        interval = min(ceiling, interval * 1.5)


def _ingest(
    run: _Run,
    request: ChatRequest,
    item: JsonObject | None,
    started: str,
    finished: str,
    latency: float,
) -> list[Completion] | None:
    """Completions from one output line; failed ones for an error line; None when absent."""
    if item is None:
        return None
    response = sub_object(item.get("response"))
    body = response.get("body") or {}
    if response.get("status_code") == 200:
        try:
            reply = check_reply(body)
        except AttemptError as error:
            reason = f"batch output line: {error.reason}"
        else:
            return to_completions(
                request,
                reply,
                started_at=started,
                finished_at=finished,
                latency_s=latency,
                attempts=1,
                cost=run.backend.cost,
                batch=True,
            )
    else:
        failure = sub_object(
            item.get("error") or (body.get("error") if isinstance(body, dict) else None)
        )
        message = failure.get("message", "batch request failed")
        reason = f"HTTP {response.get('status_code')}: {message}"
    return failed(
        request,
        run.backend.redact(reason),
        started_at=started,
        finished_at=finished,
        latency_s=latency,
    )


def _missing_reason(batch: Batch) -> str:
    if batch.status == "completed":
        return "batch completed without a result for this request"
    errors = getattr(batch, "errors", None)
    detail = ""
    if errors is not None and getattr(errors, "data", None):
        detail = ": " + "; ".join(str(e.message) for e in errors.data if e.message)[:300]
    return f"batch {batch.status} before this request ran{detail}"


def _ended_at(batch: Batch) -> int:
    for name in ("completed_at", "expired_at", "failed_at", "cancelled_at"):
        value = getattr(batch, name, None)
        if value:
            return int(value)
    return int(time.time())


def _iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
