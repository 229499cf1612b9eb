#!/usr/bin/env bash
# Measures the validate stage against published SWE-bench (or Multi-SWE-bench) rows
# (../shared/groundtruth/):
# re-validates every row whose repository has a local mirror and prints, per row,
# whether FAIL_TO_PASS is exactly the published list and PASS_TO_PASS's recall, then
# the totals and times. Reads mirrors from SWE_HARVEST_MIRRORS (a directory of
# `<owner>__<name>.git`, `<owner>+<name>/repo`, `<owner>/<name>.git`, `<owner>__<name>`
# or `<owner>/<name>`, bare or plain clones); fetches nothing itself.
#
# usage: scripts/validate-groundtruth.sh [ROWS.jsonl] [extra validate args, e.g. --coverage]
#   CONFIG=configs/pipeline.toml   the config (its folder's repos/ holds per-repo overrides;
#                                  default: configs/pipeline.toml with configs/repos/)
#   SWE_HARVEST_BIN=PATH           a built swe-harvest to run (default: `cargo build` here)
#   INFERENCE_ONLY=1               set configs/repos/ aside: the config is copied into the
#                                  data dir, where no repos/ folder exists, so every
#                                  environment is inferred (as a new user meets it)
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${1:-../shared/groundtruth/swe-bench-lite-dev.jsonl}"
shift || true
: "${SWE_HARVEST_MIRRORS:?set SWE_HARVEST_MIRRORS to a directory of mirrors}"
data_dir="${DATA_DIR:-$(mktemp -d)/data}"
mkdir -p "$data_dir"
# Keep only rows whose mirror exists.
selected="$data_dir/rows.jsonl"
python3 - "$rows" "$selected" <<'PY'
import json, os, sys
mirrors = os.environ["SWE_HARVEST_MIRRORS"]
kept = 0
with open(sys.argv[1]) as rows, open(sys.argv[2], "w") as out:
    for line in rows:
        row = json.loads(line)
        # SWE-bench rows: repo = owner/name; Multi-SWE-bench rows: org + repo.
        owner, name = (row["org"], row["repo"]) if "org" in row else row["repo"].split("/")
        # The layouts validate reads (pipeline/git/tree.rs, `mirror_in`), exact names.
        layouts = (f"{owner}__{name}.git", f"{owner}+{name}/repo", f"{owner}/{name}.git", f"{owner}__{name}", f"{owner}/{name}")
        if any(os.path.isdir(os.path.join(mirrors, p)) for p in layouts):
            out.write(line)
            kept += 1
print(f"{kept} rows with a mirror", file=sys.stderr)
PY
# A built binary when given (the test build's serves: `cargo test --no-run` builds it
# with the tests' features, and a plain `cargo build` would build the package again).
bin="${SWE_HARVEST_BIN:-}"
if [ -z "$bin" ]; then
    cargo build --quiet
    bin="${CARGO_TARGET_DIR:-target}/debug/swe-harvest"
fi
config_args=()
if [ -n "${CONFIG:-}" ]; then config_args=(--config "$CONFIG"); fi
if [ "${INFERENCE_ONLY:-0}" = 1 ]; then
    mkdir -p "$data_dir/inference-only"
    cp "${CONFIG:-configs/pipeline.toml}" "$data_dir/inference-only/pipeline.toml"
    config_args=(--config "$data_dir/inference-only/pipeline.toml")
fi
: "${SWE_HARVEST_VALIDATE__EXTRA_CA_FILE:=/etc/ssl/certs/ca-certificates.crt}"
export SWE_HARVEST_VALIDATE__EXTRA_CA_FILE
start=$(date +%s)
"$bin" --data-dir "$data_dir" "${config_args[@]}" validate \
    --input "$selected" --out "$data_dir/validated.jsonl" --compare "$@" || true
echo "wall time: $(( $(date +%s) - start ))s; rows with diagnoses: $data_dir/validated.jsonl; logs: $data_dir/logs" >&2
# With --coverage: the golden tests' change coverage per row, and its distribution.
python3 - "$data_dir/validated.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
measured = [row for row in rows if row.get("gold_executable_lines", "") != ""]
if not measured:
    sys.exit(0)
shares = []
for row in measured:
    share = row["golden_change_coverage"]
    print(f"coverage {row['instance_id']}: {row['gold_executable_lines']} executable lines, ΔC {share or '-'}", file=sys.stderr)
    if share:
        shares.append(float(share))
print(f"coverage: {len(measured)} of {len(rows)} rows measured, {len(shares)} with executable lines; "
      f"mean ΔC {statistics.mean(shares):.3f}, median {statistics.median(shares):.3f}, "
      f"ΔC = 1: {sum(s == 1.0 for s in shares)}, ΔC = 0: {sum(s == 0.0 for s in shares)}" if shares else "", file=sys.stderr)
PY
