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

/// Probes `id`, validated in `workspace`, with at most `mutants` mutants; asserts that
/// probe succeeded and left no container, and returns the task's record. The language
/// tests call it on their own tasks, in the environments they built.
pub(crate) fn probed(workspace: &Workspace, id: &str, mutants: &str) -> ProbeRecord {
    let output = probe(workspace, &["--instance", id, "--mutants", mutants]);
    assert!(output.status.success(), "probe of {id} failed:\n{}", stderr(&output));
    assert!(workspace.containers().is_empty(), "every container is removed");
    let record = record(workspace, id);
    let log = workspace.data_dir().join("logs/probe").join(id).join("container-1.log");
    assert!(
        record.mutation_score.is_some() || record.runs.is_empty(),
        "{id}: no mutant of {} ran to a verdict: {record:#?}\n{}",
        record.runs.len(),
        fs_err::read_to_string(&log).unwrap_or_default()
    );
    record
}

/// Asserts that a language's task got mutants and that its tests killed one.
pub(crate) fn assert_some_mutant_killed(record: &ProbeRecord) {
    assert!(record.count(MutantStatus::Killed) >= 1, "{record:#?}");
    assert!(record.mutation_score.is_some_and(|score| score > 0.0), "{record:#?}");
}

/// The gold patch guards code that must never run in a test: a fork bomb, a memory
/// hog, a connection out, a write outside `/testbed`. Its mutants switch the guard
/// off; the sandbox holds for them exactly as for validation's runs (limits, no
/// network, no host paths), each is judged, and the others are judged too.
const GUARDED_MODULE: &str = "import os\nimport socket\n\nSAFE = True\n\n\ndef add(a, b):\n    if b < 0:\n        return a - b\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef guard(x):\n    if SAFE:\n        return x\n    while True:\n        os.fork()\n\n\ndef hog(x):\n    if SAFE:\n        return x\n    return [bytearray(1024 ** 3) for _ in range(64)]\n\n\ndef reach(x):\n    if SAFE:\n        return x\n    socket.create_connection((\"example.com\", 443), timeout=5).close()\n    with open(\"/etc/swe-harvest-was-here\", \"w\") as out:\n        out.write(\"x\")\n    return x\n";
const GUARDED_TESTS: &str = "from calc import guard, hog, reach\n\n\ndef test_guard():\n    assert guard(3) == 3\n\n\ndef test_hog():\n    assert hog(4) == 4\n\n\ndef test_reach():\n    assert reach(5) == 5\n";

#[test]
fn hostile_mutants_are_held_by_the_sandbox_and_every_mutant_is_judged() {
    let workspace = Workspace::with_docker();
    let project = Project::new();
    let candidate = project.candidate(
        2,
        &Scenario::new("guarded").gold("calc/__init__.py", GUARDED_MODULE).test("tests/test_guarded.py", GUARDED_TESTS),
    );
    let id = candidate.instance_id.clone();
    workspace.seeded(&project, std::slice::from_ref(&candidate)).validated(&["--runs", "1"]);
    let output = probe(&workspace, &["--mutants", "100"]);
    assert!(output.status.success(), "probe failed:\n{}", stderr(&output));
    let record = record(&workspace, &id);
    // `SAFE = True` becomes `False`: every guard opens at once. The fork bomb meets the
    // process limit and the time limit; nothing of it survives the container.
    let opened = record
        .runs
        .iter()
        .find(|run| {
            run.mutant.operator == MutationOperator::ReplaceLiteral
                && run.mutant.change.contains("`True` becomes `False`")
        })
        .expect("the guard's literal is mutated");
    assert!(matches!(opened.status, MutantStatus::Killed | MutantStatus::Timeout), "{opened:#?}");
    // Each guard negated on its own: killed (the connection is refused, the hog meets
    // the memory limit) or stopped by the time limit; never a pass.
    for function in ["guard", "hog", "reach"] {
        let negated: Vec<_> = record
            .runs
            .iter()
            .filter(|run| {
                run.mutant.operator == MutationOperator::NegateCondition
                    && run.mutant.function == function
                    && run.mutant.change.contains("`SAFE`")
            })
            .collect();
        assert!(!negated.is_empty(), "{function}: {record:#?}");
        assert!(negated.iter().all(|run| run.status != MutantStatus::Survived), "{function}: {negated:#?}");
    }
    assert!(record.runs.len() >= 6, "every mutant has a verdict: {record:#?}");
    assert!(workspace.containers().is_empty(), "every container is removed");
}

#[test]
fn probe_input_rows_are_validated_first_or_probed_in_their_own_validation_and_written_back() {
    let workspace = Workspace::with_docker();
    let project = Project::new();
    let clamp = project.candidate(
        3,
        &Scenario::new("clamp-rows")
            .gold("calc/__init__.py", &clamp_module())
            .test("tests/test_clamp.py", CLAMP_HIGH_TESTS),
    );
    project.mirror_into(workspace.data_dir());
    // A row as SWE-bench publishes it: validated by probe itself, first.
    let published = crate::support::workspace::row_of(&clamp, &["tests/test_clamp.py::test_clamp_high"], &[]);
    let rows = workspace.path("rows.jsonl");
    fs_err::write(&rows, format!("{published}\n")).unwrap();
    let out = workspace.path("probed.jsonl");
    let output =
        probe(&workspace, &["--input", rows.to_str().unwrap(), "--out", out.to_str().unwrap(), "--mutants", "4"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let written: serde_json::Value =
        serde_json::from_str(fs_err::read_to_string(&out).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(written["diagnosis"]["status"], "labelled", "validated first: {written:#}");
    assert_eq!(written["probe"]["status"], "probed", "{written:#}");
    let counts = &written["probe"]["mutants"];
    let total: u64 =
        ["killed", "survived", "stillborn", "timeout"].iter().map(|key| counts[key].as_u64().unwrap()).sum();
    assert_eq!(total, 4, "{written:#}");
    assert!(written["mutation_score"].is_number() || written["mutation_score"].is_null(), "{written:#}");
    assert!(written["surviving_mutants"].is_array(), "{written:#}");

    // The written row carries its own validation: probing it again reuses it (no
    // validation, and the stored verdicts: no container).
    let again = workspace.path("again.jsonl");
    let logs = workspace.data_dir().join("logs/probe").join(&clamp.instance_id);
    fs_err::remove_dir_all(&logs).unwrap();
    let output =
        probe(&workspace, &["--input", out.to_str().unwrap(), "--out", again.to_str().unwrap(), "--mutants", "4"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!stderr(&output).contains("validate:"), "{}", stderr(&output));
    assert!(!logs.exists(), "no mutant ran again");
    let rewritten: serde_json::Value =
        serde_json::from_str(fs_err::read_to_string(&again).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(rewritten["mutation_score"], written["mutation_score"]);
    assert_eq!(rewritten["surviving_mutants"], written["surviving_mutants"]);
}

#[test]
fn probe_stopped_by_sigterm_removes_its_containers_and_resumes() {
    let workspace = Workspace::with_docker();
    let project = Project::new();
    let candidate = project.candidate(
        4,
        &Scenario::new("clamp-sigterm")
            .gold("calc/__init__.py", &clamp_module())
            .test("tests/test_clamp.py", CLAMP_HIGH_TESTS),
    );
    let id = candidate.instance_id.clone();
    workspace.seeded(&project, std::slice::from_ref(&candidate)).validated(&["--runs", "1"]);
    let mut command = workspace.harvest.validate_command();
    command.envs(FAST_TIMEOUTS).args(["probe", "--mutants", "100"]);
    command.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped());
    let child = command.spawn().unwrap();
    let started = std::time::Instant::now();
    while workspace.containers().is_empty() {
        assert!(started.elapsed().as_secs() < 120, "probe's container never started");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // Its loops keep the container busy for seconds: stop probe in the middle.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let _ = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let stopped = child.wait_with_output().unwrap();
    assert!(!stopped.status.success(), "an interrupted probe exits 1");
    assert!(
        String::from_utf8_lossy(&stopped.stderr).contains("interrupted"),
        "{}",
        String::from_utf8_lossy(&stopped.stderr)
    );
    assert!(workspace.containers().is_empty(), "the running container is removed");
    {
        let store = Store::open_in(workspace.data_dir()).unwrap();
        assert_eq!(
            swe_harvest::store::probe::record(store.connection(), &id).unwrap(),
            None,
            "no record of half a probe"
        );
    }
    let resumed = probe(&workspace, &["--mutants", "100"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let record = record(&workspace, &id);
    assert!(record.runs.iter().any(|run| run.status == MutantStatus::Timeout), "{record:#?}");
}
