"""`harness topics check`: every curation rule over a bank, as a report and a gate."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.curation.balance import check_concepts, check_tokens
from harness.curation.duplicates import check_duplicates
from harness.curation.entries import Located, read_banks
from harness.curation.links import check_links
from harness.curation.rules import Rules, Section
from harness.curation.spread import check_spread, check_subset
from harness.defaults import materials_dir
from harness.generation.generate_stage import Tokenizer


@dataclass
class CheckReport:
    sections: list[Section]
    rules: Rules
    located: list[Located]

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.sections)

    def findings_by_topic(self) -> dict[str | None, list[str]]:
        """Each finding under its topic id (None: about the bank as a whole)."""
        out: dict[str | None, list[str]] = {}
        for section in self.sections:
            marked = [(f, "") for f in section.findings] + [
                (f, "warning: ") for f in section.warnings
            ]
            for f, mark in marked:
                text = f.message if f.topic_id else str(f)
                out.setdefault(f.topic_id, []).append(f"{mark}{section.name}: {text}")
        return out

    def to_text(self, max_findings: int = 50) -> str:
        lines = []
        for s in self.sections:
            lines.append(f"[{'ok' if s.ok else 'FAIL'}] {s.name}")
            lines += [f"    {line}" for line in s.summary]
            lines += [f"    - {f}" for f in s.findings[:max_findings]]
            lines += [f"    ~ warning: {f}" for f in s.warnings[:max_findings]]
            hidden = max(len(s.findings) - max_findings, 0) + max(len(s.warnings) - max_findings, 0)
            if hidden:
                lines.append(f"    ... and {hidden} more")
        failed = [s.name for s in self.sections if not s.ok]
        lines.append(
            "bank check: " + ("passed" if not failed else "FAILED (" + ", ".join(failed) + ")")
        )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "rules": self.rules.as_dict(),
            "sections": [
                {
                    "name": s.name,
                    "ok": s.ok,
                    "summary": s.summary,
                    "stats": s.stats,
                    "findings": [str(f) for f in s.findings],
                    "warnings": [str(f) for f in s.warnings],
                }
                for s in self.sections
            ],
        }


def check_bank(
    paths: list[Path] | Path | None = None,
    *,
    rules: Rules | None = None,
    taxonomy: Path | None = None,
    prompts: Path | None = None,
    tokenizer: Tokenizer | None = None,
    subset: tuple[int, int] | None = None,
) -> CheckReport:
    """Run every check over one bank (files or folders read as one; None = the bundled bank).
    `subset` (size, seed) adds what the seeded subset of that size covers."""
    rules = rules or Rules()
    if paths is None:
        paths = [materials_dir("topics") / "bank.yaml"]
    elif isinstance(paths, Path):
        paths = [paths]
    located, tax, schema = read_banks(list(paths), taxonomy)
    sections = [schema]
    if located:
        sections += list(check_duplicates(located, rules))
        sections.append(check_tokens(located, tax, rules, prompts, tokenizer))
    sections += [
        check_concepts(located, rules),
        check_spread(located, tax, rules),
        check_links(located, rules),
    ]
    if subset is not None and located:
        sections.append(check_subset(located, tax, *subset))
    return CheckReport(sections, rules, located)
