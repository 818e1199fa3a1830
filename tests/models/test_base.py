"""The backend contract: what a backend that declares only `complete` has, and that the real
backends subclass it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from harness.models import Backend, ModelAPI
from harness.models.base import ChatRequest, Completion, GenerationParams
from harness.models.local import LocalBackend
from harness.models.openai_api import OpenAIBackend
from harness.models.prices import Price, PriceTable


class Echo(ModelAPI):
    """The smallest backend: only what the contract requires."""

    name, model = "echo", "echo-1"

    def complete(
        self, requests: Sequence[ChatRequest], params: GenerationParams
    ) -> Iterator[Completion]:
        yield from ()


def test_a_backend_without_complete_cannot_be_made():
    class Incomplete(ModelAPI):
        name, model = "none", "none"

    with pytest.raises(TypeError, match="complete"):
        Incomplete()  # type: ignore[abstract]


def test_optional_capabilities_default_to_absent():
    echo = Echo()
    assert echo.budget is None and echo.stats is None and echo.prices is None
    assert echo.batch_api is False
    assert echo.public_base_url is None and echo.fingerprint is None
    assert echo.cost("echo-1", 10, 10) is None
    with echo as same:  # close() is a no-op, so the context manager works everywhere
        assert same is echo
    assert Backend is ModelAPI


def test_cost_prices_the_reported_model_first_then_the_requested_one():
    echo = Echo()
    echo.prices = PriceTable({"echo-1": Price(1.0, 2.0), "echo-1-2026": Price(10.0, 20.0)})
    assert echo.cost("echo-1-2026", 1_000_000, 0) == pytest.approx(10.0)
    assert echo.cost("unpriced-alias", 1_000_000, 1_000_000) == pytest.approx(3.0)
    assert echo.cost(None, 0, 1_000_000, batch=True) == pytest.approx(1.0)
    echo.model = "unknown"
    assert echo.cost("also-unknown", 5, 5) is None


def test_the_real_backends_declare_their_capabilities(tmp_path):
    assert issubclass(LocalBackend, ModelAPI) and issubclass(OpenAIBackend, ModelAPI)
    assert LocalBackend.cost(LocalBackend.__new__(LocalBackend), "m", 100, 100) == 0.0
    with OpenAIBackend("gpt-4o-mini", api_key="k", base_url="http://127.0.0.1:9/v1/") as api:
        assert api.public_base_url == "http://127.0.0.1:9/v1"
        assert api.stats is not None and api.prices is not None and api.budget is None
        assert api.fingerprint is None and api.batch_api is False
