"""`generate` writes, byte for byte, what the reference says it wrote before it learned to load
its models only when needed (the token counts without transformers, the field distances from a
table instead of the sentence model, the bank through libyaml).

The inputs are frozen copies in tests/generation/reference/: 56 topics of the bundled bank (its
`--subset 56` at the default seed, verbatim), the taxonomy and the templates, so that editing the
bundled materials leaves this test alone. `expected.json` is what the code before that change
wrote from them in two runs (50 of the topics, every field of the taxonomy used; 6 topics, a
few fields): every stored topic and prompt, the study's meta, and the manifest's generate record
(the match audit) and materials hashes; text longer than 200 characters is kept as its SHA-256.
A new reference (after a tokenizer or sentence-model upgrade in requirements.lock), written by
the checkout it is run from (its `harness` runs the two generates):

    python -m tests.generation.test_reference --write
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.cli_run import CLI

REFERENCE = Path(__file__).parent / "reference"
EXPECTED = REFERENCE / "expected.json"
INPUTS = ["--topics", str(REFERENCE), "--prompts", str(REFERENCE / "prompts")]
RUNS = {
    "subset 50, seed 7": ["--subset", "50", "--seed", "7"],
    "limit 6, seed 3": ["--limit", "6", "--seed", "3", "--pilot"],
}
#: meta keys that name this run rather than what it generated
VOLATILE_META = {"study_id", "created_at", "manifest_created_at", "schema_version"}
LONG = 200


def _kept(value: object) -> object:
    if isinstance(value, str) and len(value) > LONG:
        return "sha256:" + hashlib.sha256(value.encode("utf-8")).hexdigest()
    return value


def _rows(conn: sqlite3.Connection, table: str, key: str) -> dict[str, dict[str, object]]:
    cursor = conn.execute(f"SELECT * FROM {table} ORDER BY {key}")  # noqa: S608 - fixed names
    names = [d[0] for d in cursor.description]
    return {row[0]: {n: _kept(v) for n, v in zip(names, row, strict=True)} for row in cursor}


def snapshot(study: Path) -> dict[str, object]:
    """What one `generate` run wrote, in a form that compares across folders and runs."""
    conn = sqlite3.connect(study / "study.sqlite")
    try:
        tables = {
            "topics": _rows(conn, "topics", "topic_id"),
            "prompts": _rows(conn, "prompts", "prompt_id"),
        }
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    finally:
        conn.close()
    manifest = json.loads((study / "manifest.json").read_text(encoding="utf-8"))
    return {
        **tables,
        "meta": {k: v for k, v in sorted(meta.items()) if k not in VOLATILE_META},
        "manifest": {
            "generate": manifest["generate"],
            "materials": {
                section: {name: entry["sha256"] for name, entry in files.items()}
                for section, files in manifest["materials"].items()
            },
            "params": [c["params"] for c in manifest["commands"]],
        },
    }


def run_generate(study: Path, args: list[str]) -> dict[str, object]:
    """`harness generate` on the frozen inputs in a child process; its snapshot."""
    done = subprocess.run(
        [*CLI, "generate", *INPUTS, *args, "--study", str(study)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    # tuples and keys as JSON has them
    return json.loads(json.dumps(snapshot(study)))


def write_reference(root: Path) -> None:
    """expected.json: one snapshot per run, a row per line (diffs stay readable)."""
    lines = ["{"]
    for n, (name, args) in enumerate(RUNS.items()):
        got = run_generate(root / f"run{n}", args)
        lines.append(f"{json.dumps(name)}: {{")
        parts = []
        for key, value in got.items():
            if key in ("topics", "prompts"):
                rows = ",\n".join(
                    f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True, ensure_ascii=False)}"
                    for k, v in value.items()
                )
                parts.append(f" {json.dumps(key)}: {{\n{rows}\n }}")
            else:
                parts.append(f" {json.dumps(key)}: {json.dumps(value, sort_keys=True)}")
        lines.append(",\n".join(parts))
        lines.append("}," if n + 1 < len(RUNS) else "}")
    EXPECTED.write_text("\n".join([*lines, "}"]) + "\n", encoding="utf-8")


def first_difference(got: object, want: object, where: str = "") -> str | None:
    """Where two snapshots first differ (`prompts/cs-hprof-01.cross/n_tokens: 61 != 62`)."""
    if isinstance(got, dict) and isinstance(want, dict):
        for key in sorted(set(got) | set(want)):
            if key not in got or key not in want:
                return f"{where}/{key}: only in {'expected' if key in want else 'this run'}"
            found = first_difference(got[key], want[key], f"{where}/{key}")
            if found:
                return found
        return None
    return None if got == want else f"{where}: {got!r} != {want!r}"


@pytest.mark.parametrize("name", RUNS)
def test_generate_writes_what_the_reference_says(tmp_path: Path, name: str) -> None:
    got = run_generate(tmp_path / "s", RUNS[name])
    want = json.loads(EXPECTED.read_text(encoding="utf-8"))[name]
    assert len(got["prompts"]) == 3 * len(got["topics"]) > 0  # type: ignore[arg-type]
    assert first_difference(got, want) is None


def test_the_comparison_names_the_first_difference() -> None:
    want = {"prompts": {"t.cross": {"n_tokens": 61, "text": "a"}}, "meta": {"seed": "7"}}
    got = {"prompts": {"t.cross": {"n_tokens": 62, "text": "a"}}, "meta": {"seed": "7"}}
    assert first_difference(got, want) == "/prompts/t.cross/n_tokens: 62 != 61"
    assert first_difference(want, want) is None
    assert first_difference({}, want) == "/meta: only in expected"


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python -m tests.generation.test_reference --write")
    with tempfile.TemporaryDirectory() as tmp:
        write_reference(Path(tmp))
