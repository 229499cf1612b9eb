#!/usr/bin/env bash
# What the test command needs before the suite runs, made where missing: the suite's
# build, a Docker engine with the base images of every language, a headless browser,
# and cargo-nextest. Idempotent: on a ready machine it takes seconds. scripts/test.sh
# runs it first; CI (.ci/run) starts it early, beside the linter, because on a fresh
# machine it is mostly downloads that need no cores (the images about 6 minutes, the
# browser about 1; cargo-nextest's install, about 4, is the part that does).
set -euo pipefail
cd "$(dirname "$0")/.."

# The suite's build first: setup.sh reads the image plan from the swe-harvest binary,
# and the one the tests build (with the test build's features) serves it, instead of a
# second build of the package with other features (about 8 minutes on 2 cores).
# (SWE_HARVEST_TEST_BUILD_DONE=1: the caller has just built it; .ci/run does, then lints
# beside this script, and clippy holds the target dir's lock.)
[ "${SWE_HARVEST_TEST_BUILD_DONE:-0}" = 1 ] || cargo test --locked --no-run --quiet
target="${CARGO_TARGET_DIR:-target}"
[[ "$target" = /* ]] || target="$PWD/$target"

# The suite validates Go, Node (JavaScript), Java, Rust and C tasks too: their base images
# are made here (once; C's gcc12, for tests/language_c.rs, took 135 s from Debian here).
SWE_HARVEST_BIN="$target/debug/swe-harvest" \
    SWE_HARVEST_LANGUAGES="${SWE_HARVEST_LANGUAGES:-python go node java rust c}" scripts/setup.sh
# The review page's tests drive a real headless browser (Debian's chromium and its driver).
scripts/setup-browser.sh || echo "test-setup.sh: no browser could be installed; the review page's browser tests will skip" >&2

# The suite runs under cargo-nextest, which runs the Docker tests two at a time in lanes
# (.config/nextest.toml) and the rest in parallel; it is installed from crates.io when
# missing (once, about 4 minutes on 2 cores).
if ! cargo nextest --version >/dev/null 2>&1; then
    echo "test-setup.sh: cargo-nextest is missing; installing it (cargo install --locked cargo-nextest)" >&2
    cargo install --locked --quiet cargo-nextest \
        || echo "test-setup.sh: could not install cargo-nextest; the suite will run with cargo test, one test at a time" >&2
fi
