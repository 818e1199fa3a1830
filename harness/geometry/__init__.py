"""Attention geometry: scaled dot-product attention as a tested numpy library, the seed
document's two experiments reproduced exactly, and a probe that measures the same quantities
inside a real transformer on a study's prompts.

    >>> from harness.geometry import scaling_experiment
    >>> print(scaling_experiment().summary())          # the seed's table, same digits

The names below are re-exported lazily (as in `harness.judge`): importing the package loads
nothing heavy, so `harness.run_probe` costs `import harness` nothing; numpy loads with the first
name used, torch, transformers, pandas and matplotlib inside the functions that need them.
"""

from __future__ import annotations

from harness._lazy import lazy_exports

_API = {
    "Attention": "harness.geometry.attention",
    "attention_scores": "harness.geometry.attention",
    "causal_mask": "harness.geometry.attention",
    "combine_masks": "harness.geometry.attention",
    "padding_mask": "harness.geometry.attention",
    "scaled_dot_product_attention": "harness.geometry.attention",
    "softmax": "harness.geometry.attention",
    "ProbeComparison": "harness.geometry.compare",
    "compare_split": "harness.geometry.compare",
    "entropy_bits": "harness.geometry.entropy",
    "group_mass": "harness.geometry.entropy",
    "split_index": "harness.geometry.entropy",
    "SentenceAttention": "harness.geometry.heatmap",
    "draw_heatmap": "harness.geometry.heatmap",
    "sentence_attention": "harness.geometry.heatmap",
    "MultiHeadAttention": "harness.geometry.multihead",
    "MultiHeadOutput": "harness.geometry.multihead",
    "ProbeRun": "harness.geometry.probe",
    "probe_frame": "harness.geometry.probe",
    "run_probe": "harness.geometry.probe",
    "PythonRandom": "harness.geometry.pyrandom",
    "FieldsResult": "harness.geometry.seeds",
    "ScalingResult": "harness.geometry.seeds",
    "fields_experiment": "harness.geometry.seeds",
    "scaling_experiment": "harness.geometry.seeds",
}


__getattr__, __dir__ = lazy_exports(__name__, _API)


__all__ = sorted(_API)
