#!/usr/bin/env bash
# The test command: sets up what the tests need (scripts/test-setup.sh: the build, a
# Docker engine, the base images, a browser, cargo-nextest), then runs the whole
# suite. Extra arguments go to the test runner.
#
# The suite runs under cargo-nextest, which runs the Docker tests two at a time in lanes
# (.config/nextest.toml) and the rest in parallel. Where it could not be installed,
# the suite runs under plain `cargo test` with one test at a time, which is slower but
# just as correct.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/test-setup.sh

if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --no-fail-fast "$@"
else
    cargo test --no-fail-fast "$@" -- --test-threads=1
fi
