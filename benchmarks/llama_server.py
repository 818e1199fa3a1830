"""llama.cpp as a user would serve it, for bench_local.py: a server process on a loopback port,
several requests at once, and what each engine computed with (CPU flags, GGUF tensor types).

Two kinds of server, told apart by the path given:

- llama.cpp's own `llama-server` binary: `--parallel N` slots decode together (continuous
  batching), N = the concurrency measured;
- a Python interpreter with `llama-cpp-python[server]`: `python -m llama_cpp.server`, which has
  no slots: a lock in its request handler runs one completion at a time, so concurrent requests
  queue (measured anyway, as a user of that server would see it).

Only the standard library is used here, so the helper runs wherever bench_local.py does.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

FLAGS = ("avx2", "fma", "f16c", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_bf16")


def cpu_flags() -> dict[str, bool]:
    """Which of the flags that decide the matrix kernels this CPU has (from /proc/cpuinfo)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
        have = set(text.split("\nflags", 2)[1].split("\n", 1)[0].split())
    except (OSError, IndexError):
        have = set()
    return {flag: flag in have for flag in FLAGS}


def gguf_types(path: Path) -> str:
    """Tensor types of a GGUF file with counts, most parameters first, e.g. 'Q4_1 x 211, ...'."""
    import gguf  # the harness's environment has it (transformers reads GGUF with it)

    sizes: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    for tensor in gguf.GGUFReader(str(path)).tensors:
        kind = tensor.tensor_type.name
        sizes[kind] += int(tensor.n_elements)
        counts[kind] += 1
    total = sum(sizes.values())
    return ", ".join(
        f"{kind} x {counts[kind]} ({sizes[kind] / total:.0%} of weights)"
        for kind, _ in sizes.most_common()
    )


def is_interpreter(path: str) -> bool:
    return Path(path).name.startswith("python")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def command(server: str, gguf: Path, threads: int, slots: int, port: int) -> list[str]:
    """The server's command line: same threads for prompts and decoding, room for every slot."""
    ctx = str(max(2048, 512 * slots))  # llama-server splits the context among its slots
    if is_interpreter(server):
        return [
            server, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
            "--port", str(port), "--n_threads", str(threads), "--n_threads_batch", str(threads),
            "--n_ctx", ctx, "--verbose", "true",
        ]  # fmt: skip
    return [
        server, "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port),
        "--threads", str(threads), "--threads-batch", str(threads), "--parallel", str(slots),
        "--ctx-size", ctx, "--cont-batching", "--no-webui", "--seed", "0", "-lv", "4",
    ]  # fmt: skip


class Server:
    """A server process on a free loopback port, its output in a temporary log file."""

    def __init__(self, server: str, gguf: Path, threads: int, slots: int) -> None:
        self.slots = 1 if is_interpreter(server) else slots
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.argv = command(server, gguf, threads, slots, self.port)
        self.log = Path(tempfile.mkstemp(prefix="llama-server-", suffix=".log")[1])
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Server:
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited ({self.process.returncode}): {self.tail()}")
            try:
                with urllib.request.urlopen(self.url + "/v1/models", timeout=2) as reply:
                    if reply.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.5)
        self.__exit__()
        raise RuntimeError(f"server not ready in 180 s: {self.tail()}")

    def __exit__(self, *_: object) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.unlink(missing_ok=True)

    def tail(self) -> str:
        lines = self.log.read_text(errors="replace").strip().splitlines()
        return lines[-1] if lines else "no output"

    def engine(self) -> str:
        """What the server's log says it computed with: its CPU backend's features, file type."""
        found: dict[str, None] = {}  # in order, once each
        for text in self.log.read_text(errors="replace").splitlines():
            if "file type" in text:  # "print_info: file type   = Q4_1"
                found["file type " + text.rsplit("=", 1)[1].strip()] = None
            elif "CPU :" in text:  # "system_info: ... | CPU : SSE3 = 1 | AVX2 = 1 | ..."
                features = text.split("CPU :", 1)[1].split("|")
                found[" ".join(f.replace(" = 1", "").strip() for f in features if "= 1" in f)] = (
                    None
                )
        return "; ".join(found) or "(not in its log)"

    def chat(self, messages: list[dict[str, str]], settings: dict[str, Any]) -> dict[str, int]:
        body = json.dumps({"messages": messages, **settings}).encode()
        request = urllib.request.Request(
            self.url + "/v1/chat/completions", body, {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=600) as reply:
            usage: dict[str, int] = json.loads(reply.read())["usage"]
        return usage

    def run(
        self, prompts: list[list[dict[str, str]]], concurrency: int, settings: dict[str, Any]
    ) -> tuple[int, int, float]:
        """Send every prompt, `concurrency` at a time; (completion tokens, prompt tokens, s)."""
        t0 = time.perf_counter()
        with ThreadPoolExecutor(concurrency) as pool:
            usages = list(pool.map(lambda m: self.chat(m, settings), prompts))
        seconds = time.perf_counter() - t0
        completion = sum(u["completion_tokens"] for u in usages)
        return completion, sum(u["prompt_tokens"] for u in usages), seconds


def load_average() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())
