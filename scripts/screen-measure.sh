#!/usr/bin/env bash
# Measures the quality screen against SWE-bench Verified's human annotations and
# prints the figures of docs/screen.md: ROC AUC of quality_score against filter_out,
# underspecified >= 2 and false_negative >= 2, the patch-size baseline, precision and
# recall of the `flag` verdict, and the difficulty's agreement with the annotators.
#
# The development set (tuned on): ../shared/groundtruth/quality/ seen from the
# project root, or the folder SWE_HARVEST_SCREEN_DEV names. The held-out set (never
# tuned on): the folder SWE_HARVEST_SCREEN_HELDOUT names, holding
# `ensembled_annotations_public.csv` and `swe-bench-lite.jsonl` (where to get them:
# docs/screen.md); skipped with a message when unset. Fetches nothing itself.
#
# usage: scripts/screen-measure.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --test tests screen:: -- --include-ignored --nocapture --test-threads=1 2>&1 \
    | grep -E "^SCREEN|skipping|panicked|test result|write down|weights|intercept|^        -?[0-9]"
