#!/usr/bin/env bash
# Measures the quality screen against SWE-bench Verified's human annotations and
# prints the figures of docs/screen.md: on the development set's shared 68 tasks,
# ROC AUC of quality_score against filter_out, underspecified >= 2 and
# false_negative >= 2, the patch-size baseline, precision and recall of the `flag`
# verdict, and the difficulty's agreement with the annotators; and on the whole
# development set (231 tasks), the same figures of the model as written and of its
# cross-validation grouped by repository (out-of-fold scores: each repository scored
# by a fit on the others). The verdict's figures on each part at hand: in sample, and
# by leaving one repository out (thresholds chosen and score refitted on the others):
# `flag`'s precision and recall, `keep`'s share of the filtered-out tasks, each flag's
# count and precision. With SWE_HARVEST_SCREEN_VALIDATED (a folder with `probed.jsonl`
# or `validated.jsonl` and the `data/` dir they ran in), the run-based signals of the
# annotated rows the pipeline validated.
#
# The shared part: ../shared/groundtruth/quality/ seen from the project root, or the
# folder SWE_HARVEST_SCREEN_DEV names. The larger part: the folder
# SWE_HARVEST_SCREEN_DEV_EXTRA names, holding `ensembled_annotations_public.csv` and
# `swe-bench-lite.jsonl` (where to get them: docs/screen.md); skipped with a message
# when unset. Fetches nothing itself.
#
# usage: scripts/screen-measure.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --test tests screen:: -- --include-ignored --nocapture --test-threads=1 2>&1 \
    | grep -E "^SCREEN|skipping|panicked|test result|write down|weights|intercept|^        -?[0-9]"
