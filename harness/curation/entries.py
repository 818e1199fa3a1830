"""Reading a bank for checking: every entry validated, every schema error kept (not only the
first), so a curator sees all of them in one run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.curation.rules import Finding, Section
from harness.errors import HarnessError
from harness.materials.bank import bank_files
from harness.materials.taxonomy import TAXONOMY_FILE, Taxonomy, load_taxonomy
from harness.materials.topics import Topic, file_entries, validate_entry


@dataclass(frozen=True)
class Located:
    topic: Topic
    file: Path
    line: int | None

    def finding(self, message: str) -> Finding:
        return Finding(message, self.topic.id, self.file, self.line)


def read_banks(
    paths: list[Path], taxonomy: Path | None = None
) -> tuple[list[Located], Taxonomy, Section]:
    """The valid topics of one or more bank files or folders, and a section of schema errors."""
    files = [f for p in paths for f in bank_files(p)]
    if taxonomy is None:
        folders = [p for p in paths if p.is_dir() and (p / TAXONOMY_FILE).exists()]
        taxonomy = folders[0] / TAXONOMY_FILE if folders else None
    tax = load_taxonomy(taxonomy)
    section = Section("schema")
    located: list[Located] = []
    seen: dict[str, str] = {}
    for file in files:
        try:
            entries = file_entries(file)
        except HarnessError as error:
            section.findings.append(Finding(str(error)))
            continue
        for line, raw, prefix in entries:
            try:
                topic = validate_entry(raw, tax, file, line, prefix)
            except HarnessError as error:
                section.findings.append(Finding(str(error)))
                continue
            if topic.id in seen:
                section.findings.append(
                    Finding(f"duplicate topic id (first at {seen[topic.id]})", topic.id, file, line)
                )
                continue
            seen[topic.id] = f"{file}:{line}"
            located.append(Located(topic, file, line))
    section.summary.append(
        f"{len(files)} file(s), {len(located)} valid topics, "
        f"{len(section.findings)} schema error(s)"
    )
    section.stats = {
        "files": [str(f) for f in files],
        "valid_topics": len(located),
        "errors": len(section.findings),
    }
    return located, tax, section
