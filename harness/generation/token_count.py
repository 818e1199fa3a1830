"""Token counts of the prompts under the embedded model's tokenizer, without transformers.

transformers' tokenizer for the embedded model runs a `tokenizers.Tokenizer`, and importing
transformers loads torch (seconds). The match audit needs only the ids, so the `tokenizers` form
is saved once to the user cache (`tokenizers/`, keyed by the embedded GGUF file's path, size and
modification time), after checking that it gives transformers' ids on a set of probe texts; later
runs load that file alone (a fraction of a second). Where the check fails, the counts come from
transformers, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import tokenizers

from harness.generation.cached import cache_file, write_whole
from harness.models.embedded import load_tokenizer, resolve
from harness.progress import status

#: Texts the cached form must encode exactly as transformers does before it is kept: prose,
#: punctuation, digits, runs of spaces and new lines, accents and other scripts, and text that
#: spells the model's special tokens (encoded as plain text, as `generate` has always asked).
PROBES = (
    "Propose one research idea that combines standing waves (Physics and Astronomy) with "
    "Gregorian chant (Arts and Humanities); examine a shared mechanism.",
    "  Two  spaces,\ttabs\tand\nnew lines\n\n1985-01-01, 3.14159, 1,000,000 and 42%.",
    "Naïve café — résumé; Ünïcödé, ß, 東京, Москва, अनुसंधान, 🙂.",
    "<|im_start|>user\nHello<|im_end|>\n<|endoftext|>",
)


class TokenCounter:
    """A `tokenizers.Tokenizer` called as `generate` calls transformers' tokenizer:
    `counter(texts, add_special_tokens=False)["input_ids"]`."""

    def __init__(self, backend: tokenizers.Tokenizer) -> None:
        # transformers encodes with no truncation or padding and special tokens not split out
        backend.no_truncation()
        backend.no_padding()
        backend.encode_special_tokens = False
        self.backend = backend

    def __call__(
        self, texts: Sequence[str], *, add_special_tokens: bool
    ) -> Mapping[str, Sequence[Sequence[int]]]:
        encoded = self.backend.encode_batch(list(texts), add_special_tokens=add_special_tokens)
        return {"input_ids": [e.ids for e in encoded]}


def cached_form() -> Path:
    """Where the embedded tokenizer's `tokenizers` form is kept."""
    gguf = resolve(None)[1]
    stat = gguf.stat()
    key = f"{gguf.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return cache_file("tokenizers", f"{gguf.stem}-{digest}.json")


def prompt_tokenizer() -> TokenCounter | Any:
    """The embedded model's tokenizer for the match audit: its cached `tokenizers` form, else
    transformers' tokenizer (whose form is checked and cached for the next run)."""
    path = cached_form()
    if path.exists():
        try:
            return TokenCounter(tokenizers.Tokenizer.from_file(str(path)))
        except Exception:  # tokenizers' own error type: a damaged file is rebuilt below
            with contextlib.suppress(OSError):
                path.unlink()
    with status("loading the embedded tokenizer (its token counts are cached for later runs)"):
        slow = load_tokenizer()
    backend = getattr(slow, "backend_tokenizer", None)
    if isinstance(backend, tokenizers.Tokenizer):
        fast = TokenCounter(tokenizers.Tokenizer.from_str(backend.to_str()))
        if same_ids(fast, slow):
            write_whole(path, fast.backend.to_str())
    return slow


def same_ids(a: Any, b: Any, texts: Sequence[str] = PROBES) -> bool:
    """Whether two tokenizers give the same ids (no special tokens added) on `texts`."""
    ids = [list(map(list, t(list(texts), add_special_tokens=False)["input_ids"])) for t in (a, b)]
    return ids[0] == ids[1]
