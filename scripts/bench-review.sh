#!/usr/bin/env bash
# Benchmark of the review page (`swe-harvest review`): the time for the list of
# 5,000 synthetic tasks to open, and for moving to the next task, measured in a real
# headless chromium (performance.now() in the page: from navigation start to the list
# drawn; from the key press to the next task drawn). Goals: < 1 s and < 100 ms.
#
#   scripts/bench-review.sh
#   SWE_HARVEST_BENCH_REVIEW_TASKS=20000 scripts/bench-review.sh
#
# Release build; installs chromium and chromium-driver where missing
# (scripts/setup-browser.sh). The tasks are generated into a fresh store (see
# tests/review.rs, bench_review_page_on_5000_tasks).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-browser.sh
cargo test --release --locked --test tests review::bench_review_page_on_5000_tasks -- --ignored --nocapture \
    --test-threads=1 2>&1 | grep -E "BENCH|skipped|panicked|test result"
