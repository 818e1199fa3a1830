"""`harness verify`: each materials file and the environment against what the manifest recorded."""

from __future__ import annotations

from pathlib import Path

from harness.status.started import check_started
from harness.study.manifest import environment, read_manifest, verify_materials
from harness.study.manifest_sections import Command, LockRecord


def print_verify(path: str | Path) -> int:
    """Print each materials file's status; return 1 when anything changed or went missing."""
    check_started(path)  # "0 changed" must not hide a manifest that is gone
    changes = verify_materials(path)
    bad = [c for c in changes if c["status"] != "unchanged"]
    for c in changes:
        mark = "ok     " if c["status"] == "unchanged" else c["status"].upper().ljust(7)
        print(f"{mark} {c['role']}: {c['name']}  ({c['path']})")
    print(f"{len(changes)} materials files checked, {len(bad)} changed or missing")
    for line in environment_lines(read_manifest(path).commands or []):
        print(line)
    return 1 if bad else 0


def environment_lines(commands: list[Command]) -> list[str]:
    """The study's recorded environment (lock hash, versions) against the running one."""
    if not commands:
        return []
    first, now = commands[0], environment()
    running = LockRecord.from_record(now["lock"]) if now["lock"] else None
    lines = [
        f"environment of {first.stage} ({first.at}): "
        f"{_lock_text(first.lock)}; this process: {_lock_text(running)}"
    ]
    then = first.packages or {}
    changed = [
        f"{name} {then[name]} -> {version}"
        for name, version in now["packages"].items()
        if name in then and then[name] != version
    ]
    lines.append(
        "package versions as recorded"
        if not changed
        else "package versions changed: " + ", ".join(changed)
    )
    return lines


def _lock_text(lock: LockRecord | None) -> str:
    if lock is None or not lock.record():
        return "no lock file"
    text = f"{lock.file} sha256 {(lock.sha256 or '')[:16]}"
    differs = lock.differs or {}
    return text + (f" ({len(differs)} packages installed at other versions)" if differs else "")
