"""Blinded items: one per usable output, and the recorded steps (extraction, normalisation)
that every item, real or control, goes through, with their fidelity check."""
