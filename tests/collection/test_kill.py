"""SIGKILL at random moments, rerun, repeat: the end result equals one uninterrupted run."""

from __future__ import annotations

import json
import random
import signal
import time

from harness.collection.collect_stage import collect
from harness.study import Study
from tests.collection.conftest import cli, count_rows, make_study, outputs
from tests.servers.openai_server import OpenAIServer


def test_repeated_sigkill_loses_and_duplicates_nothing(tmp_path, key):
    rng = random.Random(20261202)
    killed, resumed_from = 0, []
    with OpenAIServer(latency=0.03) as server:
        args = [
            "collect",
            "--study",
            str(tmp_path / "killed"),
            "--backend",
            "openai",
            "--model",
            "gpt-4o-mini",
            "--base-url",
            server.base_url,
            "--samples",
            "2",
            "--concurrency",
            "3",
            "--temperature",
            "0.9",
            "--seed",
            "5",
        ]
        make_study(tmp_path / "killed", 40)
        while killed < 4:
            before = count_rows(tmp_path / "killed")
            process = cli(args)
            deadline = time.monotonic() + 60
            while process.poll() is None and count_rows(tmp_path / "killed") == before:
                assert time.monotonic() < deadline, "collect made no progress"
                time.sleep(0.02)
            if process.poll() is not None:  # finished before we could kill it
                break
            time.sleep(rng.uniform(0.0, 0.4))  # somewhere in the middle of the work
            process.send_signal(signal.SIGKILL)
            process.wait()
            killed += 1
            resumed_from.append(count_rows(tmp_path / "killed"))
        final = cli(args)
        _, err = final.communicate(timeout=120)
        assert final.returncode == 0, err

        reference = make_study(tmp_path / "reference", 40)
        collect(
            reference,
            backend="openai",
            model="gpt-4o-mini",
            base_url=server.base_url,
            samples=2,
            concurrency=8,
            temperature=0.9,
            seed=5,
        )

    assert killed >= 3, "the kills did not land during the run"
    assert resumed_from == sorted(resumed_from) and 0 < resumed_from[0] < 240
    got, want = outputs(tmp_path / "killed"), outputs(reference)
    assert len(got) == 240 and got == want
    with Study.open(tmp_path / "killed") as study:
        params = {r[0] for r in study.rows("SELECT params FROM outputs")}
    assert [json.loads(p)["seed"] for p in params] == [5]
