"""What the probe measures, and the stored measures read back (`harness.run_probe`, in
`harness.geometry.probe_stage`, runs the model and stores them).

For each prompt, the last token of the templated prompt (the position that produces the first word
of the answer) is read in every layer and head: the entropy of its attention (bits), the mass it
puts on the tokens of each named slot (concept_1, concept_2, field_1, field_2), and the split index
between the two concepts (1 = even, 0 = all on one). Rows with head = -1 summarise a layer: mean
entropy and mean mass over its heads, and the split index of those mean masses.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from harness.geometry.entropy import entropy_bits, group_mass, split_index
from harness.geometry.tokens import EncodedPrompt, Where, encode_prompt, parse_spans
from harness.study.store import Study
from harness.study.tables.geometry import measures_frame

if TYPE_CHECKING:
    import pandas as pd

    from harness.geometry.realmodel import LoadedModel
    from harness.study.tables.geometry import Measure, ProbePrompt

LAYER_MEAN = -1  # the `head` value of a layer's summary row


def encode_row(
    loaded: LoadedModel,
    row: ProbePrompt,
    chat_template: bool = True,
    study_file: Path | None = None,
) -> EncodedPrompt:
    """A prompts-table row as the model sees it, with its slots' token positions."""
    where: Where = {"file": study_file, "row": row["prompt_id"]}
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
    value = float(split_index(mass["concept_1"], mass["concept_2"]))
    return None if math.isnan(value) else value


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

    with using(study) as opened:
        frame = measures_frame(opened, model)
    masses = pd.DataFrame([json.loads(m) for m in frame.pop("mass")], index=frame.index)
    return frame.join(masses.add_prefix("mass_"))
