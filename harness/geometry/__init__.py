"""Attention geometry: scaled dot-product attention as a tested numpy library, the seed
document's two experiments reproduced exactly, and what the probe measures inside a real
transformer on a study's prompts.

    >>> from harness.geometry import scaling_experiment
    >>> print(scaling_experiment().summary())          # the seed's table, same digits

The package exports the numpy core (attention, entropy, the seed experiments); importing it
loads numpy alone. What a real model adds is imported from its module: `geometry.realmodel`,
`geometry.heatmap`, `geometry.probe` (the measures), `geometry.probe_stage` (`run_probe`, the
`harness geometry probe` stage) and `geometry.compare` (the split test), which load the study
store and the model machinery at their tops, so `harness geometry scaling` does not pay for them.
`import harness` does not import this package; reading `harness.run_probe` does.
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
from harness.geometry.entropy import entropy_bits, group_mass, split_index
from harness.geometry.multihead import MultiHeadAttention, MultiHeadOutput
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
    "PythonRandom",
    "ScalingResult",
    "attention_scores",
    "causal_mask",
    "combine_masks",
    "entropy_bits",
    "fields_experiment",
    "group_mass",
    "padding_mask",
    "scaled_dot_product_attention",
    "scaling_experiment",
    "softmax",
    "split_index",
]
