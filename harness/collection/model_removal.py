"""`harness collect --remove MODEL`: take a model (or one configuration of one) out of a study
before it is blinded.

A mistyped model name against a server that ignores names collects a second copy of the study's
outputs; against a server that knows no such model it leaves every output pending. Either way
`judge --blind` cannot go on with it in the study. Removing it moves its outputs aside
(`removed_outputs`, with the time of the removal), drops its settings from the study's collect
settings and moves its manifest record to `collect.removed` with the time and the counts: nothing
is deleted. Items that a `judge --blind` stopped before its routing made of those outputs go with
them. Once `judge --blind` has routed items, a model cannot be removed: the blinding key is
committed and cannot be undone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from harness.collection.collect_stage import BATCHES_KEY, recorded_models
from harness.errors import HarnessError
from harness.models.providers import parse_model
from harness.study import Study
from harness.study.clock import utc_now
from harness.study.lock import writes_study
from harness.study.manifest import Manifest, change_manifest, record_command
from harness.study.manifest_sections import Collect
from harness.study.records import JsonObject
from harness.study.tables.assignments import count_assignments
from harness.study.tables.collect_models import (
    MODELS_KEY,
    ModelSettings,
    model_counts,
    stored_models,
)
from harness.study.tables.meta import delete_meta, write_meta
from harness.study.tables.outputs import outputs_by_model
from harness.study.tables.removed_outputs import set_aside_outputs


@dataclass(frozen=True)
class Removal:
    """What `remove_model` did."""

    model_key: str
    removed_at: str
    ok: int
    failed: int
    items: int
    remaining: list[str]

    def summary(self) -> str:
        items = f", {self.items} unrouted item(s) made of them dropped" if self.items else ""
        left = ", ".join(self.remaining) if self.remaining else "none"
        return (
            f"removed {self.model_key}: {self.ok} ok and {self.failed} failed output(s) kept "
            f"aside in removed_outputs{items}; recorded in the manifest (collect.removed, "
            f"{self.removed_at}); models left: {left}"
        )


@writes_study
def remove_model(study: str | Path, model: str) -> Removal:
    """Take `model` (its provider string or key, as `collect --model` named it) out of the
    study; refused once `judge --blind` has routed items."""
    with Study.open(study) as handle:
        stored = stored_models(handle)
        key = _key_of(handle, model, stored)
        _refuse_when_blinded(handle, key)
        removed_at = utc_now()
        settings = stored.pop(key, None)
        batches = _batch_key(str((settings or {}).get("id_suffix") or ""))
        batch_state = handle.meta(batches)  # Batch API jobs of the model, recorded with it
        with handle.transaction() as conn:
            moved = set_aside_outputs(conn, key, removed_at)
            write_meta(conn, MODELS_KEY, json.dumps(stored))
            delete_meta(conn, batches)
        removal = Removal(key, removed_at, moved.ok, moved.failed, moved.items, list(stored))
        record_command(handle.path, "collect.remove", {"model_key": key})
        _record(handle.path, removal, settings, batch_state)
        return removal


def removal_hint(study: str | Path) -> str:
    """The models of a study not yet blinded, and how to take one out: a clause for the
    refusals whose cause may be a model collected by mistake (pending outputs, too many items)."""
    with Study.open(study) as handle:
        counts = model_counts(handle)
    shown = ", ".join(f"{key} ({n} ok)" for key, n in counts.items())
    return (
        f"the study holds {len(counts)} model(s): {shown}; a model collected by mistake is "
        f"taken out before blinding with `harness collect --study {study} --remove MODEL`"
    )


def _key_of(study: Study, model: str, stored: dict[str, ModelSettings]) -> str:
    """The key `model` names: a key as stored, a provider string, or a bare model name that
    one of the study's models was requested as."""
    keys = [*stored, *(k for k in outputs_by_model(study) if k not in stored)]
    if model in keys:
        return model
    try:
        parsed = parse_model(model).key
    except HarnessError:
        parsed = None
    if parsed in keys:
        return str(parsed)
    same = [k for k, s in stored.items() if s.get("model") == model]
    if len(same) == 1:
        return same[0]
    held = ", ".join(keys) if keys else "none"
    raise HarnessError(
        f"--remove {model}: no such model in this study (it holds: {held})", file=study.path
    )


def _refuse_when_blinded(study: Study, key: str) -> None:
    routed = count_assignments(study)
    if routed:
        raise HarnessError(
            f"--remove {key}: the study is blinded (`harness judge --blind` routed {routed} "
            "assignments and committed the blinding key), and blinding cannot be undone: keep "
            "the model (the analysis plan's models: section decides which model the verdict "
            "rests on) or start a new study without it",
            file=study.path,
        )


def _batch_key(suffix: str) -> str:
    return BATCHES_KEY + (f":{suffix}" if suffix else "")


def _record(
    folder: Path,
    removal: Removal,
    settings: ModelSettings | None,
    batch_state: str | None,
) -> None:
    """The manifest: the model's record leaves `collect.models` for `collect.removed`, with the
    time of the removal and the outputs it kept aside."""

    def change(manifest: Manifest) -> None:
        section = manifest.collect
        models = recorded_models(section)
        removed = (
            list(section.removed or [])
            if section is not None and "models" in section.model_fields_set
            else []
        )
        record = models.pop(removal.model_key, None)
        entry: JsonObject = {
            "model_key": removal.model_key,
            "removed_at": removal.removed_at,
            "outputs": {"ok": removal.ok, "failed": removal.failed},
            "items_dropped": removal.items,
            "kept_in": "removed_outputs",
            "settings": {k: v for k, v in (settings or {}).items() if k != "id_suffix"},
            "record": record.record() if record is not None else {},
        }
        if batch_state and json.loads(batch_state):
            entry["batches"] = json.loads(batch_state)
        manifest.collect = Collect(models=models, removed=[*removed, entry])

    change_manifest(folder, change)
