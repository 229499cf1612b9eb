#!/usr/bin/env bash
# What the test command needs before the suite runs, made where missing: a Docker
# engine with the base images of every language, a headless browser, and
# cargo-nextest. Idempotent: on a ready machine it takes seconds. scripts/test.sh runs
# it first; CI (.ci/run) starts it first of all, beside the build and the linter,
# because on a fresh machine it is mostly downloads and dpkg (the images about 8
# minutes, the browser about 1); cargo-nextest's install (about 4 minutes of CPU) is
# the part that needs the cores, and it runs beside the images.
set -euo pipefail
cd "$(dirname "$0")/.."

# The suite runs under cargo-nextest, which runs the Docker tests two at a time in lanes
# (.config/nextest.toml) and the rest in parallel; it is installed from crates.io when
# missing, once, beside the images (which mostly wait on downloads and dpkg) rather
# than after them. A debug build (decision, 2026-11-27): it only starts and watches the
# tests, and it compiled in 5 min 54 s (5 min 30 s of CPU) where a release build took
# 11 min 8 s (12 min 50 s) on 2 cores. Without its default features (decision,
# 2026-11-28): they are its self-update (an HTTP and TLS stack that fetches releases
# from GitHub) and DTrace probes, neither of which the suite uses; 2 min 41 s (3 min
# 57 s of CPU) then.
install_nextest() {
    echo "test-setup.sh: cargo-nextest is missing; installing it (cargo install --locked --debug --no-default-features cargo-nextest)" >&2
    cargo install --locked --quiet --debug --no-default-features cargo-nextest \
        || echo "test-setup.sh: could not install cargo-nextest; the suite will run with cargo test, one test at a time" >&2
}
nextest=
if ! cargo nextest --version >/dev/null 2>&1; then
    install_nextest &
    nextest=$!
fi

# The suite validates Python, Go, Node (JavaScript), Java, Rust and C tasks: the base
# images of all six are made here (once; C's gcc12, for tests/language_c.rs, took 135 s
# from Debian here), as scripts/test-image-plan.tsv says: the catalogue's plan printed
# beforehand (tests/images.rs keeps it equal), so that no build has to come first and
# CI starts this beside the build. With SWE_HARVEST_LANGUAGES set, the plan comes from
# the binary instead: the suite's build first, whose binary (with the test build's
# features) serves, not a second build of the package with other features (about 8
# minutes on 2 cores). (SWE_HARVEST_TEST_BUILD_DONE=1: the caller has just built it.)
if [ -n "${SWE_HARVEST_LANGUAGES:-}" ]; then
    [ "${SWE_HARVEST_TEST_BUILD_DONE:-0}" = 1 ] || cargo test --locked --no-run --quiet
    target="${CARGO_TARGET_DIR:-target}"
    [[ "$target" = /* ]] || target="$PWD/$target"
    SWE_HARVEST_BIN="$target/debug/swe-harvest" scripts/setup.sh
else
    SWE_HARVEST_IMAGE_PLAN=scripts/test-image-plan.tsv scripts/setup.sh
fi
# The review page's tests drive a real headless browser (Debian's chromium and its driver).
scripts/setup-browser.sh || echo "test-setup.sh: no browser could be installed; the review page's browser tests will skip" >&2

[ -z "$nextest" ] || wait "$nextest"
