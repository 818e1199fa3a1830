"""Figures: PNG files with the seed's panels, drawn from computed results."""

from __future__ import annotations

import numpy as np
import pytest

from harness.errors import HarnessError
from harness.geometry.heatmap import draw_heatmap, sentence_attention
from harness.geometry.plots import scaling_figure
from harness.geometry.seeds import scaling_experiment

PNG = b"\x89PNG\r\n\x1a\n"


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_scaling_figure(tmp_path):
    result = scaling_experiment(trials=20, dims=[8, 64])
    path = scaling_figure(result, tmp_path / "figs" / "scaling.png")
    width, height = png_size(path)
    assert width > 1000 and height > 800


def test_heatmap_of_a_sentence(tmp_path, tiny_model):
    attention = sentence_attention("The cat sat on the mat", loaded=tiny_model)
    n = len(attention.tokens)
    assert attention.weights.shape == (2, 4, n, n)
    assert "cat" in attention.tokens
    np.testing.assert_allclose(attention.weights.sum(axis=-1), 1.0, atol=1e-5)
    assert np.all(np.triu(attention.weights, 1) == 0)  # causal: nothing from the future
    focused, diffuse = attention.contrasting_heads(1)
    entropy = attention.head_entropy(1)
    assert entropy[focused] == entropy.min() and entropy[diffuse] == entropy.max()
    png_size(draw_heatmap(attention, tmp_path / "heat.png", layer=1))
    png_size(draw_heatmap(attention, tmp_path / "pair.png", heads=(0, 3)))
    with pytest.raises(HarnessError, match="layer must be"):
        draw_heatmap(attention, tmp_path / "x.png", layer=2)
    with pytest.raises(HarnessError, match="heads must be"):
        draw_heatmap(attention, tmp_path / "x.png", heads=(0, 4))
    with pytest.raises(HarnessError, match="empty"):
        sentence_attention("  ", loaded=tiny_model)
