#!/usr/bin/env bash
# Measures the validate stage's overhead per run beyond the test time, with a warm
# environment image, and the time to build that image cold. A synthetic project
# (the same as tests/support/python_project.rs) is validated from a row file:
#   1. cold: a fresh image tag is forced by a unique build date, so the image is built;
#   2. warm: the same row again in a new data dir, N runs, image reused.
# Prints: image build seconds, and per run: wall seconds, test seconds, overhead.
#
# usage: scripts/bench-validate-overhead.sh [RUNS]   (needs Docker: scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cargo build --quiet
binary="${CARGO_TARGET_DIR:-target}/debug/swe-harvest"

repo="$work/calc"
mkdir -p "$repo/calc" "$repo/tests"
# A commit date unique to this run: a new environment image (the cold build).
stamp="$(date -u +%Y-%m-%dT%H:%M:%S+00:00)"
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench \
    GIT_COMMITTER_EMAIL=bench@example.com GIT_AUTHOR_DATE="$stamp" GIT_COMMITTER_DATE="$stamp" \
    GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
cat > "$repo/pyproject.toml" <<'TOML'
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "1.0.0"
requires-python = ">=3.9"
classifiers = ["Programming Language :: Python :: 3.11"]

[tool.setuptools]
packages = ["calc"]
TOML
printf 'def add(a, b):\n    if b < 0:\n        return a - b\n    return a + b\n' > "$repo/calc/__init__.py"
: > "$repo/tests/__init__.py"
printf 'from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n' > "$repo/tests/test_calc.py"
git -C "$repo" -c init.defaultBranch=main init -q
git -C "$repo" add -A && git -C "$repo" commit -qm base
base="$(git -C "$repo" rev-parse HEAD)"
printf 'def add(a, b):\n    return a + b\n' > "$repo/calc/__init__.py"
printf 'from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_add_negative():\n    assert add(1, -1) == 0\n' > "$repo/tests/test_calc.py"
patch="$(git -C "$repo" diff -- calc)"
test_patch="$(git -C "$repo" diff -- tests)"
git -C "$repo" checkout -q -- .
python3 - "$work/row.jsonl" "$base" <<PY
import json, sys
row = {
    "instance_id": "bench__calc-1", "repo": "bench/calc", "base_commit": sys.argv[2],
    "patch": """$patch\n""", "test_patch": """$test_patch\n""", "problem_statement": "add\n",
    "hints_text": "", "created_at": "2024-06-02T00:00:00Z", "version": "1.0",
    "FAIL_TO_PASS": "[]", "PASS_TO_PASS": "[]", "environment_setup_commit": sys.argv[2],
}
open(sys.argv[1], "w").write(json.dumps(row) + "\n")
PY
mirrors="$work/mirrors"
mkdir -p "$mirrors"
git clone -q --mirror "$repo" "$mirrors/bench__calc.git"
export SWE_HARVEST_MIRRORS="$mirrors"
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    export SWE_HARVEST_VALIDATE__EXTRA_CA_FILE=/etc/ssl/certs/ca-certificates.crt
fi

echo "cold (builds the environment image):" >&2
"$binary" -q --data-dir "$work/cold" validate --input "$work/row.jsonl" --out "$work/cold.jsonl" --runs 1 2>&1 \
    | grep -E 'environment images|bench__calc-1' >&2
echo "warm ($runs runs, image reused):" >&2
"$binary" -q --data-dir "$work/warm" validate --input "$work/row.jsonl" --out "$work/warm.jsonl" --runs "$runs" 2>"$work/warm.err"
grep -E 'environment images|bench__calc-1' "$work/warm.err" >&2
python3 - "$work/warm.err" "$runs" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
runs = int(sys.argv[2])
match = re.search(r"bench__calc-1: ([\d.]+)s in containers' tests.*?, ([\d.]+)s in total", text)
tests, total = float(match.group(1)), float(match.group(2))
print(f"per run: {total / runs:.2f}s wall, {tests / runs:.2f}s in pytest (pre + post), "
      f"overhead {(total - tests) / runs:.2f}s (target: at most 10s)")
PY
# The image is unique to this run (its date): remove it.
image="$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["diagnosis"]["image"] or "")' "$work/warm.jsonl")"
if [ -n "$image" ]; then docker rmi -f "$image" >/dev/null; fi
