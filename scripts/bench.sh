#!/usr/bin/env bash
# One table of swe-harvest's figures: crawl requests per 1,000 merged PRs (against
# the simulator), extraction PRs per second (a real mirror when SWE_HARVEST_MIRRORS
# holds one, a synthetic repository otherwise), warm validation overhead per task
# run, and environment image build time. Runs the three focused benchmarks (each
# also usable alone) and collects their figures; release builds.
#
#   scripts/bench.sh
#   SWE_HARVEST_MIRRORS=/path/to/mirrors scripts/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh >/dev/null
logs=$(mktemp -d /tmp/swe-harvest-bench.XXXXXX)

echo "crawl benchmark..." >&2
scripts/bench-crawl.sh >"$logs/crawl.log" 2>&1
echo "extract benchmark..." >&2
scripts/bench-extract.sh >"$logs/extract.log" 2>&1
echo "validate benchmark..." >&2
scripts/bench-validate-overhead.sh 3 >"$logs/validate.log" 2>&1

python3 - "$logs" <<'PY'
import re, sys
from pathlib import Path

logs = Path(sys.argv[1])
crawl = (logs / "crawl.log").read_text()
extract = (logs / "extract.log").read_text()
validate = (logs / "validate.log").read_text()

def find(pattern, text, default="(not measured)"):
    match = re.search(pattern, text)
    return match.group(1) if match else default

rows = [
    ("crawl (GraphQL): requests per 1,000 merged PRs (target <= 25)",
     find(r"graphql full crawl: \d+ requests, ([\d.]+) per 1,000", crawl)),
    ("crawl (GraphQL): points per 1,000 merged PRs",
     find(r"graphql full crawl: .*?\(([\d.]+) per 1,000\)", crawl)),
    ("crawl (REST): requests per 1,000 merged PRs (target <= 100)",
     find(r"rest full crawl: \d+ requests, ([\d.]+) per 1,000", crawl)),
    ("crawl (GraphQL): wall time, 5,000 merged PRs of the shape of real histories",
     find(r"graphql full crawl: .*?, ([\d.]+s) wall time", crawl)),
    ("crawl (GraphQL): requests of a refresh with nothing changed",
     find(r"graphql incremental crawl, nothing changed: (\d+) requests", crawl)),
    ("crawl (REST): requests of a refresh with nothing changed",
     find(r"rest incremental crawl, nothing changed: (\d+) requests", crawl)),
]
for label, prs_per_second, rss in re.findall(r"BENCH ([^:]+): \d+ PRs, whole process [\d.]+s = (\d+) PRs/s, peak RSS (\d+) KiB", extract):
    rows.append((f"extract: PRs per second, {label} (target >= 500)", prs_per_second))
    rows.append((f"extract: peak memory, {label}", f"{int(rss) // 1024} MiB"))
if not any(label.startswith("extract") for label, _ in rows):
    rows.append(("extract: PRs per second", "(not measured)"))
rows.append(("validate: overhead per task run beyond its tests, warm image (target <= 10 s)",
             find(r"overhead ([\d.]+s)", validate)))
rows.append(("validate: environment image build time (synthetic project)",
             find(r"environment images: \d+ built \(([\d.]+s)\)", validate)))

width = max(len(label) for label, _ in rows)
print(f"| {'measure'.ljust(width)} | figure |")
print(f"| {'-' * width} | ------ |")
for label, value in rows:
    print(f"| {label.ljust(width)} | {value} |")
print(f"\nfull logs: {logs}")
PY
