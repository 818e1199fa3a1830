"""The cost cap: worst-case bounds and reservations."""

from __future__ import annotations

import threading

import pytest

from harness.models.base import ChatRequest, GenerationParams
from harness.models.budget import Budget, prompt_token_bound, worst_case_cost
from harness.models.prices import Price

TEXTS = [
    "Relate standing waves to Gregorian chant.",
    "Quel lien entre l'acoustique et l'architecture gothique ? Ω≈∑ 🙂🙂 漢字かな",
    "x" * 500,
    "a1 b2 c3 " * 60,
]


def request(text: str, system: str | None = None, samples: int = 1) -> ChatRequest:
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": text})
    return ChatRequest("p", messages, samples)


@pytest.fixture(scope="module")
def tokenizer():
    from harness.models.embedded import load_tokenizer

    return load_tokenizer()


@pytest.mark.parametrize("text", TEXTS)
def test_prompt_bound_holds_for_a_real_byte_level_tokenizer(text, tokenizer):
    req = request(text, system="You are a careful researcher.")
    tokens = tokenizer.apply_chat_template(req.messages, add_generation_prompt=True, tokenize=True)
    assert len(tokens) <= prompt_token_bound(req)


def test_worst_case_prices_every_sample_at_max_tokens():
    price = Price(input=1.0, output=2.0)  # USD per 1M tokens
    req = request("abc", samples=3)
    prompt = 3 + 16 * 2
    expected = (prompt * 1.0 + 3 * 100 * 2.0) / 1e6
    assert worst_case_cost(req, GenerationParams(max_tokens=100), price) == pytest.approx(expected)
    assert worst_case_cost(req, GenerationParams(max_tokens=100), price, 0.5) == pytest.approx(
        expected / 2
    )


def test_reservations_never_pass_the_limit_and_refusal_is_sticky():
    budget = Budget(1.0)
    assert budget.reserve(0.4) and budget.reserve(0.4)
    assert not budget.reserve(0.4)  # 1.2 would pass the limit
    budget.settle(0.4, 0.1)
    assert budget.spent == pytest.approx(0.1) and budget.reserved == pytest.approx(0.4)
    assert not budget.reserve(0.01)  # later requests keep their order: none jumps the queue
    budget.settle(0.4, None)  # unknown cost is charged at its worst case
    assert budget.spent == pytest.approx(0.5) and budget.reserved == 0 and budget.refused == 2


def test_threads_sharing_a_budget_never_hold_more_than_the_limit():
    budget, held, lock = Budget(10.0), [], threading.Lock()

    def take() -> None:
        for _ in range(1000):
            if budget.reserve(0.013):
                with lock:
                    held.append(budget.reserved + budget.spent)

    threads = [threading.Thread(target=take) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(held) == int(10.0 / 0.013) and max(held) <= 10.0
