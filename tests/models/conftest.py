"""Loopback OpenAI-compatible server for backend tests."""

from __future__ import annotations

import pytest

from tests.servers.openai_server import Faults, OpenAIServer


@pytest.fixture
def serve():
    """serve(**server options) -> a started OpenAIServer, stopped after the test."""
    started = []

    def start(**options):
        server = OpenAIServer(**options).__enter__()
        started.append(server)
        return server

    yield start
    for server in started:
        server.__exit__(None, None, None)


@pytest.fixture
def faults():
    return Faults
