"""`run_probe` (`harness geometry probe`): attention of a real model on every prompt of a study,
stored in the `geometry` table and recorded in the manifest.

What is measured is `harness.geometry.probe`'s; this module runs the model over the pending
prompts and commits each prompt's measures in its own transaction, so an interrupted run resumes
where it stopped. The model loads when the stage runs (`geometry.realmodel.load`), not on import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.geometry.probe import encode_row, measure
from harness.geometry.realmodel import LoadedModel, last_token_attention, load
from harness.models.embedded import resolve
from harness.study.lock import writes_study
from harness.study.manifest import Manifest, change_manifest, record_command
from harness.study.manifest_sections import GeometryRecord
from harness.study.store import Study
from harness.study.tables.geometry import (
    ProbePrompt,
    insert_measures,
    model_shape,
    probed_count,
    unprobed_prompts,
)

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
    if isinstance(study, Study):
        return _run(study, model, limit, loaded, chat_template, batch_size, on_prompt)
    with Study.open(study) as opened:
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
    name = loaded.name if loaded else resolve(model)[0]
    done = probed_count(study, name)
    pending = unprobed_prompts(study, name)
    pending = pending[:limit] if limit is not None else pending
    if pending:
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
    # every prompt is checked and tokenized before the model runs: bad spans fail fast
    encoded = [(row, encode_row(loaded, row, chat_template, study.path)) for row in pending]
    encoded.sort(key=lambda item: len(item[1].input_ids))  # similar lengths pad less
    for start in range(0, len(encoded), batch_size):
        batch = encoded[start : start + batch_size]
        weights = last_token_attention(loaded, [e.input_ids for _, e in batch])
        for (row, e), w in zip(batch, weights, strict=True):
            with study.transaction() as conn:
                insert_measures(conn, row["prompt_id"], loaded.name, measure(w, e.slot_tokens))
        if on_prompt:
            on_prompt(start + len(batch), len(encoded))


def _record(study: Study, loaded: LoadedModel, chat_template: bool, n: int) -> None:
    record_command(
        study.path,
        "geometry probe",
        {"model": loaded.name, "chat_template": chat_template, "prompts": n},
    )

    def change(manifest: Manifest) -> None:
        if manifest.geometry is None:
            manifest.geometry = {}
        manifest.geometry[loaded.name] = GeometryRecord(
            attn_implementation="eager",
            chat_template=chat_template,
            position="last token of the prompt (generation prompt appended)",
            layers=loaded.n_layers,
            heads=loaded.n_heads,
        )

    change_manifest(study.path, change)
