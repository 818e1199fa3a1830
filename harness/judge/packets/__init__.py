"""Reviewer packets: xlsx and csv out, read back, checked and imported."""
