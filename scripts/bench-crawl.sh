#!/usr/bin/env bash
# Crawl benchmark: a simulated repository with 5,000 merged PRs (plus 500 closed
# without merging), 3,000 issues and 20,000 comments, served by the GitHub API
# simulator on 127.0.0.1. Prints requests per 1,000 merged PRs and wall time for a
# full crawl, then for an incremental second crawl with nothing changed.
# Target: at most 100 requests per 1,000 merged PRs.
#
#   scripts/bench-crawl.sh              # release build (slow to compile once)
#   BENCH_PROFILE=dev scripts/bench-crawl.sh
set -euo pipefail
cd "$(dirname "$0")/.."

MERGED=${BENCH_MERGED:-5000}
ISSUES=${BENCH_ISSUES:-3000}
COMMENTS=${BENCH_COMMENTS:-20000}
PROFILE=${BENCH_PROFILE:-release}
TARGET_DIR=${CARGO_TARGET_DIR:-target}

if [ "$PROFILE" = release ]; then
    cargo build --release --bin swe-harvest --bin github-sim
    BIN="$TARGET_DIR/release"
else
    cargo build --bin swe-harvest --bin github-sim
    BIN="$TARGET_DIR/debug"
fi

WORK=$(mktemp -d)
"$BIN/github-sim" --generate "bench/repo:$MERGED:$ISSUES:$COMMENTS" >"$WORK/url" &
SIM_PID=$!
trap 'kill "$SIM_PID" 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do
    [ -s "$WORK/url" ] && break
    sleep 0.1
done
URL=$(head -n1 "$WORK/url")

stat_total() {
    curl -fsS "$URL/_sim/stats" | python3 -c 'import json, sys; print(json.load(sys.stdin)["total"])'
}

crawl() {
    local label=$1 before after start end
    before=$(stat_total)
    start=$(date +%s.%N)
    env -u GITHUB_TOKENS GITHUB_TOKEN=bench-token "$BIN/swe-harvest" --data-dir "$WORK/data" -q \
        crawl --repo bench/repo --api-url "$URL"
    end=$(date +%s.%N)
    after=$(stat_total)
    python3 - "$label" "$before" "$after" "$start" "$end" "$MERGED" <<'PY'
import sys
label, before, after, start, end, merged = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
requests = after - before
print(f"{label}: {requests} requests, {requests * 1000 / merged:.1f} per 1,000 merged PRs, {end - start:.2f}s wall time")
PY
}

echo "simulated repository: $MERGED merged PRs, $((MERGED / 10)) unmerged, $ISSUES issues, $COMMENTS comments ($PROFILE build)"
crawl "full crawl"
crawl "incremental crawl, nothing changed"
curl -fsS "$URL/_sim/stats" | python3 -c '
import json, sys
stats = json.load(sys.stdin)
for endpoint, statuses in sorted(stats["by_endpoint"].items()):
    print(f"  {endpoint}: " + ", ".join(f"{count} x {status}" for status, count in sorted(statuses.items())))'
