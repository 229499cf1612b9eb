#!/usr/bin/env bash
# Benchmark of `swe-harvest extract`: PRs per second and peak memory (RSS).
#
# With SWE_HARVEST_MIRRORS set to a folder of bare mirrors with refs/pull/*/head
# (<owner>+<name>/repo or <owner>__<name>.git), extracts every PR head of
# SWE_HARVEST_BENCH_REPO (default sqlfluff/sqlfluff) in SWE-bench and native mode;
# always also a synthetic repository of SWE_HARVEST_BENCH_SYNTHETIC_PRS PRs (3000).
# How the PR list is synthesized from a mirror: see tests/bench.rs. Release build.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --test tests bench:: -- --ignored --nocapture --test-threads=1 2>&1 | grep -E "BENCH|no mirror|test result"
