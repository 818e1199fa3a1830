"""Which model wrote each control item's text: the `writer_model` column of the controls export.

The store keeps a control's text, not its writer; the manifest's controls record keeps how many
texts each of the study's models wrote and kept (`made.models`) and what was dropped. From these
the writer of a model-written control is exact in two cases: one model wrote every such text; or
none was dropped, so the texts were spread over the study's models in one round by
`assign_models` with the routing seed, which is replayed here and accepted only when it gives
each model the count the record holds. Which file controls brought their own text is read from
the controls file the manifest records. Otherwise (and for a control whose text came with its
file) the column is empty.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.study import Study


def writer_models(study: Study) -> dict[str, str]:
    """control_id -> model key of the model that wrote its text, where that is known."""
    from harness.study.manifest import load_manifest

    manifest = load_manifest(study.path)
    made = (manifest.get("controls") or {}).get("made") or {}
    models: dict[str, dict[str, Any]] = {
        key: entry for key, entry in (made.get("models") or {}).items() if entry.get("kept")
    }
    written = _model_written(study, sum(int(e["kept"]) for e in models.values()))
    if not models or not written:
        return {}
    if len(models) == 1:
        return dict.fromkeys(written, next(iter(models)))
    if made.get("dropped"):
        return {}
    seed = (manifest.get("routing") or {}).get("seed")
    if not isinstance(seed, int):
        return {}
    which = _replay(study, sorted(written), seed)
    expected = {key: int(entry["generated"]) for key, entry in models.items()}
    return which if dict(Counter(which.values())) == expected else {}


def _model_written(study: Study, kept: int) -> list[str]:
    """The controls whose text a model wrote: every bank control, and a file's controls but
    those that brought their own text (read from the controls file the manifest records, while
    its hash is unchanged; else only when the counts say that none or all did)."""
    rows = study.rows("SELECT control_id, source FROM controls ORDER BY control_id")
    if kept == len(rows):
        return [cid for cid, _ in rows]
    given = _texts_from_file(study)
    if given is None:
        return [cid for cid, source in rows if source == "bank"]
    return [cid for cid, _ in rows if cid not in given]


def _texts_from_file(study: Study) -> set[str] | None:
    """Ids of the file controls that came with their own text; None: the file is gone or
    changed since `judge --blind` recorded it."""
    from harness.judge.controls.control_sources import control_id
    from harness.judge.controls.controls_file import load_controls_file
    from harness.study.manifest import load_manifest, sha256_file

    recorded = ((load_manifest(study.path).get("materials") or {}).get("judge") or {}).get(
        "controls"
    )
    if not recorded:
        return set()
    path = Path(recorded["path"])
    if not path.is_file() or sha256_file(path) != recorded.get("sha256"):
        return None
    sources = {r[0] for r in study.rows("SELECT DISTINCT source FROM controls")} - {"bank"}
    try:
        entries = load_controls_file(path, None)
    except HarnessError:
        return None
    return {
        control_id(source, None, e.entry.statement)
        for e in entries
        if e.entry.text is not None
        for source in sources
    }


def _replay(study: Study, control_ids: list[str], seed: int) -> dict[str, str]:
    """The spread `make_texts` made of these controls over the study's models."""
    from harness.judge.controls.control_sources import Candidate, assign_models
    from harness.study.tables.controls import ok_output_model_keys

    placeholders = [Candidate(cid, "", "published", "cross", "", None, None) for cid in control_ids]
    return assign_models(placeholders, ok_output_model_keys(study), seed)
