"""Study folders: the store, the manifest and the blinding commitment."""

from harness.study.store import Study

__all__ = ["Study"]
