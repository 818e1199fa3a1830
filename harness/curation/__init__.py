"""Curation of topic banks: the quality checks of `harness topics check` and the drafting of
candidate topics (`harness topics draft`) into a review file, never into a bank."""

from __future__ import annotations

from harness.curation.check import CheckReport, check_bank
from harness.curation.rules import Finding, Rules, Section

__all__ = ["CheckReport", "Finding", "Rules", "Section", "check_bank"]
