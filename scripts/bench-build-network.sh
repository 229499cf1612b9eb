#!/usr/bin/env bash
# Benchmark of the build network (issue 30): each language's small test project has
# its environment image built through the egress proxy and open on the engine's
# default bridge, interleaved, each build new to the cache; prints the seconds per
# mode, their medians and difference, and the registries the proxy let through.
#
#   scripts/bench-build-network.sh
#   SWE_HARVEST_BENCH_LANGUAGES="python go" SWE_HARVEST_BENCH_ROUNDS=3 scripts/bench-build-network.sh
#
# Needs Docker with the languages' base images (scripts/setup.sh) and the registries
# (through validate.extra_ca_file where a proxy intercepts TLS; the host's bundle is
# used when present). See tests/egress_bench.rs.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked --test tests egress_bench::bench_build_network_through_the_proxy_and_open -- --ignored \
    --nocapture --test-threads=1 2>&1 | grep -E "BENCH|^\||skipped|panicked|test result"
