"""The demo's batch size for the local model, measured side by side in one run.

The embedded model answers the demo's own prompts (the first N of a generated 60-topic subset,
sampling and length as the demo's collect) at batch 8 (the backend's default), at
DEMO_BATCH_SIZE and at 8 again, all in one process sharing the loaded weights; the second batch-8
run shows how much the machine's load moved between runs. Prints tokens per second and the ratio
DEMO_BATCH_SIZE / batch 8 (against the mean of the two batch-8 runs). Every run draws the same
tokens (per-completion generators), which the script checks, so the ratio is a ratio of times.
Goal: at least 1.15x, the speed-up of generation the demo's two configurations need to stay
within 20 minutes on 2 cores, venv included (README, "Measured").

Run: .venv/bin/python benchmarks/bench_local_batch.py [--prompts 48]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from harness.models.base import ChatRequest, GenerationParams  # noqa: E402
from harness.models.local import LocalBackend  # noqa: E402
from harness.pipeline.run_settings import RUN_MAX_TOKENS  # noqa: E402
from harness.pipeline.runner import DEMO_BATCH_SIZE  # noqa: E402
from harness.study import Study  # noqa: E402

GOAL = 1.15


def demo_requests(count: int) -> list[ChatRequest]:
    from harness.generation.generate_stage import generate

    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp) / "s", subset=60)
        with Study.open(Path(tmp) / "s") as study:
            rows = study.rows("SELECT prompt_id, system, text FROM prompts ORDER BY prompt_id")
    requests = []
    for prompt_id, system, text in rows[:count]:
        messages = [{"role": "system", "content": system}] if system else []
        requests.append(ChatRequest(prompt_id, [*messages, {"role": "user", "content": text}]))
    return requests


def timed(
    base: LocalBackend, batch: int, requests: list[ChatRequest]
) -> tuple[float, float, list[str]]:
    """(wall seconds, CPU seconds of this process, texts) of one run."""
    backend = LocalBackend(None, batch_size=batch, lm=base._lm, tokenizer=base._tokenizer).load()
    params = GenerationParams(max_tokens=RUN_MAX_TOKENS)  # the demo's sampling and length
    start, cpu = time.perf_counter(), time.process_time()
    done = sorted(backend.complete(requests, params), key=lambda c: c.key)
    texts = [c.text or "" for c in done]
    return time.perf_counter() - start, time.process_time() - cpu, texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=48)
    requests = demo_requests(parser.parse_args().prompts)
    base = LocalBackend(None).load()
    timed(base, 8, requests[:4])  # warm-up: first-call overheads stay out of the ratio
    runs = [(batch, *timed(base, batch, requests)) for batch in (8, DEMO_BATCH_SIZE, 8)]
    texts = {tuple(t) for *_, t in runs}
    tokens = sum(len(base._tokenizer(t)["input_ids"]) for t in runs[0][3])
    for batch, wall, cpu, _ in runs:
        print(
            f"batch {batch:>2}: {wall:7.1f} s wall, {cpu:7.1f} s CPU, {tokens / wall:6.1f} tokens/s"
        )
    print(f"same completions at every batch size: {'yes' if len(texts) == 1 else 'NO'}")
    # CPU seconds are the steadier measure on a shared machine; wall time is what a user waits
    for name, column in (("wall", 1), ("CPU", 2)):
        ratio = (runs[0][column] + runs[2][column]) / 2 / runs[1][column]
        print(
            f"batch {DEMO_BATCH_SIZE} vs 8 ({name} time): {ratio:.2f}x (goal >= {GOAL}x) -> "
            f"{'PASS' if ratio >= GOAL else 'FAIL'}"
        )


if __name__ == "__main__":
    main()
