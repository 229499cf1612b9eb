#!/usr/bin/env bash
# The test command: sets up what the tests need (Docker engine, local base images),
# then runs the whole suite. Extra arguments go to the test runner.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --no-fail-fast "$@"
else
    cargo test --no-fail-fast "$@"
fi
