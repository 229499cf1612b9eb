"""Checks the offline demo's outcome against what demo-fixtures says it must be.

usage: demo_check.py EXPECTED.json DATA_DIR RELEASE_DIR [SCREENED_RELEASE_DIR]
Prints one line per check and exits 1 when any fails. SCREENED_RELEASE_DIR is the
release made with `--exclude-flag flaky_tests`. The optional key `verdicts` of EXPECTED.json
(instance id -> `keep`, `uncertain` or `flag`) is checked against each task's quality_verdict.
"""

import json
import sqlite3
import sys
from pathlib import Path


def main() -> int:
    expected = json.loads(Path(sys.argv[1]).read_text())
    data_dir, release_dir = Path(sys.argv[2]), Path(sys.argv[3])
    rows = {}
    with open(release_dir / "tasks.jsonl") as lines:
        for line in lines:
            row = json.loads(line)
            rows[row["instance_id"]] = row
    store = sqlite3.connect(data_dir / "state.db")
    outcomes = {
        f"{stage} {repo} {item}": (outcome, reason)
        for stage, repo, item, outcome, reason in store.execute(
            "SELECT stage, repo, item, outcome, reason FROM stage_items"
        )
    }
    failures = 0

    def check(ok: bool, what: str) -> None:
        nonlocal failures
        print(("ok    " if ok else "FAIL  ") + what)
        failures += 0 if ok else 1

    check(sorted(rows) == expected["release"], f"the release holds exactly {expected['release']} (got {sorted(rows)})")
    for key, reason in expected["dropped"].items():
        got = outcomes.get(key)
        check(got == ("dropped", reason), f"{key} dropped as {reason} (got {got})")
    for instance_id, tests in expected["fail_to_pass"].items():
        if instance_id in rows:
            got = json.loads(rows[instance_id]["FAIL_TO_PASS"])
            check(got == tests, f"{instance_id} FAIL_TO_PASS = {tests} (got {got})")
    for instance_id, tests in expected["flaky"].items():
        if instance_id in rows:
            row = rows[instance_id]
            got = json.loads(row["flaky_tests"])
            labelled = json.loads(row["FAIL_TO_PASS"]) + json.loads(row["PASS_TO_PASS"])
            check(got == tests, f"{instance_id} flaky_tests = {tests} (got {got})")
            check(not set(tests) & set(labelled), f"{instance_id}: flaky tests are never labelled")
    for instance_id, text in expected["hints"].items():
        if instance_id in rows:
            check(text in rows[instance_id]["hints_text"], f"{instance_id} hints hold the comment made before the fix")
    for instance_id, text in expected["not_in_hints"].items():
        if instance_id in rows:
            check(text not in rows[instance_id]["hints_text"], f"{instance_id} hints leave out the comment made after it")
    for instance_id, row in sorted(rows.items()):
        # validate --coverage: each gold patch changes lines its failing test runs
        # (the line counter reads Python; other languages' rows carry no figure).
        if row.get("language", "python") != "python":
            continue
        lines, share = row.get("gold_executable_lines", ""), row.get("golden_change_coverage", "")
        check(
            lines.isdigit() and int(lines) > 0 and share != "" and 0.0 < float(share) <= 1.0,
            f"{instance_id}: the golden tests' change coverage is measured (executable lines {lines!r}, ΔC {share!r})",
        )
    # The screen: every released task carries its quality record's four columns.
    buckets = {"<15 min fix", "15 min - 1 hour", "1-4 hours", ">4 hours"}
    screened = {item for stage, _, item, _, _ in store.execute("SELECT stage, repo, item, outcome, reason FROM stage_items") if stage == "screen"}
    for instance_id, row in sorted(rows.items()):
        flags = json.loads(row.get("quality_flags") or "null")
        score = float(row["quality_score"]) if row.get("quality_score") else -1.0
        verdict = row.get("quality_verdict")
        check(
            isinstance(flags, list)
            and all(
                flag["code"] and flag["reason"] and isinstance(flag["evidence"], list) and "precision" in flag
                for flag in flags
            )
            and 0.0 <= score <= 1.0
            and verdict in ("keep", "uncertain", "flag")
            and row.get("difficulty") in buckets,
            f"{instance_id}: quality columns (flags {[flag['code'] for flag in flags or []]}, score {score}, {verdict}, {row.get('difficulty')!r})",
        )
        check(instance_id in screened, f"{instance_id}: the funnel holds its screen row")
    # The verdicts: clean tasks keep, flagged ones flag (expected.json's `verdicts`:
    # instance id -> keep, uncertain or flag). The Go task's `t.Fatalf` message, were it
    # taken for an asserted string, would make its task `flag`.
    for instance_id, want in expected.get("verdicts", {}).items():
        got = rows[instance_id].get("quality_verdict") if instance_id in rows else None
        codes = [flag["code"] for flag in json.loads(rows[instance_id]["quality_flags"] or "[]")] if instance_id in rows else []
        check(got == want, f"{instance_id}: quality_verdict {want} (got {got}, flags {codes})")
    for instance_id in expected["flaky"]:
        if instance_id in rows:
            codes = [flag["code"] for flag in json.loads(rows[instance_id]["quality_flags"])]
            check("flaky_tests" in codes, f"{instance_id}: flagged flaky_tests (got {codes})")
    # Probe: a task whose tests are weak by construction carries a wrong fix that passes
    # them, and `weak_tests`; the strong tasks' tests reject every viable mutant.
    probed = {item: (outcome, reason) for stage, _, item, outcome, reason in store.execute("SELECT stage, repo, item, outcome, reason FROM stage_items") if stage == "probe"}
    for instance_id in expected.get("weak_tests", []):
        row = rows.get(instance_id, {})
        survivors = json.loads(row.get("surviving_mutants") or "[]")
        codes = [flag["code"] for flag in json.loads(row.get("quality_flags") or "[]")]
        score = float(row["mutation_score"]) if row.get("mutation_score") else None
        check(
            bool(survivors) and all(mutant["patch"].startswith("diff --git ") for mutant in survivors)
            and "weak_tests" in codes and score is not None and score < 1.0,
            f"{instance_id}: weak tests shown by a surviving mutant (survivors {len(survivors)}, score {score}, flags {codes})",
        )
        check(probed.get(instance_id) == ("dropped", "weak_tests"), f"{instance_id}: probe's funnel row says weak_tests (got {probed.get(instance_id)})")
    for instance_id in expected.get("strong_tests", []):
        row = rows.get(instance_id, {})
        survivors = json.loads(row.get("surviving_mutants") or "null")
        codes = [flag["code"] for flag in json.loads(row.get("quality_flags") or "[]")]
        check(
            survivors == [] and row.get("mutation_score") == "1.000000" and "weak_tests" not in codes,
            f"{instance_id}: every viable mutant killed (score {row.get('mutation_score')!r}, survivors {survivors})",
        )
    manifest = json.loads((release_dir / "manifest.json").read_text())
    weak_count = manifest["counts"].get("probe", {}).get("with_survivors")
    check(weak_count == len(expected.get("weak_tests", [])), f"the manifest counts the tasks with survivors (got {weak_count})")
    if len(sys.argv) > 4:
        screened_dir = Path(sys.argv[4])
        with open(screened_dir / "tasks.jsonl") as lines:
            kept = sorted(json.loads(line)["instance_id"] for line in lines)
        want = sorted(set(rows) - set(expected["flaky"]))
        check(kept == want, f"the release without flaky_tests holds {want} (got {kept})")
        manifest = json.loads((screened_dir / "manifest.json").read_text())
        removed = manifest["counts"].get("removed_by_flag", {})
        check(removed == {"flaky_tests": len(expected["flaky"])}, f"its manifest counts what the flag removed (got {removed})")
        card = (screened_dir / "README.md").read_text()
        check(f"flaky_tests {len(expected['flaky'])}" in card, "its card says how many tasks the flag removed")
    print(f"{failures} failed" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
