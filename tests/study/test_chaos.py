"""Random SIGKILLs of collect, judge --blind and judge --import while a second process tries to
write; after resuming, the store equals that of an uninterrupted run (tests/chaos.py)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests import chaos
from tests.servers.openai_server import OpenAIServer


@pytest.mark.slow
def test_killed_and_resumed_stages_end_like_an_uninterrupted_run(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("HARNESS_LITERATURE_CACHE", str(tmp_path / "cache"))
    with OpenAIServer(latency=0.4) as server:  # slow enough for kills to land mid-stage
        reference = chaos.new_study(tmp_path / "reference", 6)
        chaos.run_plain(reference, server.base_url)
        killed = chaos.new_study(tmp_path / "killed", 6)
        tally = chaos.run_chaos(
            killed, server.base_url, random.Random(17), kills_per_stage=1, window_s=4.0
        )
    assert tally.kills["collect"] + tally.kills["judge --blind"] >= 1, tally.line()
    assert tally.refused + tally.second_ran == tally.attempts - tally.unstarted
    want = chaos.deterministic_rows(reference)
    assert {name: len(rows) for name, rows in want.items()} == {
        "outputs": 18,
        "items": 18,
        "assignments": 36,
        "reviews": 36,
    }
    assert chaos.differences(chaos.deterministic_rows(killed), want) == []
