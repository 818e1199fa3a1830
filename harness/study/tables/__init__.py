"""Typed access to the study store, one module per table."""
