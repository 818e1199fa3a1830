"""`harness explore`: a self-contained HTML page to follow each prompt through its outputs,
blinded items, reviewers' verdicts, literature searches and hits.

Before `analyze` has unblinded the study the page holds only what reviewers saw (items, reviews,
searches); after it, topics, prompts, outputs, conditions and models too.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.explore.data import page_data
from harness.explore.page import render_page
from harness.study.store import Study

__all__ = ["explorer_html", "write_explorer"]

EXPLORER_NAME = "explorer.html"


def explorer_html(study: Study) -> str:
    """The page for an open study."""
    return render_page(*page_data(study))


def write_explorer(study: str | Path | Study, out: str | Path | None = None) -> Path:
    """Write the page (default: report/explorer.html in the study) via a temporary file."""
    if isinstance(study, Study):
        return _write(explorer_html(study), Path(out) if out else study.report_dir / EXPLORER_NAME)
    with Study.open(study) as opened:
        return write_explorer(opened, out)


def _write(page: str, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(page, encoding="utf-8")
    os.replace(tmp, target)
    return target
