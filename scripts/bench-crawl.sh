#!/usr/bin/env bash
# Crawl benchmark: a simulated repository with 5,000 merged PRs (plus 500 closed
# without merging), 3,000 issues and 20,000 comments, served by the GitHub API
# simulator on 127.0.0.1, crawled through GraphQL (the default with a token) and
# through REST, each into its own data dir. Prints, per API, requests and GraphQL
# points per 1,000 merged PRs and wall time for a full crawl, then for an
# incremental second crawl with nothing changed; then both side by side and whether
# the two stores hold the same pull requests, issues and comments.
# Targets: GraphQL at most 25 requests per 1,000 merged PRs; REST at most 100.
#
#   scripts/bench-crawl.sh              # release build (slow to compile once)
#   BENCH_PROFILE=dev scripts/bench-crawl.sh
#   BENCH_MERGED=1000 BENCH_ISSUES=600 BENCH_COMMENTS=4000 scripts/bench-crawl.sh
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

# "requests points" served so far.
stat_totals() {
    curl -fsS "$URL/_sim/stats" | python3 -c 'import json, sys; s = json.load(sys.stdin); print(s["total"], s["points"])'
}

crawl() {
    local api=$1 label=$2 before after start end
    before=$(stat_totals)
    start=$(date +%s.%N)
    env -u GITHUB_TOKENS GITHUB_TOKEN=bench-token "$BIN/swe-harvest" --data-dir "$WORK/$api" -q \
        crawl --repo bench/repo --api-url "$URL" --api "$api"
    end=$(date +%s.%N)
    after=$(stat_totals)
    python3 - "$api" "$label" "$before" "$after" "$start" "$end" "$MERGED" >>"$WORK/results" <<'PY'
import sys
api, label = sys.argv[1], sys.argv[2]
requests_before, points_before = map(int, sys.argv[3].split())
requests_after, points_after = map(int, sys.argv[4].split())
start, end, merged = float(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
requests, points = requests_after - requests_before, points_after - points_before
print(f"{api}\t{label}\t{requests}\t{requests * 1000 / merged:.1f}\t{points}\t{points * 1000 / merged:.1f}\t{end - start:.2f}")
PY
    tail -n1 "$WORK/results" | awk -F'\t' '{printf "%s %s: %s requests, %s per 1,000 merged PRs, %s GraphQL points (%s per 1,000), %ss wall time\n", $1, $2, $3, $4, $5, $6, $7}'
}

echo "simulated repository: $MERGED merged PRs, $((MERGED / 10)) unmerged, $ISSUES issues, $COMMENTS comments ($PROFILE build)"
for api in graphql rest; do
    crawl "$api" "full crawl"
    crawl "$api" "incremental crawl, nothing changed"
done

echo
python3 - "$WORK/results" "$WORK/graphql/state.db" "$WORK/rest/state.db" <<'PY'
import sqlite3, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
by = {(api, label): (requests, per_thousand, points, points_per_thousand, wall) for api, label, requests, per_thousand, points, points_per_thousand, wall in rows}
print(f"| {'per 1,000 merged PRs':<34} | graphql requests | graphql points | rest requests |")
print(f"| {'-' * 34} | ---------------- | -------------- | ------------- |")
for label in ("full crawl", "incremental crawl, nothing changed"):
    graphql, rest = by[("graphql", label)], by[("rest", label)]
    print(f"| {label:<34} | {graphql[1]:>16} | {graphql[3]:>14} | {rest[1]:>13} |")
def content(path):
    db = sqlite3.connect(path)
    return [
        db.execute("SELECT number, data FROM pull_requests ORDER BY number").fetchall(),
        db.execute("SELECT number, data FROM issues ORDER BY number").fetchall(),
        db.execute("SELECT id, data FROM issue_comments ORDER BY id").fetchall(),
        db.execute("SELECT stage, item, outcome, reason FROM stage_items ORDER BY stage, item").fetchall(),
    ]
same = content(sys.argv[2]) == content(sys.argv[3])
print(f"\nthe two stores hold the same pull requests, issues, comments and funnel: {'yes' if same else 'NO'}")
PY
curl -fsS "$URL/_sim/stats" | python3 -c '
import json, sys
stats = json.load(sys.stdin)
for endpoint, statuses in sorted(stats["by_endpoint"].items()):
    print(f"  {endpoint}: " + ", ".join(f"{count} x {status}" for status, count in sorted(statuses.items())))
print("  graphql operations: " + ", ".join(f"{name} x {count}" for name, count in sorted(stats["by_operation"].items())))'
