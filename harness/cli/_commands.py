"""Which module defines each command, and the line `harness --help` shows for it.

`harness --help` lists every command but runs none, so it reads this table instead of importing
the command modules (which import their stages at the top). The summary is the first paragraph of
the command's help, the only part the listing shows; tests/cli/test_group.py keeps each one
equal to the help the command module declares, and checks in a fresh process that loading the
commands registers them in this order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["COMMANDS", "Entry"]


@dataclass(frozen=True)
class Entry:
    module: str  # under harness.cli; importing it registers the command on the app
    summary: str  # the first paragraph of the command's help
    group: bool = False  # a command group (`harness geometry ...`) rather than one command
    #: a group's own commands, each imported when used; None: the group's module defines them all
    commands: Mapping[str, Entry] | None = None


#: In the order `harness --help` lists them: commands, then groups.
COMMANDS: dict[str, Entry] = {
    "generate": Entry(
        "generate_cmds",
        "Render matched single-field and cross-field prompts for every topic, with a match audit.",
    ),
    "collect": Entry(
        "collect_cmds",
        "Collect model completions for every pending prompt; a rerun resumes where it stopped.",
    ),
    "judge": Entry(
        "judge_cmds",
        "Blind outputs and route them to reviewers; import returned packets; show progress.",
    ),
    "analyze": Entry(
        "analyze_cmds",
        "Verify the blinding key and the plan, unblind, run the preregistered analysis, report.",
    ),
    "prereg": Entry(
        "prereg_cmds",
        "Write prereg.md (hypothesis, design, materials, plan and hash, power) and record it.",
    ),
    "power": Entry(
        "power_cmds",
        "Power, topics needed and minimal detectable effect for the paired design (Connor 1987;\n"
        "normal approximation; simulation searched until it reaches the target power).",
    ),
    "search": Entry("search_cmds", "Run one literature search and print the hits."),
    "run": Entry(
        "run_cmds", "Run every stage in order and print the verdict; resumes a stopped study."
    ),
    "status": Entry("study_cmds", "Show what each stage of a study holds."),
    "verify": Entry(
        "study_cmds",
        "Recompute materials hashes and report what changed since the study was made.",
    ),
    "explore": Entry(
        "records_cmds",
        "Write a self-contained HTML page to follow each prompt to its outputs, blinded items,\n"
        "verdicts, searches and hits (before unblinding: only what reviewers saw).",
    ),
    "export": Entry(
        "records_cmds",
        "Export study tables. Item-keyed tables show only what reviewers saw until `harness "
        "analyze` has unblinded the study.",
        group=True,
    ),
    "geometry": Entry(
        "geometry_cmds",
        "Attention geometry: the seed experiments, a real model's attention, and the probe of a "
        "study's prompts.",
        group=True,
        # the seed experiments need numpy alone; the real model's commands load the study and
        # model machinery, which `harness geometry scaling` would otherwise pay for at start-up
        commands={
            "scaling": Entry(
                "geometry_cmds",
                "Mean attention entropy without and with 1/sqrt(d_k) scaling (the seed's table).",
            ),
            "fields": Entry(
                "geometry_cmds",
                "The toy model: what a query inside one field, across two, or with no direction "
                "gathers.",
            ),
            "heatmap": Entry(
                "geometry_model_cmds",
                "Draw a real model's attention over a sentence: mean over heads, per-head "
                "distributions,\ntwo heads side by side.",
            ),
            "probe": Entry(
                "geometry_model_cmds",
                "Measure each prompt's attention in a real model, then compare cross vs "
                "single-field.",
            ),
        },
    ),
    "topics": Entry(
        "topics_cmds",
        "Curate a topic bank: check it against the curation rules, draft candidate topics.",
        group=True,
    ),
}
