"""Attention-geometry speed, measured side by side in one run.

1. The seed's two programs, run verbatim (below, as printed in the seed document), against the
   vectorised `scaling_experiment` and `fields_experiment`: same printed output, same per-trial
   floats bit for bit, and the time ratio.
2. Whole processes: `python seed_program.py` against `harness geometry scaling` (start-up, imports
   and printing included), alternated round by round, with the median of the per-round ratios
   (goal: at least 4x).
3. The probe on a generated study (bundled topic bank, 60 topics = 180 prompts) with the embedded
   model: batched forward passes against one prompt per pass, on the same prompts.

Usage: python benchmarks/bench_geometry.py [--no-probe] [--topics 60]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.defaults import available_cpus  # noqa: E402
from harness.geometry._pyfloat import libm  # noqa: E402
from harness.geometry.pyrandom import TWOPI, PythonRandom  # noqa: E402
from harness.geometry.seeds import fields_experiment, scaling_experiment  # noqa: E402

SEED_SCALING_PROGRAM = """
import math, random

# Why divide by √d_k: dot products of random d-dimensional vectors have variance d,
# so without scaling the softmax over 16 keys becomes nearly one-hot as d grows.
random.seed(1)
def softmax_entropy(scores):
    m = max(scores)
    w = [math.exp(s - m) for s in scores]
    z = sum(w)
    return -sum((x / z) * math.log2(x / z) for x in w if x > 0)

for d in (16, 64, 256, 1024):
    raw, scaled = [], []
    for _ in range(200):
        q = [random.gauss(0, 1) for _ in range(d)]
        ks = [[random.gauss(0, 1) for _ in range(d)] for _ in range(16)]
        s = [sum(a * b for a, b in zip(q, k)) for k in ks]
        raw.append(softmax_entropy(s))
        scaled.append(softmax_entropy([x / math.sqrt(d) for x in s]))
    print(f"d_k = {d:4d}: attention entropy without scaling {sum(raw) / 200:4.2f} bits, "
          f"with 1/√d_k {sum(scaled) / 200:4.2f} bits (maximum 4.00)")
"""

SEED_FIELDS_PROGRAM = '''
import math, random

random.seed(4)
D = 12                                    # embedding dimension
def unit(v):
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]

# Three "fields", each a cluster of 4 keys around its own direction in a 12-d space.
fields = {"acoustics": 0, "control theory": 4, "Buddhist texts": 8}
keys, labels = [], []
for name, start in fields.items():
    centre = [1.0 if start <= i < start + 4 else 0.0 for i in range(D)]
    for _ in range(4):
        keys.append(unit([c + random.gauss(0, 0.25) for c in centre]))
        labels.append(name)
values = keys                             # let each key carry its own content

def attention(q, scale=3.0):
    """Softmax of scaled dot products. With unit vectors, 'scale' stands in for the
    learned length of the projected queries and keys divided by √d_k."""
    s = [scale * sum(a * b for a, b in zip(q, k)) for k in keys]
    m = max(s)
    w = [math.exp(x - m) for x in s]
    z = sum(w)
    return [x / z for x in w]

def report(name, q):
    w = attention(q)
    per = {f: sum(wi for wi, l in zip(w, labels) if l == f) for f in fields}
    out = [sum(wi * v[i] for wi, v in zip(w, values)) for i in range(D)]
    print(f"{name:34s} weight by field: " + ", ".join(f"{f} {per[f]:.2f}" for f in fields)
          + f" | weight entropy {-sum(x * math.log2(x) for x in w):.2f} bits")
    return out

q1 = unit([1.0 if i < 4 else 0.0 for i in range(D)])                       # one field only
q2 = unit([1.0 if i < 4 else (1.0 if 4 <= i < 8 else 0.0) for i in range(D)])  # two fields
q3 = unit([1.0] * D)                                                        # everything at once
for n, q in (("query inside acoustics", q1), ("query spanning acoustics + control", q2),
             ("query with no direction", q3)):
    report(n, q)
'''


def run_program(source: str) -> tuple[str, dict]:
    """Execute a seed program as written; return what it printed and its final variables."""
    namespace: dict = {"__name__": "seed_program"}
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(source, "seed_program", "exec"), namespace)  # noqa: S102
    return buffer.getvalue().rstrip("\n"), namespace


def best_of(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def same_bits(a: object, b: object) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


def bench_scaling() -> None:
    t_ref, (printed, env) = best_of(lambda: run_program(SEED_SCALING_PROGRAM), 2)
    t_vec, result = best_of(scaling_experiment, 5)
    same_text = "\n".join(result.lines()) == printed
    # the program's variables hold the last dimension's per-trial entropies
    same_floats = same_bits(result.raw[1024], env["raw"]) and same_bits(
        result.scaled[1024], env["scaled"]
    )
    report("scaling (seed 1, 200 trials x 4 dims)", t_ref, t_vec, same_text and same_floats)
    print(printed)
    bench_floor(t_ref)


def bench_floor(t_ref: float) -> None:
    """The part no vectorisation removes. Python's Mersenne Twister stream is sequential; the C
    library's cos, sin and log per Box-Muller pair, which bit-identical output requires, can only
    be spread over cores. Timed on the seed's own arguments (angles in [0, 2 pi), 1 - u)."""
    n = 200 * 17 * sum((16, 64, 256, 1024))  # gauss draws of the seed program
    t_mt, u = best_of(lambda: PythonRandom(1).random(n), 3)
    angles, tails = u[0::2] * TWOPI, 1.0 - u[1::2]
    t_libm, _ = best_of(
        lambda: [libm(np.cos, angles), libm(np.sin, angles), libm(np.log, tails)], 3
    )
    cores = available_cpus()
    one_core, all_cores = t_mt + t_libm, max(t_mt, (t_mt + t_libm) / cores)
    print(
        f"  floor: {n} uniforms {t_mt * 1e3:.1f} ms (sequential) + C-library cos/sin/log "
        f"{t_libm * 1e3:.1f} ms (parallel)"
    )
    print(
        f"  ceiling for bit-identical output: {t_ref / one_core:.0f}x on one core, "
        f"{t_ref / all_cores:.0f}x on this machine's {cores}, "
        f"{t_ref / t_mt:.0f}x with unlimited cores"
    )


def bench_scaling_process(rounds: int = 15) -> None:
    """The seed's scaling program as its own process against `harness geometry scaling`."""
    harness = shutil.which("harness") or f"{sys.prefix}/bin/harness"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp) / "seed_scaling.py"
        program.write_text(SEED_SCALING_PROGRAM, encoding="utf-8")
        commands = {"seed program": [sys.executable, str(program)], "harness": [harness]}
        commands["harness"] += ["geometry", "scaling"]
        outputs = {}
        for name, argv in commands.items():  # warm the file cache and the bytecode
            outputs[name] = subprocess.run(argv, check=True, capture_output=True, env=env).stdout
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(rounds):
            for name, argv in commands.items():
                start = time.perf_counter()
                subprocess.run(argv, check=True, capture_output=True, env=env)
                samples[name].append(time.perf_counter() - start)
    ratios = sorted(a / b for a, b in zip(samples["seed program"], samples["harness"], strict=True))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    print(
        f"{'scaling, whole process':40s} seed program {medians['seed program'] * 1e3:9.1f} ms | "
        f"harness geometry scaling {medians['harness'] * 1e3:7.1f} ms | "
        f"{statistics.median(ratios):.1f}x (goal >= 4x; median of {rounds} rounds, "
        f"quartiles {ratios[rounds // 4]:.1f}-{ratios[3 * rounds // 4]:.1f}x) | same output: "
        f"{outputs['seed program'].strip() == outputs['harness'].strip()}"
    )


def bench_fields() -> None:
    t_ref, (printed, env) = best_of(lambda: run_program(SEED_FIELDS_PROGRAM), 50)
    t_vec, result = best_of(fields_experiment, 50)
    same_text = "\n".join(result.lines()) == printed
    same_floats = same_bits(result.keys, env["keys"])
    report("fields (seed 4, 12 keys in 12-d)", t_ref, t_vec, same_text and same_floats)


def report(name: str, t_ref: float, t_vec: float, identical: bool) -> None:
    print(
        f"{name:40s} seed program {t_ref * 1e3:9.2f} ms | vectorised {t_vec * 1e3:8.2f} ms"
        f" | {t_ref / t_vec:7.1f}x | identical: {'yes' if identical else 'NO'}"
    )


def bench_probe(n_topics: int) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from harness.generation.generate_stage import generate
    from harness.geometry.probe_stage import run_probe
    from harness.geometry.realmodel import load

    loaded = load()
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp) / "batched", limit=n_topics, pilot=True, tokenizer=loaded.tokenizer)
        start, cpu = time.perf_counter(), time.process_time()
        run = run_probe(Path(tmp) / "batched", loaded=loaded)
        t_all, t_cpu = time.perf_counter() - start, time.process_time() - cpu
        n = run.probed
        # CPU seconds (all threads) say what a quiet machine needs when others share this one
        print(
            f"probe, {n} prompts, batches of 8, {os.cpu_count()} CPUs: {t_all:.1f} s wall, "
            f"{t_cpu:.1f} CPU s ({n / t_all:.2f} prompts/s)"
        )
        generate(Path(tmp) / "single", limit=8, pilot=True, tokenizer=loaded.tokenizer)
        generate(Path(tmp) / "eight", limit=8, pilot=True, tokenizer=loaded.tokenizer)
        t_one, _ = best_of(lambda: run_probe(Path(tmp) / "single", loaded=loaded, batch_size=1), 1)
        t_eight, _ = best_of(lambda: run_probe(Path(tmp) / "eight", loaded=loaded), 1)
        print(
            f"probe, same 24 prompts: one per forward pass {t_one:.1f} s | batches of 8 "
            f"{t_eight:.1f} s | {t_one / t_eight:.1f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-probe", action="store_true", help="skip the real-model probe")
    parser.add_argument("--topics", type=int, default=60, help="topics for the probe (x3)")
    args = parser.parse_args()
    bench_scaling()
    bench_scaling_process()
    bench_fields()
    if not args.no_probe:
        bench_probe(args.topics)


if __name__ == "__main__":
    main()
