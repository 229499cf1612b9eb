#!/usr/bin/env bash
# Runs a Docker test (nextest's wrapper: the test binary and its arguments follow) in
# its lane of the machine's one Docker engine:
#
#   docker-lane.sh shared TEST...   beside another shared test
#   docker-lane.sh alone TEST...    with the engine to itself
#
# Two Docker tests run at once (.config/nextest.toml), which keeps both cores busy:
# most of a Docker test's time is waiting for containers, not computing. A test runs
# alone when another test's containers and images would disturb it: the cluster tests
# turn the engine into a swarm manager; the signal tests time a window that a busy
# machine can miss. A shared test can take the engine alone for a part of its run (the
# swarm test, after its demo: tests/support/docker_lane.rs), through the lane's
# descriptor and the turnstile that this script names in SWE_HARVEST_DOCKER_LANE_FD and
# SWE_HARVEST_DOCKER_TURNSTILE.
#
# A reader-writer lock on a file of this machine (the engine is the machine's, so two
# suites at once share the lanes too). A turnstile lock in front keeps a waiting `alone`
# from being starved by a stream of `shared` tests: a test takes the turnstile, then its
# lane, then lets the turnstile go; an `alone` test holds the turnstile while it waits,
# so no new test gets in before it. The test inherits the lane's descriptor, so the
# lock lasts exactly as long as the test's process (and not the processes it starts:
# the test makes the descriptor close-on-exec).
set -euo pipefail
lane=${1:?usage: docker-lane.sh shared|alone TEST...}
shift
case "$lane" in
    shared) mode=-s ;;
    alone) mode=-x ;;
    *) echo "docker-lane.sh: unknown lane '$lane' (shared or alone)" >&2; exit 2 ;;
esac
locks=${SWE_HARVEST_DOCKER_LANE_DIR:-${XDG_RUNTIME_DIR:-/tmp}}
turnstile="$locks/swe-harvest-docker-turnstile.lock"
exec 8>>"$turnstile"
flock -x 8
exec 9>>"$locks/swe-harvest-docker-lane.lock"
flock "$mode" 9
exec 8>&-
# The test marks the lane's descriptor close-on-exec as it starts (docker_lane.rs):
# a process it leaves running must not keep the lane.
export SWE_HARVEST_DOCKER_LANE_FD=9
if [ "$lane" = shared ]; then
    export SWE_HARVEST_DOCKER_TURNSTILE="$turnstile"
fi
exec "$@"
