#!/usr/bin/env bash
# Validation throughput on the swarm backend with 1, 2 and 3 nodes against the local
# backend, on the same task set: the offline demo's three tasks, each copied
# $SWE_HARVEST_BENCH_COPIES times under new instance ids (same repositories and
# commits), validated with $SWE_HARVEST_BENCH_RUNS runs each from a fresh data dir
# (so no run is reused), with 2 tasks in flight per node.
#
#   scripts/bench-cluster.sh            # needs root (scripts/cluster.sh)
#
# Prints one line per setting: tasks, jobs (container runs), wall seconds, tasks per
# hour, seconds per job; then the scheduling overhead per job of the swarm (1 node)
# against the local backend, and the scaling as a ratio to 1 node. On one machine
# the nodes share its cores, so the ratio measures how well the jobs overlap, not
# what more machines would add. Takes the cluster down at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

COPIES="${SWE_HARVEST_BENCH_COPIES:-4}"
RUNS="${SWE_HARVEST_BENCH_RUNS:-3}"
NODES="${SWE_HARVEST_BENCH_NODES:-1 2 3}"
work="$(mktemp -d /tmp/swh-bench-cluster.XXXXXX)"
trap 'scripts/cluster.sh down >/dev/null 2>&1 || true' EXIT

cargo build --quiet --bins --features dev-tools
bin="$PWD/target/debug"
export SWE_HARVEST_VALIDATE__EXTRA_CA_FILE="${SWE_HARVEST_VALIDATE__EXTRA_CA_FILE:-/etc/ssl/certs/ca-certificates.crt}"

echo "bench-cluster: the demo (local backend) makes the task set in $work" >&2
SWE_HARVEST_DEMO_BIN_DIR="$bin" SWE_HARVEST_DEMO_DIR="$work/demo" bash scripts/demo.sh >"$work/demo.log" 2>&1 \
    || { tail -n 20 "$work/demo.log" >&2; exit 1; }
python3 - "$work/demo/data/releases/demo/1/tasks.jsonl" "$COPIES" >"$work/tasks.jsonl" <<'EOF'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
for copy in range(int(sys.argv[2])):
    for row in rows:
        row = dict(row)
        owner_name, number = row["instance_id"].rsplit("-", 1)
        row["instance_id"] = f"{owner_name}-{(copy + 1) * 1000 + int(number)}"
        print(json.dumps(row))
EOF
tasks=$(wc -l <"$work/tasks.jsonl")

# validate NAME BACKEND WORKERS -> "seconds jobs"
measure() {
    local name=$1 backend=$2 workers=$3 data="$work/$1"
    "$bin/swe-harvest" --data-dir "$data" mirror --repo demo-org/calculator demo-org/textkit demo-org/gounits \
        --clone-url "$work/demo/world/repos/{owner}__{name}.git" >/dev/null 2>&1
    local t0 t1
    t0=$(date +%s.%N)
    "$bin/swe-harvest" --data-dir "$data" validate --input "$work/tasks.jsonl" --out "$data/out.jsonl" \
        --backend "$backend" --runs "$RUNS" --workers "$workers" >"$data/validate.log" 2>&1 \
        || { tail -n 20 "$data/validate.log" >&2; exit 1; }
    t1=$(date +%s.%N)
    local jobs
    jobs=$(find "$data/logs/validate" "$data/logs/check" -name '*.log' 2>/dev/null | wc -l)
    echo "$(echo "$t1 - $t0" | bc) $jobs"
}

report() { # name seconds jobs
    awk -v name="$1" -v s="$2" -v j="$3" -v t="$tasks" \
        'BEGIN { printf "%-14s %5d tasks %5d jobs %8.1f s %8.0f tasks/hour %6.2f s/job\n", name, t, j, s, t * 3600 / s, s / j }'
}

echo "bench-cluster: $tasks tasks, $RUNS runs each" >&2
read -r local_s local_jobs < <(measure local local 2)
report "local" "$local_s" "$local_jobs"

export SWE_HARVEST_VALIDATE__REGISTRY
declare -A seconds
for n in $NODES; do
    SWE_HARVEST_VALIDATE__REGISTRY=$(scripts/cluster.sh up "$n" 2>/dev/null)
    # The first placements on a new node pull the environment's layers: warm each
    # node with one untimed pass so that the figures are of scheduling, not of pulls.
    measure "warm-$n" swarm $((2 * n)) >/dev/null
    read -r s jobs < <(measure "swarm-$n" swarm $((2 * n)))
    seconds[$n]=$s
    report "swarm $n node" "$s" "$jobs"
    if [ "$n" = 1 ]; then
        awk -v s="$s" -v l="$local_s" -v j="$jobs" \
            'BEGIN { printf "overhead per job, swarm (1 node) against local: %+.2f s\n", (s - l) / j }'
    fi
done
for n in $NODES; do
    [ -n "${seconds[1]:-}" ] && awk -v one="${seconds[1]}" -v s="${seconds[$n]}" -v n="$n" \
        'BEGIN { printf "scaling, %d node(s) against 1: %.2fx tasks per hour\n", n, one / s }'
done
