"""Finding and loading a topic bank: its files, validated into a `TopicBank`.

The topic models and entry validation are in `harness.materials.topics` (pydantic, YAML); they
load when a bank does, so that `import harness` stays light.
"""

from __future__ import annotations

from pathlib import Path

from harness.defaults import materials_dir
from harness.errors import HarnessError
from harness.materials.taxonomy import TAXONOMY_FILE, Taxonomy, load_taxonomy
from harness.materials.topics import Topic, TopicBank, file_entries, validate_entry


def bank_files(path: Path | None = None) -> list[Path]:
    """The YAML files of a bank: one file, or every *.yaml in a folder except the taxonomy."""
    path = path or materials_dir("topics")
    if path.is_dir():
        files = sorted(p for p in path.glob("*.yaml") if p.name != TAXONOMY_FILE)
        if not files:
            raise HarnessError("no topic files (*.yaml) in folder", file=path)
        return files
    if not path.exists():
        raise HarnessError("topic bank not found", file=path)
    return [path]


def load_topic_bank(path: Path | None = None, taxonomy: Path | None = None) -> TopicBank:
    """Load and validate a topic bank (a YAML file or a folder of them; None = bundled bank)."""
    files = bank_files(path)
    if taxonomy is None and path is not None and path.is_dir() and (path / TAXONOMY_FILE).exists():
        taxonomy = path / TAXONOMY_FILE
    taxonomy = taxonomy or materials_dir("topics") / TAXONOMY_FILE
    tax = load_taxonomy(taxonomy)
    topics: list[Topic] = []
    seen: dict[str, str] = {}
    for file in files:
        for line, topic in _load_file(file, tax):
            where = f"{file.name}:{line}"
            if topic.id in seen:
                raise HarnessError(
                    f"duplicate topic id {topic.id!r} (first at {seen[topic.id]})",
                    file=file,
                    row=line,
                    column="id",
                )
            seen[topic.id] = where
            topics.append(topic)
    return TopicBank(topics=topics, files=files, taxonomy=tax, taxonomy_file=taxonomy)


def _load_file(file: Path, tax: Taxonomy) -> list[tuple[int | None, Topic]]:
    out = []
    for line, raw, prefix in file_entries(file):
        out.append((line, validate_entry(raw, tax, file, line, prefix)))
    return out
