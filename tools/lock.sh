#!/usr/bin/env bash
# Refresh requirements.lock (`make lock`): every package of the full environment (dependencies,
# dev extras, torch's CPU build, the embedded model), pinned and hashed, for CPython 3.11 on
# x86_64 Linux. Needs uv (a dev dependency) and the same package index and /opt/wheels as installs.
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-uv}
OUT=${OUT:-requirements.lock}
common=(--generate-hashes --python-version 3.11 --python-platform x86_64-manylinux_2_28
        --find-links /opt/wheels --no-header)
{
  echo "# Locked environment of cross-field-harness; refresh with \`make lock\` (tools/lock.sh)."
  echo "# Install: pip install --no-deps --require-hashes -r $OUT (the Makefile does)."
  "$UV" pip compile pyproject.toml tools/lock.in --extra dev "${common[@]}"
  "$UV" pip compile tools/model.in --no-deps "${common[@]}"
} > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT: $(grep -c '^[a-z0-9].*==' "$OUT") packages, sha256 $(sha256sum "$OUT" | cut -c1-64)"
