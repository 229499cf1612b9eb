#!/usr/bin/env bash
# Probe's cost and findings on published rows: `validate --input` then `probe --input`
# on the same rows in one data dir (so probe reuses validate's environment images and
# runs, as `run` does), each timed, no per-repository config.
#
# Prints per row: validate's seconds, probe's seconds and the mutants' test seconds,
# probe's share of validate's time, the mutants by outcome and the mutation score;
# then the totals: mutants per task, seconds per mutant and per task, probe's time as
# a fraction of validation's, the distribution of mutation scores and the tasks with
# survivors. The probed rows (with every survivor's diff) stay in the work dir for
# reading.
#
# usage: SWE_HARVEST_MIRRORS=<mirrors> scripts/bench-probe.sh ROWS.jsonl [VALIDATE ARGS...]
#   SWE_HARVEST_BIN=PATH   a built swe-harvest (default: `cargo build` here)
#   BENCH_DIR=DIR          the work dir (default: a new one under /tmp), kept
#   PROBE_ARGS="..."       more arguments for probe (e.g. `--mutants 16`)
#   VALIDATED=FILE         rows that `validate --input` already wrote: probe only
# Validate's arguments default to `--workers 2 --runs 1`.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${SWE_HARVEST_MIRRORS:?set SWE_HARVEST_MIRRORS to a directory of mirrors (see scripts/validate-groundtruth.sh)}"
rows=${1:?usage: scripts/bench-probe.sh ROWS.jsonl [VALIDATE ARGS...]}
shift
[ -f "$rows" ] || { echo "bench-probe: no $rows" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "bench-probe: no Docker engine answers: run scripts/setup.sh" >&2; exit 1; }
bin="${SWE_HARVEST_BIN:-}"
if [ -z "$bin" ]; then
    cargo build --quiet --locked
    bin="${CARGO_TARGET_DIR:-target}/debug/swe-harvest"
fi
work=${BENCH_DIR:-$(mktemp -d /tmp/swe-harvest-bench-probe.XXXXXX)}
mkdir -p "$work"
data="$work/data"
validate_args=("$@")
[ "${#validate_args[@]}" -gt 0 ] || validate_args=(--workers 2 --runs 1)
ca=()
[ -f /etc/ssl/certs/ca-certificates.crt ] && ca=(env SWE_HARVEST_VALIDATE__EXTRA_CA_FILE=/etc/ssl/certs/ca-certificates.crt)

validated=${VALIDATED:-$work/validated.jsonl}
if [ -z "${VALIDATED:-}" ]; then
    echo "bench-probe: validate --input $rows ${validate_args[*]}" >&2
    start=$(date +%s.%N)
    "${ca[@]}" "$bin" --data-dir "$data" validate --input "$rows" --out "$validated" "${validate_args[@]}" \
        2>"$work/validate.log" || true
    end=$(date +%s.%N)
    echo "$start $end" >"$work/validate.seconds"
fi
echo "bench-probe: probe --input $validated ${PROBE_ARGS:-}" >&2
start=$(date +%s.%N)
# shellcheck disable=SC2086
"${ca[@]}" "$bin" --data-dir "$data" probe --input "$validated" --out "$work/probed.jsonl" ${PROBE_ARGS:-} \
    2>"$work/probe.log" || true
end=$(date +%s.%N)
echo "$start $end" >"$work/probe.seconds"

python3 - "$work" <<'PY'
import json, re, statistics, sys
from pathlib import Path
work = Path(sys.argv[1])
# validate's per-task seconds, from its summary lines.
task_secs = {}
for line in (work / "validate.log").read_text(errors="replace").splitlines() if (work / "validate.log").exists() else []:
    found = re.match(r"\s+(\S+): .*?, ([0-9.]+)s in total$", line)
    if found:
        task_secs[found.group(1)] = float(found.group(2))
rows = [json.loads(line) for line in (work / "probed.jsonl").read_text().splitlines() if line.strip()]
print(f"{'instance':45} {'validate':>9} {'probe':>7} {'tests':>7} {'share':>6}  killed/survived/stillborn/timeout  score")
probe_total = validate_total = test_total = 0.0
mutants = viable = 0
scores, with_survivors, probed = [], 0, 0
for row in rows:
    probe = row.get("probe", {})
    counts = probe.get("mutants", {})
    seconds, tests = probe.get("seconds", 0.0), probe.get("test_seconds", 0.0)
    validate = task_secs.get(row["instance_id"])
    share = f"{seconds / validate:.2f}" if validate and seconds else "-"
    score = row.get("mutation_score")
    outcome = "/".join(str(counts.get(k, 0)) for k in ("killed", "survived", "stillborn", "timeout")) if counts else probe.get("reason", probe.get("status", "-"))
    print(f"{row['instance_id']:45} {validate if validate is not None else '-':>9} {seconds:>7} {tests:>7} {share:>6}  {outcome:33}  {'-' if score is None else f'{score:.2f}'}")
    if counts:
        probed += 1
        mutants += sum(counts.values())
        viable += counts.get("killed", 0) + counts.get("survived", 0)
        probe_total += seconds
        test_total += tests
        if validate:
            validate_total += validate
        if score is not None:
            scores.append(score)
        if row.get("surviving_mutants"):
            with_survivors += 1
print()
if probed:
    print(f"tasks probed {probed}; mutants {mutants} ({mutants / probed:.1f} a task, {viable} viable)")
    print(f"probe {probe_total:.0f} s in all, {probe_total / probed:.1f} s a task, {probe_total / max(mutants, 1):.1f} s a mutant (test phases {test_total:.0f} s)")
    if validate_total:
        print(f"validate {validate_total:.0f} s over the same tasks: probe is {probe_total / validate_total:.2f} of validation's time")
if scores:
    print(f"mutation scores: median {statistics.median(scores):.2f}, min {min(scores):.2f}, max {max(scores):.2f}; "
          f"1.0: {sum(1 for s in scores if s == 1.0)}, <1.0: {sum(1 for s in scores if s < 1.0)}; tasks with survivors: {with_survivors}")
for name in ("validate", "probe"):
    path = work / f"{name}.seconds"
    if path.exists():
        start, end = map(float, path.read_text().split())
        print(f"{name} wall time {end - start:.0f} s")
print(f"rows with survivors' diffs: {work / 'probed.jsonl'}")
PY
