"""Known links: how many each topic has, and how many published and unpublished controls a
study with a given training cut-off would get (a link with year <= the cut-off year is a
published control, one after it an unpublished control)."""

from __future__ import annotations

import datetime as dt
from collections import Counter

from harness.curation.entries import Located
from harness.curation.rules import Rules, Section

KINDS = ("known_links", "known_within_a", "known_within_b")


def check_links(located: list[Located], rules: Rules) -> Section:
    section = Section("known links")
    this_year = dt.datetime.now(dt.UTC).year
    per_topic: Counter[int] = Counter()
    years: dict[str, list[int]] = {kind: [] for kind in KINDS}
    for x in located:
        per_topic[len(x.topic.known_links)] += 1
        titles: set[str] = set()
        for kind in KINDS:
            for link in getattr(x.topic, kind):
                years[kind].append(link.year)
                key = " ".join(link.title.casefold().split())
                if key in titles:
                    section.findings.append(
                        x.finding(f"{kind}: title listed twice: {link.title!r}")
                    )
                titles.add(key)
                if link.year > this_year:
                    section.findings.append(
                        x.finding(f"{kind}: {link.title!r} has year {link.year}, after {this_year}")
                    )
    cross, within = years["known_links"], years["known_within_a"] + years["known_within_b"]
    section.summary.append(
        "links per topic: " + ", ".join(f"{k}: {v} topics" for k, v in sorted(per_topic.items()))
    )
    section.summary.append(
        f"{len(cross)} cross-field links, {len(within)} single-field links, all with a year"
    )
    controls = {}
    for cutoff in rules.cutoffs:
        counts = {
            "cross_published": sum(y <= cutoff for y in cross),
            "cross_unpublished": sum(y > cutoff for y in cross),
            "single_published": sum(y <= cutoff for y in within),
            "single_unpublished": sum(y > cutoff for y in within),
            "topics_with_published": sum(
                any(lk.year <= cutoff for lk in x.topic.known_links) for x in located
            ),
        }
        controls[str(cutoff)] = counts
        section.summary.append(
            f"cut-off {cutoff}: cross-field controls {counts['cross_published']} published / "
            f"{counts['cross_unpublished']} unpublished; single-field "
            f"{counts['single_published']} / {counts['single_unpublished']}; "
            f"{counts['topics_with_published']} topics with a published cross-field control"
        )
    section.stats = {
        "links_per_topic": {str(k): v for k, v in sorted(per_topic.items())},
        "cross_links": len(cross),
        "single_links": len(within),
        "controls": controls,
    }
    return section
