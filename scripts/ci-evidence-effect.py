#!/usr/bin/env python3
"""What the project's CI, read as evidence, changes in validate's first environment.

For each data dir that scripts/validate-groundtruth.sh left (its `rows.jsonl` and
`state.db`), compares the spec of the first rung that run stored (built by the binary
that ran it, say an older one) with `validate --plan` of BINARY on the same rows (no
engine, nothing built), and prints per row whether the runtime, the test command or
the system packages changed and what the spec's `ci` record says, then how many
rows changed. `--plan` counts every runtime of the config as available, where a run
leaves out those whose base image the engine lacks: a runtime that changed with no
`ci` line naming its version is not counted as CI's.

usage: SWE_HARVEST_MIRRORS=<mirrors> scripts/ci-evidence-effect.py BINARY DATA_DIR...
"""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

if len(sys.argv) < 3 or "SWE_HARVEST_MIRRORS" not in os.environ:
    sys.exit(__doc__.split("usage: ")[1].strip())
binary, data_dirs = sys.argv[1], [Path(d) for d in sys.argv[2:]]
config = Path(__file__).resolve().parent.parent / "configs" / "pipeline.toml"
rows = changed_by_ci = 0
for data_dir in data_dirs:
    db, row_file = data_dir / "state.db", data_dir / "rows.jsonl"
    if not db.exists() or not row_file.exists():
        print(f"{data_dir}: no state.db or rows.jsonl, left out", file=sys.stderr)
        continue
    stored = {}
    with sqlite3.connect(db) as con:
        for repo, commit, spec in con.execute(
            "select repo, environment_setup_commit, spec from environments order by updated_at"
        ):
            stored.setdefault((repo, commit), json.loads(spec))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "plan.jsonl"
        run = subprocess.run(
            [binary, "--data-dir", f"{tmp}/data", "--config", str(config), "validate",
             "--input", str(row_file), "--out", str(out), "--plan"],
            capture_output=True, text=True,
        )
        if not out.exists():
            print(f"{data_dir}: the plan failed: {run.stderr.strip()[-300:]}")
            continue
        plans = [json.loads(line) for line in out.read_text().splitlines()]
    for row, plan in zip((json.loads(line) for line in row_file.read_text().splitlines()), plans):
        rows += 1
        repo = f"{row['org']}/{row['repo']}" if "org" in row else row["repo"]
        commit = row.get("environment_setup_commit") or row.get("base_commit") or row["base"]["sha"]
        old = stored.get((repo, commit))
        ci = plan.get("ci") or []
        if old is None:
            error = (plan.get("error") or {}).get("reason", "-")
            print(f"{plan['instance_id']}\tno stored environment\tplan: {error}\tci lines {len(ci)}")
            continue
        changes = []
        for field in ("runtime", "test_command", "system_packages"):
            if old.get(field) != plan.get(field):
                changes.append(f"{field}: {old.get(field)!r} -> {plan.get(field)!r}")
        said = [line for line in ci if "not read" not in line and "does not know" not in line]
        # A runtime is CI's when a line of the record names its version (`runtime 3.9:
        # among the versions CI sets up`); the command and packages when any line says
        # what was taken.
        version = "".join(c for c in str(plan.get("runtime")) if c.isdigit() or c == ".")
        by_ci = [
            change for change in changes
            if said and (not change.startswith("runtime") or any(version and re.search(rf"(?<![\d.]){re.escape(version)}(?![\d.])", line) for line in said))
        ]
        changed_by_ci += bool(by_ci)
        verdict = "changed by CI" if by_ci else ("changed, not by CI" if changes else "same")
        print(f"{plan['instance_id']}\t{verdict}\t{'; '.join(by_ci or changes) or '-'}\tci: {' | '.join(ci) or '-'}")
print(f"{rows} rows; CI evidence changed the first environment of {changed_by_ci}")
