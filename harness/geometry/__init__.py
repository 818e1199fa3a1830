"""Attention geometry: scaled dot-product attention as a tested numpy library, the seed
document's two experiments reproduced exactly, and what the probe measures inside a real
transformer on a study's prompts.

    >>> from harness.geometry import scaling_experiment
    >>> print(scaling_experiment().summary())          # the seed's table, same digits

Importing the package loads numpy; torch, transformers, pandas and matplotlib load inside the
functions that need them. `import harness` does not import this package: the probe stage,
`harness.run_probe`, is defined in `harness.probing` and loads the package when it runs.
"""

from __future__ import annotations

from harness.geometry.attention import (
    Attention,
    attention_scores,
    causal_mask,
    combine_masks,
    padding_mask,
    scaled_dot_product_attention,
    softmax,
)
from harness.geometry.compare import ProbeComparison, compare_split
from harness.geometry.entropy import entropy_bits, group_mass, split_index
from harness.geometry.heatmap import SentenceAttention, draw_heatmap, sentence_attention
from harness.geometry.multihead import MultiHeadAttention, MultiHeadOutput
from harness.geometry.probe import probe_frame
from harness.geometry.pyrandom import PythonRandom
from harness.geometry.seeds import (
    FieldsResult,
    ScalingResult,
    fields_experiment,
    scaling_experiment,
)

__all__ = [
    "Attention",
    "FieldsResult",
    "MultiHeadAttention",
    "MultiHeadOutput",
    "ProbeComparison",
    "PythonRandom",
    "ScalingResult",
    "SentenceAttention",
    "attention_scores",
    "causal_mask",
    "combine_masks",
    "compare_split",
    "draw_heatmap",
    "entropy_bits",
    "fields_experiment",
    "group_mass",
    "padding_mask",
    "probe_frame",
    "scaled_dot_product_attention",
    "scaling_experiment",
    "sentence_attention",
    "softmax",
    "split_index",
]
