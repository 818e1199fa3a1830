"""Blinding: items and their recorded steps, the cut-off, the gold-sample draw, the sealed key
and the leak audit."""
