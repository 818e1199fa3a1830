"""The `openai` backend: chat completions from OpenAI or any compatible server (vLLM, Ollama,
llama.cpp server, TGI) through the official async client.

Concurrency adapts to rate limiting (limits.py), failures are retried with backoff (retry.py),
costs come from the price table (prices.py), and large runs can go through the Batch API
(batch.py). The client's own retries are off, so every attempt is ours and is counted.

Chat requests go out on the HTTP client the `openai` package is built on, one client per
replica (replicas.py), without the `openai` client's per-request machinery, which cost about a
sixth of the throughput against a fast server; failures are turned into the `openai` package's
own exception types, so they are classified as that client's would be (openai_replies.py reads
replies and errors, for single requests and the Batch API alike). The Batch API uses the
`openai` client.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import os
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from pydantic import JsonValue

from harness.errors import HarnessError, PartialWork
from harness.models._loop import LoopThread
from harness.models._redact import public_url, redact
from harness.models.base import (
    BackendStats,
    ChatRequest,
    Completion,
    GenerationParams,
    ModelAPI,
    failed,
    unit_seed,
    validate,
)
from harness.models.batch import BatchState, run_batches
from harness.models.budget import worst_case_cost
from harness.models.limits import AdaptiveConcurrency, RateLimits
from harness.models.openai_replies import (
    check_reply,
    classify,
    error_message,
    int_or_none,
    missing_choice,
    sub_object,
    to_completions,
)
from harness.models.prices import PriceTable
from harness.models.replicas import Replica, ReplicaPool, split_urls
from harness.models.retry import (
    NO_SERVER,
    NOT_JSON,
    REFUSED,
    AttemptError,
    RetriesExhausted,
    RetryPolicy,
    call_with_retry,
)
from harness.models.settings import OpenAISettings
from harness.study.clock import utc_now
from harness.study.records import JsonObject

if TYPE_CHECKING:
    from openai import AsyncOpenAI

log = logging.getLogger(__name__)

OPENAI_URL = "https://api.openai.com/v1"
#: Sent when a self-hosted server needs no key (the convention of vLLM and others).
NO_KEY = "EMPTY"
#: Longest wait for the answer to a probe of a replica that was taken out (seconds).
PROBE_TIMEOUT = 10.0
#: Failures in a row, of one kind that no retry heals (`retry.REFUSED`: a 4xx answer such as a
#: model the server does not know, 404, or a key it does not take, 401; `retry.NO_SERVER`:
#: connection refused; `retry.NOT_JSON`: an HTML page), that stop a run when the caller asks
#: (`stop_on_refusals`); the requests not yet sent stay pending.
REFUSALS_TO_STOP = 3


class OpenAIBackend(ModelAPI):
    """Chat completions over the OpenAI wire format, `n` samples per request.

    `base_url` is one URL or several replicas of the model (a list, or URLs separated by
    commas); `concurrency` is the number of requests in flight per replica.
    It has every optional capability: it honours `budget`, keeps `stats`, prices completions
    with `prices`, reports its server's `public_base_url`, may go through the Batch API
    (`batch_api`), and `close` shuts its connections and event loop.
    """

    name = "openai"
    prices: PriceTable
    stats: BackendStats

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | Sequence[str] | None = None,
        concurrency: int = 16,
        rpm: float | None = None,
        tpm: float | None = None,
        timeout: float = 120.0,
        max_attempts: int = 6,
        base_delay: float = 0.5,
        max_delay: float = 30.0,
        prices: PriceTable | str | Path | None = None,
        batch_api: bool = False,
        batch_state: BatchState | None = None,
        poll_interval: float = 1.0,
        token_param: str = "max_tokens",
        extra_body: Mapping[str, JsonValue] | None = None,
        omit: frozenset[str] = frozenset(),
    ) -> None:
        if not model:
            raise HarnessError("the openai backend needs a model name (--model)")
        if concurrency < 1:
            raise HarnessError(f"concurrency must be at least 1 (got {concurrency})")
        if timeout <= 0 or max_attempts < 1:
            raise HarnessError("timeout must be positive and max_attempts at least 1")
        self.model = model
        # checked before anything is sent or recorded
        self.base_urls = split_urls(base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL)
        self.base_url = self.base_urls[0]
        if batch_api and len(self.base_urls) > 1:
            raise HarnessError(
                "the Batch API goes to one server: give one base URL with --batch-api",
                column="base_url",
            )
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key and self.base_url == OPENAI_URL:
            raise HarnessError("OPENAI_API_KEY is not set (export it; keys are never stored)")
        self._api_key = key or NO_KEY
        self.concurrency = concurrency
        self.policy = RetryPolicy(
            max_attempts=max_attempts, base_delay=base_delay, max_delay=max_delay, timeout=timeout
        )
        self.prices = prices if isinstance(prices, PriceTable) else PriceTable.load(prices)
        self.batch_api = batch_api
        self.batch_state = batch_state
        self.poll_interval = poll_interval
        self.token_param = token_param
        self.extra_body = extra_body or {}
        self.omit = omit  # sampling parameters never sent (reasoning models reject them)
        self.stats = BackendStats(concurrency=concurrency)
        self.budget = None  # set by the caller to cap the cost of direct requests
        self._rates = (rpm, tpm)
        self._limits = RateLimits(rpm, tpm)
        self._limiter = AdaptiveConcurrency(concurrency * len(self.base_urls))
        self._loop = LoopThread("harness-openai")
        self._client: AsyncOpenAI | None = None
        self._pool: ReplicaPool | None = None
        self._refusals = RefusalWatch()
        #: per replica URL, the `lasting` kind of the failure that last took it out
        self._faults: dict[str, str | None] = {}
        self._replica_record: JsonObject = {}  # per replica, after a run

    @classmethod
    def from_settings(
        cls,
        model: str,
        settings: OpenAISettings,
        *,
        api_key: str | None = None,
        batch_state: BatchState | None = None,
    ) -> OpenAIBackend:
        s = settings
        return cls(
            model,
            api_key=api_key,
            base_url=s.base_url,
            concurrency=s.concurrency,
            rpm=s.rpm,
            tpm=s.tpm,
            timeout=s.timeout,
            max_attempts=s.max_attempts,
            base_delay=s.base_delay,
            max_delay=s.max_delay,
            prices=s.prices,
            batch_api=s.batch_api,
            batch_state=batch_state,
            poll_interval=s.poll_interval,
            token_param=s.token_param,
            extra_body=dict(s.extra_body),
            omit=s.omit,
        )

    # -- public ------------------------------------------------------------------------------
    @property
    def public_base_url(self) -> str | None:
        return public_url(self.base_url)

    @property
    def replica_urls(self) -> list[str]:
        """Every replica's URL as it may be recorded (without credentials)."""
        return [public_url(u) or u for u in self.base_urls]

    def replica_record(self) -> JsonObject:
        return self._replica_record

    def complete(
        self, requests: Sequence[ChatRequest], params: GenerationParams
    ) -> Iterator[Completion]:
        """Yield completions as they finish; failures come back with `error` set."""
        validate(requests, params)
        if not requests:
            return
        if self.batch_api:

            def produce(emit: Callable[[Completion], None]) -> Awaitable[None]:
                return run_batches(self, list(requests), params, emit)
        else:

            def produce(emit: Callable[[Completion], None]) -> Awaitable[None]:
                return self._run(list(requests), params, emit)

        yield from self._loop.stream(produce)

    def close(self) -> None:
        """Close connections and stop the loop; the backend can still be used afterwards."""
        for closing in (
            self._client.close() if self._client is not None else None,
            self._close_pool() if self._pool is not None else None,
        ):
            if closing is not None:
                with contextlib.suppress(Exception):  # closing is best effort
                    self._loop.run(closing, timeout=5)
        self._client = None
        self._loop.close()
        # their asyncio primitives belonged to the stopped loop
        self._limits = RateLimits(*self._rates)
        self._limiter = AdaptiveConcurrency(self.concurrency * len(self.base_urls))

    def redact(self, text: str) -> str:
        return redact(text, (self._api_key,))

    # -- inside the loop ---------------------------------------------------------------------
    def client(self) -> AsyncOpenAI:
        """The async client (created inside the loop; its own retries are off)."""
        if self._client is None:
            import openai

            size = self.concurrency + 8
            # the Limits class of whichever httpx package this openai release is built on
            limits = type(openai.DEFAULT_CONNECTION_LIMITS)
            http = openai.DefaultAsyncHttpxClient(
                limits=limits(max_connections=size, max_keepalive_connections=size)
            )
            self._client = openai.AsyncOpenAI(
                api_key=self._api_key,
                base_url=self.base_url,
                max_retries=0,
                timeout=self.policy.timeout,
                http_client=http,
            )
        return self._client

    def body(self, request: ChatRequest, params: GenerationParams) -> JsonObject:
        """The chat-completions request body (also the body of each Batch API line)."""
        messages = cast(list[JsonValue], request.messages)  # role and content texts
        body: JsonObject = {"model": self.model, "messages": messages}
        for name in ("temperature", "top_p"):
            if name not in self.omit:
                body[name] = getattr(params, name)
        body[self.token_param] = params.max_tokens
        body.update(self.extra_body)
        if request.samples > 1:
            body["n"] = request.samples
        if params.seed is not None and "seed" not in self.omit:
            # the first sample's own seed (see unit_seed)
            body["seed"] = unit_seed(
                params.seed, request.seed_source, request.first_sample, bits=31
            )
        return body

    def pool(self) -> ReplicaPool:
        """The replicas of the model (made inside the loop, with their HTTP clients)."""
        if self._pool is None:
            self._pool = ReplicaPool(self.base_urls, self.concurrency, self._probe)
        return self._pool

    async def _close_pool(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()

    def _http(self, replica: Replica) -> Any:
        """The keep-alive HTTP client of one replica, as many connections as requests."""
        if replica.client is None:
            import openai

            size = self.concurrency + 8
            limits = type(openai.DEFAULT_CONNECTION_LIMITS)
            replica.client = openai.DefaultAsyncHttpxClient(
                limits=limits(max_connections=size, max_keepalive_connections=size),
                timeout=self.policy.timeout,
                headers=self._headers(openai.__version__),
            )
        return replica.client

    def _headers(self, version: str) -> dict[str, str]:
        """What the `openai` client sends with each request, organisation and project included
        (from the environment, as that client reads them)."""
        headers = {
            "Authorization": f"Bearer {self._api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"harness (openai-python {version})",
        }
        for name, variable in (
            ("OpenAI-Organization", "OPENAI_ORG_ID"),
            ("OpenAI-Project", "OPENAI_PROJECT_ID"),
        ):
            if value := os.environ.get(variable):
                headers[name] = value
        return headers

    async def _post(self, replica: Replica, payload: bytes) -> JsonValue:
        """POST /chat/completions to one replica: the reply's JSON, or the exception the
        `openai` client would have raised."""
        import openai

        http = _httpx()
        url = replica.url + "/chat/completions"
        try:
            response = await self._http(replica).post(url, content=payload)
        except http.TimeoutException as error:
            raise openai.APITimeoutError(request=http.Request("POST", url)) from error
        except http.TransportError as error:
            raise openai.APIConnectionError(request=http.Request("POST", url)) from error
        if response.status_code >= 400:
            try:
                parsed = response.json()
            except ValueError:
                parsed = response.text or None
            data = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
            raise openai.APIStatusError(
                f"Error code: {response.status_code} - {parsed}", response=response, body=data
            )
        try:
            reply: JsonValue = json.loads(response.content)
        except ValueError:  # an HTML page, plain text, a body cut short: `classify` tells which
            raise openai.APIResponseValidationError(
                response, response.text, message="the answer is not JSON"
            ) from None
        return reply

    async def _probe(self, replica: Replica) -> bool:
        """A replica that was taken out serves again when `GET {base}/models` gets an answer
        (any status below 500: a server that answers 404 there is up all the same)."""
        try:
            response = await self._http(replica).get(
                replica.url + "/models", timeout=min(PROBE_TIMEOUT, self.policy.timeout)
            )
        except Exception as error:  # any failure to get an answer means not yet
            log.info("probe of %s failed: %s", replica.shown, self.redact(repr(error)))
            return False
        return bool(response.status_code < 500)

    async def _run(
        self,
        requests: list[ChatRequest],
        params: GenerationParams,
        emit: Callable[[Completion], None],
    ) -> None:
        todo = iter(requests)
        alone = asyncio.Lock()  # one request at a time until the server has answered
        self._refusals = RefusalWatch()  # what an earlier run met says nothing of this one

        async def worker() -> None:
            for request in todo:  # a shared iterator: each request goes to exactly one worker
                worst = self._reserve(request, params)
                if worst is None:
                    return  # over the budget: this and later requests stay pending
                completions = await self._first(request, params, alone)
                if self.budget is not None:
                    self.budget.settle(worst, _billed(completions))
                for completion in completions:
                    if missing_choice(completion):  # a server that ignores n
                        completion = (
                            await self._alone(request, completion.sample, params) or completion
                        )
                    emit(completion)
                if self.stop_on_refusals:  # refused alike too often: the rest stays pending
                    self._refusals.check()

        workers = min(self._limiter.maximum, len(requests))
        try:  # a task group: one worker's fatal error cancels the others' requests
            async with asyncio.TaskGroup() as group:
                for _ in range(workers):
                    group.create_task(worker())
        except* (ParameterRejected, ServerRefused) as errors:
            raise errors.exceptions[0] from None
        finally:
            self._replica_record = self.pool().record()

    async def _first(
        self, request: ChatRequest, params: GenerationParams, alone: asyncio.Lock
    ) -> list[Completion]:
        """`_one`, alone (holding `alone`) until the server has answered other than with a
        refusal: a model name it does not know then costs REFUSALS_TO_STOP requests, not as
        many as the concurrency lets out at once."""
        if self.stop_on_refusals and not self._refusals.answered:
            async with alone:
                if not self._refusals.answered:
                    return await self._one(request, params)
        return await self._one(request, params)

    async def _alone(
        self, request: ChatRequest, sample: int, params: GenerationParams
    ) -> Completion | None:
        """One sample asked for by itself, with its own seed (None when over the budget)."""
        single = ChatRequest(request.key, request.messages, 1, sample, request.seed_key)
        worst = self._reserve(single, params)
        if worst is None:
            return None
        completion = (await self._one(single, params))[0]
        if self.budget is not None:
            self.budget.settle(worst, _billed([completion]))
        return completion

    def _reserve(self, request: ChatRequest, params: GenerationParams) -> float | None:
        """The worst-case cost held for `request` (0 without a budget); None if it does not fit."""
        if self.budget is None:
            return 0.0
        price = self.prices.price(self.model)
        worst = worst_case_cost(request, params, price) if price is not None else 0.0
        return worst if self.budget.reserve(worst) else None

    async def _one(self, request: ChatRequest, params: GenerationParams) -> list[Completion]:
        started, t0 = utc_now(), time.perf_counter()
        estimate = estimate_tokens(request, params)
        body = self.body(request, params)
        payload = json.dumps(body).encode()

        @asynccontextmanager
        async def gate() -> AsyncIterator[None]:
            waited = time.perf_counter()
            await self._limits.take(estimate)
            async with self._limiter.slot():
                if (waited := time.perf_counter() - waited) > 0.05:
                    log.debug("rate and concurrency limits: waited %.2f s", waited)
                self.stats.concurrency = self._limiter.limit
                yield

        last = [t0]  # start of the latest attempt: latency is that of the answer we keep

        async def attempt() -> JsonObject:
            """One attempt: a replica, and on a replica's failure the next one (each replica
            once), so a failing replica costs the request no attempt while another serves."""
            pool, tried = self.pool(), set[Replica]()
            failure: AttemptError | None = None
            while (replica := await pool.acquire(tried)) is not None:
                tried.add(replica)
                last[0] = time.perf_counter()
                fault = None
                try:
                    reply = await self._send(replica, payload, body)
                except AttemptError as error:
                    failure, fault = error, error.reason if error.fault else None
                    if fault is not None:
                        self._faults[replica.url] = error.lasting
                    if fault is None or len(pool.replicas) == 1:
                        raise
                    continue
                finally:  # also when cancelled: the request leaves the replica here
                    pool.release(replica, fault)
                replica.served += 1
                return reply
            if failure is not None:
                raise failure
            raise self._all_out(pool)

        def on_retry(error: AttemptError) -> None:
            self.stats.retries += 1
            self.stats.retried = error.reason
            if error.rate_limited:
                self.stats.rate_limited += 1
                self._limiter.record_rate_limited()

        try:
            response, attempts = await call_with_retry(
                attempt, self.policy, gate=gate, on_retry=on_retry, timed=False
            )
        except RetriesExhausted as error:
            self._refusals.failed(error.lasting, error.status, self.redact(error.reason))
            return failed(
                request,
                self.redact(error.reason),
                started_at=started,
                finished_at=utc_now(),
                latency_s=time.perf_counter() - last[0],
                attempts=error.attempts,
            )
        self._refusals.served()
        self._limiter.record_success()
        self._limits.settle(
            estimate, int_or_none(sub_object(response.get("usage")).get("total_tokens"))
        )
        return to_completions(
            request,
            response,
            started_at=started,
            finished_at=utc_now(),
            latency_s=time.perf_counter() - last[0],
            attempts=attempts,
            cost=self.cost,
        )

    def _all_out(self, pool: ReplicaPool) -> AttemptError:
        """Every replica is out: worth another attempt (a probe may bring one back), unless
        each was taken out for a failure no retry heals and the run stops on those."""
        kinds = {self._faults.get(r.url) for r in pool.replicas if not r.up}
        lasting = kinds.pop() if len(kinds) == 1 else None
        return AttemptError(
            f"every replica is out ({pool.out_reasons()})",
            retryable=not (lasting and self.stop_on_refusals),
            lasting=lasting,
        )

    async def _send(self, replica: Replica, payload: bytes, body: JsonObject) -> JsonObject:
        """One call to one replica within the attempt timeout: the checked reply, or
        AttemptError (ParameterRejected when the server refuses a parameter)."""
        t0 = time.perf_counter()
        try:
            async with asyncio.timeout(self.policy.timeout):
                reply = await self._post(replica, payload)
        except Exception as error:
            if isinstance(error, TimeoutError):
                failure = AttemptError(f"timed out after {self.policy.timeout:g} s", retryable=True)
            elif (param := rejected_parameter(error, body)) is not None:
                # every request would fail alike: stop the run instead of failing each one
                raise ParameterRejected(param, classify(error, self.redact).reason) from None
            else:
                failure = classify(error, self.redact)
            failure.fault = _is_fault(error)
            if failure.lasting and self.stop_on_refusals:  # the run stops on these instead
                failure.retryable = False
            log.info(
                "POST %s/chat/completions failed in %.2f s: %s",
                replica.where,
                time.perf_counter() - t0,
                failure.reason,
            )
            raise failure from None
        log.info(
            "POST %s/chat/completions -> ok in %.2f s", replica.where, time.perf_counter() - t0
        )
        try:
            return check_reply(reply)
        except AttemptError as error:
            error.fault = True
            raise


def _httpx() -> ModuleType:
    """The HTTP package the installed `openai` release is built on (httpx or its successor)."""
    import openai

    return importlib.import_module(type(openai.DEFAULT_CONNECTION_LIMITS).__module__.split(".")[0])


def _is_fault(error: Exception) -> bool:
    """The replica, not the request, is to blame: no answer, a server error or a garbled body.
    A 4xx answer (rate limit, refusal) says nothing against the replica."""
    import openai

    return not (isinstance(error, openai.APIStatusError) and error.status_code < 500)


def _billed(completions: list[Completion]) -> float | None:
    """What a request cost: None (unknown) if an answered sample has no cost; failures are free."""
    costs = [c.cost_usd for c in completions if c.ok]
    known = [c for c in costs if c is not None]
    return sum(known) if len(known) == len(costs) else None


def estimate_tokens(request: ChatRequest, params: GenerationParams) -> int:
    """Rough token count for the tokens-per-minute budget (about 4 characters per token)."""
    chars = sum(len(m.get("content") or "") for m in request.messages)
    return chars // 4 + 8 * len(request.messages) + params.max_tokens * request.samples


#: How a ServerRefused names what stopped the run, by the kind of failure.
_STOPPED_BY = {
    REFUSED: "the server refused",
    NO_SERVER: "no server answered",
    NOT_JSON: "the server did not answer in JSON to",
}


class ServerRefused(PartialWork):
    """REFUSALS_TO_STOP requests in a row failed alike for a reason no retry heals (`lasting`:
    a refusing status such as 404, no server at the address, answers that are not JSON):
    every other request would fail alike, so the run stops and they stay pending."""

    def __init__(self, status: int | None, reason: str, count: int, lasting: str = REFUSED) -> None:
        what = _STOPPED_BY.get(lasting, "the server failed")
        super().__init__(f"{what} {count} requests in a row ({reason})")
        self.status = status  # the HTTP status of the answers, None without one
        self.reason = reason  # the first failure's, in the server's words
        self.count = count
        self.lasting = lasting


class RefusalWatch:
    """Failures in a row that no retry heals, of one kind and status (`lasting`), and whether
    the server has answered otherwise yet (a completion, or a failure of another kind)."""

    def __init__(self) -> None:
        self.answered = False
        self.kind: tuple[str, int | None] | None = None  # (lasting, status) of the streak
        self.reason = ""
        self.count = 0

    @property
    def status(self) -> int | None:
        return self.kind[1] if self.kind is not None else None

    def served(self) -> None:
        self.answered = True
        self.kind, self.count = None, 0

    def failed(self, lasting: str | None, status: int | None, reason: str) -> None:
        if lasting is None:  # a failure that may heal (a rate limit, a prompt too long)
            self.served()
            return
        if (lasting, status) != self.kind:
            self.kind, self.reason, self.count = (lasting, status), reason, 0
        self.count += 1

    def check(self) -> None:
        if self.kind is not None and self.count >= REFUSALS_TO_STOP:
            raise ServerRefused(self.kind[1], self.reason, self.count, self.kind[0])


class ParameterRejected(HarnessError):
    """The server refused a request parameter (HTTP 400 naming it): no retry can help."""

    def __init__(self, param: str, reason: str) -> None:
        super().__init__(
            f"the server rejected the request parameter {param!r} ({reason})", column=param
        )
        self.param = param
        self.reason = reason


def rejected_parameter(error: Exception, body: Mapping[str, JsonValue]) -> str | None:
    """The body field a 400 reply blames: its `param`, or a field named in quotes in its message.

    OpenAI's reasoning models answer `temperature` with 400 and param "temperature"; other
    servers only name the field in the message.
    """
    import openai

    if not isinstance(error, openai.APIStatusError) or error.status_code not in (400, 422):
        return None
    fields = [k for k in body if k not in ("model", "messages")]
    inner = error.body.get("error", error.body) if isinstance(error.body, dict) else None
    param = inner.get("param") if isinstance(inner, dict) else None
    if isinstance(param, str) and param in fields:
        return param
    message = error_message(error)
    for name in fields:
        if re.search(rf"[`'\"]{re.escape(name)}[`'\"]", message):
            return name
    return None
