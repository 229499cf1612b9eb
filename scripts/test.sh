#!/usr/bin/env bash
# The test command: sets up what the tests need (Docker engine, local base images),
# then runs the whole suite. Extra arguments go to the test runner.
#
# The suite runs under cargo-nextest, which runs the Docker tests one at a time
# (.config/nextest.toml) and the rest in parallel; it is installed from crates.io
# when missing (once, about 4 minutes on 2 cores). Where it cannot be installed, the
# suite runs under plain `cargo test` with one test at a time, which is slower but
# just as correct.
set -euo pipefail
cd "$(dirname "$0")/.."

# The suite's build first: setup.sh reads the image plan from the swe-harvest binary,
# and the one the tests build (with the test build's features) serves it, instead of a
# second build of the package with other features (about 8 minutes on 2 cores).
cargo test --locked --no-run --quiet
target="${CARGO_TARGET_DIR:-target}"
[[ "$target" = /* ]] || target="$PWD/$target"

# The suite validates Go, Node (JavaScript), Java, Rust and C tasks too: their base images
# are made here (once; C's gcc12, for tests/language_c.rs, took 135 s from Debian here).
SWE_HARVEST_BIN="$target/debug/swe-harvest" \
    SWE_HARVEST_LANGUAGES="${SWE_HARVEST_LANGUAGES:-python go node java rust c}" scripts/setup.sh
# The review page's tests drive a real headless browser (Debian's chromium and its driver).
scripts/setup-browser.sh || echo "test.sh: no browser could be installed; the review page's browser tests will skip" >&2

if ! cargo nextest --version >/dev/null 2>&1; then
    echo "test.sh: cargo-nextest is missing; installing it (cargo install --locked cargo-nextest)" >&2
    cargo install --locked --quiet cargo-nextest \
        || echo "test.sh: could not install cargo-nextest; running the suite with cargo test, one test at a time" >&2
fi

if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --no-fail-fast "$@"
else
    cargo test --no-fail-fast "$@" -- --test-threads=1
fi
