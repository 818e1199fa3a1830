"""The blinding commitment: SHA-256 of the key (item -> output -> condition), into the manifest.

Written when packets are made, so it can be posted publicly before any review comes back; once
written it never changes, and a key that no longer matches it is an error.
"""

from __future__ import annotations

from harness.errors import HarnessError
from harness.study.blinding import ensure_study_salt, study_commitment
from harness.study.clock import utc_now
from harness.study.files import manifest_path
from harness.study.manifest import read_manifest, record_section
from harness.study.manifest_sections import Blinding
from harness.study.store import Study
from harness.study.tables.items import count_items


def write_commitment(study: Study, made_at: str | None = None) -> Blinding:
    """Record manifest section `blinding` {sha256, made_at, n_items}; keep an identical one."""
    recorded = read_manifest(study.path).blinding
    if recorded is not None and recorded.sha256 is None:
        recorded = None  # an empty section (a hand edit, an older harness): nothing committed
    if recorded is None:
        ensure_study_salt(study)  # salted from the first commitment on; revealed with the store
    sha = study_commitment(study)
    n_items = count_items(study)
    if recorded is not None:
        if recorded.sha256 != sha:
            raise HarnessError(
                f"the blinding key in the store (sha256 {sha}) differs from the commitment in "
                f"the manifest ({recorded.sha256}, made {recorded.made_at})",
                file=manifest_path(study.path),
            )
        return recorded
    section = Blinding(sha256=sha, made_at=made_at or utc_now(), n_items=n_items)
    record_section(study.path, "blinding", section)
    return section


def describe(section: Blinding) -> str:
    return (
        f"Blinding commitment (SHA-256 of the item -> output -> condition key, "
        f"{section.n_items} items, made {section.made_at}):\n  {section.sha256}\n"
        "Post this hash publicly before reviews come back; `harness analyze` checks it."
    )
