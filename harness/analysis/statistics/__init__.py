"""The statistics of `analyze`: from judgments to per-topic proportions, the paired and permutation
tests, GEE, equivalence, agreement, reviewer accuracy and the corrected difference, the secondary
analyses, the across-models comparison and the verdict rule."""
