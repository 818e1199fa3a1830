"""The fidelity check of the blinded steps: support, added claims, echoed instructions."""

from __future__ import annotations

import pytest

from harness.defaults import materials_dir
from harness.judge.items.step_fidelity import check, content_stems

EXTRACT = materials_dir("prompts") / "judge/extract.j2"
NORMALISE = materials_dir("prompts") / "judge/normalise.j2"

OUTPUT = (
    "We propose combining graph neural networks with soil microbiome sequencing to predict "
    "crop yield under drought, using field trials across three regions."
)


def test_a_faithful_core_passes_and_the_instruction_words_do_not_count() -> None:
    core = "The core combination is graph neural networks with soil microbiome sequencing, for "
    core += "predicting crop yield under drought."
    result = check(core, OUTPUT, EXTRACT)
    assert result.passed and result.support == 1.0 and not result.added and not result.echoed
    assert result.record() == {
        "passed": True,
        "support": 1.0,
        "min_support": 0.6,
        "added": [],
        "echoed": False,
    }


def test_a_core_about_something_else_fails_on_support() -> None:
    core = "Quantum annealing is combined with protein folding to design vaccines."
    result = check(core, OUTPUT, EXTRACT)
    assert not result.passed and result.support < 0.2
    assert result.reasons == [f"support {result.support:.2f} < 0.60"]


@pytest.mark.parametrize(
    ("text", "added"),
    [
        ("This novel approach combines graph neural networks with soil microbiome data.", "novelty"),
        ("Graph neural networks and soil microbiome sequencing have been extensively studied.",
         "prior work"),
        ("Researchers at Stanford University combine graph networks with soil microbiome data.",
         "institution"),
    ],
)  # fmt: skip
def test_a_rewrite_that_adds_a_claim_fails(text: str, added: str) -> None:
    result = check(text, OUTPUT, NORMALISE)
    assert added in result.added and not result.passed


def test_a_claim_the_output_made_is_not_added() -> None:
    output = "A novel idea: " + OUTPUT
    result = check("A novel combination of graph networks and soil microbiome.", output, NORMALISE)
    assert result.added == () and result.passed


def test_an_echoed_instruction_fails_unless_the_output_has_those_words() -> None:
    echo = "In one sentence, state its core combination: graph neural networks and soil."
    assert check(echo, OUTPUT, EXTRACT).echoed
    assert not check(echo, OUTPUT, EXTRACT).passed
    assert not check(echo, echo + " " + OUTPUT, EXTRACT).echoed


def test_stems_join_inflections() -> None:
    assert content_stems("combining combinations") == content_stems("combined")
    assert content_stems("the and of with which") == set()


def test_a_text_without_content_words_has_full_support() -> None:
    assert check("It is so.", OUTPUT, NORMALISE).support == 1.0
