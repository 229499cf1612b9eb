#!/usr/bin/env bash
# The review page's screenshots in docs/ (review-list.png, review-task.png), taken at
# 1280x800 by a real headless chromium from the offline demo's data: runs
# scripts/demo.sh into SWE_HARVEST_DEMO_DIR (a fresh folder by default; an existing
# demo folder is reused when it holds a release demo/1), then serves its release
# demo/1 with `swe-harvest review` and photographs the list and a task being rejected.
#
#   scripts/review-screenshots.sh
#   SWE_HARVEST_DEMO_DIR=DIR scripts/review-screenshots.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-browser.sh
demo=${SWE_HARVEST_DEMO_DIR:-$(mktemp -d /tmp/swe-harvest-review-demo.XXXXXX)}
if [ ! -f "$demo/data/releases/demo/1/tasks.jsonl" ]; then
    SWE_HARVEST_DEMO_DIR="$demo" SWE_HARVEST_DEMO_PROFILE=${SWE_HARVEST_DEMO_PROFILE:-dev} scripts/demo.sh
fi
SWE_HARVEST_REVIEW_DEMO_DATA="$demo/data" SWE_HARVEST_REVIEW_SCREENSHOTS="$PWD/docs" \
    cargo test --locked --test tests review::screenshots_of_the_review_page_on_the_demo -- --ignored --nocapture
ls -l docs/review-list.png docs/review-task.png
