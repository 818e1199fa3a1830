"""Several calls' requests, each with its own params, decoded together where the backend can.

The local backend decodes all of them in shared continuous batches (`complete_groups`), so a
stage with several kinds of request (the blinded steps, the control texts of two sampling
configurations) keeps its batches full; any other backend gets one call per group, in order.
A completion is the same either way: it is seeded per completion and, locally, batch-invariant.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from harness.models.base import ChatRequest, Completion, GenerationParams

Group = tuple[Sequence[ChatRequest], GenerationParams]


def complete_groups(backend: Any, groups: Sequence[Group]) -> Iterator[tuple[int, Completion]]:
    """(group index, completion) for every request of every group."""
    if hasattr(backend, "complete_groups"):
        yield from backend.complete_groups(groups)
        return
    for index, (requests, params) in enumerate(groups):
        if requests:
            for completion in backend.complete(requests, params):
                yield index, completion
