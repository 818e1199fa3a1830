"""Study folders: the store, the manifest and the blinding commitment."""

from harness.study.files import is_study, manifest_path, store_path
from harness.study.store import Study

__all__ = ["Study", "is_study", "manifest_path", "store_path"]
