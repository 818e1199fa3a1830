"""Provider strings: which backend serves a model and where, in the convention of Inspect.

    local                      the embedded SmolLM2-135M-Instruct (transformers)
    local/PATH                 a transformers model folder or a .gguf file
    openai/NAME                OpenAI (OPENAI_BASE_URL or api.openai.com, OPENAI_API_KEY)
    vllm/NAME                  vLLM's OpenAI-compatible server, http://localhost:8000/v1
    llamacpp/NAME              llama.cpp's server, http://localhost:8080/v1
    ollama/NAME                Ollama's OpenAI-compatible endpoint, http://localhost:11434/v1
    openai-compatible/NAME     any OpenAI-compatible server; needs a base URL

The string as written (with `local` for the embedded model) is the model's key in a study: its
outputs, settings and provenance are filed under it.

    MODEL#LABEL                a configuration of MODEL: `local#greedy` and `local#t1.0` are one
                               model run under two settings, each filed under its own key

A label is letters, digits, `.`, `_` and `-` (no `#`, `:`, `/`, `@` or `=`, so it cannot be read
as part of an Ollama tag, a Hugging Face name, a path or a model argument).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from harness.defaults import EMBEDDED_MODEL_NAME
from harness.errors import HarnessError
from harness.models.openai_api import NO_KEY

OPENAI_KEY_ENV = "OPENAI_API_KEY"


@dataclass(frozen=True)
class Provider:
    """One provider: the prefix of its provider strings and how its models are reached."""

    name: str  # `NAME/...` in a provider string
    label: str  # what serves its models
    backend: str  # the backend that speaks to it (a name of harness.models.settings.SETTINGS)
    #: the server's usual base URL (None: the backend's own default; "": one must be given)
    default_url: str | None = None
    #: the environment variable holding the key its servers get (None: none). Self-hosted
    #: servers get none, so a key meant for OpenAI never reaches a local server.
    key_env: str | None = None

    @property
    def usage(self) -> str:
        """How a model of it is named: `vllm/NAME`."""
        return f"{self.name}/NAME"


BUILTIN = (
    Provider("local", "the embedded model, or a transformers folder or .gguf file", "local"),
    Provider(
        "openai", "OpenAI (OPENAI_BASE_URL or api.openai.com)", "openai", None, OPENAI_KEY_ENV
    ),
    Provider("vllm", "vLLM's OpenAI-compatible server", "openai", "http://localhost:8000/v1"),
    Provider("llamacpp", "llama.cpp's server", "openai", "http://localhost:8080/v1"),
    Provider(
        "ollama", "Ollama's OpenAI-compatible endpoint", "openai", "http://localhost:11434/v1"
    ),
    Provider("openai-compatible", "any OpenAI-compatible server", "openai", "", OPENAI_KEY_ENV),
)
#: provider name -> record: the one table of providers (`register_provider` adds one)
PROVIDERS: dict[str, Provider] = {p.name: p for p in BUILTIN}
LABEL_MARK = "#"
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")


@dataclass(frozen=True)
class ModelSpec:
    """A parsed provider string: `provider`, the model name or path (None: embedded) and the
    configuration label (None: the model's only configuration)."""

    provider: str
    name: str | None
    label: str | None = None

    @property
    def model_string(self) -> str:
        """The provider string of the model itself, without the label."""
        return self.provider if self.name is None else f"{self.provider}/{self.name}"

    @property
    def key(self) -> str:
        return self.model_string + (f"{LABEL_MARK}{self.label}" if self.label else "")

    @property
    def backend(self) -> str:
        """The backend that speaks to it: "local" or "openai" (the OpenAI wire format)."""
        return PROVIDERS[self.provider].backend

    @property
    def default_url(self) -> str | None:
        return PROVIDERS[self.provider].default_url

    @property
    def sends_openai_key(self) -> bool:
        return PROVIDERS[self.provider].key_env == OPENAI_KEY_ENV


def register_provider(provider: Provider) -> Provider:
    """Add `provider` to the registry (a name already taken is refused)."""
    if provider.name in PROVIDERS:
        raise ValueError(f"provider {provider.name!r} is registered already")
    PROVIDERS[provider.name] = provider
    return provider


def remote_usage(*, url_note: bool = False) -> str:
    """`openai/NAME, vllm/NAME, ...` of every provider but `local` (`url_note`: those that need
    a server URL say `(with --base-url)`), for help texts."""
    return ", ".join(
        p.usage + (" (with --base-url)" if url_note and p.default_url == "" else "")
        for p in PROVIDERS.values()
        if p.name != "local"
    )


def is_provider_string(text: str) -> bool:
    """True when `text` starts with a known provider (`local` alone or `PROVIDER/...`)."""
    return text == "local" or text.split("/", 1)[0] in PROVIDERS and "/" in text


def split_label(text: str) -> tuple[str, str | None]:
    """(provider string, label or None) of `MODEL#LABEL`; a bad label is a one-line error."""
    text = text.strip()
    if LABEL_MARK not in text:
        return text, None
    model, _, label = text.rpartition(LABEL_MARK)
    if not model.strip():
        raise HarnessError(
            f"{text!r} names no model before {LABEL_MARK!r} (write MODEL{LABEL_MARK}LABEL, "
            "e.g. local#greedy)",
            column="model",
        )
    if not _LABEL.match(label):
        raise HarnessError(
            f"bad configuration label {label!r} in {text!r} (1-40 letters, digits, '.', '_' "
            "or '-', starting with a letter or digit; e.g. local#greedy)",
            column="model",
        )
    return model.strip(), label


def parse_model(text: str) -> ModelSpec:
    """A provider string, with an optional `#LABEL`, as a ModelSpec; a one-line HarnessError
    names what is wrong."""
    text, label = split_label(text)
    spec = _parse_model(text)
    return replace(spec, label=label) if label else spec


def model_of(key: str) -> str:
    """The provider string of a study's model key (the key without its label)."""
    return key.rpartition(LABEL_MARK)[0] if LABEL_MARK in key else key


def _parse_model(text: str) -> ModelSpec:
    if not text:
        raise HarnessError(
            "empty model (give a provider string such as openai/gpt-4o-mini)", column="model"
        )
    if text == "local":
        return ModelSpec("local", None)
    provider, sep, name = text.partition("/")
    if not sep or provider not in PROVIDERS:
        near = _near_provider(provider, name if sep else None)
        raise HarnessError(
            f"unknown provider {provider!r} in {text!r}"
            + (f": did you mean `{near}`?" if near else "")
            + f" (choose from {', '.join(PROVIDERS)}, e.g. openai/gpt-4o-mini)",
            column="model",
        )
    name = name.strip()
    if provider == "local":
        name = name.rstrip("/") or ""
        if name in ("", "embedded", EMBEDDED_MODEL_NAME):
            return ModelSpec("local", None)
        return ModelSpec("local", name)
    if not name:
        raise HarnessError(f"{text!r} names no model (write {provider}/NAME)", column="model")
    return ModelSpec(provider, name)


def legacy_spec(backend: str | None, model: str | None) -> ModelSpec:
    """The spec meant by the older `--backend B --model M` pair (backend None: local).

    `--backend` may also name a provider (`--backend vllm --model Qwen/Qwen2.5-7B-Instruct`).
    """
    backend = backend or "local"
    if backend == "local":
        return parse_model("local/" + model if model else "local")
    if backend not in PROVIDERS:
        near = closest_name(backend, list(PROVIDERS))
        hint = f": did you mean `{near}`?" if near else ""
        raise HarnessError(
            f"unknown backend {backend!r}{hint} (choose from {', '.join(PROVIDERS)})",
            column="backend",
        )
    if not model:
        raise HarnessError(
            f"the {backend} backend needs --model (e.g. gpt-4o-mini)", column="model"
        )
    return ModelSpec(backend, model)


def model_flags(model: str | None, backend: str | None = None) -> ModelSpec:
    """The model that `--model` (and the older `--backend`) of a command name: the embedded
    model when neither is given (or `--backend local` alone), else `resolve_model`."""
    if model is None and backend in (None, "local"):
        return ModelSpec("local", None)
    return resolve_model(model or "", backend)


def _as_given(spelled: str) -> str:
    return f"--model {spelled}"


def resolve_model(
    text: str,
    backend: str | None = None,
    *,
    spell: Callable[[str], str] = _as_given,
    old: str | None = None,
) -> ModelSpec:
    """What a model named on the command line or in a roster means: the one resolver of every
    stage (`collect`, `judge --blind`'s writer, `judge --auto`'s `llm:` reviewers, `topics
    draft`).

    A provider string is read as it is (`#LABEL` names a configuration). The older spellings
    still work, each with a one-line deprecation note on stderr: `--backend B --model NAME`
    (`B/NAME`) and a bare local path (`local/PATH`). A bare name that is neither (`gpt-4o`) is
    refused with the provider string to write (`openai/gpt-4o`). `spell` writes a suggestion
    as the user would type it (`--model X`, or a roster's `method: llm:X`); `old` is the
    spelling given, for the note (default: `--backend B --model TEXT` or `--model TEXT`).
    """
    if not text.strip():
        raise HarnessError(
            f"the model is empty: name it by a provider string, e.g. "
            f"{spell('openai/gpt-4o-mini')} or {spell('local')} (the embedded model)",
            column="model",
        )
    text, label = split_label(text)
    spec = _resolve_model(text, backend, spell, old)
    return replace(spec, label=label) if label else spec


def _resolve_model(
    text: str, backend: str | None, spell: Callable[[str], str], old: str | None
) -> ModelSpec:
    if is_provider_string(text):
        return parse_model(text)
    if backend is not None:
        spec = legacy_spec(backend, text)
        deprecated(old or f"--backend {backend} --model {text}", spell(spec.key))
        return spec
    if text in ("embedded", EMBEDDED_MODEL_NAME):
        deprecated(old or spell(text), spell("local"))
        return ModelSpec("local", None)
    first = text.split("/", 1)[0]
    looks_local = text.endswith(".gguf") or first.startswith((".", "~")) or text.startswith("/")
    if looks_local or (text and Path(text).expanduser().exists()):
        deprecated(old or spell(text), spell(f"local/{text}"))
        return legacy_spec("local", text)
    providers = f"(providers: {', '.join(PROVIDERS)})"
    if (meant := _colon_for_slash(text)) is not None:
        raise HarnessError(
            f"unknown model {text!r}: a provider string puts `/` after the provider, not `:`; "
            f"did you mean `{spell(meant)}`? {providers}",
            column="model",
        )
    if "/" in text:
        near = _near_provider(first, text.split("/", 1)[1])
        fix = (
            f"did you mean `{near}`?"
            if near
            else f"name the model by a provider string, e.g. {spell(f'vllm/{text}')}"
        )
        raise HarnessError(
            f"unknown provider {first!r} in {text!r} (and no local path {text!r}): {fix} "
            f"{providers}",
            column="model",
        )
    if text in PROVIDERS:
        raise HarnessError(
            f"{text!r} names a provider but no model: write `{text}/NAME` {providers}",
            column="model",
        )
    near = _near_provider(text, None)
    fix = (
        f"did you mean `{near}`?"
        if near
        else f"name it by a provider string, e.g. {spell(f'openai/{text}')}"
    )
    raise HarnessError(f"unknown model {text!r}: {fix} {providers}", column="model")


def _near_provider(word: str, name: str | None) -> str | None:
    """The provider string meant by a mistyped provider `word` followed by `/name` (None: no
    name given), when a provider is near enough to be a typo: `local` itself, or PROVIDER/NAME
    (NAME spelled out when none was given)."""
    near = closest_name(word, list(PROVIDERS))
    if near is None:
        return None
    if name is None:
        return near if near == "local" else f"{near}/NAME"
    return f"{near}/{name}"


def _colon_for_slash(text: str) -> str | None:
    """The provider string meant by `PROVIDER:NAME`, the form other tools write
    (`openai:gpt-4o-mini`, `vllm:Qwen/Qwen2.5-7B-Instruct`), the provider spelled right or
    nearly; None when the text before the first `:` is no provider (an Ollama tag,
    `llama3.1:8b`, keeps its colon)."""
    word, colon, name = text.partition(":")
    if not colon or "/" in word:
        return None
    return _near_provider(word.strip(), name.strip() or None)


def closest_name(word: str, names: Sequence[str]) -> str | None:
    """The name of `names` nearest to `word` by edit distance (letter case aside; a swap of two
    neighbouring letters counts as one edit), when it is near enough to be a typo: one edit
    for each five letters of the name, at least one. Ties go to the earlier name."""
    word = word.lower()
    best: tuple[int, int] | None = None
    for index, name in enumerate(names):
        distance = edit_distance(word, name.lower())
        if distance <= max(1, len(name) // 5) and (best is None or distance < best[0]):
            best = (distance, index)
    return None if best is None else names[best[1]]


def edit_distance(a: str, b: str) -> int:
    """Insertions, deletions, substitutions and swaps of two neighbouring letters that turn `a`
    into `b` (the optimal string alignment distance)."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][len(b)]


_NOTED: set[str] = set()


def deprecated(old: str, new: str) -> None:
    """One line on stderr, once per spelling per process: `old` still works; write `new`."""
    line = f"note: {old} is deprecated; write {new}"
    if line not in _NOTED:
        _NOTED.add(line)
        sys.stderr.write(line + "\n")


def api_key(spec: ModelSpec) -> str | None:
    """None (OPENAI_API_KEY from the environment) for providers that get it; the value of the
    provider's own `key_env` where it names another; else a placeholder: a key meant for OpenAI
    never reaches a self-hosted server."""
    if spec.sends_openai_key:
        return None
    key_env = PROVIDERS[spec.provider].key_env
    return os.environ.get(key_env, NO_KEY) if key_env else NO_KEY


def endpoint(spec: ModelSpec, base_url: str | None) -> tuple[str | None, str | None]:
    """(base URL, API key) of a remote model: `base_url` (the run's `--base-url`, which serves
    every model without its own), else the provider's usual URL; and its `api_key`."""
    key = api_key(spec)
    if base_url:
        return base_url, key
    if spec.default_url == "":
        raise HarnessError(
            f"{spec.key} needs a server URL: pass --base-url (or "
            f"--model-arg {spec.key}@base_url=URL)",
            column="base_url",
        )
    return spec.default_url, key


def stored_key(backend: str, model: str) -> str:
    """The key of outputs an older store recorded as (backend, model as requested)."""
    if backend == "local":
        return "local" if model in ("", EMBEDDED_MODEL_NAME) else f"local/{model}"
    return f"{backend}/{model}"
