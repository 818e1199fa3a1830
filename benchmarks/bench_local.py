"""Local backend decoding speed against transformers' `generate` and llama.cpp, side by side.

One run, the same 18 chat prompts and the same weights (the embedded GGUF; transformers reads
its converted copy), sampling as collect does (temperature 0.7, top-p 0.95, up to 128 tokens):

1. the local backend at batch sizes 1, 8, 16 and 32 (tokens/s; the best is the headline), and
   whether every batch size gave byte-identical texts (per-completion seeds promise that);
2. transformers' own `model.generate` on the same model object, batched at the best local batch
   size, same sampling settings: always measured;
3. with --generic, the generic decoder (one shared cache, float32: how every model decoded
   before the per-row caches) at the same batch sizes, on a second copy of the weights,
   alternating with the backend at every batch size;
4. llama.cpp one request at a time through llama-cpp-python on the GGUF file itself, when
   `import llama_cpp` works here or `--llama-python` names an interpreter where it does (that
   interpreter runs this file as a worker and needs nothing but llama_cpp).

Goal: best local batch / llama.cpp single-stream >= 1.0.
Run: .venv/bin/python benchmarks/bench_local.py [--llama-python /path/to/python]
     [--batch-sizes 1,8,16,32] [--prompts 18] [--max-tokens 128] [--generic]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TEMPERATURE, TOP_P, SEED = 0.7, 0.95, 0
PROMPTS = 18  # bench_collect's 16 topics and two more


def line(name: str, value: str, goal: str = "", met: bool | None = None) -> None:
    verdict = "" if met is None else ("met" if met else "NOT met")
    print(f"{name:<46} {value:<34} {('goal ' + goal) if goal else '':<13} {verdict}")


def messages(n: int) -> list[list[dict[str, str]]]:
    from bench_collect import TOPICS  # this folder is on sys.path when a script runs from it

    subjects = [*TOPICS, "volcanoes", "chess openings"]
    pairs = zip(subjects, subjects[7:] + subjects[:7], strict=True)
    return [
        [{"role": "user", "content": f"Explain in detail how research on {a} could inform {b}."}]
        for a, b in list(pairs)[:n]
    ]


def bench_backends(
    engines: dict[str, Any], sizes: list[int], n: int, max_tokens: int
) -> dict[str, dict[int, float]]:
    """Tokens/s of each backend at each batch size, the backends alternating at every size so
    that a change in the machine's load falls on both; reports whether texts differ."""
    from harness.models import ChatRequest, GenerationParams

    requests = [ChatRequest(f"p{i}", m) for i, m in enumerate(messages(n))]
    params = GenerationParams(TEMPERATURE, TOP_P, max_tokens, seed=SEED)
    rates: dict[str, dict[int, float]] = {label: {} for label in engines}
    texts: dict[str, dict[int, dict[str, str]]] = {label: {} for label in engines}
    for engine in engines.values():
        engine.batch_size = 1
        list(engine.complete(requests[:1], GenerationParams(TEMPERATURE, TOP_P, 8, seed=SEED)))
    for size in sizes:
        for label, engine in engines.items():
            engine.batch_size = size
            t0 = time.perf_counter()
            done = list(engine.complete(requests, params))
            elapsed = time.perf_counter() - t0
            tokens = sum(c.completion_tokens or 0 for c in done)
            rates[label][size] = tokens / elapsed
            texts[label][size] = {c.key: c.text for c in done}
            line(f"{label}, batch {size}", f"{tokens} tokens, {rates[label][size]:.1f} tokens/s")
    for label, runs in texts.items():
        first = runs[sizes[0]]
        differing = {s: sum(t[k] != first[k] for k in first) for s, t in runs.items()}
        same = all(d == 0 for d in differing.values())
        detail = "byte-identical" if same else f"texts differing from batch {sizes[0]}: {differing}"
        line(f"{label}: same seed, every batch size", detail, "identical", same)
    return rates


def generic_backend() -> Any:
    """The generic decoder (one shared cache, float32), as every model decoded before the
    per-row caches; its own copy of the weights, so the backend's keep their compute dtype."""
    from harness.models._decode import Decoder
    from harness.models.base import GenerationParams
    from harness.models.local import LocalBackend, sample_tokens

    class Generic(LocalBackend):
        def _decoder(self, params: GenerationParams) -> Decoder:
            pad = self._tokenizer.pad_token_id
            return Decoder(self._lm, self._cache_arg, pad, self._eos, params, sample_tokens)

    return Generic().load()


def bench_generate(engine: Any, batch: int, n: int, max_tokens: int) -> float:
    """Tokens/s of transformers' `generate`, batched, on the backend's own model object."""
    import torch

    lm, tok = engine._lm, engine._tokenizer
    prompts = [engine._prompt_ids(m) for m in messages(n)]
    prompts.sort(key=len)
    eos = sorted(engine._eos)
    torch.manual_seed(SEED)
    tokens, t0 = 0, time.perf_counter()
    for start in range(0, n, batch):
        chunk = prompts[start : start + batch]
        width = max(len(p) for p in chunk)
        ids = torch.tensor([[tok.pad_token_id] * (width - len(p)) + p for p in chunk])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in chunk])
        with torch.inference_mode():
            out = lm.generate(
                input_ids=ids.to(lm.device),
                attention_mask=mask.to(lm.device),
                do_sample=True,
                temperature=TEMPERATURE,
                top_p=TOP_P,
                top_k=0,
                max_new_tokens=max_tokens,
                eos_token_id=eos,
                pad_token_id=tok.pad_token_id,
            )
        for row in out[:, width:].tolist():  # tokens before the first end-of-sequence token
            tokens += next((i for i, t in enumerate(row) if t in eos), len(row))
    rate = tokens / (time.perf_counter() - t0)
    line(f"transformers generate, batch {batch}", f"{tokens} tokens, {rate:.1f} tokens/s")
    return rate


def bench_llama(python: str, engine: Any, n: int, max_tokens: int) -> float | None:
    """Tokens/s of llama.cpp one request at a time, in a worker process; None if unavailable."""
    import torch

    job = {
        "gguf": str(engine.path),
        "prompts": [engine._prompt_ids(m) for m in messages(n)],
        "max_tokens": max_tokens,
        "threads": torch.get_num_threads(),
    }
    run = subprocess.run(
        [python, __file__, "--llama-worker"],
        input=json.dumps(job),
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        tail = (run.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"llama.cpp: not measured ({python}: {tail})")
        return None
    result = json.loads(run.stdout.strip().splitlines()[-1])
    rate = float(result["tokens"]) / float(result["seconds"])
    line("llama.cpp, one request at a time", f"{result['tokens']} tokens, {rate:.1f} tokens/s")
    return rate


def llama_worker() -> None:
    """Generate every prompt with llama.cpp, one at a time; print tokens and seconds as JSON."""
    from llama_cpp import Llama

    job = json.loads(sys.stdin.read())
    llm = Llama(
        model_path=job["gguf"], n_ctx=2048, n_threads=job["threads"], seed=SEED, verbose=False
    )
    settings = {"temperature": TEMPERATURE, "top_p": TOP_P, "top_k": 0, "min_p": 0.0}
    settings["repeat_penalty"] = 1.0  # the other two apply none either
    llm.create_completion(prompt=job["prompts"][0], max_tokens=8, **settings)  # warm-up
    tokens, t0 = 0, time.perf_counter()
    for ids in job["prompts"]:
        out = llm.create_completion(prompt=ids, max_tokens=job["max_tokens"], **settings)
        tokens += out["usage"]["completion_tokens"]
    print(json.dumps({"tokens": tokens, "seconds": time.perf_counter() - t0}))


def llama_python(given: str | None) -> str | None:
    if given:
        return given
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return None
    return sys.executable


def main() -> None:
    parser = argparse.ArgumentParser(description="local backend vs generate vs llama.cpp")
    parser.add_argument("--llama-python", help="interpreter with llama-cpp-python installed")
    parser.add_argument("--batch-sizes", default="1,8,16,32")
    parser.add_argument("--prompts", type=int, default=PROMPTS)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument(
        "--generic", action="store_true", help="also time the generic decoder (float32)"
    )
    parser.add_argument("--llama-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.llama_worker:
        return llama_worker()
    if not 1 <= args.prompts <= PROMPTS:
        parser.error(f"--prompts must be between 1 and {PROMPTS}")
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import torch

    from harness.models.local import LocalBackend

    engine = LocalBackend().load()
    print(
        f"{args.prompts} prompts, up to {args.max_tokens} tokens, {torch.get_num_threads()} "
        f"threads, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    sizes = [int(s) for s in args.batch_sizes.split(",")]
    engines = {"local backend": engine}
    if args.generic:
        engines["generic decoder (float32)"] = generic_backend()
    measured = bench_backends(engines, sizes, args.prompts, args.max_tokens)
    rates, generic = measured["local backend"], measured.get("generic decoder (float32)", {})
    print(f"(the backend computed in {next(engine._lm.parameters()).dtype}; generate uses it too)")
    best = max(rates, key=lambda s: rates[s])
    generate = bench_generate(engine, best, args.prompts, args.max_tokens)
    python = llama_python(args.llama_python)
    llama = bench_llama(python, engine, args.prompts, args.max_tokens) if python else None
    if python is None:
        print("llama.cpp: not measured (no llama_cpp here; give --llama-python)")
    top = rates[best]
    line(f"local best (batch {best}) / generate", f"{top / generate:.2f}x")
    if 1 in rates and best != 1:
        line(f"local best (batch {best}) / local batch 1", f"{top / rates[1]:.2f}x")
    if generic:
        before = max(generic, key=lambda s: generic[s])
        line(f"local best / generic decoder best (batch {before})", f"{top / generic[before]:.2f}x")
    if llama is not None:
        ratio = top / llama
        line(f"local best (batch {best}) / llama.cpp single", f"{ratio:.2f}x", ">= 1.0", ratio >= 1)
        line("generate / llama.cpp single", f"{generate / llama:.2f}x")


if __name__ == "__main__":
    main()
