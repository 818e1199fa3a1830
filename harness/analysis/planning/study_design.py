"""What a study file (`study.yaml`) says about the design `harness power` plans for.

`harness power --config study.yaml` takes the number of topics (`subset`, else `limit`, else every
topic of the file's bank), the number of models, outputs per prompt, the plan and the bank from
the file, so the power printed is the power of the study the file runs. Flags still override.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.materials.bank import load_topic_bank
from harness.materials.study_file import load_study_file

__all__ = ["StudyDesign", "study_design"]


@dataclass(frozen=True)
class StudyDesign:
    path: Path
    topics: int
    topics_from: str  # "subset", "limit" or "bank"
    models: int
    samples: int  # the models' outputs per prompt (the smallest where they differ)
    plan: Path | None  # None: the bundled plan
    bank: Path | None  # None: the bundled bank

    def line(self) -> str:
        """One line for the power summary saying what came from the file."""
        source = {"subset": "its subset", "limit": "its limit", "bank": "all of its bank"}
        plan = f"plan {self.plan.name}" if self.plan else "the bundled plan"
        return (
            f"design from study file {self.path.name}: {self.topics} topics "
            f"({source[self.topics_from]}), {self.models} model(s), {self.samples} output(s) per "
            f"prompt, {plan}; flags given override it"
        )


def study_design(path: str | Path) -> StudyDesign:
    """Read the file (errors name file, line and field) and the size of its bank."""
    loaded = load_study_file(path)
    config = loaded.config
    bank = loaded.resolve(config.topics)
    in_bank = len(load_topic_bank(bank).topics)
    if config.subset is not None:
        topics, source = min(config.subset, in_bank), "subset"
    elif config.limit is not None:
        topics, source = min(config.limit, in_bank), "limit"
    else:
        topics, source = in_bank, "bank"
    return StudyDesign(
        path=loaded.path,
        topics=topics,
        topics_from=source,
        models=len(config.models),
        samples=min(entry.samples or config.samples for entry in config.models),
        plan=loaded.resolve(config.plan),
        bank=bank,
    )
