#!/usr/bin/env bash
# Measures scripts/setup.sh's base images on a cold build, without touching the images
# anyone uses: the images go to a scratch repository (SWE_HARVEST_BASE_REPO, default
# swe-harvest-cold/base) and every download to a fresh work dir (SWE_HARVEST_WORK_DIR),
# so nothing of an earlier build is reused. Prints the wall time, the load average
# before and after, and every image made with its size; then removes the images it
# made under that repository (BENCH_KEEP_IMAGES=1 keeps them).
#
# usage: scripts/bench-setup.sh demo|all [SETUP_SCRIPT]
#   demo: the images scripts/demo.sh needs (python and go);
#   all:  those of scripts/test.sh (python go node java rust c).
#   SETUP_SCRIPT: the setup.sh to measure (default scripts/setup.sh; e.g. an older
#   version saved with `git show main:scripts/setup.sh > old-setup.sh`).
# Needs root (mmdebstrap) and a running Docker engine. Other builds on the machine
# change every figure: the load average is printed beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
set_name="${1:?usage: scripts/bench-setup.sh demo|all [SETUP_SCRIPT]}"
setup="${2:-scripts/setup.sh}"
case "$set_name" in
    demo) languages="python go" ;;
    all) languages="python go node java rust c" ;;
    *) echo "bench-setup.sh: unknown set '$set_name' (demo or all)" >&2; exit 2 ;;
esac
repo="${SWE_HARVEST_BASE_REPO:-swe-harvest-cold/base}"
[ "$repo" != swe-harvest/base ] || { echo "bench-setup.sh: refusing to measure on swe-harvest/base (the images in use)" >&2; exit 2; }
work="$(mktemp -d "${TMPDIR:-/tmp}/swe-harvest-bench-setup.XXXXXX")"

remove_images() {
    docker image ls --format '{{.Repository}}:{{.Tag}}' "$repo" | xargs -r docker image rm >/dev/null 2>&1 || true
}
if [ -n "$(docker image ls -q "$repo")" ]; then
    echo "bench-setup.sh: $repo already has images; remove them first (docker image ls $repo)" >&2
    exit 2
fi
cleanup() {
    [ "${BENCH_KEEP_IMAGES:-0}" = 1 ] || remove_images
    rm -rf "$work"
}
trap cleanup EXIT

echo "set: $set_name ($languages), script: $setup, repository: $repo"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s.%N)
SWE_HARVEST_LANGUAGES="$languages" SWE_HARVEST_BASE_REPO="$repo" SWE_HARVEST_WORK_DIR="$work" \
    bash "$setup" 2>&1 | sed 's/^/  | /'
status=${PIPESTATUS[0]}
end=$(date +%s.%N)
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'wall: %.0f s (setup.sh exit %s)\n' "$(echo "$end - $start" | bc)" "$status"
echo "images:"
docker image ls --format '{{.Tag}} {{.ID}}' "$repo" | sort | while read -r tag id; do
    printf '  %-16s %6d MB\n' "$tag" "$(docker image inspect -f '{{.Size}}' "$id" | awk '{ printf "%d", $1 / 1e6 }')"
done
exit "$status"
