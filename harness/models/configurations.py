"""How to speak of a study's model keys: several models, or configurations of one model.

Keys that share one provider string and differ only in their labels (`local#sampled`,
`local#greedy`) are one model run under several settings; a report that called them "models"
would claim a comparison of models the study never made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness.defaults import EMBEDDED_MODEL_NAME
from harness.models.providers import model_of

__all__ = ["Wording", "describe_model", "wording"]


def describe_model(model_string: str) -> str:
    """A provider string as a reader knows it: the embedded model by its name as well."""
    return f"local ({EMBEDDED_MODEL_NAME})" if model_string == "local" else model_string


@dataclass(frozen=True)
class Wording:
    """The words for a study's keys: `kind`, and the one model they configure (if so)."""

    kind: Literal["models", "configurations"]
    of_model: str | None = None  # described, e.g. "local (SmolLM2-135M-Instruct)"

    @property
    def noun(self) -> str:
        return "configuration" if self.kind == "configurations" else "model"

    @property
    def nouns(self) -> str:
        return self.kind

    @property
    def heading(self) -> str:
        if self.of_model is None:
            return f"Across {self.kind}"
        return f"Across configurations of {self.of_model}"


def wording(keys: list[str]) -> Wording:
    """Configurations when every key is a labelled configuration of one and the same model."""
    models = {model_of(key) for key in keys}
    if len(keys) > 1 and len(models) == 1 and all(key != model_of(key) for key in keys):
        return Wording("configurations", describe_model(models.pop()))
    return Wording("models")
