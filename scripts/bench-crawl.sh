#!/usr/bin/env bash
# Crawl benchmark: a simulated repository of the shape of real histories (as measured
# on pallets/flask and psf/requests: per merged PR 0.75 closed-unmerged PRs, 1.5
# issues, most of them referenced by no merged PR, and 1.1 comments per issue),
# 5,000 merged PRs by default, served by the GitHub API simulator on 127.0.0.1, which
# validates every GraphQL query against GitHub's public schema when
# ../shared/github/schema.graphql is there. Crawled through GraphQL (the default with
# a token) and through REST, each into its own data dir. Prints, per API, requests
# and GraphQL points per 1,000 merged PRs and wall time for a full crawl, then for a
# refresh with nothing changed; both side by side; whether the two stores hold the
# same merged PRs, referenced issues, comments and funnel (what extract and status
# read); and how many queries the schema checked and refused.
# Targets: GraphQL at most 25 requests per 1,000 merged PRs; REST at most 100.
#
#   scripts/bench-crawl.sh              # release build (slow to compile once)
#   BENCH_PROFILE=dev scripts/bench-crawl.sh
#   BENCH_MERGED=1000 scripts/bench-crawl.sh
#   BENCH_SHAPE=simple BENCH_ISSUES=3000 BENCH_COMMENTS=20000 scripts/bench-crawl.sh
#       # the earlier synthetic shape: a tenth as many unmerged PRs as merged ones,
#       # 80% of merged PRs fixing one of the given issues
#   BENCH_SWE_HARVEST=path/to/swe-harvest scripts/bench-crawl.sh
#       # another build of the crawler (an older one, to compare) against this simulator
set -euo pipefail
cd "$(dirname "$0")/.."

MERGED=${BENCH_MERGED:-5000}
SHAPE=${BENCH_SHAPE:-real}
PROFILE=${BENCH_PROFILE:-release}
TARGET_DIR=${CARGO_TARGET_DIR:-target}

if [ "$PROFILE" = release ]; then
    cargo build --release --features dev-tools --bin swe-harvest --bin github-sim
    BIN="$TARGET_DIR/release"
else
    cargo build --features dev-tools --bin swe-harvest --bin github-sim
    BIN="$TARGET_DIR/debug"
fi
HARVEST=${BENCH_SWE_HARVEST:-$BIN/swe-harvest}

if [ "$SHAPE" = real ]; then
    GENERATE="bench/repo:$MERGED"
    DESCRIPTION="$MERGED merged PRs, $((MERGED * 3 / 4)) closed unmerged, $((MERGED * 3 / 2)) issues, $((MERGED * 3 / 2 * 11 / 10)) comments (the shape of real histories)"
else
    ISSUES=${BENCH_ISSUES:-3000}
    COMMENTS=${BENCH_COMMENTS:-20000}
    GENERATE="bench/repo:$MERGED:$ISSUES:$COMMENTS"
    DESCRIPTION="$MERGED merged PRs, $((MERGED / 10)) closed unmerged, $ISSUES issues, $COMMENTS comments (the simple shape)"
fi
SCHEMA_ARGS=()
if [ -f ../shared/github/schema.graphql ]; then
    SCHEMA_ARGS=(--schema ../shared/github/schema.graphql)
fi

WORK=$(mktemp -d)
"$BIN/github-sim" --generate "$GENERATE" "${SCHEMA_ARGS[@]}" >"$WORK/url" &
SIM_PID=$!
trap 'kill "$SIM_PID" 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 300); do
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
    env -u GITHUB_TOKENS GITHUB_TOKEN=bench-token "$HARVEST" --data-dir "$WORK/$api" -q \
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

echo "simulated repository: $DESCRIPTION ($PROFILE build)"
for api in graphql rest; do
    crawl "$api" "full crawl"
    crawl "$api" "incremental crawl, nothing changed"
done

echo
python3 - "$WORK/results" "$WORK/graphql/state.db" "$WORK/rest/state.db" <<'PY'
import re, sqlite3, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
by = {(api, label): (requests, per_thousand, points, points_per_thousand, wall) for api, label, requests, per_thousand, points, points_per_thousand, wall in rows}
print(f"| {'per 1,000 merged PRs':<34} | graphql requests | graphql points | rest requests |")
print(f"| {'-' * 34} | ---------------- | -------------- | ------------- |")
for label in ("full crawl", "incremental crawl, nothing changed"):
    graphql, rest = by[("graphql", label)], by[("rest", label)]
    print(f"| {label:<34} | {graphql[1]:>16} | {graphql[3]:>14} | {rest[1]:>13} |")

# What extract and status read must be the same: the merged PRs, the issues merged PRs
# refer to with their comments, and the funnel. REST also stores the issues no merged
# PR refers to (its bulk listing has them); GraphQL does not fetch them.
graphql, rest = sqlite3.connect(sys.argv[2]), sqlite3.connect(sys.argv[3])
def table(db, sql):
    return set(db.execute(sql).fetchall())
def funnel(db):
    counts = {}
    for outcome, reason, count in db.execute(
        "SELECT outcome, COALESCE(reason, ''), COUNT(*) FROM stage_items WHERE stage = 'crawl' GROUP BY outcome, reason"
    ):
        counts[(outcome, reason)] = count
    has_totals = db.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'stage_totals'").fetchone()[0]
    if has_totals:
        for reason, total in db.execute("SELECT reason, total FROM stage_totals WHERE stage = 'crawl'"):
            counts[("dropped", reason)] = max(counts.get(("dropped", reason), 0), total)
    return counts
problems = []
if table(graphql, "SELECT number, data FROM pull_requests") != table(rest, "SELECT number, data FROM pull_requests"):
    problems.append("merged PRs differ")
graphql_issues = table(graphql, "SELECT number, data FROM issues")
rest_issues = table(rest, "SELECT number, data FROM issues")
if not graphql_issues <= rest_issues:
    problems.append(f"{len(graphql_issues - rest_issues)} issues differ from REST's")
graphql_comments = table(graphql, "SELECT id, issue_number, data FROM issue_comments")
stored = {number for number, _ in graphql_issues}
rest_comments = {row for row in table(rest, "SELECT id, issue_number, data FROM issue_comments") if row[1] in stored}
if graphql_comments != rest_comments:
    problems.append("the referenced issues' comments differ")
# Every issue REST has and GraphQL lacks is referred to by no merged PR.
referred = set()
for title, body in graphql.execute("SELECT json_extract(data, '$.title'), json_extract(data, '$.body') FROM pull_requests"):
    referred.update(int(number) for number in re.findall(r"(?:^|[\s(])#(\d+)\b", f"{title}\n{body or ''}"))
referred.update(number for (number,) in graphql.execute("SELECT issue_number FROM pull_request_references"))
missing = sorted(number for number, _ in rest_issues - graphql_issues if number in referred)
if missing:
    problems.append(f"referenced issues GraphQL lacks: {missing[:10]}")
if funnel(graphql) != funnel(rest):
    problems.append(f"funnels differ: {funnel(graphql)} vs {funnel(rest)}")
print(f"\nthe two stores hold the same merged PRs, referenced issues ({len(graphql_issues)} of REST's {len(rest_issues)} issues), "
      f"their comments and funnel: {'yes' if not problems else 'NO: ' + '; '.join(problems)}")
PY
curl -fsS "$URL/_sim/stats" | python3 -c '
import json, sys
stats = json.load(sys.stdin)
for endpoint, statuses in sorted(stats["by_endpoint"].items()):
    print(f"  {endpoint}: " + ", ".join(f"{count} x {status}" for status, count in sorted(statuses.items())))
print("  graphql operations: " + ", ".join(f"{name} x {count}" for name, count in sorted(stats["by_operation"].items())))
checked, refused = stats.get("schema_checked", 0), stats.get("refused", [])
if checked:
    print(f"  GraphQL queries checked against GitHub'"'"'s public schema: {checked}, refused: {len(refused)}")
    for why in refused[:5]:
        print(f"    {why}")
else:
    print("  GraphQL queries were not checked against GitHub'"'"'s schema (../shared/github/schema.graphql is absent)")'
