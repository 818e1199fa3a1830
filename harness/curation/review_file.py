"""The review file: candidate topics in the bank's format, each preceded by the findings of
every automatic check as YAML comments, and a header with the checks of bank + candidates."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from harness.curation.check import check_bank
from harness.errors import HarnessError
from harness.materials.topics import Topic

if TYPE_CHECKING:
    from harness.curation.check import CheckReport

HEADER = """\
# Candidate topics drafted by `harness topics draft` ({source}); NOT part of any bank.
# Every automatic check was run on the bank plus these candidates; findings are written as
# comments. Before merging, a curator must, for each candidate:
#   - judge that the concepts are concrete, correct terms of their fields and of similar length;
#   - judge that the cross pair (concepts_a[0] with concepts_b[0]) is not itself a known field;
#   - add known_links (and known_within_a / known_within_b) ONLY for publications they have
#     opened and verified: exact title, year, DOI only when certain. Links are never drafted.
# Then: harness topics check <bank> <this file>; append the approved entries to the bank; check.
"""


def topic_yaml(topic: Topic) -> str:
    """One bank entry as YAML list item text (two-space indent, keys in the bank's order)."""
    data = topic.model_dump(mode="json", exclude_defaults=True)
    data.setdefault("known_links", [])
    text = yaml.safe_dump(
        [data], sort_keys=False, allow_unicode=True, width=100, default_flow_style=None
    )
    return "".join(f"  {line}\n" for line in text.splitlines())


def render(
    topics: list[Topic],
    source: str,
    notes: dict[str | None, list[str]] | None = None,
    summary: list[str] | None = None,
) -> str:
    notes = notes or {}
    parts = [HEADER.format(source=source)]
    for line in summary or []:
        parts.append(f"# {line}\n")
    for line in notes.get(None, []):
        parts.append(f"# bank: {line}\n")
    parts.append("version: 1\ntopics:\n")
    for topic in topics:
        findings = notes.get(topic.id, [])
        parts.append("\n")
        parts += [f"  # check: {line}\n" for line in findings] or ["  # check: no findings\n"]
        parts.append(topic_yaml(topic))
    return "".join(parts)


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def refuse_bank_file(path: Path, bank: list[Path]) -> None:
    """Drafts never go into a bank: the review file must be another file."""
    bank_files = {p.resolve() for b in bank for p in ([b] if b.is_file() else b.glob("*.yaml"))}
    if path.resolve() in bank_files or path.is_dir():
        raise HarnessError(
            "the review file must not be a bank file or folder; name a new file",
            file=path,
            column="--out",
        )


def write_review(
    path: Path,
    topics: list[Topic],
    bank: list[Path],
    source: str,
    check: Callable[[list[Path]], CheckReport] | None = None,
) -> CheckReport:
    """Check bank + candidates, then write the commented review file; returns the CheckReport."""
    refuse_bank_file(path, bank)
    with tempfile.TemporaryDirectory() as folder:
        plain = Path(folder) / "candidates.yaml"
        plain.write_text(render(topics, source), encoding="utf-8")
        report = (check or check_bank)([*bank, plain])
    ids = {t.id for t in topics}
    notes = {k: v for k, v in report.findings_by_topic().items() if k is None or k in ids}
    summary = [f"check of bank + candidates: {'passed' if report.ok else 'FAILED'}"]
    summary += [f"  {s.name}: {line}" for s in report.sections for line in s.summary]
    write_atomically(path, render(topics, source, notes, summary))
    return report
