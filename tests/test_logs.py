"""`harness.logs`: levels, stderr that follows sys.stderr, one appended file per study."""

from __future__ import annotations

import logging

import pytest

from harness import logs
from harness.study import Study


@pytest.fixture
def clean_logger():
    logger = logging.getLogger(logs.LOGGER)
    before = list(logger.handlers), logger.level
    yield logger
    for handler in logger.handlers:
        if handler not in before[0]:
            handler.close()
    logger.handlers[:] = before[0]
    logger.setLevel(before[1])


def test_stderr_shows_the_chosen_level_and_the_study_file_gets_info(clean_logger, tmp_path, capsys):
    logs.configure("warning")
    Study.open(tmp_path / "s p ä", create=True).close()
    Study.open(tmp_path / "s p ä").close()  # a second open adds no second file handler
    log = logging.getLogger("harness.test")
    log.info("an info line")
    log.warning("a warning line")
    err = capsys.readouterr().err
    assert "a warning line" in err and "an info line" not in err
    text = (tmp_path / "s p ä" / "logs" / "harness.log").read_text(encoding="utf-8")
    assert text.count("an info line") == 1 and text.count("a warning line") == 1


def test_without_configure_no_file_is_written(clean_logger, tmp_path):
    for handler in [h for h in clean_logger.handlers if hasattr(h, "_harness_handler")]:
        clean_logger.removeHandler(handler)
    Study.open(tmp_path / "s", create=True).close()
    assert not (tmp_path / "s" / "logs").exists()


def test_unknown_level_is_refused(clean_logger):
    with pytest.raises(ValueError, match="debug, info, warning, error"):
        logs.configure("loud")


def test_the_cli_removes_its_handlers_when_it_ends(clean_logger, tmp_path, capsys):
    from tests.cli_run import run_cli

    code, _, _ = run_cli(
        capsys,
        "--log-level",
        "info",
        "generate",
        "--study",
        str(tmp_path / "s"),
        "--limit",
        "2",
        "--pilot",
    )
    assert code == 0
    assert (tmp_path / "s" / "logs" / "harness.log").exists()
    assert not [h for h in clean_logger.handlers if hasattr(h, "_harness_handler")]
    Study.open(tmp_path / "other", create=True).close()
    assert not (tmp_path / "other" / "logs").exists()
