"""The probe: attention of a real model on every prompt of a study, stored in the `geometry` table.

For each prompt, the last token of the templated prompt (the position that produces the first word
of the answer) is read in every layer and head: the entropy of its attention (bits), the mass it
puts on the tokens of each named slot (concept_1, concept_2, field_1, field_2), and the split index
between the two concepts (1 = even, 0 = all on one). Rows with head = -1 summarise a layer: mean
entropy and mean mass over its heads, and the split index of those mean masses.

Each prompt is committed in its own transaction, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.study.lock import writes_study
from harness.study.store import Study

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from harness.geometry.realmodel import LoadedModel
    from harness.geometry.tokens import EncodedPrompt
    from harness.study.tables.geometry import Measure, ProbePrompt

LAYER_MEAN = -1  # the `head` value of a layer's summary row
#: Prompts per forward pass: batched matrix products run faster on CPU than one prompt at a time.
BATCH_SIZE = 8


@dataclass
class ProbeRun:
    model: str
    probed: int  # prompts measured by this run
    skipped: int  # prompts already measured for this model
    n_layers: int
    n_heads: int

    def summary(self) -> str:
        return (
            f"probe {self.model}: {self.probed} prompts measured, {self.skipped} already "
            f"done ({self.n_layers} layers x {self.n_heads} heads each)"
        )


@writes_study
def run_probe(
    study: Study | str | Path,
    model: str | None = None,
    *,
    limit: int | None = None,
    loaded: LoadedModel | None = None,
    chat_template: bool = True,
    batch_size: int = BATCH_SIZE,
    on_prompt: Callable[[int, int], None] | None = None,
) -> ProbeRun:
    """Measure every prompt not yet measured for this model; `loaded` overrides `model`.

    The model is loaded only when some prompt is pending, so a finished probe reruns instantly.
    """
    with using(study) as opened:
        return _run(opened, model, limit, loaded, chat_template, batch_size, on_prompt)


def _run(
    study: Study,
    model: str | None,
    limit: int | None,
    loaded: LoadedModel | None,
    chat_template: bool,
    batch_size: int,
    on_prompt: Callable[[int, int], None] | None,
) -> ProbeRun:
    from harness.models.embedded import resolve
    from harness.study.tables.geometry import model_shape, probed_count, unprobed_prompts

    name = loaded.name if loaded else resolve(model)[0]
    done = probed_count(study, name)
    pending = unprobed_prompts(study, name)
    pending = pending[:limit] if limit is not None else pending
    if pending:
        from harness.geometry.realmodel import load

        loaded = loaded or load(model)
        _measure_all(study, loaded, pending, chat_template, batch_size, on_prompt)
        _record(study, loaded, chat_template, len(pending))
    layers, heads = model_shape(study, name)
    return ProbeRun(name, len(pending), done, layers, heads)


def _measure_all(
    study: Study,
    loaded: LoadedModel,
    pending: list[ProbePrompt],
    chat_template: bool,
    batch_size: int,
    on_prompt: Callable[[int, int], None] | None,
) -> None:
    """Forward passes in batches of similar length; each prompt committed on its own."""
    from harness.geometry.realmodel import last_token_attention
    from harness.study.tables.geometry import insert_measures

    # every prompt is checked and tokenized before the model runs: bad spans fail fast
    encoded = [(row, encode_row(loaded, row, chat_template, study.path)) for row in pending]
    encoded.sort(key=lambda item: len(item[1].input_ids))  # similar lengths pad less
    for start in range(0, len(encoded), batch_size):
        batch = encoded[start : start + batch_size]
        weights = last_token_attention(loaded, [e.input_ids for _, e in batch])
        for (row, e), w in zip(batch, weights, strict=True):
            with study.transaction():
                insert_measures(study, row["prompt_id"], loaded.name, measure(w, e.slot_tokens))
        if on_prompt:
            on_prompt(start + len(batch), len(encoded))


def encode_row(
    loaded: LoadedModel,
    row: ProbePrompt,
    chat_template: bool = True,
    study_file: Path | None = None,
) -> EncodedPrompt:
    """A prompts-table row as the model sees it, with its slots' token positions."""
    from harness.geometry.tokens import encode_prompt, parse_spans

    where = {"file": study_file, "row": row["prompt_id"]}
    spans = parse_spans(row["spans"], row["text"], where=where)
    return encode_prompt(
        loaded.tokenizer,
        row["text"],
        spans,
        system=row["system"],
        chat_template=chat_template,
        where=where,
    )


def measure(weights: np.ndarray, slot_tokens: dict[str, list[int]]) -> list[Measure]:
    """(layer, head, entropy, mass JSON, split) per head, plus head = -1 per layer."""
    from harness.geometry.entropy import entropy_bits, group_mass

    entropy = entropy_bits(weights)  # (layers, heads)
    mass = group_mass(weights, slot_tokens)  # slot -> (layers, heads)
    rows: list[Measure] = []
    for layer in range(weights.shape[0]):
        for head in range(weights.shape[1]):
            m = {s: float(v[layer, head]) for s, v in mass.items()}
            rows.append((layer, head, float(entropy[layer, head]), json.dumps(m), _split(m)))
        mean = {s: float(v[layer].mean()) for s, v in mass.items()}
        rows.append(
            (layer, LAYER_MEAN, float(entropy[layer].mean()), json.dumps(mean), _split(mean))
        )
    return rows


def _split(mass: dict[str, float]) -> float | None:
    if "concept_1" not in mass or "concept_2" not in mass:
        return None
    from harness.geometry.entropy import split_index

    value = float(split_index(mass["concept_1"], mass["concept_2"]))
    return None if math.isnan(value) else value


def _record(study: Study, loaded: LoadedModel, chat_template: bool, n: int) -> None:
    from harness.study.manifest import record_command, update_manifest

    record_command(
        study.path,
        "geometry probe",
        {"model": loaded.name, "chat_template": chat_template, "prompts": n},
    )

    def change(data: dict[str, Any]) -> None:
        data.setdefault("geometry", {})[loaded.name] = {
            "attn_implementation": "eager",
            "chat_template": chat_template,
            "position": "last token of the prompt (generation prompt appended)",
            "layers": loaded.n_layers,
            "heads": loaded.n_heads,
        }

    update_manifest(study.path, change)


@contextmanager
def using(study: Study | str | Path) -> Iterator[Study]:
    """A study given as an open Study (left open) or as a folder (opened and closed here)."""
    if isinstance(study, Study):
        yield study
        return
    with Study.open(study) as opened:
        yield opened


def probe_frame(study: Study | str | Path, model: str | None = None) -> pd.DataFrame:
    """The stored measures joined with topic and condition; one column per slot's mass."""
    import pandas as pd

    from harness.study.tables.geometry import measures_frame

    with using(study) as opened:
        frame = measures_frame(opened, model)
    masses = pd.DataFrame([json.loads(m) for m in frame.pop("mass")], index=frame.index)
    return frame.join(masses.add_prefix("mass_"))
