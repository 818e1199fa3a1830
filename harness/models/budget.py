"""A hard cost cap: each request reserves its worst-case cost before it is sent.

Requests in flight cannot be called back, so a cap checked only after completions arrive is
overshot by whatever is in flight. Reserving the worst case first (every prompt byte a token, every
sample using all of `max_tokens`) keeps the total within the cap; settling replaces the
reservation by the cost the server reported once the answer is in.
"""

from __future__ import annotations

import threading

from harness.models.base import ChatRequest, GenerationParams
from harness.models.prices import Price

#: Tokens a chat format may add per message and per request (role markers, reply priming).
FRAMING_TOKENS = 16


def prompt_token_bound(request: ChatRequest) -> int:
    """An upper bound on prompt tokens: byte-level tokenizers spend at least one byte per token."""
    content = sum(len(str(m.get("content") or "").encode()) for m in request.messages)
    return content + FRAMING_TOKENS * (len(request.messages) + 1)


def worst_case_cost(
    request: ChatRequest, params: GenerationParams, price: Price, discount: float = 1.0
) -> float:
    """The most `request` can cost: the prompt bound plus max_tokens for every sample."""
    completion = params.max_tokens * request.samples
    return (price.cost(prompt_token_bound(request), completion) or 0.0) * discount


class Budget:
    """Spent and reserved USD against a limit; safe to share between threads."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.spent = 0.0
        self.reserved = 0.0
        self.refused = 0  # requests not sent because their worst case did not fit
        self._lock = threading.Lock()

    def reserve(self, worst: float) -> bool:
        """Hold `worst` USD for one request; False (and nothing held) if it would not fit."""
        with self._lock:
            if self.refused or self.spent + self.reserved + worst > self.limit:
                self.refused += 1  # once one is refused, later ones are too: order is kept
                return False
            self.reserved += worst
            return True

    def settle(self, worst: float, actual: float | None) -> None:
        """Release a reservation, charging `actual` (the worst case if the cost is unknown)."""
        with self._lock:
            self.reserved -= worst
            self.spent += worst if actual is None else actual
