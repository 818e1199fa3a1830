"""The example backend of docs/backends.md, run as written against the loopback server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from harness.models import ModelAPI, chat
from harness.models.base import ChatRequest, GenerationParams, unit_seed
from tests.servers.openai_server import Faults, chat_reply

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "backends.md"


def example() -> type[Any]:
    """The class defined by the guide's one Python block."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1, "the guide holds exactly one runnable example"
    namespace: dict[str, Any] = {}
    exec(compile(blocks[0], str(GUIDE), "exec"), namespace)
    cls: type[Any] = namespace["PlainHTTPBackend"]
    return cls


def test_the_guide_example_is_a_working_backend(serve):
    server = serve()
    backend = example()
    assert issubclass(backend, ModelAPI)
    messages = [{"role": "user", "content": "Relate waves to markets."}]
    params = GenerationParams(temperature=0.5, max_tokens=20, seed=3)
    with backend("gpt-4o-mini", server.base_url + "/") as engine:
        out = list(engine.complete([ChatRequest("p1", messages, samples=2)], params))
        assert engine.public_base_url == server.base_url
        assert engine.budget is None and engine.stats is None and not engine.batch_api
        assert chat(engine, messages, params)
    assert [c.sample for c in out] == [0, 1] and all(c.ok for c in out)
    bodies = server.log.chat_bodies[:2]
    assert [b["seed"] for b in bodies] == [unit_seed(3, "p1", s, bits=31) for s in (0, 1)]
    assert [c.text for c in out] == [
        chat_reply(b, 0)["choices"][0]["message"]["content"] for b in bodies
    ]
    assert all(c.cost_usd is None for c in out)  # it declares no prices: cost unknown


def test_the_guide_example_reports_failures_as_completions(serve):
    server = serve(faults=Faults(rate=1.0, kinds=("500",)))
    with example()("gpt-4o-mini", server.base_url) as engine:
        out = list(
            engine.complete(
                [ChatRequest("p1", [{"role": "user", "content": "Hi"}])], GenerationParams()
            )
        )
    assert len(out) == 1 and not out[0].ok and "500" in (out[0].error or "")
