"""The typed manifest: every section reads and writes back unchanged, unknown keys survive, and a
value of the wrong type is refused in one line that names the file and the field.

`fixtures/demo_manifest.json` is the manifest `make demo` wrote (its folder paths and platform
made neutral), holding every section a full run writes.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel

from harness.errors import HarnessError
from harness.study.history import check_history
from harness.study.manifest import (
    change_manifest,
    made_section,
    read_manifest,
    record_command,
    record_section,
    write_manifest,
)
from harness.study.manifest_sections import Blinding, Collect, Command, Manifest, Prereg, Section
from harness.study.records import Readable, Recorded
from harness.study.store import Study
from tests.study.test_migrations import _v1_store

DEMO = Path(__file__).parent / "fixtures" / "demo_manifest.json"
RECORD = json.loads(DEMO.read_text(encoding="utf-8"))


def _models(value: object) -> list[Section]:
    """Every section model inside `value` (fields, dict values, list items)."""
    if isinstance(value, Section):
        return [value, *(m for _, v in value for m in _models(v))]
    if isinstance(value, dict):
        return [m for v in value.values() for m in _models(v)]
    if isinstance(value, list):
        return [m for v in value for m in _models(v)]
    return []


def _as_record(value: object) -> object:
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_unset=True)
    if isinstance(value, dict):
        return {k: _as_record(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_record(v) for v in value]
    return value


@pytest.mark.parametrize("name", sorted(RECORD))
def test_every_demo_section_is_typed_and_round_trips(name: str) -> None:
    manifest = Manifest.from_record(RECORD, file=DEMO)
    assert name in Manifest.model_fields, f"{name} has no typed model"
    section = getattr(manifest, name)
    assert json.dumps(_as_record(section)) == json.dumps(RECORD[name])  # key order included
    untyped = [(type(m).__name__, sorted(m.model_extra or {})) for m in _models(section)]
    assert all(not keys for _, keys in untyped), untyped


def test_the_demo_manifest_file_is_written_back_byte_for_byte(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(DEMO.read_text(encoding="utf-8"), encoding="utf-8")
    manifest = read_manifest(tmp_path)
    written = write_manifest(tmp_path, manifest)
    assert written.updated_at != RECORD["updated_at"]
    text = (tmp_path / "manifest.json").read_text(encoding="utf-8")
    assert text == DEMO.read_text(encoding="utf-8").replace(
        RECORD["updated_at"], written.updated_at
    )
    assert read_manifest(tmp_path).record() == {**RECORD, "updated_at": written.updated_at}


def test_keys_a_newer_harness_wrote_are_kept_through_an_update(tmp_path: Path) -> None:
    newer = copy.deepcopy(RECORD)
    newer["review_budget"] = {"usd": 12.5, "by": ["a", "b"]}
    newer["blinding"]["algorithm"] = "sha3-256"
    newer["collect"]["models"]["local#greedy"]["gpu"] = {"name": "H100", "count": 1}
    (tmp_path / "manifest.json").write_text(json.dumps(newer), encoding="utf-8")
    record_command(tmp_path, "status", {"why": "a test"})
    after = read_manifest(tmp_path).record()
    assert after["review_budget"] == newer["review_budget"]
    assert after["blinding"]["algorithm"] == "sha3-256"
    assert after["collect"]["models"]["local#greedy"]["gpu"] == {"name": "H100", "count": 1}
    assert after["commands"][:-1] == newer["commands"]
    assert after["commands"][-1]["params"] == {"why": "a test"}


def test_typed_sections_read_and_write_through_one_place(tmp_path: Path) -> None:
    manifest = read_manifest(tmp_path)
    assert manifest == Manifest()
    manifest.blinding = Blinding(sha256="ab", n_items=3)
    write_manifest(tmp_path, manifest)
    with Study.open(tmp_path, create=True) as study:
        again = read_manifest(study)
    assert again.blinding == Blinding(sha256="ab", n_items=3)
    assert read_manifest(tmp_path).record()["blinding"] == {"n_items": 3, "sha256": "ab"}


# An older harness filed its one model's record under `collect` itself, without `models`, and
# wrote commands before the lock-file record existed.
OLD_COLLECT = {
    "backend": "local",
    "model": "SmolLM2-135M-Instruct",
    "samples": 2,
    "temperature": 0.7,
    "max_tokens": 80,
    "outputs": {"ok": 6, "failed": 0},
}
OLD_COMMAND = {
    "stage": "collect",
    "argv": ["harness", "collect"],
    "params": {"samples": 2},
    "at": "2026-01-01T00:00:00Z",
    "harness_version": "0.0.9",
    "python": "3.11.7",
    "platform": "Linux",
    "packages": {"numpy": "1.26.4", "torch": None},
}


def test_a_manifest_of_a_migrated_old_study_round_trips(tmp_path: Path) -> None:
    folder = tmp_path / "old"
    _v1_store(folder)
    old = {
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "collect": OLD_COLLECT,
        "commands": [OLD_COMMAND],
        "blinding": {"sha256": "ab" * 32, "made_at": "2026-01-01T00:00:00Z"},
    }
    (folder / "manifest.json").write_text(json.dumps(old), encoding="utf-8")
    with Study.open(folder) as study:  # moves the store from schema version 1 to the newest
        assert study.meta("migrations")
        manifest = read_manifest(study)
    assert isinstance(manifest.collect, Collect) and manifest.collect.models is None
    assert manifest.collect.backend == "local" and manifest.collect.temperature == 0.7
    assert manifest.record() == old
    record_section(folder, "prereg", Prereg(at="2026-01-02T00:00:00Z", plan_sha256="0" * 64))
    after = read_manifest(folder).record()
    assert after["collect"] == OLD_COLLECT and after["commands"] == [OLD_COMMAND]


def _damaged(folder: Path) -> Path:
    bad = copy.deepcopy(RECORD)
    bad["calibration"]["retrieval"]["threshold"] = "high"
    path = folder / "manifest.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    return path


def test_a_value_of_the_wrong_type_is_one_line_naming_file_and_field(tmp_path: Path) -> None:
    path = _damaged(tmp_path)
    with pytest.raises(HarnessError) as caught:
        read_manifest(tmp_path).record()
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: calibration.retrieval.threshold: ")
    assert "'high'" in message and "restore the manifest from a backup" in message
    with pytest.raises(HarnessError, match="calibration.retrieval.threshold"):
        check_history(tmp_path)  # a stage that writes stops before it writes anything


def test_a_wrong_value_is_refused_before_it_reaches_the_file(tmp_path: Path) -> None:
    record_section(tmp_path, "blinding", Blinding(sha256="ab", n_items=3))
    before = (tmp_path / "manifest.json").read_text(encoding="utf-8")
    wrong = Blinding(sha256="ab")
    wrong.n_items = "three"  # a field set after the model was made
    with pytest.raises(HarnessError, match=r"blinding\.n_items: .*'three'") as caught:
        record_section(tmp_path, "blinding", wrong)
    # the command's value is wrong, not the file: no advice to restore the file
    assert str(caught.value).startswith(f"{tmp_path / 'manifest.json'}: blinding.n_items: ")
    assert "refused before writing" in str(caught.value) and "backup" not in str(caught.value)

    def argv_as_text(manifest: Manifest) -> None:
        manifest.commands = [Command.model_construct(argv="harness")]

    with pytest.raises(HarnessError, match=r"commands\.0\.argv"):
        change_manifest(tmp_path, argv_as_text)
    assert (tmp_path / "manifest.json").read_text(encoding="utf-8") == before


def test_a_section_a_command_made_is_checked_as_its_write_is(tmp_path: Path) -> None:
    """`made_section` reads a command's record as JSON (tuples become lists) and refuses a wrong
    value the way the write does: naming the file and field, the file unchanged."""
    made = made_section(Collect, {"models": {}, "removed": ("a", "b")}, tmp_path)
    assert made.removed == ["a", "b"]
    counted = made_section(Blinding, {"n_items": np.int64(3), "share": np.float32(0.5)}, tmp_path)
    assert counted.record() == {"n_items": 3, "share": 0.5}
    with pytest.raises(HarnessError, match=r"manifest\.json: sha256: .*PosixPath"):
        made_section(Blinding, {"sha256": tmp_path}, tmp_path)  # not JSON: its field named
    with pytest.raises(HarnessError) as caught:
        made_section(Blinding, {"sha256": "ab", "n_items": "three"}, tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / 'manifest.json'}: n_items: ")
    assert "refused before writing" in str(caught.value) and "backup" not in str(caught.value)
    assert not (tmp_path / "manifest.json").exists()


def test_a_section_is_written_from_the_model_its_key_declares(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="'blinding' is a Blinding, not a Prereg"):
        record_section(tmp_path, "blinding", Prereg(at="2026-01-02T00:00:00Z"))
    with pytest.raises(TypeError, match="'blinding' is a Blinding, not a Section"):
        record_section(tmp_path, "blinding", Section.from_record({"sha256": "ab"}))
    assert not (tmp_path / "manifest.json").exists()
    # a key with no one model of its own (a newer harness's, or `study_file`) takes a Section
    record_section(tmp_path, "review_budget", Section.from_record({"usd": 12.5}))
    record_section(tmp_path, "study_file", Section.from_record({"path": "study.yaml"}))
    after = read_manifest(tmp_path).record()
    assert after["review_budget"] == {"usd": 12.5} and after["study_file"] == {"path": "study.yaml"}


def test_integers_and_booleans_are_not_coerced() -> None:
    section = Blinding.from_record({"n_items": 3, "sha256": "x"})
    assert section.record() == {"n_items": 3, "sha256": "x"}
    with pytest.raises(HarnessError, match="n_items"):
        Blinding.from_record({"n_items": True})
    threshold = RECORD["calibration"]["retrieval"] | {"threshold": 1}
    written = Manifest.from_record({"calibration": {"r": threshold}}).record()
    assert json.dumps(written["calibration"]) == json.dumps({"r": threshold})  # 1, never 1.0


def test_sections_keep_the_one_record_style() -> None:
    manifest = Manifest.from_record(RECORD)
    assert isinstance(manifest, Readable) and isinstance(manifest.blinding, Recorded)
    assert Manifest.from_record(manifest.record()) == manifest


def test_a_sampling_setting_left_to_the_server_reads_as_omit() -> None:
    model = {"model": "o3-mini", "temperature": "omit", "top_p": "omit", "seed": "omit"}
    record = {"collect": {"models": {"openai-compatible/o3-mini": model}}}
    assert Manifest.from_record(record).record() == record
    with pytest.raises(HarnessError, match=r"models\.openai-compatible/o3-mini\.temperature: "):
        Manifest.from_record(
            {"collect": {"models": {"openai-compatible/o3-mini": {"temperature": "hot"}}}}
        )
