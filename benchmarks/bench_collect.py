"""Collect-stage performance, measured side by side in one run; prints ratios against goals.

1. Throughput of `collect` against the loopback OpenAI server (its own process) with 200 ms
   latency and 64 connections, over 2,000 requests: the physical limit is 64 / 0.2 = 320 req/s.
   Goal: achieved / limit >= 0.9.
2. Local backend, embedded model: batched generation at batch 8 vs one prompt at a time,
   tokens per second, 16 prompts, sampling as collect does, up to 128 tokens. Both runs draw
   the same tokens (per-completion seeds), so the ratio is a ratio of times. Goal: >= 3x.
3. Embedded model load from the converted cache vs the first load (GGUF conversion), in a
   temporary HARNESS_CACHE. Goal: >= 10x faster.

Run: .venv/bin/python benchmarks/bench_collect.py [--only throughput|local|load]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

from harness.study import Study  # noqa: E402

REQUESTS, CONNECTIONS, LATENCY = 2000, 64, 0.2
LOCAL_MAX_TOKENS = 128  # collection-length answers, so decoding (not the prompt) dominates
TOPICS = [
    "ant colonies",
    "bond markets",
    "protein folding",
    "Gothic cathedrals",
    "river deltas",
    "sonnets",
    "supply chains",
    "coral reefs",
    "jazz harmony",
    "glaciers",
    "vaccines",
    "railway networks",
    "tax law",
    "bird migration",
    "semiconductors",
    "folk tales",
]


def line(name: str, value: str, goal: str, met: bool) -> None:
    print(f"{name:<44} {value:<34} goal {goal:<8} {'met' if met else 'NOT met'}")


def study_with_prompts(folder: Path, n: int) -> Path:
    with Study.open(folder, create=True) as study, study.transaction() as conn:
        for t in range(-(-n // 3)):
            tid = f"t{t:05d}"
            conn.execute(
                "INSERT INTO topics VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (tid, "A", 1, "D1", "B", 2, "D2", "[]", "[]", "r", 3, 0.5, "{}"),
            )
            for c, cond in enumerate(("single_a", "single_b", "cross")):
                if 3 * t + c < n:
                    conn.execute(
                        "INSERT INTO prompts VALUES (?,?,?,?,?,?,?,?,?)",
                        (
                            f"{tid}.{cond}",
                            tid,
                            cond,
                            "f",
                            "0" * 64,
                            None,
                            f"Relate idea {t} to {cond} via a shared mechanism.",
                            10,
                            "{}",
                        ),
                    )
    return folder


def bench_throughput() -> None:
    import openai  # noqa: F401  (import time is process start-up, not throughput)

    from harness.collection import collect
    from harness.study import Study

    server = subprocess.Popen(
        [
            sys.executable,
            str(REPO / "tests" / "servers" / "openai_server.py"),
            "--latency",
            str(LATENCY),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        port = int(server.stdout.readline().split()[1])
        url = f"http://127.0.0.1:{port}/v1"
        with tempfile.TemporaryDirectory() as tmp:
            study = study_with_prompts(Path(tmp) / "s", REQUESTS)
            t0 = time.perf_counter()
            result = collect(
                study,
                backend="openai",
                model="bench-model",
                api_key="sk-bench",
                base_url=url,
                concurrency=CONNECTIONS,
                max_tokens=16,
            )
            elapsed = time.perf_counter() - t0
            with Study.open(study) as s:  # first request sent to last completion stored
                span = s.rows(
                    "SELECT (julianday(MAX(finished_at)) - julianday(MIN(started_at)))"
                    " * 86400 FROM outputs"
                )[0][0]
        bare = bare_http_rate(url)
    finally:
        server.terminate()
        server.wait()
    assert result.completed == REQUESTS, result.summary()
    limit = CONNECTIONS / LATENCY
    achieved = REQUESTS / elapsed
    load = os.getloadavg()[0]
    print(
        f"throughput: {REQUESTS} requests in {elapsed:.2f} s (each committed to the store); "
        f"bare HTTP client on this machine now: {bare:.1f} req/s; load average {load:.1f} "
        f"on {os.cpu_count()} CPUs"
    )
    line(
        "collect throughput / physical limit",
        f"{achieved:.1f} / {limit:.0f} req/s = {achieved / limit:.3f}",
        ">= 0.9",
        achieved / limit >= 0.9,
    )
    sent = REQUESTS / span
    print(
        f"{'(requests in flight only: first sent to last stored)':<44} {sent:.1f} req/s = "
        f"{sent / limit:.3f} of the limit; the rest of the wall time is opening the study, "
        "the backend and the manifest"
    )
    print(f"{'(collect / bare HTTP client, same machine)':<44} {achieved / bare:.3f}")


def bare_http_rate(url: str) -> float:
    """Requests/s of the bare HTTP client (no openai, no retries, no store): the ceiling the
    Python HTTP stack reaches on this machine right now, for reading the main figure."""
    import asyncio

    import httpx2

    body = {
        "model": "bench-model",
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "Relate idea 1 to cross."}],
    }

    async def run() -> float:
        limits = httpx2.Limits(max_connections=CONNECTIONS, max_keepalive_connections=CONNECTIONS)
        async with httpx2.AsyncClient(limits=limits) as client:
            gate = asyncio.Semaphore(CONNECTIONS)

            async def one() -> None:
                async with gate:
                    (await client.post(url + "/chat/completions", json=body)).json()

            t0 = time.perf_counter()
            await asyncio.gather(*(one() for _ in range(REQUESTS)))
            return REQUESTS / (time.perf_counter() - t0)

    return asyncio.run(run())


def bench_local() -> None:
    from harness.models import ChatRequest, GenerationParams
    from harness.models.local import LocalBackend

    engine = LocalBackend(batch_size=8).load()
    import torch

    requests = [
        ChatRequest(
            f"p{i}",
            [
                {
                    "role": "user",
                    "content": f"Explain in detail how research on {a} could inform research on {b}.",
                }
            ],
        )
        for i, (a, b) in enumerate(zip(TOPICS, TOPICS[5:] + TOPICS[:5], strict=True))
    ]
    params = GenerationParams(temperature=0.7, top_p=0.95, max_tokens=LOCAL_MAX_TOKENS, seed=0)
    engine.batch_size = 1
    list(engine.complete(requests[:1], params))  # warm-up
    rates = {}
    for size in (8, 1):
        engine.batch_size = size
        t0 = time.perf_counter()
        tokens = sum(c.completion_tokens or 0 for c in engine.complete(requests, params))
        rates[size] = tokens / (time.perf_counter() - t0)
        print(
            f"local batch {size}: {tokens} tokens, {rates[size]:.1f} tokens/s "
            f"({torch.get_num_threads()} threads)"
        )
    ratio = rates[8] / rates[1]
    line("local tokens/s, batch 8 / one at a time", f"{ratio:.2f}x", ">= 3x", ratio >= 3)


def bench_load() -> None:
    import torch  # noqa: F401  (imports are not part of either load)
    import transformers  # noqa: F401

    from harness.models import embedded

    with tempfile.TemporaryDirectory() as cache:
        os.environ["HARNESS_CACHE"] = cache
        times = []
        for _ in range(2):
            t0 = time.perf_counter()
            embedded.load_tokenizer()
            embedded.load_model()
            times.append(time.perf_counter() - t0)
    print(f"embedded model load: first (conversion) {times[0]:.2f} s, cached {times[1]:.2f} s")
    line(
        "model load, first / cached",
        f"{times[0] / times[1]:.1f}x",
        ">= 10x",
        times[0] / times[1] >= 10,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="collect-stage benchmarks")
    parser.add_argument("--only", choices=["throughput", "local", "load"])
    args = parser.parse_args()
    for name, bench in (
        ("throughput", bench_throughput),
        ("local", bench_local),
        ("load", bench_load),
    ):
        if args.only in (None, name):
            bench()


if __name__ == "__main__":
    main()
