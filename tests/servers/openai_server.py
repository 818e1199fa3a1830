"""A real HTTP/1.1 server on loopback speaking the OpenAI wire format, with injected faults.

Endpoints: POST /v1/chat/completions, GET /v1/models, POST /v1/files (multipart), GET
/v1/files/{id}, GET /v1/files/{id}/content, POST /v1/batches, GET /v1/batches/{id},
POST /v1/batches/{id}/cancel. Replies are deterministic functions of the request body (model,
messages, seed, temperature, top_p, n, max tokens), so a test can check that a run produced exactly
the completions another run produced. Faults are drawn per request at `faults.rate`:

    429         rate limited, with Retry-After (and nothing else)
    429-bare    rate limited, no Retry-After
    500, 503    server errors with an OpenAI-style error body
    timeout     holds the request for `faults.hang_s` before answering
    malformed   200 with a truncated JSON body
    drop        closes the connection without answering

`reject_params` ({model: fields}, "*" for every model) answers a request carrying one of the fields
with 400 as OpenAI's reasoning models answer `temperature` (`param` set; with `name_param=False`
the field is named only in the message, as other servers do).

A server holds its port from start to `__exit__`: `kill()` stops it serving (connections are
then refused) without giving the port up, so no other test's server can take it, and `revive()`
serves again on it.

Built on asyncio streams only (keep-alive, Content-Length and chunked bodies). Run standalone with
`python tests/servers/openai_server.py --latency 0.2`; it prints `PORT <n>` and serves until killed.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import json
import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

FAULT_KINDS = ("429", "429-bare", "500", "503", "timeout", "malformed", "drop")
REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}
WORDS = (
    "coupling",
    "gradient",
    "lattice",
    "enzyme",
    "market",
    "network",
    "entropy",
    "signal",
    "boundary",
    "protein",
    "memory",
    "field",
    "kernel",
    "phase",
    "ritual",
    "grammar",
    "contract",
    "tissue",
    "orbit",
    "measure",
    "flow",
    "symmetry",
    "habitat",
    "archive",
)


@dataclass
class Faults:
    rate: float = 0.0
    kinds: tuple[str, ...] = FAULT_KINDS
    retry_after: str = "0.05"  # value of the Retry-After header sent with kind "429"
    hang_s: float = 5.0
    seed: int | None = 0


@dataclass
class BatchJob:
    data: dict[str, Any]
    started: float
    lines: list[dict[str, Any]]


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class ServerLog:
    counts: Counter = field(default_factory=Counter)
    chat_bodies: list[dict[str, Any]] = field(default_factory=list)
    auth_headers: set[str] = field(default_factory=set)


class OpenAIServer:
    """The server; use as a context manager (it runs on its own thread and loop)."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        faults: Faults | None = None,
        api_key: str | None = None,
        batch_delay: float = 0.2,
        batch_outcome: str = "completed",
        echo_auth: bool = False,
        host: str = "127.0.0.1",
        port: int = 0,
        ignore_n: bool = False,
        reply_text: Callable[[dict[str, Any]], str] | None = None,
        reject_params: dict[str, tuple[str, ...]] | None = None,
        name_param: bool = True,
    ) -> None:
        self.latency = latency
        self.ignore_n = ignore_n  # like llama.cpp's server: one choice, whatever n asks
        self.reply_text = reply_text  # when set, the content of each chat reply (from the body)
        self.faults = faults or Faults()
        self.reject_params = reject_params or {}
        self.name_param = name_param
        self.api_key = api_key
        self.batch_delay = batch_delay
        self.batch_outcome = batch_outcome  # completed | expired | failed
        self.echo_auth = echo_auth
        self.lose_next_batch_reply = False
        self.host, self.port = host, port
        self.log = ServerLog()
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, BatchJob] = {}
        self._rng = random.Random(self.faults.seed)
        self._ids = itertools.count(1)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self._hold: socket.socket | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> OpenAIServer:
        ready = threading.Event()
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self.serve(ready)), daemon=True, name="openai-test-server"
        )
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("test server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop serving (again: a no-op), aborting open connections as a killed server would,
        and give the port up."""
        if self._thread is None or not self._thread.is_alive():
            return
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(10)

    def kill(self) -> None:
        """Stop serving as a killed server would (open connections aborted), keeping the port:
        until `revive()` or `__exit__`, a connection to it is refused and no other server can
        take it (a test's dead replica stays dead while other tests start servers beside it)."""
        self._call(self._close_listener())

    def revive(self) -> None:
        """Serve again on the same port after `kill()`, as a restarted server would."""
        self._call(self._listen())

    def _call(self, step: Any) -> None:
        if self._loop is None:
            step.close()
            raise RuntimeError("the test server is not running")
        asyncio.run_coroutine_threadsafe(step, self._loop).result(10)

    async def serve(self, ready: threading.Event | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self._hold = hold_port(self.host, self.port)
        try:
            self.port = self._hold.getsockname()[1]
            await self._listen()
            if ready is not None:
                ready.set()
            await self._stop.wait()
            await self._close_listener()
        finally:
            self._hold.close()

    async def _listen(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_server(
                self._connection, self.host, self.port, backlog=1024, reuse_port=True
            )

    async def _close_listener(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            await server.wait_closed()

    # -- HTTP --------------------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while (request := await read_request(reader)) is not None:
                if not await self._dispatch(request, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:  # shutting down with requests still held
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _dispatch(self, request: Request, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False closes the connection."""
        auth = request.headers.get("authorization", "")
        self.log.auth_headers.add(auth)
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            return await respond(writer, 401, error_body("invalid api key", "invalid_request"))
        path, method = request.path.split("?")[0].rstrip("/"), request.method
        if method == "POST" and path == "/v1/chat/completions":
            return await self._chat(request, writer)
        if method == "GET" and path == "/v1/models":
            return await respond(writer, 200, {"object": "list", "data": []})
        if method == "POST" and path == "/v1/files":
            return await respond(writer, 200, self._upload(request))
        if method == "GET" and path == "/v1/batches":
            data = [job.data for job in reversed(self.batches.values())]
            return await respond(writer, 200, {"object": "list", "data": data, "has_more": False})
        if method == "POST" and path == "/v1/batches":
            created = self._create_batch(json.loads(request.body))
            if self.lose_next_batch_reply:  # created, but the client never hears of it
                self.lose_next_batch_reply = False
                writer.transport.abort()
                return False
            return await respond(writer, 200, created)
        parts = path.split("/")
        if len(parts) >= 4 and parts[2] == "files" and parts[3] in self.files:
            stored = self.files[parts[3]]
            if len(parts) == 5 and parts[4] == "content":
                return await respond(writer, 200, stored["content"], "application/octet-stream")
            return await respond(writer, 200, stored["object"])
        if len(parts) >= 4 and parts[2] == "batches" and parts[3] in self.batches:
            if method == "POST" and parts[-1] == "cancel":
                self.batches[parts[3]].data["status"] = "cancelled"
            return await respond(writer, 200, self._poll_batch(parts[3]))
        return await respond(writer, 404, error_body(f"no route {method} {path}", "not_found"))

    async def _chat(self, request: Request, writer: asyncio.StreamWriter) -> bool:
        self.log.counts["requests"] += 1
        kind = self._draw_fault()
        self.log.counts[kind or "ok"] += 1
        if kind == "drop":
            writer.transport.abort()
            return False
        if kind in ("429", "429-bare"):
            headers = {"Retry-After": self.faults.retry_after} if kind == "429" else {}
            return await respond(
                writer, 429, error_body("rate limited", "rate_limit"), headers=headers
            )
        await asyncio.sleep(self.latency)
        if kind in ("500", "503"):
            message = "internal error"
            if self.echo_auth:  # a careless server that echoes credentials back
                message += f" (request had {request.headers.get('authorization')})"
            return await respond(writer, int(kind), error_body(message, "server_error"))
        if kind == "timeout":
            await asyncio.sleep(self.faults.hang_s)
        try:
            body = json.loads(request.body)
        except json.JSONDecodeError:
            return await respond(writer, 400, error_body("body is not JSON", "invalid_request"))
        if len(self.log.chat_bodies) < 10_000:
            self.log.chat_bodies.append(body)
        if (refused := self._refused(body)) is not None:
            self.log.counts["rejected"] += 1
            return await respond(writer, 400, refused)
        if self.ignore_n:
            body = {**body, "n": 1}
        if kind == "malformed":
            return await respond(
                writer, 200, b'{"id": "chatcmpl-x", "choices": [{"ind', "application/json"
            )
        reply = chat_reply(body, next(self._ids))
        if self.reply_text is not None:
            reply["choices"][0]["message"]["content"] = self.reply_text(body)
        return await respond(writer, 200, reply)

    def _refused(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """OpenAI's 400 for an unsupported parameter, when the body carries a refused one."""
        refused = (
            *self.reject_params.get("*", ()),
            *self.reject_params.get(str(body.get("model")), ()),
        )
        for name in refused:
            if name in body:
                reply = error_body(
                    f"Unsupported parameter: '{name}' is not supported with this model.",
                    "invalid_request_error",
                )
                reply["error"].update(
                    param=name if self.name_param else None, code="unsupported_parameter"
                )
                return reply
        return None

    def _draw_fault(self) -> str | None:
        if self.faults.rate and self._rng.random() < self.faults.rate:
            return self._rng.choice(self.faults.kinds)
        return None

    # -- files and batches -------------------------------------------------------------------
    def _upload(self, request: Request) -> dict[str, Any]:
        fields = parse_multipart(request.headers.get("content-type", ""), request.body)
        content, filename = fields.get("file", (b"", "upload.jsonl"))
        purpose = fields.get("purpose", (b"batch", None))[0].decode()
        return self._store_file(content, filename or "upload.jsonl", purpose)

    def _store_file(self, content: bytes, filename: str, purpose: str) -> dict[str, Any]:
        file_id = f"file-{next(self._ids)}"
        obj = {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
        }
        self.files[file_id] = {"object": obj, "content": content}
        return obj

    def _create_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        batch_id = f"batch_{next(self._ids)}"
        content = self.files[body["input_file_id"]]["content"]
        lines = [json.loads(line) for line in content.decode().splitlines() if line.strip()]
        now = int(time.time())
        data = {
            "id": batch_id,
            "object": "batch",
            "endpoint": body["endpoint"],
            "errors": None,
            "input_file_id": body["input_file_id"],
            "completion_window": body["completion_window"],
            "status": "validating",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": now,
            "in_progress_at": None,
            "expires_at": now + 86400,
            "completed_at": None,
            "failed_at": None,
            "expired_at": None,
            "cancelled_at": None,
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "metadata": body.get("metadata"),
        }
        self.log.counts["batches"] += 1
        self.batches[batch_id] = BatchJob(data, time.monotonic(), lines)
        return data

    def _poll_batch(self, batch_id: str) -> dict[str, Any]:
        job = self.batches[batch_id]
        data = job.data
        if data["status"] in ("completed", "expired", "failed", "cancelled"):
            return data
        elapsed = time.monotonic() - job.started
        if elapsed >= self.batch_delay:
            self._finish_batch(job)
        elif elapsed >= self.batch_delay / 2:
            data["status"], data["in_progress_at"] = "in_progress", int(time.time())
        return data

    def _finish_batch(self, job: BatchJob) -> None:
        data, now = job.data, int(time.time())
        if self.batch_outcome == "failed":
            data.update(
                status="failed",
                failed_at=now,
                errors={"object": "list", "data": [{"code": "invalid", "message": "bad"}]},
            )
            return
        lines = job.lines
        if self.batch_outcome == "expired":
            lines = lines[: len(lines) // 2]
        out, err = [], []
        for line in lines:
            record = {"id": f"batch_req_{next(self._ids)}", "custom_id": line["custom_id"]}
            if self._draw_fault():
                body = error_body("internal error", "server_error")
                err.append(
                    {
                        **record,
                        "error": None,
                        "response": {"status_code": 500, "request_id": "req_x", "body": body},
                    }
                )
            else:
                body = chat_reply(line["body"], next(self._ids))
                out.append(
                    {
                        **record,
                        "error": None,
                        "response": {"status_code": 200, "request_id": "req_y", "body": body},
                    }
                )
        done = self.batch_outcome == "completed"
        data.update(
            status="completed" if done else "expired",
            completed_at=now if done else None,
            expired_at=None if done else now,
        )
        data["request_counts"].update(completed=len(out), failed=len(err))
        if out:
            stored = self._store_file(jsonl(out), "output.jsonl", "batch_output")
            data["output_file_id"] = stored["id"]
        if err:
            stored = self._store_file(jsonl(err), "errors.jsonl", "batch_output")
            data["error_file_id"] = stored["id"]


# -- wire helpers ----------------------------------------------------------------------------
def hold_port(host: str, port: int = 0) -> socket.socket:
    """A socket bound to `host:port` (a free port for 0) that does not listen: a connection to
    the port is refused, and no other socket can bind it (this one sets no SO_REUSEADDR), but for
    one of the same user that sets SO_REUSEPORT, as `OpenAIServer`'s own listener does."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    return sock


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    line = await reader.readline()
    if not line.strip():
        return None
    method, target, _ = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while (raw := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = bytearray()
        while size := int((await reader.readline()).split(b";")[0], 16):
            body += await reader.readexactly(size)
            await reader.readline()
        await reader.readline()
        return Request(method, target, headers, bytes(body))
    length = int(headers.get("content-length") or 0)
    return Request(method, target, headers, await reader.readexactly(length) if length else b"")


async def respond(
    writer: asyncio.StreamWriter,
    status: int,
    body: Any,
    content_type: str = "application/json",
    headers: dict[str, str] | None = None,
) -> bool:
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    head = [
        f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(payload)}",
        "Connection: keep-alive",
    ]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
    await writer.drain()
    return True


def error_body(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def jsonl(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def parse_multipart(content_type: str, body: bytes) -> dict[str, tuple[bytes, str | None]]:
    """{field name: (content, filename)} of a multipart/form-data body."""
    boundary = content_type.split("boundary=", 1)[-1].strip().strip('"').encode()
    fields = {}
    for part in body.split(b"--" + boundary):
        head, sep, content = part.partition(b"\r\n\r\n")
        if not sep:
            continue
        disposition = head.decode("latin-1")
        name = _param(disposition, "name")
        if name:
            fields[name] = (content.removesuffix(b"\r\n"), _param(disposition, "filename"))
    return fields


def _param(header: str, key: str) -> str | None:
    marker = f'{key}="'
    for piece in header.split(";"):
        piece = piece.strip()
        if piece.startswith(marker):
            return piece[len(marker) : -1]
    return None


def review_protocol(body: dict[str, Any]) -> str:
    """`reply_text` of a server that follows the `llm:` reviewer's reply protocol
    (`harness.literature.llm_reviewer`): one search, then `not_published`. Without it the
    server's replies are words that follow no protocol."""
    answered = sum(m.get("role") == "assistant" for m in body.get("messages", []))
    return "SEARCH: sediment transport" if not answered else "VERDICT: not_published"


def chat_reply(body: dict[str, Any], serial: int) -> dict[str, Any]:
    """A chat.completion object determined entirely by the request body."""
    model = str(body.get("model", ""))
    messages = body.get("messages", [])
    n = int(body.get("n") or 1)
    limit = int(body.get("max_tokens") or body.get("max_completion_tokens") or 64)
    identity = json.dumps(
        [model, messages, body.get("seed"), body.get("temperature"), body.get("top_p")],
        sort_keys=True,
    )
    prompt_tokens = sum(len(str(m.get("content", "")).split()) + 3 for m in messages)
    choices, completion_tokens = [], 0
    for index in range(n):
        digest = hashlib.sha256(f"{identity}|{index}".encode()).digest()
        words = [WORDS[b % len(WORDS)] for b in digest[1 : 1 + 4 + digest[0] % 20]]
        finish = "length" if len(words) > limit else "stop"
        words = words[:limit]
        completion_tokens += len(words)
        text = " ".join(words).capitalize() + "."
        choices.append(
            {
                "index": index,
                "finish_reason": finish,
                "logprobs": None,
                "message": {"role": "assistant", "content": text, "refusal": None},
            }
        )
    return {
        "id": f"chatcmpl-{serial}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": f"{model}-2024-test",
        "system_fingerprint": "fp_" + hashlib.sha256(model.encode()).hexdigest()[:10],
        "choices": choices,
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    args = parser.parse_args()
    server = OpenAIServer(latency=args.latency, port=args.port, faults=Faults(rate=args.fault_rate))

    async def run() -> None:
        ready = threading.Event()
        task = asyncio.create_task(server.serve(ready))
        while not ready.is_set():
            await asyncio.sleep(0.01)
        print(f"PORT {server.port}", flush=True)
        await task

    asyncio.run(run())


if __name__ == "__main__":
    main()
