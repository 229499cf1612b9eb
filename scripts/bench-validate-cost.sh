#!/usr/bin/env bash
# Validation's cost per task on a fixed mixed set of published rows, from a cold
# engine and a warm one.
#
# The set: the Python rows of SWE-bench Lite dev whose repository has a mirror (the
# first BENCH_PYTHON_ROWS of them when set), and of each other language's shared
# Multi-SWE-bench rows (../shared/groundtruth/multi-swe-bench/, files by language
# prefix in name order) the first row whose repository has a mirror.
#
# Two passes, each `validate --input --runs 1 --workers 1` in a fresh data dir, no
# per-repository config (every environment inferred, as a new user meets it):
#   cold: every environment image of the set's repositories removed first (the base
#         images of scripts/setup.sh stay: their cost is the set-up's, measured by
#         scripts/bench-setup.sh);
#   warm: the same set again, the cold pass's images reused.
# Prints per task and pass: seconds building (or finding) environment images, in
# test phases, the overhead (the rest of the task's total: inference, the
# environment check, containers' start and removal, copying the repository in,
# patches, the store), the total and the outcome; per pass the wall time and the
# core-seconds the whole machine was busy (from /proc/stat, so run it on an idle
# machine). Then the engine's own floor per container: a base image's container
# made, started, waited for and removed with the sandbox's options, median of 5.
#
# usage: SWE_HARVEST_MIRRORS=<mirrors> scripts/bench-validate-cost.sh
#   BENCH_PYTHON_ROWS=N   only the first N Python rows with a mirror
#   SWE_HARVEST_BIN=PATH  a built swe-harvest (default: `cargo build` here)
#   KEEP_DIRS=1           keep the two data dirs (printed)
set -euo pipefail
cd "$(dirname "$0")/.."
: "${SWE_HARVEST_MIRRORS:?set SWE_HARVEST_MIRRORS to a directory of mirrors (see scripts/validate-groundtruth.sh)}"
shared=../shared/groundtruth
[ -f "$shared/swe-bench-lite-dev.jsonl" ] || { echo "bench-validate-cost: no $shared/swe-bench-lite-dev.jsonl: the shared rows are not on this machine" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "bench-validate-cost: no Docker engine answers: run scripts/setup.sh" >&2; exit 1; }
work=$(mktemp -d /tmp/swe-harvest-cost.XXXXXX)
[ "${KEEP_DIRS:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT

bin="${SWE_HARVEST_BIN:-}"
if [ -z "$bin" ]; then
    cargo build --quiet
    bin="${CARGO_TARGET_DIR:-target}/debug/swe-harvest"
fi

# The set, and the image repositories of its tasks (`swe-harvest/env.<owner>__<name>`).
python3 - "$shared" "$work/set.jsonl" "$work/repos.txt" <<'PY'
import json, os, sys
from pathlib import Path
shared, out, repos_out = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
mirrors = os.environ["SWE_HARVEST_MIRRORS"]
limit = int(os.environ.get("BENCH_PYTHON_ROWS") or 0)

def owner_name(row):
    return (row["org"], row["repo"]) if "org" in row else tuple(row["repo"].split("/"))

def has_mirror(row):
    owner, name = owner_name(row)
    layouts = (f"{owner}__{name}.git", f"{owner}+{name}/repo", f"{owner}/{name}.git", f"{owner}__{name}", f"{owner}/{name}")
    return any(os.path.isdir(os.path.join(mirrors, p)) for p in layouts)

chosen = []
python = [line for line in open(shared / "swe-bench-lite-dev.jsonl") if has_mirror(json.loads(line))]
chosen += [("python", line) for line in (python[:limit] if limit else python)]
languages = {}
for path in sorted((shared / "multi-swe-bench").glob("*.jsonl")):
    language = {"ts": "js"}.get(path.name.split("__")[0], path.name.split("__")[0])
    if language in languages:
        continue
    for line in open(path):
        if has_mirror(json.loads(line)):
            languages[language] = line
            break
chosen += sorted(languages.items())
with open(out, "w") as rows:
    rows.writelines(line if line.endswith("\n") else line + "\n" for _, line in chosen)
repos = sorted({"__".join(owner_name(json.loads(line))).lower() for _, line in chosen})
Path(repos_out).write_text("".join(f"{repo}\n" for repo in repos))
counts = {}
for language, _ in chosen:
    counts[language] = counts.get(language, 0) + 1
print("the set: " + ", ".join(f"{n} {language}" for language, n in counts.items())
      + f"; languages without a mirrored row: {', '.join(sorted({'c', 'cpp', 'go', 'java', 'js', 'rust'} - set(languages))) or 'none'}",
      file=sys.stderr)
PY
[ -s "$work/set.jsonl" ] || { echo "bench-validate-cost: no row of the set has a mirror in $SWE_HARVEST_MIRRORS" >&2; exit 1; }

# Busy core-seconds of the machine so far (user, nice, system, irq, softirq, steal).
busy() { awk -v hz="$(getconf CLK_TCK)" '/^cpu /{print ($2+$3+$4+$7+$8+$9)/hz}' /proc/stat; }

: "${SWE_HARVEST_VALIDATE__EXTRA_CA_FILE:=/etc/ssl/certs/ca-certificates.crt}"
export SWE_HARVEST_VALIDATE__EXTRA_CA_FILE
pass() {
    local name=$1 dir="$work/$1"
    mkdir -p "$dir"
    # A copy of the config in a folder with no repos/: every environment inferred.
    cp configs/pipeline.toml "$dir/pipeline.toml"
    local start busy_start
    start=$(date +%s.%N) busy_start=$(busy)
    "$bin" --data-dir "$dir/data" --config "$dir/pipeline.toml" validate \
        --input "$work/set.jsonl" --out "$dir/validated.jsonl" --runs 1 --workers 1 >"$dir/validate.log" 2>&1 || true
    echo "$name $(echo "$(date +%s.%N) - $start" | bc) $(echo "$(busy) - $busy_start" | bc)" >>"$work/passes.txt"
}

echo "cold pass: removing the set's environment images" >&2
while read -r repo; do
    docker images --format '{{.Repository}}:{{.Tag}}' | grep "^swe-harvest/env\.$repo:" | xargs -r docker rmi -f >/dev/null || true
done <"$work/repos.txt"
pass cold
echo "warm pass" >&2
pass warm

# The engine's floor per container: what every test container costs before its command.
base=$(docker images --format '{{.Repository}}:{{.Tag}}' | grep '^swe-harvest/base:debian-bookworm$' | head -1)
if [ -n "$base" ]; then
    for _ in 1 2 3 4 5; do
        s=$(date +%s.%N)
        docker run --rm --network none --memory 1g --pids-limit 512 --cap-drop ALL \
            --security-opt no-new-privileges "$base" true >/dev/null
        echo "$(date +%s.%N) - $s" | bc
    done >"$work/container.txt"
fi

python3 - "$work" <<'PY'
import json, re, statistics, sys
from pathlib import Path
work = Path(sys.argv[1])
passes = {name: (float(wall), float(cores)) for name, wall, cores in (line.split() for line in open(work / "passes.txt"))}
print(f"{'task':42} {'pass':5} {'images s':>9} {'tests s':>8} {'overhead s':>10} {'total s':>8}  outcome")
for name in ("cold", "warm"):
    log = (work / name / "validate.log").read_text()
    outcomes = {}
    rows = work / name / "validated.jsonl"
    if rows.exists():
        for line in open(rows):
            row = json.loads(line)
            outcomes[row["instance_id"]] = row.get("diagnosis", {}).get("status", "?")
    for line in open(work / "set.jsonl"):
        row = json.loads(line)
        instance = row.get("instance_id") or f"{row['org']}__{row['repo']}-{row['number']}"
        match = re.search(re.escape(instance) + r": ([\d.]+)s in containers' tests.*?, ([\d.]+)s building images, ([\d.]+)s in total", log)
        dropped = re.search(r"dropped instance_id=" + re.escape(instance) + r" reason=(\w+)", log)
        outcome = outcomes.get(instance) or (f"dropped {dropped.group(1)}" if dropped else "?")
        if match:
            tests, images, total = map(float, match.groups())
            print(f"{instance:42} {name:5} {images:9.1f} {tests:8.1f} {total - images - tests:10.1f} {total:8.1f}  {outcome}")
        else:
            print(f"{instance:42} {name:5} {'-':>9} {'-':>8} {'-':>10} {'-':>8}  {outcome}")
    wall, cores = passes[name]
    print(f"{name} pass: {wall:.0f} s wall, {cores:.0f} core-seconds busy (the whole machine)")
container = work / "container.txt"
if container.exists():
    times = [float(line) for line in open(container)]
    print(f"a container of the base image made, started, waited for and removed (the engine's floor): "
          f"median {statistics.median(times):.2f} s of {len(times)}")
PY
[ "${KEEP_DIRS:-0}" != 1 ] || echo "data dirs kept: $work" >&2
