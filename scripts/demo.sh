#!/usr/bin/env bash
# The offline demo: the whole pipeline, discover to release, on two synthetic Python
# repositories and a Go module whose GitHub side is served by the API simulator. Builds the
# release binaries, sets up what is missing (Docker, base images), runs
# `swe-harvest run` then `release` into a fresh data dir, prints the funnel and the
# release path, and exits 0 only when the release holds exactly the tasks that
# should survive and every other pull request was dropped for the expected reason.
#
#   scripts/demo.sh                 # a fresh folder under /tmp
#   SWE_HARVEST_DEMO_DIR=DIR scripts/demo.sh
#   SWE_HARVEST_DEMO_PROFILE=dev scripts/demo.sh   # debug binaries: a faster build
#   SWE_HARVEST_DEMO_BIN_DIR=DIR scripts/demo.sh    # binaries already built (the tests)
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*" >&2; }

if [ -n "${SWE_HARVEST_DEMO_BIN_DIR:-}" ]; then
    bin=$SWE_HARVEST_DEMO_BIN_DIR
else
    profile=${SWE_HARVEST_DEMO_PROFILE:-release}
    step "building swe-harvest ($profile profile)"
    cargo build --profile "$profile" --locked --bins --features dev-tools
    target_dir=${CARGO_TARGET_DIR:-target}
    if [ "$profile" = dev ]; then bin="$target_dir/debug"; else bin="$target_dir/$profile"; fi
fi

step "setting up Docker and base images"
# The demo's Go module needs the Go base images besides the Python ones; the image plan
# comes from the binary just built (setup.sh would otherwise build a debug one).
languages="${SWE_HARVEST_LANGUAGES:-python}"
case " $languages " in *" go "*) ;; *) languages="$languages go" ;; esac
SWE_HARVEST_BIN="$bin/swe-harvest" SWE_HARVEST_LANGUAGES="$languages" scripts/setup.sh

work=${SWE_HARVEST_DEMO_DIR:-$(mktemp -d /tmp/swe-harvest-demo.XXXXXX)}
mkdir -p "$work"
data="$work/data"
rm -rf "$data"

step "creating the demo repositories and their GitHub fixtures in $work/world"
"$bin/demo-fixtures" "$work/world" >/dev/null

step "starting the GitHub API simulator"
"$bin/github-sim" --fixtures "$work/world/fixtures" >"$work/sim.url" 2>"$work/sim.log" &
sim_pid=$!
trap 'kill "$sim_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do
    [ -s "$work/sim.url" ] && break
    sleep 0.1
done
api_url=$(head -n 1 "$work/sim.url")
[ -n "$api_url" ] || { echo "error: the simulator did not start; see $work/sim.log" >&2; exit 1; }
echo "simulator at $api_url" >&2

# Containers reach the package index through this machine's CA bundle (a proxy may
# stand in between); the bundle is copied into image builds, never into test runs.
if [ -z "${SWE_HARVEST_VALIDATE__EXTRA_CA_FILE:-}" ] && [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    export SWE_HARVEST_VALIDATE__EXTRA_CA_FILE=/etc/ssl/certs/ca-certificates.crt
fi

step "swe-harvest run: crawl, mirror, extract, validate, probe, screen"
run_status=0
"$bin/swe-harvest" --data-dir "$data" run \
    --repo demo-org/calculator demo-org/textkit demo-org/gounits \
    --api-url "$api_url" \
    --clone-url "$work/world/repos/{owner}__{name}.git" \
    --runs 4 --coverage || run_status=$?

step "swe-harvest release"
release_dir=$("$bin/swe-harvest" --data-dir "$data" release --name demo --version 1 --split-by month)
# A screened split: without the tasks whose tests were flaky in validation.
screened_dir=$("$bin/swe-harvest" --data-dir "$data" release --name demo-screened --version 1 \
    --exclude-flag flaky_tests)

step "the funnel"
"$bin/swe-harvest" --data-dir "$data" status --report "$work/funnel.html"

step "checking the outcome against $work/world/expected.json"
python3 scripts/demo_check.py "$work/world/expected.json" "$data" "$release_dir" "$screened_dir"
if [ "$run_status" -ne 0 ]; then
    echo "error: \`swe-harvest run\` exited $run_status" >&2
    exit 1
fi
echo
echo "release: $release_dir"
echo "funnel:  $work/funnel.html"
