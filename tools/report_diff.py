"""Two studies' report.json compared figure by figure: what a refactor must leave unchanged.

Left out: where the study lives and when it ran (the study folder and report paths, the plan's
path, timestamps, the study id); everything else, numbers and wording, must be equal. Prints each
difference as `key.path: left != right` and exits 1 when there is one.

    python tools/report_diff.py runs/before/report/report.json runs/after/report/report.json
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

#: keys whose values name a place or a moment, not a result
IGNORED = re.compile(r"(^|\.)(study_dir|study_id|plan_path|report_files|[a-z_]*_at)(\.|$|\[)")


def differences(left: object, right: object, path: str = "") -> list[str]:
    if IGNORED.search(path):
        return []
    if isinstance(left, dict) and isinstance(right, dict):
        found = []
        for key in sorted(set(left) | set(right)):
            where = f"{path}.{key}" if path else key
            if key not in left or key not in right:
                if not IGNORED.search(where):
                    found.append(f"{where}: only in {'right' if key not in left else 'left'}")
                continue
            found += differences(left[key], right[key], where)
        return found
    if isinstance(left, list) and isinstance(right, list):
        if len(left) != len(right):
            return [f"{path}: {len(left)} entries != {len(right)}"]
        return [
            d
            for i, (a, b) in enumerate(zip(left, right, strict=True))
            for d in differences(a, b, f"{path}[{i}]")
        ]
    return [] if left == right else [f"{path}: {left!r} != {right!r}"]


def main(left: Path, right: Path) -> int:
    found = differences(*(json.loads(p.read_text(encoding="utf-8")) for p in (left, right)))
    for line in found:
        print(line)
    print(f"{len(found)} differences")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]), Path(sys.argv[2])))
