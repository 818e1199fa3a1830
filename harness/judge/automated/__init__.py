"""Automated reviewers: their settings, the review loop, the calibration of their decision
rule and the server options."""
