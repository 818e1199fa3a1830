"""The local backend with and without the row caches' shortcuts, side by side, on the demo's work.

Two workloads, each decoded by the same loaded model at the same thread count, twice over with
the two settings alternating (so that a change of load falls on both):

1. collect-shaped: research-brief prompts as the demo's (two concepts, a relation), sampled at
   temperature 0.7, top-p 0.95, up to 80 tokens, 32 rows per batch;
2. the blinded steps: extraction and normalisation (prompts/judge/*.j2, the requests `judge
   --blind` sends: `blinded_items._requests`, greedy) of the texts workload 1 wrote, both steps
   in one call of shared batches, as `judge --blind` decodes them.

"shortcuts" is the backend as it runs (where a row's product does not depend on the other rows:
the prompt beginning a group shares prefilled once, joining prompts prefilled within the
decoding rows' pass, no padding rows); "plain" turns them off (every prompt prefilled whole and
alone, decoding rows padded to multiples of eight), as the backend decoded before. Prints each
one's best wall and CPU seconds (CPU time is the work, and varies less with the machine's load:
compare at --threads 1 on a busy machine), the speedup in CPU time, and whether the two gave
byte-identical texts (they must). Goal (issue 45): the blinded steps at half the work or less,
a speedup of 2.0, with identical texts; the figures are in docs/timings.md.

Run: .venv/bin/python benchmarks/bench_blind_steps.py [--texts 96] [--threads N] [--rounds 2]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench_collect import TOPICS  # noqa: E402

from harness.judge.items import blinded_items  # noqa: E402
from harness.models import _rowcache  # noqa: E402
from harness.models.base import ChatRequest, GenerationParams  # noqa: E402
from harness.models.local import LocalBackend  # noqa: E402

BRIEF = (
    "Research brief. First concept: {a}. Second concept: {b}. Relation to examine: an "
    "unexpected interaction. Describe one concrete research idea that links the two concepts "
    "through this relation. Give the core combination in one sentence, then say in up to three "
    "sentences how a study could test it."
)
COLLECT = GenerationParams(temperature=0.7, top_p=0.95, max_tokens=80, seed=20261202)


class Plain(LocalBackend):
    """The backend with its shortcuts off: every prompt prefilled whole and alone, decoding rows
    padded as where the products depend on the row count."""

    def _decoder(self, params: GenerationParams, shared: Any = ()) -> Any:
        decoder = super()._decoder(params)
        if isinstance(decoder, _rowcache.RowDecoder):
            decoder.rows_exact = False
        return decoder


def run(
    engine: Any, groups: list[tuple[list[ChatRequest], GenerationParams]]
) -> tuple[float, float, int, dict]:
    """(wall s, CPU s, completion tokens, texts by (group, key)) of one call over `groups`."""
    wall, cpu, tokens, texts = time.perf_counter(), time.process_time(), 0, {}
    for group, completion in engine.complete_groups(groups):
        tokens += completion.completion_tokens or 0
        texts[(group, completion.key)] = completion.text
    return time.perf_counter() - wall, time.process_time() - cpu, tokens, texts


def compare(name: str, engines: dict[str, Any], groups: list, rounds: int, goal: float) -> dict:
    """Alternate the engines `rounds` times; print each one's best seconds and the speedup."""
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    texts: dict[str, dict] = {}
    for _ in range(rounds):
        for label, engine in engines.items():
            seconds, work, tokens, texts[label] = run(engine, groups)
            wall[label] = min(wall.get(label, seconds), seconds)
            cpu[label] = min(cpu.get(label, work), work)
            print(f"  {name} {label:<9} {tokens} tokens: wall {seconds:6.1f} s, CPU {work:6.1f} s")
    same = texts["shortcuts"] == texts["plain"]
    speedup = cpu["plain"] / cpu["shortcuts"]
    verdict = "met" if speedup >= goal and same else "NOT met"
    print(
        f"{name:<16} shortcuts wall {wall['shortcuts']:6.1f} s CPU {cpu['shortcuts']:6.1f} s"
        f"  plain wall {wall['plain']:6.1f} s CPU {cpu['plain']:6.1f} s  speedup (CPU)"
        f" {speedup:.2f}  texts identical: {same}   goal >= {goal}  {verdict}",
        flush=True,
    )
    return texts["shortcuts"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--texts", type=int, default=96)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    shortcuts = LocalBackend(batch_size=32, threads=args.threads).load()
    plain = Plain(
        batch_size=32, threads=args.threads, lm=shortcuts._lm, tokenizer=shortcuts._tokenizer
    ).load()
    engines = {"shortcuts": shortcuts, "plain": plain}
    settings = shortcuts.run_settings()
    print(f"threads {settings['threads_used']}, {settings['matmul_dtype']}, {os.cpu_count()} CPUs")
    pairs = itertools.islice(itertools.permutations(TOPICS, 2), args.texts)
    briefs = [
        ChatRequest(f"b{i}", [{"role": "user", "content": BRIEF.format(a=a, b=b)}])
        for i, (a, b) in enumerate(pairs)
    ]
    written = compare("collect-shaped", engines, [(briefs, COLLECT)], args.rounds, 1.0)
    outputs = [(key, text) for (_, key), text in sorted(written.items()) if text and text.strip()]
    specs = blinded_items.step_specs(extract=True, normalise=True)
    steps = [(blinded_items._requests(s, outputs), blinded_items._params(s)) for s in specs]
    compare("blinded steps", engines, steps, args.rounds, 2.0)


if __name__ == "__main__":
    main()
