"""Attention geometry: scaled dot-product attention as a tested numpy library, the seed
document's two experiments reproduced exactly, and a probe that measures the same quantities
inside a real transformer on a study's prompts.

    >>> from harness.geometry import scaling_experiment
    >>> print(scaling_experiment().summary())          # the seed's table, same digits

Importing this package loads numpy only; torch, transformers, pandas and matplotlib load inside
the functions that need them.
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
from harness.geometry.probe import ProbeRun, probe_frame, run_probe
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
    "ProbeRun",
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
    "run_probe",
    "scaled_dot_product_attention",
    "scaling_experiment",
    "sentence_attention",
    "softmax",
    "split_index",
]
