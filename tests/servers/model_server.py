"""The loopback OpenAI server with two more behaviours: models it does not know, and a count of
the requests it holds at once.

`ModelServer(models={"gpt-4o-mini"})` answers a chat request for any other model as OpenAI does,
with 404 and `The model `NAME` does not exist` (code `model_not_found`); `models=None` serves
every name, as servers that ignore the model field do. `in_flight` is the number of chat requests
being answered now and `max_in_flight` the most at any moment since the start or the last
`reset_peak()`, so a test can measure the concurrency a client really used.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from typing import Any

from tests.servers.openai_server import OpenAIServer, Request, respond


class ModelServer(OpenAIServer):
    def __init__(self, *, models: Iterable[str] | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.models = None if models is None else frozenset(models)
        self.in_flight = 0
        self.max_in_flight = 0
        self.unknown: list[str] = []  # the model of every request refused with 404

    def reset_peak(self) -> None:
        self.max_in_flight = self.in_flight

    async def _chat(self, request: Request, writer: asyncio.StreamWriter) -> bool:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            model = _model(request.body)
            if self.models is not None and model not in self.models:
                self.log.counts["requests"] += 1
                self.unknown.append(str(model))
                await asyncio.sleep(self.latency)
                error = {
                    "message": f"The model `{model}` does not exist",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "model_not_found",
                }
                return await respond(writer, 404, {"error": error})
            return await super()._chat(request, writer)
        finally:
            self.in_flight -= 1


def _model(body: bytes) -> object:
    try:
        parsed = json.loads(body)
    except json.JSONDecodeError:
        return None
    return parsed.get("model") if isinstance(parsed, dict) else None
