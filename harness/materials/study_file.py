"""A study file (`study.yaml`): everything `harness run` needs, in one file that can be shared and
reviewed before the study runs (topics, templates, models, samples, roster, cut-off, plan).

Paths are relative to the study file. Command-line flags override single fields; the file's
SHA-256 and every override are recorded in the study's manifest (`study_file`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from harness.defaults import DEFAULT_SEED
from harness.errors import HarnessError
from harness.materials.yaml_file import YamlFile, read_yaml_mapping, spelling_message
from harness.models.providers import LABEL_MARK, parse_model

__all__ = ["LoadedStudyFile", "ModelEntry", "StudyFile", "load_study_file"]

REFERENCE = "docs/study-file.md"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())


class ModelEntry(_Strict):
    """One model of the study and its own generation settings."""

    model: str = "local"  # provider string: local, local/PATH, openai/NAME, ...
    label: str | None = None  # names one configuration of a model listed more than once
    base_url: str | None = None
    base_urls: list[str] | None = Field(None, min_length=1)  # replicas of the model
    samples: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    max_tokens: int | None = Field(None, ge=1)
    args: dict[str, object] = Field(default_factory=dict)  # extra request fields (--model-arg)

    def model_settings(self) -> dict[str, object]:
        """The entry's own settings by model-argument key (base_url, samples, the sampling
        parameters), None where not given: every field but the entry's names, its replicas and
        its extra request fields."""
        return self.model_dump(exclude={"model", "label", "base_urls", "args"})

    @model_validator(mode="after")
    def _one_way_to_servers(self) -> ModelEntry:
        if self.base_url is not None and self.base_urls is not None:
            raise ValueError("give base_url (one server) or base_urls (replicas), not both")
        return self


class StudyFile(_Strict):
    version: int = 1
    topics: str | None = None  # topic bank (default: bundled)
    limit: int | None = Field(None, ge=1)  # the first N topics, or ...
    subset: int | None = Field(None, ge=1)  # ... N chosen by the seeded spread rule
    subset_seed: int | None = Field(None, ge=0)  # default: seed
    pilot: bool = False
    seed: int = Field(DEFAULT_SEED, ge=0)
    models: list[ModelEntry] = Field(default_factory=lambda: [ModelEntry()], min_length=1)
    samples: int = Field(1, ge=1)
    max_tokens: int | None = Field(None, ge=1)
    extract: bool = True
    normalise: bool = True
    roster: str | None = None  # reviewers (default: the demo roster)
    cutoff: str | None = None  # YYYY-MM-DD
    controls: bool = True
    probe: bool = True
    plan: str | None = None  # analysis plan (default: bundled)
    demo: bool = True  # the report calls the verdict a demonstration

    @field_validator("version")
    @classmethod
    def _version(cls, value: int) -> int:
        if value != 1:
            raise ValueError("unsupported study file version (this harness reads version 1)")
        return value

    @field_validator("cutoff")
    @classmethod
    def _cutoff(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                date.fromisoformat(value)
            except ValueError:
                raise ValueError("cutoff must be a date YYYY-MM-DD") from None
        return value


@dataclass(frozen=True)
class LoadedStudyFile:
    config: StudyFile
    path: Path
    sha256: str

    def resolve(self, value: str | None) -> Path | None:
        """A path of the file, relative to the file's folder."""
        if value is None:
            return None
        path = Path(value).expanduser()
        return path if path.is_absolute() else (self.path.parent / path)

    def record(self, overrides: Mapping[str, object]) -> dict[str, object]:
        """What the manifest keeps: the file, its hash, and the flags that overrode it."""
        return {
            "path": str(self.path.resolve()),
            "sha256": self.sha256,
            "overrides": {k: v for k, v in sorted(overrides.items())},
        }


def load_study_file(path: str | Path) -> LoadedStudyFile:
    """Read and validate a study file; errors name the file, line and field."""
    file = read_yaml_mapping(path, "study file")
    config = file.validate(StudyFile, spelling_message(REFERENCE))
    loaded = LoadedStudyFile(config, file.path, file.sha256)
    _check_models(config, file)
    for key in ("topics", "roster", "plan"):
        target = loaded.resolve(getattr(config, key))
        if target is not None and not target.exists():
            raise HarnessError(
                f"{key} file not found: {target} (paths in a study file are relative to the "
                f"file's own folder, {file.path.parent})",
                file=file.path,
                row=file.line(key),
                column=key,
            )
    return loaded


def _check_models(config: StudyFile, file: YamlFile) -> None:
    """Every entry a valid provider string with its label, and no model key listed twice."""
    seen: set[str] = set()
    for n, entry in enumerate(config.models):
        loc = ("models", str(n), "model" if entry.label is None else "label")
        name = entry.model + ("" if entry.label is None else LABEL_MARK + entry.label)
        try:
            key = parse_model(name).key
            if key in seen:
                raise HarnessError(
                    f"model {key} is listed twice (give each configuration of a model its "
                    "own label)"
                )
        except HarnessError as error:
            raise HarnessError(
                error.message, file=file.path, row=file.line(*loc), column=".".join(loc)
            ) from None
        seen.add(key)
