"""The manifest lock is portable (no fcntl) and serialises concurrent updates."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

from harness.study import manifest
from harness.study.manifest_sections import Manifest


def test_manifest_does_not_import_fcntl():
    tree = ast.parse(Path(manifest.__file__).read_text(encoding="utf-8"))
    names = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "fcntl" not in names


def test_concurrent_updates_all_land(tmp_path):
    folder = tmp_path / "stüdy with spaces"

    def one_more(m: Manifest) -> None:
        m.n = (m.model_extra or {}).get("n", 0) + 1  # a key this harness does not know

    def bump(_: int) -> None:
        for _ in range(20):
            manifest.change_manifest(folder, one_more)

    threads = [threading.Thread(target=bump, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert manifest.read_manifest(folder).record()["n"] == 80
