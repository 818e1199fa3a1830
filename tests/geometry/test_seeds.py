"""The seed experiments, vectorised, equal the seed's own programs bit for bit."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import HarnessError
from harness.geometry.seeds import fields_experiment, scaling_experiment
from tests.geometry.seed_programs import (
    SEED_FIELDS_OUTPUT,
    SEED_SCALING_OUTPUT,
    fields_program,
    scaling_program,
)


def run(program, *args, **kwargs):
    """(printed text, returned values) of a reference program."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        values = program(*args, **kwargs)
    return buffer.getvalue().rstrip("\n"), values


def identical(a, b) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


def assert_scaling_equal(result, printed, reference):
    assert "\n".join(result.lines()) == printed
    for d, (raw, scaled, raw_mean, scaled_mean) in reference.items():
        assert identical(result.raw[d], raw) and identical(result.scaled[d], scaled)
        assert identical(result.raw_mean[d], raw_mean)
        assert identical(result.scaled_mean[d], scaled_mean)


@pytest.fixture(scope="module")
def seed_scaling():
    return run(scaling_program)


def test_default_scaling_prints_the_seed_numbers(seed_scaling):
    printed, reference = seed_scaling
    assert printed == SEED_SCALING_OUTPUT  # the program still prints what the seed shows
    assert_scaling_equal(scaling_experiment(), printed, reference)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    trials=st.integers(1, 5),
    keys=st.integers(1, 7),
    dims=st.lists(st.integers(1, 40), min_size=1, max_size=3, unique=True),
)
def test_any_parameters_equal_the_seed_program(seed, trials, keys, dims):
    printed, reference = run(scaling_program, seed, trials, keys, tuple(dims))
    assert_scaling_equal(scaling_experiment(seed, trials, keys, dims), printed, reference)


def test_default_fields_prints_the_seed_numbers():
    printed, reference = run(fields_program)
    assert printed == SEED_FIELDS_OUTPUT
    result = fields_experiment()
    assert "\n".join(result.lines()) == printed
    for name, (w, per, entropy, out) in reference.items():
        assert identical(result.weights[name], w) and identical(result.outputs[name], out)
        assert result.by_field[name] == per and identical(result.entropy[name], entropy)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n_fields=st.integers(2, 4),
    width=st.integers(1, 5),
    per_field=st.integers(1, 5),
)
def test_any_fields_configuration_equals_the_seed_program(seed, n_fields, width, per_field):
    names = ["acoustics", "control theory", "Buddhist texts", "number theory"][:n_fields]
    dims = n_fields * width
    printed, reference = run(
        fields_program, seed, dims, {n: i * width for i, n in enumerate(names)}, per_field
    )
    result = fields_experiment(seed, names, dims, keys_per_field=per_field)
    assert "\n".join(result.lines()) == printed
    for name, (w, _, entropy, _) in reference.items():
        assert identical(result.weights[name], w) and identical(result.entropy[name], entropy)


def test_results_as_tables():
    table = scaling_experiment(trials=3, dims=[4, 8]).table
    assert list(table.columns) == ["d_k", "entropy_raw_bits", "entropy_scaled_bits", "max_bits"]
    assert table["max_bits"].tolist() == [4.0, 4.0]
    fields = fields_experiment().table
    assert fields.shape == (3, 5)
    np.testing.assert_allclose(fields.filter(like="weight").sum(axis=1), 1.0)


@pytest.mark.parametrize(
    ("call", "column"),
    [
        (lambda: scaling_experiment(trials=0), "trials"),
        (lambda: scaling_experiment(dims=[16, -4]), "dims[1]"),
        (lambda: scaling_experiment(dims=[16, 16]), "dims"),
        (lambda: fields_experiment(fields=["only one"]), "fields"),
        (lambda: fields_experiment(fields=["a", "a"]), "fields"),
        (lambda: fields_experiment(fields=["a", "b", "c"], dims=2), "dims"),
    ],
)
def test_bad_parameters_are_user_errors(call, column):
    with pytest.raises(HarnessError) as error:
        call()
    assert error.value.column == column
