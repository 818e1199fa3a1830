"""Simulated studies: the full design run through the primary analysis, searches over it, batches
with reviewers of known accuracy or several models, their verdicts, and a simulated study folder."""
