//! `extract` on a synthetic repository and a store filled as crawl fills it: every
//! drop reason, linking through commit messages, the hints cut-off, versions,
//! environment_setup_commit, reruns that redo nothing, and `export`.

use chrono::{DateTime, Utc};
use git2::Oid;

use swe_harvest::dataset;
use swe_harvest::model::{Candidate, RawComment, RawIssue, RawPullRequest, RepoSlug, Stage};
use swe_harvest::store::{self, Store};

use crate::support::synthetic_repo::{Change, SyntheticRepo, python_module};
use crate::support::{SweHarvest, failure, stderr, stdout, validation_run};

const REPO: &str = "octo/widgets";

fn time(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

fn pull_request(
    number: u64,
    title: &str,
    body: &str,
    base: Oid,
    head: Oid,
    created: &str,
    merged: bool,
) -> RawPullRequest {
    RawPullRequest {
        number,
        title: title.into(),
        body: Some(body.into()),
        state: "closed".into(),
        created_at: time(created),
        updated_at: time(created),
        merged_at: merged.then(|| time(created) + chrono::Duration::days(1)),
        closed_at: Some(time(created) + chrono::Duration::days(1)),
        base_ref: "main".into(),
        base_sha: base.to_string(),
        head_ref: format!("feature-{number}"),
        head_sha: head.to_string(),
        merge_commit_sha: None,
        author: Some("someone".into()),
        labels: vec![],
    }
}

fn issue(number: u64, title: &str, body: Option<&str>) -> RawIssue {
    RawIssue {
        number,
        title: title.into(),
        body: body.map(String::from),
        state: "closed".into(),
        created_at: time("2023-12-01T00:00:00Z"),
        updated_at: time("2023-12-01T00:00:00Z"),
        closed_at: None,
        author: None,
        labels: vec![],
    }
}

fn comment(id: u64, issue_number: u64, body: &str, created: &str) -> RawComment {
    RawComment {
        id,
        issue_number,
        body: Some(body.into()),
        created_at: time(created),
        updated_at: time(created),
        author: None,
    }
}

/// The fixture: a repository whose PRs cover every outcome, and a store holding
/// them as crawl would.
struct Fixture {
    origin: SyntheticRepo,
    harvest: SweHarvest,
    v1_base: Oid,
    v2_base: Oid,
}

impl Fixture {
    fn new() -> Fixture {
        let origin = SyntheticRepo::new();
        let c0 = origin.commit(
            &[],
            "2024-01-01T00:00:00Z",
            "init",
            &[
                Change::write("widgets/__init__.py", "__version__ = \"1.2.0\"\n"),
                Change::write("widgets/core.py", python_module("core", 4, 10, 0)),
                Change::write("tests/test_core.py", python_module("tests", 2, 3, 0)),
                Change::write("README.md", "# widgets\n"),
            ],
        );
        origin.tag("v1.2.0", c0);
        let c1 = origin.commit(&[c0], "2024-01-05T00:00:00Z", "more", &[Change::write("widgets/extra.py", "x = 1\n")]);
        let c2 = origin.commit(
            &[c1],
            "2024-02-01T00:00:00Z",
            "release 2.0",
            &[Change::write("widgets/__init__.py", "__version__ = \"2.0.0\"\n")],
        );
        origin.annotated_tag("v2.0.0", c2);
        origin.branch("main", c2);

        let source = |variant| Change::write("widgets/core.py", python_module("core", 4, 10, variant));
        let test = |variant| Change::write("tests/test_core.py", python_module("tests", 2, 3, variant));
        let mut pulls = Vec::new();
        let mut pr =
            |number: u64, base: Oid, title: &str, body: &str, message: &str, changes: &[Change], created: &str| {
                let head = origin.commit(&[base], "2024-03-01T10:00:00Z", message, changes);
                origin.pull_ref(number, head);
                pulls.push(pull_request(number, title, body, base, head, created, true));
                head
            };
        // 10: a candidate of version 1.2, linked from the body; issue 1 has comments.
        pr(
            10,
            c0,
            "Fix widget sizes",
            "Fixes #1\n<!-- closes #2 -->",
            "fix",
            &[source(1), test(1)],
            "2024-03-01T00:00:00Z",
        );
        // 11: no closing reference at all.
        pr(11, c0, "Refactor", "See #1", "refactor", &[source(2), test(2)], "2024-03-02T00:00:00Z");
        // 12: references only a pull request.
        pr(12, c0, "Follow-up", "Fixes #10", "follow-up", &[source(3), test(3)], "2024-03-03T00:00:00Z");
        // 13: references an issue the store does not hold.
        pr(13, c0, "Fix 99", "fixes #99", "fix", &[source(4), test(4)], "2024-03-04T00:00:00Z");
        // 14: no test change.
        pr(14, c0, "Fix 3", "Fixes #3", "fix", &[source(5)], "2024-03-05T00:00:00Z");
        // 15: tests and docs only.
        pr(
            15,
            c0,
            "Fix 4",
            "Fixes #4",
            "fix",
            &[test(5), Change::write("README.md", "# widgets!\n")],
            "2024-03-06T00:00:00Z",
        );
        // 16: too many files (the config allows 4).
        let many: Vec<Change> =
            (0..5).map(|index| Change::write(&format!("widgets/gen_{index}.py"), "x = 1\n")).chain([test(6)]).collect();
        pr(16, c0, "Fix 5", "Fixes #5", "fix", &many, "2024-03-07T00:00:00Z");
        // 17: too many lines (the config allows 300).
        let big: String = (0..400).map(|line| format!("value_{line} = {line}\n")).collect();
        pr(
            17,
            c0,
            "Fix 6",
            "Fixes #6",
            "fix",
            &[Change::write("widgets/big.py", big), test(7)],
            "2024-03-08T00:00:00Z",
        );
        // 20: a candidate of version 2.0, linked from a commit message, and by URL.
        pr(
            20,
            c2,
            "Improve",
            "",
            "Improve things\n\nResolves https://github.com/octo/widgets/issues/7",
            &[source(8), test(8)],
            "2024-03-10T00:00:00Z",
        );
        // 21: a later candidate of version 1.2 (on a release branch): its base sets
        // the version's environment_setup_commit. Linked as owner/name#N.
        pr(
            21,
            c1,
            "Backport",
            "Closes octo/widgets#8 and octo/other#1",
            "backport",
            &[source(9), test(9)],
            "2024-03-11T00:00:00Z",
        );
        // 18: merged, but its head is in no ref and not in the mirror.
        let mut missing = pull_request(18, "Lost", "Fixes #1", c0, c0, "2024-03-09T00:00:00Z", true);
        missing.head_sha = "1234567890123456789012345678901234567890".into();
        pulls.push(missing);
        // 19: not merged: not extract's concern.
        pulls.push(pull_request(19, "Open", "Fixes #1", c0, c0, "2024-03-09T00:00:00Z", false));

        let harvest = SweHarvest::new();
        fs_err::write(harvest.path("pipeline.toml"), "[extract]\nmax_files_changed = 4\nmax_lines_changed = 300\n")
            .unwrap();
        let mut store = Store::open_in(&harvest.data_dir).unwrap();
        let repo: RepoSlug = REPO.parse().unwrap();
        store
            .transaction(|transaction| -> Result<(), store::StoreError> {
                for pull in &pulls {
                    store::raw::upsert_pull_request(transaction, &repo, pull)?;
                }
                for (number, title) in [
                    (1, "Sizes are wrong"),
                    (2, "Commented out"),
                    (3, "Three"),
                    (4, "Four"),
                    (5, "Five"),
                    (6, "Six"),
                    (7, "Seven"),
                    (8, "Eight"),
                ] {
                    let body = if number == 7 { None } else { Some(format!("Body of {number}.\r\nSecond line.")) };
                    store::raw::upsert_issue(transaction, &repo, &issue(number, title, body.as_deref()))?;
                }
                // The first commit of PR 10 is authored at 2024-03-01T10:00:00Z.
                for (id, body, created_at) in [
                    (102, "second hint", "2024-02-20T00:00:00Z"),
                    (101, "first hint", "2024-02-10T00:00:00Z"),
                    (103, "at the same second", "2024-03-01T10:00:00Z"),
                    (104, "after", "2024-03-02T00:00:00Z"),
                ] {
                    store::raw::upsert_comment(transaction, &repo, &comment(id, 1, body, created_at))?;
                }
                Ok(())
            })
            .unwrap();
        drop(store);
        let output = harvest.run(&["mirror", "--repo", REPO, "--clone-url", origin.path().to_str().unwrap()]);
        assert!(output.status.success(), "{}", stderr(&output));
        Fixture { origin, harvest, v1_base: c1, v2_base: c2 }
    }

    fn extract(&self, extra: &[&str]) -> std::process::Output {
        let config = self.harvest.path("pipeline.toml");
        let mut args = vec!["--config", config.to_str().unwrap(), "extract", "--repo", REPO];
        args.extend_from_slice(extra);
        self.harvest.run(&args)
    }

    fn store(&self) -> Store {
        Store::open_in(&self.harvest.data_dir).unwrap()
    }

    fn candidates(&self) -> Vec<Candidate> {
        store::candidates::candidates(self.store().connection(), &[]).unwrap()
    }
}

fn dropped_reasons(store: &Store) -> Vec<(String, String)> {
    let mut statement = store
        .connection()
        .prepare("SELECT item, reason FROM stage_items WHERE stage = 'extract' AND outcome = 'dropped' ORDER BY CAST(item AS INTEGER)")
        .unwrap();
    statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?))).unwrap().map(Result::unwrap).collect()
}

#[test]
fn extract_makes_candidates_and_records_every_drop_reason() {
    let fixture = Fixture::new();
    let output = fixture.extract(&[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let summary = stdout(&output);
    assert!(
        summary.contains("11 merged PRs in") && summary.contains("3 candidates out") && summary.contains("8 dropped"),
        "{summary}"
    );
    assert!(summary.contains("PRs/s"), "{summary}");

    let store = fixture.store();
    let reasons = dropped_reasons(&store);
    let expected: Vec<(String, String)> = [
        ("11", "no_linked_issue"),
        ("12", "no_linked_issue"),
        ("13", "linked_issue_missing"),
        ("14", "no_test_change"),
        ("15", "no_source_change"),
        ("16", "too_many_files"),
        ("17", "too_many_lines"),
        ("18", "pull_head_missing"),
    ]
    .iter()
    .map(|(item, reason)| (item.to_string(), reason.to_string()))
    .collect();
    assert_eq!(reasons, expected);
    let funnel = store.funnel(&[]).unwrap();
    let extract = funnel.total.iter().find(|stage| stage.stage == Stage::Extract).unwrap();
    assert_eq!((extract.entered, extract.passed, extract.dropped), (11, 3, 8), "the unmerged PR 19 never enters");

    let candidates = fixture.candidates();
    let ids: Vec<&str> = candidates.iter().map(|candidate| candidate.instance_id.as_str()).collect();
    assert_eq!(ids, ["octo__widgets-10", "octo__widgets-20", "octo__widgets-21"]);
    let [c10, c20, c21] = [&candidates[0], &candidates[1], &candidates[2]];

    // Linking: the commented-out `closes #2` is ignored; commit messages and URLs count;
    // references to other repositories do not.
    assert_eq!(c10.issue_numbers, vec![1]);
    assert_eq!(c20.issue_numbers, vec![7]);
    assert_eq!(c21.issue_numbers, vec![8]);

    // The split and the diff: source in patch, tests in test_patch, python hunk headers.
    assert!(
        c10.patch.starts_with("diff --git a/widgets/core.py b/widgets/core.py\n--- a/widgets/core.py\n"),
        "{}",
        c10.patch
    );
    assert!(c10.patch.contains("@@ def method_1(self, value):"), "{}", c10.patch);
    assert!(!c10.patch.contains("index "), "no index lines");
    assert!(c10.test_patch.starts_with("diff --git a/tests/test_core.py b/tests/test_core.py\n"), "{}", c10.test_patch);
    assert_eq!(c10.test_files, vec!["tests/test_core.py"]);

    // problem_statement: title + "\n" + body + "\n"; a missing body is empty.
    assert_eq!(c10.problem_statement, "Sizes are wrong\nBody of 1.\r\nSecond line.\n");
    assert_eq!(c20.problem_statement, "Seven\n\n");
    // hints_text: comments strictly before the first commit's author date, in order.
    assert_eq!(c10.hints_text, "first hint\nsecond hint");
    assert_eq!(c20.hints_text, "");

    // Versions: the nearest tag (v1.2.0 for bases c0 and c1, v2.0.0 for c2).
    assert_eq!((c10.version.as_str(), c20.version.as_str(), c21.version.as_str()), ("1.2", "2.0", "1.2"));
    // environment_setup_commit: the base of the newest candidate of each version.
    assert_eq!(c10.environment_setup_commit, fixture.v1_base.to_string(), "PR 21 is the newest 1.2 candidate");
    assert_eq!(c21.environment_setup_commit, fixture.v1_base.to_string());
    assert_eq!(c20.environment_setup_commit, fixture.v2_base.to_string());

    assert_eq!(c10.created_at, time("2024-03-01T00:00:00Z"));
    assert_eq!(c10.pull_number, 10);
    assert_eq!(c10.base_commit.len(), 40);
    let head = fixture.origin.repository().refname_to_id("refs/pull/10/head").unwrap();
    assert_eq!(c10.head_commit, head.to_string());
}

#[test]
fn rerun_redoes_nothing_and_an_edited_pull_request_is_redone() {
    let fixture = Fixture::new();
    assert!(fixture.extract(&[]).status.success());
    let before = fixture.candidates();
    let output = fixture.extract(&[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("11 unchanged since the last run, 0 candidates out, 0 dropped"),
        "{}",
        stdout(&output)
    );
    assert_eq!(fixture.candidates(), before, "nothing duplicated, nothing changed");

    // PR 11 gets a closing reference: only it is redone, and it becomes a candidate.
    let store = fixture.store();
    let repo: RepoSlug = REPO.parse().unwrap();
    let mut pull = store::raw::pull_request(store.connection(), &repo, 11).unwrap().unwrap();
    pull.body = Some("Fixes #3".into());
    pull.updated_at = time("2024-04-01T00:00:00Z");
    store::raw::upsert_pull_request(store.connection(), &repo, &pull).unwrap();
    drop(store);
    let output = fixture.extract(&[]);
    assert!(
        stdout(&output).contains("10 unchanged since the last run, 1 candidates out, 0 dropped"),
        "{}",
        stdout(&output)
    );
    assert_eq!(fixture.candidates().len(), 4);
    assert!(!dropped_reasons(&fixture.store()).iter().any(|(item, _)| item == "11"));
}

#[test]
fn compat_flag_switches_the_test_rule_and_redoes_the_work() {
    let fixture = Fixture::new();
    assert!(fixture.extract(&[]).status.success());
    // In compatibility mode README.md (PR 15) is left out of patch, as before, but the
    // settings changed, so every PR is redone.
    let output = fixture.extract(&["--compat", "swebench"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("(Swebench): 11 merged PRs in, 0 unchanged"), "{}", stdout(&output));
    assert_eq!(fixture.candidates().len(), 3);
}

#[test]
fn a_missing_mirror_fails_the_run_with_a_hint() {
    let harvest = SweHarvest::new();
    let output = harvest.run(&["extract", "--repo", "nobody/none"]);
    let error = failure(&output, 1);
    assert!(error.contains("nobody/none") && error.contains("swe-harvest mirror --repo nobody/none"), "{error}");
}

#[test]
fn export_writes_candidates_as_jsonl_and_parquet_rows() {
    let fixture = Fixture::new();
    assert!(fixture.extract(&[]).status.success());
    let candidates = fixture.candidates();

    let (jsonl, output) = fixture.harvest.exported("candidates", "jsonl");
    assert!(stdout(&output).contains("wrote 3 candidates"), "{}", stdout(&output));
    let (parquet, _) = fixture.harvest.exported("candidates", "parquet");

    let from_jsonl = dataset::read_records(&jsonl).unwrap();
    let from_parquet = dataset::read_records(&parquet).unwrap();
    assert_eq!(from_jsonl, from_parquet, "both formats hold the same rows");
    assert_eq!(from_jsonl.len(), 3);
    for (record, candidate) in from_jsonl.iter().zip(&candidates) {
        assert!(record.values().all(serde_json::Value::is_string), "every value is a string: {record:?}");
        assert_eq!(record["instance_id"], candidate.instance_id.as_str());
        assert_eq!(record["patch"], candidate.patch.as_str());
        assert_eq!(record["test_patch"], candidate.test_patch.as_str());
        assert_eq!(record["problem_statement"], candidate.problem_statement.as_str());
        assert_eq!(record["hints_text"], candidate.hints_text.as_str());
        assert_eq!(record["version"], candidate.version.as_str());
        assert_eq!(record["environment_setup_commit"], candidate.environment_setup_commit.as_str());
        assert_eq!(record["FAIL_TO_PASS"], "[]");
        assert_eq!(record["PASS_TO_PASS"], "[]");
        assert_eq!(record["pull_number"], candidate.pull_number.to_string().as_str());
    }
    assert_eq!(from_jsonl[0]["issue_numbers"], "[\"1\"]");
    assert_eq!(from_jsonl[0]["created_at"], "2024-03-01T00:00:00Z");
    // The rows read back as SWE-bench task rows; columns in SWE-bench's order first.
    let rows = dataset::read_task_rows(&parquet).unwrap();
    assert_eq!(rows[0].instance_id, "octo__widgets-10");
    let line = fs_err::read_to_string(&jsonl).unwrap().lines().next().unwrap().to_string();
    assert!(
        line.starts_with("{\"instance_id\":")
            && line.find("\"environment_setup_commit\"") < line.find("\"pull_number\"")
    );

    // Tasks: none yet; the export says so and writes an empty file.
    let (tasks, output) = fixture.harvest.exported("tasks", "jsonl");
    assert!(stderr(&output).contains("no tasks yet"), "{}", stderr(&output));
    assert_eq!(fs_err::read_to_string(&tasks).unwrap(), "");
}

#[test]
fn compat_comes_from_flag_then_environment_then_repository_file_then_config() {
    let fixture = Fixture::new();
    let repos = fixture.harvest.path("repos");
    fs_err::create_dir_all(&repos).unwrap();
    fs_err::write(repos.join("octo__widgets.toml"), "[extract]\ncompat = \"swebench\"\n").unwrap();
    let config = fixture.harvest.path("pipeline.toml");
    let run = |environment: Option<&str>, flag: Option<&str>| {
        let mut command = fixture.harvest.command();
        command.args(["--config", config.to_str().unwrap(), "extract", "--repo", REPO]);
        if let Some(flag) = flag {
            command.args(["--compat", flag]);
        }
        if let Some(value) = environment {
            command.env("SWE_HARVEST_EXTRACT__COMPAT", value);
        }
        stdout(&command.output().unwrap())
    };
    assert!(run(None, None).contains("(Swebench)"), "the repository's file beats the config file");
    assert!(run(Some("native"), None).contains("(Native)"), "the environment beats the repository's file");
    assert!(run(Some("native"), Some("swebench")).contains("(Swebench)"), "the flag beats everything");
}

#[test]
fn unknown_base_commit_and_unrelated_histories_are_dropped_with_their_reasons() {
    let origin = SyntheticRepo::new();
    let base = origin.commit(&[], "2024-01-01T00:00:00Z", "init", &[Change::write("a.py", "a = 1\n")]);
    let head = origin.commit(
        &[base],
        "2024-01-02T00:00:00Z",
        "Fixes #1",
        &[Change::write("a.py", "a = 2\n"), Change::write("tests/test_a.py", "x\n")],
    );
    let orphan = origin.commit(&[], "2024-01-03T00:00:00Z", "Fixes #1", &[Change::write("b.py", "b = 1\n")]);
    origin.branch("main", base);
    origin.pull_ref(1, head);
    origin.pull_ref(2, orphan);
    let harvest = SweHarvest::new();
    let repo: RepoSlug = REPO.parse().unwrap();
    let mut store = Store::open_in(&harvest.data_dir).unwrap();
    let mut unknown_base = pull_request(1, "A", "Fixes #1", base, head, "2024-01-02T00:00:00Z", true);
    unknown_base.base_sha = "abcdefabcdefabcdefabcdefabcdefabcdefabcd".into();
    let unrelated = pull_request(2, "B", "Fixes #1", base, orphan, "2024-01-03T00:00:00Z", true);
    store
        .transaction(|transaction| -> Result<(), store::StoreError> {
            store::raw::upsert_pull_request(transaction, &repo, &unknown_base)?;
            store::raw::upsert_pull_request(transaction, &repo, &unrelated)?;
            store::raw::upsert_issue(transaction, &repo, &issue(1, "One", None))
        })
        .unwrap();
    drop(store);
    assert!(harvest.run(&["mirror", "--repo", REPO, "--clone-url", origin.path().to_str().unwrap()]).status.success());
    let output = harvest.run(&["extract", "--repo", REPO]);
    assert!(output.status.success(), "{}", stderr(&output));
    let reasons = dropped_reasons(&Store::open_in(&harvest.data_dir).unwrap());
    assert_eq!(
        reasons,
        vec![("1".to_string(), "base_commit_missing".to_string()), ("2".to_string(), "no_merge_base".to_string())]
    );
}

/// Stores what `validate` would have derived from a candidate: two runs, the task, its
/// coverage and validate's funnel row.
fn store_validation(store: &mut Store, candidate: &Candidate) {
    use swe_harvest::model::{GoldenCoverage, RunPhase, Task};
    let run = |phase| validation_run(&candidate.instance_id, phase, 1);
    let task = Task {
        candidate: candidate.clone(),
        fail_to_pass: vec!["tests/test_core.py::test_a".into()],
        pass_to_pass: Vec::new(),
        flaky_tests: Vec::new(),
        needs_network: Vec::new(),
        fail_to_pass_no_result_before: Vec::new(),
        validation_runs: 1,
        image: None,
        environment_rung: None,
    };
    store
        .transaction(|transaction| -> Result<(), store::StoreError> {
            store::validation::insert_runs(transaction, "content", &[run(RunPhase::Pre), run(RunPhase::Post)])?;
            store::candidates::upsert_task(transaction, &task)?;
            store::coverage::upsert(
                transaction,
                &candidate.instance_id,
                &GoldenCoverage::Failed { detail: "not measured".into() },
            )?;
            store::record_passed(transaction, Stage::Validate, &candidate.repo, &candidate.instance_id)
        })
        .unwrap();
}

/// The instance ids that still have validation runs, a task, coverage and a validate
/// funnel row, each list sorted.
fn validation_left(store: &Store) -> [Vec<String>; 4] {
    let ids = |query: &str| -> Vec<String> {
        let mut statement = store.connection().prepare(query).unwrap();
        statement.query_map([], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
    };
    [
        ids("SELECT DISTINCT instance_id FROM validation_runs ORDER BY instance_id"),
        ids("SELECT instance_id FROM tasks ORDER BY instance_id"),
        ids("SELECT instance_id FROM task_coverage ORDER BY instance_id"),
        ids("SELECT item FROM stage_items WHERE stage = 'validate' ORDER BY item"),
    ]
}

#[test]
fn a_changed_or_dropped_candidate_loses_its_validation_and_an_unchanged_one_keeps_it() {
    let fixture = Fixture::new();
    assert!(fixture.extract(&[]).status.success());
    let mut store = fixture.store();
    for candidate in fixture.candidates() {
        store_validation(&mut store, &candidate);
    }
    let all: Vec<String> = ["octo__widgets-10", "octo__widgets-20", "octo__widgets-21"].map(String::from).to_vec();
    assert_eq!(validation_left(&store), [all.clone(), all.clone(), all.clone(), all]);

    // PR 10 loses its closing reference (dropped), PR 20 links one more issue (its
    // problem statement changes), PR 21 gets a new title only (same candidate).
    let repo: RepoSlug = REPO.parse().unwrap();
    let edit = |number: u64, change: &dyn Fn(&mut RawPullRequest)| {
        let mut pull = store::raw::pull_request(store.connection(), &repo, number).unwrap().unwrap();
        change(&mut pull);
        pull.updated_at = time("2024-04-01T00:00:00Z");
        store::raw::upsert_pull_request(store.connection(), &repo, &pull).unwrap();
    };
    edit(10, &|pull| pull.body = Some("No reference any more".into()));
    edit(20, &|pull| pull.body = Some("Also fixes #1".into()));
    edit(21, &|pull| pull.title = "Backport to 1.2".into());
    drop(store);
    let output = fixture.extract(&[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("2 changed or dropped candidates to validate again"), "{}", stdout(&output));

    let store = fixture.store();
    let kept = vec!["octo__widgets-21".to_string()];
    assert_eq!(
        validation_left(&store),
        [kept.clone(), kept.clone(), kept.clone(), kept],
        "runs, tasks, coverage and validate's funnel rows of PRs 10 and 20 are gone; PR 21 keeps its own"
    );
    let ids: Vec<String> = fixture.candidates().into_iter().map(|candidate| candidate.instance_id).collect();
    assert_eq!(ids, ["octo__widgets-20", "octo__widgets-21"]);
    // validate picks PR 20 up again, and release no longer sees PR 10.
    let finished = store::validation::finished_instances(store.connection()).unwrap();
    assert!(!finished.contains("octo__widgets-20") && finished.contains("octo__widgets-21"), "{finished:?}");
    let tasks: Vec<String> = store::candidates::tasks(store.connection(), &[])
        .unwrap()
        .into_iter()
        .map(|task| task.candidate.instance_id)
        .collect();
    assert_eq!(tasks, ["octo__widgets-21"]);
}

/// `extract` with `extract.use_api_closing_references` set or not.
fn extract_with_api_references(fixture: &Fixture, enabled: bool) -> std::process::Output {
    let config = fixture.harvest.path("pipeline.toml");
    let mut command = fixture.harvest.command();
    command.env("SWE_HARVEST_EXTRACT__USE_API_CLOSING_REFERENCES", enabled.to_string()).args([
        "--config",
        config.to_str().unwrap(),
        "extract",
        "--repo",
        REPO,
    ]);
    command.output().unwrap()
}

#[test]
fn github_closing_references_link_a_pull_request_that_no_text_links_only_when_enabled() {
    let fixture = Fixture::new();
    let repo: RepoSlug = REPO.parse().unwrap();
    // GitHub links PR 11 ("See #1": no closing keyword) to issue 1, as when a
    // maintainer links it by hand; PR 10 ("Fixes #1") has no API link, only text.
    {
        let mut store = fixture.store();
        store
            .transaction(|transaction| {
                store::raw::replace_pull_request_references(
                    transaction,
                    &repo,
                    11,
                    store::raw::ReferenceSource::Closing,
                    &[1],
                )
            })
            .unwrap();
    }
    let output = extract_with_api_references(&fixture, false);
    assert!(output.status.success(), "{}", stderr(&output));
    let ids: Vec<String> = fixture.candidates().into_iter().map(|candidate| candidate.instance_id).collect();
    assert_eq!(ids, ["octo__widgets-10", "octo__widgets-20", "octo__widgets-21"], "API links unused by default");
    assert!(dropped_reasons(&fixture.store()).contains(&("11".into(), "no_linked_issue".into())));

    let output = extract_with_api_references(&fixture, true);
    assert!(output.status.success(), "{}", stderr(&output));
    let candidates = fixture.candidates();
    let ids: Vec<&str> = candidates.iter().map(|candidate| candidate.instance_id.as_str()).collect();
    assert_eq!(ids, ["octo__widgets-10", "octo__widgets-11", "octo__widgets-20", "octo__widgets-21"]);
    let c11 = &candidates[1];
    assert_eq!(c11.issue_numbers, vec![1], "linked by the API only");
    assert!(c11.problem_statement.starts_with("Sizes are wrong\n"), "{}", c11.problem_statement);
    assert_eq!(candidates[0].issue_numbers, vec![1], "linked by the text only");
    assert!(!dropped_reasons(&fixture.store()).iter().any(|(item, _)| item == "11"));
}
