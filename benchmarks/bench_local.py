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
   interpreter runs this file as a worker and needs nothing but llama_cpp);
5. with --llama-server, llama.cpp as a user would serve it (`llama_server.py`): llama.cpp's
   `llama-server` binary with `--llama-slots` parallel slots (default: the best local batch), or
   `python -m llama_cpp.server` (one completion at a time), on the same GGUF; the same prompts
   as chat requests, as many at once as the best local batch (and 1, and the slot count),
   tokens counted from the server's `usage`. The backend at its best batch and the server at
   that concurrency alternate for `--rounds` rounds so that load falls on both; the load average
   is printed before and after every measurement.

Both engines use `--threads` threads (default: every CPU). Goals: best local batch / llama.cpp
single-stream >= 1.0, and best local batch / llama.cpp server at that concurrency >= 1.0.
Run: .venv/bin/python benchmarks/bench_local.py [--llama-python /path/to/python]
     [--llama-server /path/to/llama-server or /path/to/python] [--llama-slots N] [--rounds 2]
     [--threads N] [--batch-sizes 1,8,16,32] [--prompts 18] [--max-tokens 128] [--generic]
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


def line(name: str, value: str, goal: str = "", met: bool | None = None, load: str = "") -> None:
    verdict = "" if met is None else ("met" if met else "NOT met")
    goal = f"goal {goal}" if goal else ""
    print(f"{name:<46} {value:<34} {goal:<13} {verdict:<7} {load}".rstrip())


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
) -> tuple[dict[str, dict[int, float]], dict[str, dict[str, str]]]:
    """Tokens/s of each backend at each batch size, the backends alternating at every size so
    that a change in the machine's load falls on both; reports whether texts differ. Returns
    the rates and each backend's texts at the first size."""
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
            tokens, elapsed, texts[label][size], load = run_backend(engine, size, requests, params)
            rates[label][size] = tokens / elapsed
            value = f"{tokens} tokens, {rates[label][size]:.1f} tokens/s"
            line(f"{label}, batch {size}", value, load=load)
    for label, runs in texts.items():
        first = runs[sizes[0]]
        differing = {s: sum(t[k] != first[k] for k in first) for s, t in runs.items()}
        same = all(d == 0 for d in differing.values())
        detail = "byte-identical" if same else f"texts differing from batch {sizes[0]}: {differing}"
        line(f"{label}: same seed, every batch size", detail, "identical", same)
    return rates, {label: runs[sizes[0]] for label, runs in texts.items()}


def precision_cost(engine: Any, reference: Any, texts: dict[str, str], n: int) -> None:
    """How far the backend's precision moves the model from float32: both predict every next
    token of the float32 completions (teacher-forced, each text alone); prints how often their
    most likely token agrees and the mean KL divergence at the sampling temperature."""
    import torch

    from harness.models.base import GenerationParams

    params = GenerationParams(TEMPERATURE, TOP_P, 1, seed=SEED)
    ours, theirs = engine._decoder(params), reference._decoder(params)
    agree, total, divergence = 0, 0, 0.0
    for key, chat in zip([f"p{i}" for i in range(n)], messages(n), strict=True):
        prompt = engine._prompt_ids(chat)
        answer = engine._tokenizer(texts[key], add_special_tokens=False)["input_ids"]
        cut = len(prompt) - 1  # the prediction of the answer's first token onwards
        a = ours.sequence_logits(prompt + answer)[cut:] / TEMPERATURE
        b = theirs.sequence_logits(prompt + answer)[cut:] / TEMPERATURE
        agree += int((a.argmax(-1) == b.argmax(-1)).sum())
        total += len(a)
        p, q = torch.log_softmax(b, -1), torch.log_softmax(a, -1)
        divergence += float((p.exp() * (p - q)).sum())
    line(
        f"{engine.run_settings()['matmul_dtype']} vs float32, next token",
        f"top-1 agrees {agree / total:.1%}, KL {divergence / total:.4f} nats",
    )
    print(f"  ({total} positions of the float32 texts, temperature {TEMPERATURE})")


def run_backend(
    engine: Any, size: int, requests: list[Any], params: Any
) -> tuple[int, float, dict[str, str], str]:
    """(completion tokens, seconds, text by key, load average before -> after) of one run at
    batch `size`."""
    from llama_server import load_average

    engine.batch_size = size
    before, t0 = load_average(), time.perf_counter()
    done = list(engine.complete(requests, params))
    elapsed = time.perf_counter() - t0
    texts = {c.key: c.text for c in done}
    return (
        sum(c.completion_tokens or 0 for c in done),
        elapsed,
        texts,
        f"load {before} -> {load_average()}",
    )


def generic_backend(threads: int) -> Any:
    """The generic decoder (one shared cache, float32), as every model decoded before the
    per-row caches; its own copy of the weights, so the backend's keep their compute dtype."""
    from harness.models._decode import Decoder
    from harness.models.base import GenerationParams
    from harness.models.local import LocalBackend, sample_tokens

    class Generic(LocalBackend):
        def _decoder(self, params: GenerationParams, shared: Any = ()) -> Decoder:
            pad = self._tokenizer.pad_token_id
            return Decoder(self._lm, self._cache_arg, pad, self._eos, params, sample_tokens)

    return Generic(threads=threads).load()


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


def bench_server(
    server: str, engine: Any, best: int, slots: int, args: argparse.Namespace
) -> tuple[list[float], dict[int, list[float]]] | None:
    """The backend at batch `best` and a llama.cpp server at as many concurrent requests,
    alternating for `args.rounds` rounds; the server also at 1 and at `slots` requests in the
    first round. Returns (backend rates, server rates by concurrency), None if it failed."""
    import llama_server as ls

    from harness.models import ChatRequest, GenerationParams

    prompts = messages(args.prompts)
    requests = [ChatRequest(f"p{i}", m) for i, m in enumerate(prompts)]
    params = GenerationParams(TEMPERATURE, TOP_P, args.max_tokens, seed=SEED)
    settings = {"temperature": TEMPERATURE, "top_p": TOP_P, "top_k": 0, "min_p": 0.0}
    settings |= {"repeat_penalty": 1.0, "max_tokens": args.max_tokens}
    ours = sum(len(engine._prompt_ids(m)) for m in prompts)
    try:
        with ls.Server(server, engine.path, args.threads, slots) as srv:
            srv.run(prompts[:1], 1, {**settings, "max_tokens": 8})  # warm-up
            print(f"llama.cpp server: {' '.join(srv.argv[:2])}... {srv.slots} slot(s)")
            print(f"  its CPU backend and weights: {srv.engine()}")
            local: list[float] = []
            remote: dict[int, list[float]] = {}
            for round_ in range(args.rounds):
                levels = [best] if round_ else sorted({1, best, srv.slots})
                tokens, seconds, _, load = run_backend(engine, best, requests, params)
                local.append(tokens / seconds)
                value = f"{tokens} tokens, {local[-1]:.1f} tokens/s"
                line(f"round {round_ + 1}: local backend, batch {best}", value, load=load)
                for level in levels:
                    before = ls.load_average()
                    tokens, prompt_tokens, seconds = srv.run(prompts, level, settings)
                    load = f"load {before} -> {ls.load_average()}"
                    remote.setdefault(level, []).append(tokens / seconds)
                    value = f"{tokens} tokens, {tokens / seconds:.1f} tokens/s"
                    line(f"round {round_ + 1}: llama.cpp server, {level} at once", value, load=load)
            print(f"  prompt tokens: the server's usage {prompt_tokens}, the backend's {ours}")
    except (RuntimeError, OSError) as error:
        print(f"llama.cpp server: not measured ({error})")
        return None
    return local, remote


def llama_python(given: str | None) -> str | None:
    if given:
        return given
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return None
    return sys.executable


def main() -> None:
    args = parse_args()
    if args.llama_worker:
        return llama_worker()
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import torch

    from harness.defaults import available_cpus
    from harness.models.local import LocalBackend

    args.threads = args.threads or available_cpus()
    engine = LocalBackend(threads=args.threads, precision=args.precision).load()
    print(
        f"{args.prompts} prompts, up to {args.max_tokens} tokens, {torch.get_num_threads()} "
        f"threads, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs, "
        f"OMP_WAIT_POLICY {os.environ.get('OMP_WAIT_POLICY', 'unset')}"
    )
    sizes = [int(s) for s in args.batch_sizes.split(",")]
    engines = {"local backend": engine}
    precision = engine.matmul_precision()
    if precision != "float32":  # its own weights: the precisions convert them
        engines["local backend, float32"] = LocalBackend(threads=args.threads, precision="float32")
        engines["local backend, float32"].load()
    if args.generic:
        engines["generic decoder (float32)"] = generic_backend(args.threads)
    measured, texts = bench_backends(engines, sizes, args.prompts, args.max_tokens)
    rates, generic = measured["local backend"], measured.get("generic decoder (float32)", {})
    print(f"(the backend computed in {precision}; generate in float32)")
    if precision != "float32":
        exact = measured["local backend, float32"]
        for size in sizes:
            line(f"local {precision} / float32, batch {size}", f"{rates[size] / exact[size]:.2f}x")
        reference = engines["local backend, float32"]
        precision_cost(engine, reference, texts["local backend, float32"], args.prompts)
    best = max(rates, key=lambda s: rates[s])
    plain = engines.get("local backend, float32", engine)  # generate runs the float32 model
    generate = bench_generate(plain, best, args.prompts, args.max_tokens)
    python = llama_python(args.llama_python)
    llama = bench_llama(python, engine, args.prompts, args.max_tokens) if python else None
    if python is None:
        print("llama.cpp: not measured (no llama_cpp here; give --llama-python)")
    served = None
    if args.llama_server:
        slots = args.llama_slots or best
        served = bench_server(args.llama_server, engine, best, slots, args)
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
    if served is not None:
        side_by_side(engine, best, served, args)


def side_by_side(
    engine: Any, best: int, served: tuple[list[float], dict[int, list[float]]], args: Any
) -> None:
    """The backend at its best batch beside the server, the means of the alternated rounds."""
    import torch
    from llama_server import cpu_flags, gguf_types

    local, remote = served
    mean = sum(local) / len(local)
    print()
    line("local backend vs llama.cpp server", f"{args.threads} threads each")
    line("  CPU flags", " ".join(f"{f}={'yes' if v else 'no'}" for f, v in cpu_flags().items()))
    line("  local backend matrix precision", engine.run_settings()["matmul_dtype"])
    line("  local backend threads (torch)", str(torch.get_num_threads()))
    line("  llama.cpp weights (GGUF tensor types)", gguf_types(engine.path))
    line(f"  local backend, batch {best}", f"{mean:.1f} tokens/s (mean of {len(local)})")
    for level, values in sorted(remote.items()):
        value = f"{sum(values) / len(values):.1f} tokens/s (mean of {len(values)})"
        line(f"  llama.cpp server, {level} at once", value)
    server = sum(remote[best]) / len(remote[best])
    ratio = mean / server
    line(f"  local batch {best} / server {best} at once", f"{ratio:.2f}x", ">= 1.0", ratio >= 1)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="local backend vs generate vs llama.cpp")
    parser.add_argument("--llama-python", help="interpreter with llama-cpp-python installed")
    parser.add_argument(
        "--llama-server",
        help="llama.cpp's llama-server binary, or an interpreter with llama-cpp-python[server]",
    )
    parser.add_argument("--llama-slots", type=int, help="server slots (default: best batch)")
    parser.add_argument("--rounds", type=int, default=2, help="alternated backend/server rounds")
    parser.add_argument("--threads", type=int, help="for both engines (default: every CPU)")
    parser.add_argument("--batch-sizes", default="1,8,16,32")
    parser.add_argument(
        "--precision",
        default="auto",
        choices=["auto", "float32", "bfloat16", "int8"],
        help="the backend's matrix products (auto: as collect; float32 is timed beside it)",
    )
    parser.add_argument("--prompts", type=int, default=PROMPTS)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument(
        "--generic", action="store_true", help="also time the generic decoder (float32)"
    )
    parser.add_argument("--llama-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not 1 <= args.prompts <= PROMPTS:
        parser.error(f"--prompts must be between 1 and {PROMPTS}")
    if min(args.rounds, args.threads or 1, args.llama_slots or 1) < 1:
        parser.error("--rounds, --threads and --llama-slots must be at least 1")
    return args


if __name__ == "__main__":
    main()
