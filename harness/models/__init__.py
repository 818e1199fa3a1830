"""Model backends: one interface, a local transformers backend and an OpenAI-compatible backend."""
