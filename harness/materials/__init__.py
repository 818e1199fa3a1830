"""Loaders and pydantic models for the materials folders (`topics/`, `prompts/`, ...)."""
