"""Reads of topics, prompts and outputs that the judge stage needs, beside the items made of them.

The blinded frames hold only what the audits and routing use: what reviewers see of an item, and
the topic, condition or model behind it (which never leaves the stage into a packet).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.study.store import Study
from harness.study.tables.collect_models import wanted_samples

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class OutputText:
    output_id: str
    text: str | None


@dataclass(frozen=True)
class ModelNames:
    """A model as requested and as its server reported it."""

    model: str
    reported: str | None


def outputs_without_items(study: Study) -> list[OutputText]:
    """Outputs with status ok that no item shows yet."""
    return [
        OutputText(r[0], r[1])
        for r in study.rows(
            "SELECT o.output_id, o.text FROM outputs o "
            "LEFT JOIN items i ON i.output_id = o.output_id "
            "WHERE o.status = 'ok' AND i.item_id IS NULL"
        )
    ]


def count_ok_outputs(study: Study) -> int:
    return study.count("outputs", "status = 'ok'")


def count_late_outputs(study: Study) -> int:
    """Outputs with status ok and some text that no item shows (collected after routing)."""
    return study.count(
        "outputs o",
        "o.status = 'ok' AND TRIM(COALESCE(o.text, '')) != '' "
        "AND NOT EXISTS (SELECT 1 FROM items i WHERE i.output_id = o.output_id)",
    )


def pending_outputs(study: Study) -> dict[str, int]:
    """model key -> (prompt, sample) pairs without an ok output, for every model the study's
    collect settings name (as `harness collect` decides what is pending); none left out."""
    wanted = wanted_samples(study)
    prompts = study.count("prompts")
    pending = {}
    for key, samples in wanted.items():
        done = study.count(
            "outputs", "status = 'ok' AND model_key = ? AND sample < ?", (key, samples)
        )
        if prompts * samples > done:
            pending[key] = prompts * samples - done
    return pending


def ok_output_params(study: Study) -> list[str]:
    """The sampling parameters (JSON) of every output with status ok."""
    return [r[0] for r in study.rows("SELECT params FROM outputs WHERE status = 'ok'")]


def topic_entries(study: Study) -> list[tuple[str, dict[str, Any]]]:
    """(topic_id, the whole bank entry) of every topic, by id."""
    return [
        (r[0], json.loads(r[1] or "{}"))
        for r in study.rows("SELECT topic_id, data FROM topics ORDER BY topic_id")
    ]


def topic_ids(study: Study) -> list[str]:
    return [r[0] for r in study.rows("SELECT topic_id FROM topics")]


def prompt_messages(study: Study) -> list[tuple[str, str | None]]:
    """(user text, system message or None) of every prompt."""
    return [(r[0], r[1]) for r in study.rows("SELECT text, system FROM prompts")]


def output_model_names(study: Study) -> list[ModelNames]:
    """Each distinct pair of requested and reported model name among the outputs."""
    return [
        ModelNames(r[0], r[1])
        for r in study.rows("SELECT DISTINCT model, model_reported FROM outputs")
    ]


def routing_items(study: Study) -> pd.DataFrame:
    """One row per output item: item_id, output_id, topic_id, condition, model, field_a,
    field_b, by output id."""
    return study.frame(
        """
SELECT i.item_id, i.output_id, p.topic_id, p.condition, o.model_key AS model, t.field_a,
       t.field_b
FROM items i JOIN outputs o ON o.output_id = i.output_id
             JOIN prompts p ON p.prompt_id = o.prompt_id
             JOIN topics t ON t.topic_id = p.topic_id
ORDER BY i.output_id
"""
    )


def condition_audit_frame(study: Study) -> pd.DataFrame:
    """One row per output item: item_id, display_text, core ('' for none), topic_id,
    condition, by output id."""
    return study.frame(
        """
SELECT i.item_id, i.display_text, COALESCE(i.core_combination, '') AS core, p.topic_id,
       p.condition
FROM items i JOIN outputs o ON o.output_id = i.output_id
             JOIN prompts p ON p.prompt_id = o.prompt_id
ORDER BY i.output_id
"""
    )


def model_audit_frame(study: Study) -> pd.DataFrame:
    """One row per output item: display_text, core ('' for none), topic_id, model (the
    provider string), by output id."""
    return study.frame(
        """
SELECT i.display_text, COALESCE(i.core_combination, '') AS core, p.topic_id,
       o.model_key AS model
FROM items i JOIN outputs o ON o.output_id = i.output_id
             JOIN prompts p ON p.prompt_id = o.prompt_id
ORDER BY i.output_id
"""
    )


def control_audit_frame(study: Study) -> pd.DataFrame:
    """One row per item, real or control: item_id, display_text, core ('' for none),
    is_control (0/1), grp (the topic, else the control's own id), by output or control id."""
    return study.frame(
        """
SELECT i.item_id, i.display_text, COALESCE(i.core_combination, '') AS core,
       CASE WHEN i.control_id IS NULL THEN 0 ELSE 1 END AS is_control,
       COALESCE(p.topic_id, c.topic_id, c.control_id) AS grp
FROM items i LEFT JOIN outputs o ON o.output_id = i.output_id
             LEFT JOIN prompts p ON p.prompt_id = o.prompt_id
             LEFT JOIN controls c ON c.control_id = i.control_id
ORDER BY COALESCE(i.output_id, i.control_id)
"""
    )


def step_records_frame(study: Study) -> pd.DataFrame:
    """One row per item: item_id, condition ('control' for a planted control), topic_id (the
    control's own id for a control without one) and steps (the recorded JSON), by item id."""
    return study.frame(
        """
SELECT i.item_id, COALESCE(p.condition, 'control') AS condition,
       COALESCE(p.topic_id, c.topic_id, c.control_id) AS topic_id, i.steps
FROM items i LEFT JOIN outputs o ON o.output_id = i.output_id
             LEFT JOIN prompts p ON p.prompt_id = o.prompt_id
             LEFT JOIN controls c ON c.control_id = i.control_id
ORDER BY i.item_id
"""
    )
