"""How soon `harness collect` stops against a server that cannot serve the study, and what it
costs, beside a healthy server's run of the same study in the same process.

Each scenario runs the real entry point on a study of 168 prompts (56 topics, as a first pilot)
against a loopback address: nothing listening, nginx's welcome page (200, HTML), a 405 page, a
model the server does not know (404), and a proxy answering 502 to its first 4 requests before
the model server behind it answers (failures that may heal: retried, never stopped). It prints
the requests the server received (where nothing listens, the client's own attempts, read from
the outputs it stored), the seconds the command took, and both against the goal: at most 10
requests and 10 s before the stop (the 502 row: every request answered, 4 retries). `command s`
is the whole command (Python start-up included), `run s` the run's own time from its manifest
record, also as a ratio to the healthy server's run of all 168 prompts.

    python benchmarks/bench_stop_early.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.study import Study  # noqa: E402
from tests.collection.conftest import make_study  # noqa: E402
from tests.servers.model_server import ModelServer  # noqa: E402
from tests.servers.openai_server import OpenAIServer  # noqa: E402
from tests.servers.page_server import BAD_GATEWAY, PageServer, refusing_port  # noqa: E402

TOPICS = 56
GOAL_REQUESTS, GOAL_S = 10, 10.0
NOT_ALLOWED = b"<html><body><h1>405 Not Allowed</h1><hr>nginx</body></html>"


class Refusing(AbstractContextManager["Refusing"]):
    """A loopback port where nothing listens; requests are counted by the client's attempts."""

    def __enter__(self) -> Refusing:
        self.sock = refusing_port()
        self.base_url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


def attempts(study: Path) -> int:
    with Study.open(study) as s:
        return int(s.rows("SELECT COALESCE(SUM(attempts), 0) FROM outputs")[0][0])


def run_seconds(study: Path) -> float:
    """The run's own time, from its manifest record (the command's less start-up)."""
    manifest = json.loads((study / "manifest.json").read_text(encoding="utf-8"))
    (section,) = manifest["collect"]["models"].values()
    return float(section["runs"][-1]["elapsed_s"])


def run(study: Path, model: str, url: str) -> tuple[int, float, str]:
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench-stop-early", "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "harness.cli", "collect", "--study", str(study)]
    start = time.perf_counter()
    done = subprocess.run(
        [*command, "--model", model, "--base-url", url],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    seconds = time.perf_counter() - start
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    return done.returncode, seconds, (errors[0] if errors else "")[:110]


Counter = Callable[[Any, Path], int]


def received(server: Any, study: Path) -> int:
    return int(server.requests if isinstance(server, PageServer) else server.log.counts["requests"])


def scenarios() -> list[tuple[str, Callable[[], Any], str, Counter]]:
    m = "openai-compatible/m"
    return [
        ("healthy server", OpenAIServer, m, received),
        ("nothing listening", Refusing, m, lambda server, study: attempts(study)),
        ("nginx welcome page", PageServer, m, received),
        ("405 page", lambda: PageServer(status=405, page=NOT_ALLOWED), m, received),
        (
            "unknown model (404)",
            lambda: ModelServer(models={"gpt-4o-mini"}),
            "openai-compatible/gpt-4o-mnii",
            lambda server, study: len(server.unknown),
        ),
        (
            "502 x4, then answers",
            lambda: PageServer(status=502, page=BAD_GATEWAY, pages=4),
            m,
            received,
        ),
    ]


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for index, (name, make, model, count) in enumerate(scenarios()):
            study = make_study(Path(tmp) / f"s{index}", TOPICS)
            with make() as server:
                code, seconds, line = run(study, model, server.base_url)
                requests = count(server, study)
            rows.append((name, code, requests, seconds, run_seconds(study), line))
    healthy_s = rows[0][4]
    print(
        f"{'scenario':22} {'exit':>4} {'requests':>8} {'command s':>9} {'run s':>6} "
        f"{'run/goal':>8} {'run/healthy':>11}  first error line"
    )
    for name, code, requests, seconds, own, line in rows:
        print(
            f"{name:22} {code:>4} {requests:>8} {seconds:>9.2f} {own:>6.2f} "
            f"{own / GOAL_S:>8.2f} {own / healthy_s:>11.2f}  {line}"
        )
    stopped = rows[1:5]
    ok = all(r[1] == 1 and r[2] <= GOAL_REQUESTS and r[3] <= GOAL_S for r in stopped)
    print(
        f"goal (each stop within {GOAL_REQUESTS} requests and {GOAL_S:g} s of the command, "
        f"exit 1): {'met' if ok else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
