"""The manifest lock is portable (no fcntl) and serialises concurrent updates."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

from harness.study import manifest


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

    def bump(_: int) -> None:
        for _ in range(20):
            manifest.update_manifest(folder, lambda d: d.update(n=d.get("n", 0) + 1))

    threads = [threading.Thread(target=bump, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert manifest.load_manifest(folder)["n"] == 80
