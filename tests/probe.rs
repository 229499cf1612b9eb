//! The probe stage against a real Docker engine: wrong fixes derived from a task's
//! gold patch run in its own environment image. A synthetic Python task whose mutants
//! meet every outcome (killed, survived, stillborn, timeout), its record, the funnel,
//! resuming, the release's columns, card and manifest; a hostile mutant held by the
//! sandbox; `probe --input` rows; and a stop by SIGTERM.

use swe_harvest::model::probe::{MutantStatus, MutationOperator, ProbeRecord};
use swe_harvest::store::Store;

use crate::support::python_project::{BUGGY_CALC, Project, Scenario};
use crate::support::workspace::Workspace;
use crate::support::{stderr, stdout};

/// The gold patch adds `LIMIT` at the top (its own hunk) and `clamp` at the end, with
/// `DEFAULT_HIGH = LIMIT` read when the module loads.
fn clamp_module() -> String {
    format!(
        "LIMIT = 10\n\n\n{BUGGY_CALC}\n\nDEFAULT_HIGH = LIMIT\n\n\ndef clamp(x, low=0, high=None):\n    if high is None:\n        high = LIMIT\n    while x > high:\n        x -= 1\n    if x < low:\n        return low\n    return x\n"
    )
}

/// Tests that check the upper bound only: whatever the fix does below `low` is never checked.
const CLAMP_HIGH_TESTS: &str = "from calc import clamp\n\n\ndef test_clamp_high():\n    assert clamp(12, 0, 10) == 10\n\n\ndef test_clamp_default_high():\n    assert clamp(12) == 10\n";

/// Probe's limits in these tests: a mutant that loops is stopped after 10 s.
const FAST_TIMEOUTS: [(&str, &str); 2] =
    [("SWE_HARVEST_PROBE__MIN_TIMEOUT_SECS", "10"), ("SWE_HARVEST_PROBE__TIMEOUT_FACTOR", "1.0")];

fn probe(workspace: &Workspace, args: &[&str]) -> std::process::Output {
    let mut command = workspace.harvest.validate_command();
    command.envs(FAST_TIMEOUTS);
    command.arg("probe").args(args).output().expect("swe-harvest runs")
}

fn record(workspace: &Workspace, id: &str) -> ProbeRecord {
    let store = Store::open_in(workspace.data_dir()).unwrap();
    swe_harvest::store::probe::record(store.connection(), id).unwrap().unwrap_or_else(|| panic!("{id} has no record"))
}

/// The outcome of the mutant whose change mentions `change`, of operator `operator`.
fn outcome(record: &ProbeRecord, operator: MutationOperator, change: &str) -> MutantStatus {
    record
        .runs
        .iter()
        .find(|run| run.mutant.operator == operator && run.mutant.change.contains(change))
        .unwrap_or_else(|| {
            let made: Vec<(&str, &str)> =
                record.runs.iter().map(|run| (run.mutant.operator.as_str(), run.mutant.change.as_str())).collect();
            panic!("no {operator} mutant on `{change}`; made: {made:#?}")
        })
        .status
}

fn funnel_row(workspace: &Workspace, stage: &str, id: &str) -> (String, String) {
    let store = Store::open_in(workspace.data_dir()).unwrap();
    store
        .connection()
        .query_row("SELECT outcome, reason FROM stage_items WHERE stage = ?1 AND item = ?2", [stage, id], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, Option<String>>(1)?.unwrap_or_default()))
        })
        .unwrap()
}

#[test]
fn probe_meets_every_outcome_keeps_the_survivor_as_evidence_and_resumes_without_running_a_mutant_again() {
    let workspace = Workspace::with_docker();
    let project = Project::new();
    let candidate = project.candidate(
        1,
        &Scenario::new("clamp").gold("calc/__init__.py", &clamp_module()).test("tests/test_clamp.py", CLAMP_HIGH_TESTS),
    );
    let id = candidate.instance_id.clone();
    workspace.seeded(&project, std::slice::from_ref(&candidate)).validated(&["--runs", "1"]);

    let output = probe(&workspace, &["--mutants", "100"]);
    assert!(output.status.success(), "probe failed:\n{}", stderr(&output));
    let record = record(&workspace, &id);
    for run in &record.runs {
        println!("{} {:?} {} {:?}", run.status, run.mutant.operator, run.mutant.change, run.detail);
    }
    let log = workspace.data_dir().join("logs/probe").join(&id).join("container-1.log");
    println!("{}", fs_err::read_to_string(&log).unwrap_or_default());
    use MutationOperator::*;
    // Killed: the upper bound is checked.
    assert_eq!(outcome(&record, NegateCondition, "`x > high`"), MutantStatus::Killed);
    assert_eq!(outcome(&record, MoveBoundary, "`>` becomes `>=`"), MutantStatus::Killed);
    let killed = record.runs.iter().find(|run| run.status == MutantStatus::Killed).unwrap();
    assert!(killed.killing_tests.iter().all(|test| test.starts_with("tests/test_clamp.py::")), "{killed:?}");
    // Survived: nothing checks a value below `low`.
    assert_eq!(outcome(&record, MoveBoundary, "`<` becomes `<=`"), MutantStatus::Survived);
    assert_eq!(outcome(&record, ReturnDefault, "`return low`"), MutantStatus::Survived);
    // Stillborn: without the first hunk the module does not load (DEFAULT_HIGH = LIMIT).
    assert_eq!(outcome(&record, OmitHunk, "first hunk"), MutantStatus::Stillborn);
    // Timeout: `x -= 1` becomes `x += 1`, and the loop never ends.
    assert_eq!(outcome(&record, MoveBoundary, "`-= 1` becomes `+= 1`"), MutantStatus::Timeout);

    let killed = record.count(MutantStatus::Killed);
    let survived = record.count(MutantStatus::Survived);
    assert_eq!(record.mutation_score, Some(killed as f64 / (killed + survived) as f64));
    let survivors = record.survivors();
    assert!(survivors.windows(2).all(|pair| pair[0].changed_lines() <= pair[1].changed_lines()));
    let boundary = survivors.iter().find(|mutant| mutant.operator == MoveBoundary).unwrap();
    assert!(
        boundary.what_the_tests_miss().contains("(calc/__init__.py:22, in `clamp`)"),
        "{}",
        boundary.what_the_tests_miss()
    );
    // Each survivor is a patch against the base commit that a model could submit.
    assert!(survivors[0].patch.starts_with("diff --git a/calc/__init__.py b/calc/__init__.py\n"));
    assert_eq!(funnel_row(&workspace, "probe", &id), ("dropped".into(), "weak_tests".into()));
    let summary = stderr(&output);
    assert!(summary.contains("1 probed") && summary.contains("1 with survivors"), "{summary}");
    assert!(workspace.containers().is_empty(), "every container is removed");
    let logs = workspace.data_dir().join("logs/probe").join(&id);
    assert!(logs.join("container-1.log").is_file());

    // A record lost (a probe killed between its last container and the record) is made
    // again from the stored verdicts: no container runs.
    {
        let store = Store::open_in(workspace.data_dir()).unwrap();
        store.connection().execute("DELETE FROM probe_records", []).unwrap();
    }
    fs_err::remove_file(logs.join("container-1.log")).unwrap();
    let again = probe(&workspace, &["--mutants", "100"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(!logs.join("container-1.log").exists(), "no mutant ran again: {}", stderr(&again));
    let remade = self::record(&workspace, &id);
    assert_eq!(remade.runs, record.runs);
    // A record that holds is not made again; other settings make another.
    let unchanged = probe(&workspace, &["--mutants", "100"]);
    assert!(stderr(&unchanged).contains("1 unchanged since the last probe"), "{}", stderr(&unchanged));

    // The screen turns the survivor into `weak_tests`; the release carries the columns,
    // and `--min-mutation-score` leaves the task out.
    let screened = workspace.harvest.run(&["screen"]);
    assert!(screened.status.success(), "{}", stderr(&screened));
    let released = workspace.harvest.run(&["release", "--name", "probe", "--version", "1"]);
    assert!(released.status.success(), "{}", stderr(&released));
    let release = std::path::PathBuf::from(stdout(&released).trim());
    let row: serde_json::Value =
        serde_json::from_str(fs_err::read_to_string(release.join("tasks.jsonl")).unwrap().lines().next().unwrap())
            .unwrap();
    let score: f64 = row["mutation_score"].as_str().unwrap().parse().unwrap();
    assert!((score - record.mutation_score.unwrap()).abs() < 1e-6, "{row}");
    let released_survivors: Vec<serde_json::Value> =
        serde_json::from_str(row["surviving_mutants"].as_str().unwrap()).unwrap();
    assert_eq!(released_survivors.len(), survived);
    assert_eq!(released_survivors[0]["patch"], survivors[0].patch);
    let flags: Vec<serde_json::Value> = serde_json::from_str(row["quality_flags"].as_str().unwrap()).unwrap();
    let weak = flags.iter().find(|flag| flag["code"] == "weak_tests").expect("weak_tests is raised");
    assert!(weak["reason"].as_str().unwrap().starts_with("the tests pass when"), "{weak}");
    let manifest: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(release.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["counts"]["probe"], serde_json::json!({"probed": 1, "scored": 1, "with_survivors": 1}));
    let card = fs_err::read_to_string(release.join("README.md")).unwrap();
    assert!(card.contains("| with a surviving mutant (`weak_tests`) | 1 |"), "{card}");
    let strict =
        workspace.harvest.run(&["release", "--name", "strict", "--version", "1", "--min-mutation-score", "0.99"]);
    assert_eq!(strict.status.code(), Some(1), "no task is left: {}", stderr(&strict));
    assert!(stderr(&strict).contains("mutation_score_below_min 1"), "{}", stderr(&strict));

    // `status` shows probe as a funnel row.
    let status = workspace.harvest.run(&["status", "--json"]);
    let funnel: serde_json::Value = serde_json::from_str(&stdout(&status)).unwrap();
    let text = funnel.to_string();
    assert!(text.contains("\"probe\"") && text.contains("weak_tests"), "{text}");
}
