//! The data types that cross stage boundaries: raw GitHub objects (crawl), task
//! candidates (extract), environments and validation runs (validate), and the
//! released task row (release). Plain data with serde; no I/O lives here.
//!
//! Times are UTC `DateTime`s inside the pipeline and are formatted as
//! `YYYY-MM-DDTHH:MM:SSZ` only at the edge, in [`TaskRow`].

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub mod coverage;
pub mod drop_reason;
pub mod ids;
pub mod labels;
pub mod probe;
pub mod review;

pub use coverage::{ChangeCoverage, ExecutableLines, GoldenCoverage};

/// A repository named `owner/name`, validated on construction.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct RepoSlug {
    owner: String,
    name: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid repository `{input}`: {problem}; expected OWNER/NAME, for example `psf/requests`")]
pub struct RepoSlugError {
    pub input: String,
    pub problem: &'static str,
}

impl RepoSlug {
    pub fn owner(&self) -> &str {
        &self.owner
    }
    pub fn name(&self) -> &str {
        &self.name
    }
    /// `owner__name`: the form used in instance ids and config file names.
    pub fn double_underscore(&self) -> String {
        format!("{}__{}", self.owner, self.name)
    }
}

impl FromStr for RepoSlug {
    type Err = RepoSlugError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let error = |problem| RepoSlugError { input: input.to_string(), problem };
        let (owner, name) = input.split_once('/').ok_or_else(|| error("there is no `/`"))?;
        if name.contains('/') {
            return Err(error("there is more than one `/`"));
        }
        // GitHub's own rules: owners are alphanumeric or single hyphens; names add `.` and `_`.
        let owner_ok = !owner.is_empty()
            && owner.len() <= 39
            && owner.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !owner.starts_with('-');
        if !owner_ok {
            return Err(error("the owner must be 1-39 letters, digits or hyphens"));
        }
        let name_ok = !name.is_empty()
            && name.len() <= 100
            && name != "."
            && name != ".."
            && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !name_ok {
            return Err(error("the name must be 1-100 letters, digits, `-`, `_` or `.`"));
        }
        Ok(RepoSlug { owner: owner.to_string(), name: name.to_string() })
    }
}

impl TryFrom<String> for RepoSlug {
    type Error = RepoSlugError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        value.parse()
    }
}

impl From<RepoSlug> for String {
    fn from(value: RepoSlug) -> Self {
        value.to_string()
    }
}

impl fmt::Display for RepoSlug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

crate::spelled::spelled_enum! {
    /// The pipeline's stages, in order. `status` prints the funnel in this order.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum Stage {
        Discover => "discover",
        Crawl => "crawl",
        Mirror => "mirror",
        Extract => "extract",
        Validate => "validate",
        Probe => "probe",
        Screen => "screen",
        Release => "release",
    }
}

impl FromStr for Stage {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Stage::ALL.into_iter().find(|stage| stage.as_str() == s).ok_or_else(|| format!("unknown stage `{s}`"))
    }
}

/// A merged (or not) pull request as the crawl stored it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawPullRequest {
    pub number: u64,
    pub title: String,
    pub body: Option<String>,
    pub state: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub merged_at: Option<DateTime<Utc>>,
    pub closed_at: Option<DateTime<Utc>>,
    pub base_ref: String,
    pub base_sha: String,
    pub head_ref: String,
    pub head_sha: String,
    pub merge_commit_sha: Option<String>,
    pub author: Option<String>,
    #[serde(default)]
    pub labels: Vec<String>,
}

/// An issue (never a pull request) as the crawl stored it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawIssue {
    pub number: u64,
    pub title: String,
    pub body: Option<String>,
    pub state: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub closed_at: Option<DateTime<Utc>>,
    pub author: Option<String>,
    #[serde(default)]
    pub labels: Vec<String>,
}

/// A comment on an issue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawComment {
    pub id: u64,
    pub issue_number: u64,
    pub body: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub author: Option<String>,
}

/// Where a crawl of one (repository, resource) stopped, so the next run resumes
/// or refreshes from there. `cursor` is resource-specific (a page URL, a `since`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrawlCheckpoint {
    pub repo: RepoSlug,
    pub resource: String,
    pub cursor: serde_json::Value,
    pub updated_at: DateTime<Utc>,
}

/// Why an item left the funnel at a stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    pub stage: Stage,
    pub repo: RepoSlug,
    /// The item's id within the stage: a PR number, an instance id, a URL.
    pub item: String,
    /// A short stable code, `snake_case`, that `status` groups by.
    pub reason: String,
    /// A human sentence with the specifics.
    pub detail: String,
}

impl Rejection {
    /// A rejection at the stage that owns `reason`, which is stored as its code.
    pub fn new(
        reason: impl Into<drop_reason::DropReason>,
        repo: RepoSlug,
        item: impl Into<String>,
        detail: impl Into<String>,
    ) -> Rejection {
        let reason = reason.into();
        Rejection {
            stage: reason.stage(),
            repo,
            item: item.into(),
            reason: reason.as_str().to_string(),
            detail: detail.into(),
        }
    }
}

/// A merged PR turned into a task: everything but the labels that validate adds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub instance_id: String,
    pub repo: RepoSlug,
    pub pull_number: u64,
    pub issue_numbers: Vec<u64>,
    pub base_commit: String,
    pub head_commit: String,
    pub patch: String,
    pub test_patch: String,
    pub problem_statement: String,
    pub hints_text: String,
    pub created_at: DateTime<Utc>,
    pub merged_at: Option<DateTime<Utc>>,
    pub version: String,
    pub environment_setup_commit: String,
    /// Test files that `test_patch` touches, in diff order.
    #[serde(default)]
    pub test_files: Vec<String>,
}

impl Candidate {
    pub fn instance_id_for(repo: &RepoSlug, pull_number: u64) -> String {
        format!("{}-{}", repo.double_underscore(), pull_number)
    }
}

/// How one repository at one environment commit is installed and tested.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct EnvironmentSpec {
    /// The ecosystem that runs it ([`crate::ecosystem::Ecosystem::name`], e.g.
    /// `python`); empty in specs stored before there was more than one.
    #[serde(default)]
    pub ecosystem: String,
    /// Language runtime, e.g. `3.11` for Python.
    pub runtime: String,
    #[serde(default)]
    pub system_packages: Vec<String>,
    #[serde(default)]
    pub pre_install: Vec<String>,
    #[serde(default)]
    pub install: Vec<String>,
    #[serde(default)]
    pub extra_packages: Vec<String>,
    pub test_command: String,
    #[serde(default)]
    pub test_path_patterns: Vec<String>,
    /// Where the spec came from: `config` or `inferred:<strategy>`.
    #[serde(default)]
    pub source: String,
    /// The rung of the environment ladder that gave this spec. Not written when
    /// `dated`, so that specs stored before the ladder keep their content hashes.
    #[serde(default, skip_serializing_if = "Rung::is_dated")]
    pub rung: Rung,
    /// What inference took from the project's own CI configuration, and what of it
    /// it could not read (a file that does not parse, a service the tests may need),
    /// one sentence each (`crate::ecosystem::ci`); a dropped row's diagnosis shows it.
    /// Not written when empty, and no part of a run's content hash: it says why, and
    /// the other fields say what runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ci: Vec<String>,
}

impl EnvironmentSpec {
    /// A spec an ecosystem inferred from the repository's files (`source = inferred`);
    /// the fields an ecosystem sets beyond these are added with `..` on top.
    pub fn inferred(ecosystem: &str, runtime: String, install: Vec<String>, test_command: String) -> Self {
        EnvironmentSpec {
            ecosystem: ecosystem.to_string(),
            runtime,
            install,
            test_command,
            source: "inferred".into(),
            ..EnvironmentSpec::default()
        }
    }
}

crate::spelled::spelled_enum! {
    /// The rungs of the environment ladder, in order of faithfulness to the task's date:
    /// each is tried only when the one before fails to build or to run the touched test
    /// files' existing tests (see `validate::ladder`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default)]
    #[serde(rename_all = "kebab-case")]
    pub enum Rung {
        /// Everything as of the task's date.
        #[default]
        Dated => "dated",
        /// The same environment with the Debian packages of the project's CI (its test
        /// jobs' `apt-get install`) that it lacked, after it did not build, did not run
        /// the touched test files' existing tests, or ran no test (every language; see
        /// `ecosystem::ci::ladder`). As faithful as the rung it came from: second.
        CiPackages => "ci-packages",
        /// The packages that the resolver cannot have as of the date are taken at the
        /// oldest release it can have; everything else as of the date.
        RelaxedPackages => "relaxed-packages",
        /// Another runtime than inference's first choice (the nearest older one, else
        /// the nearest newer one that the project allows).
        NeighbourRuntime => "neighbour-runtime",
        /// The test runner pinned to releases that fit the runtime, not to the date.
        RunnerPins => "runner-pins",
        /// The same environment with the system packages of tools (or libraries) that
        /// its build said it lacked (`make`, `protoc`, a pkg-config library).
        SystemTools => "system-tools",
        /// (Node) The project's own `build` script before the tests of every run: a test
        /// could not load what the build makes (a monorepo's `packages/*/lib`).
        BuildFirst => "build-first",
        /// (Node) OpenSSL 3's legacy provider for every run (`NODE_OPTIONS`): a tool
        /// the tests run hashed with what OpenSSL 3 refuses (webpack 4's md4).
        LegacyOpenssl => "legacy-openssl",
        /// (Node) npm's install with `--legacy-peer-deps`: npm 7 and later refused the
        /// tree because peer dependencies conflict (`ERESOLVE`), as npm 6 did not.
        LegacyPeerDeps => "legacy-peer-deps",
    }
}

impl Rung {
    pub fn is_dated(&self) -> bool {
        *self == Rung::Dated
    }
}

/// The outcome of one test in one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum TestStatus {
    Passed,
    Failed,
    Error,
    Skipped,
    Xfail,
    Xpass,
}

impl TestStatus {
    /// Whether the test ran to a verdict: a test that fails (say, for want of the
    /// network) ran; a collection error or a skip says nothing about the code.
    pub fn ran(self) -> bool {
        matches!(self, TestStatus::Passed | TestStatus::Failed | TestStatus::Xfail | TestStatus::Xpass)
    }

    /// The worse of two results of one name (the same name in two packages, targets or
    /// files): a failure or an error outweighs a pass, a pass outweighs a skip.
    pub fn worse(self, other: TestStatus) -> TestStatus {
        let rank = |status: TestStatus| match status {
            TestStatus::Failed | TestStatus::Error => 2,
            TestStatus::Passed | TestStatus::Xfail | TestStatus::Xpass => 1,
            TestStatus::Skipped => 0,
        };
        if rank(other) > rank(self) { other } else { self }
    }
}

/// Which side of the gold patch a run tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunPhase {
    /// Base commit + test patch.
    Pre,
    /// Base commit + test patch + gold patch.
    Post,
}

/// One run of the touched tests in one container.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationRun {
    pub instance_id: String,
    pub phase: RunPhase,
    pub attempt: u32,
    pub image: String,
    pub exit_code: Option<i64>,
    pub timed_out: bool,
    pub duration_secs: f64,
    pub tests: std::collections::BTreeMap<String, TestStatus>,
    /// Seconds per test, when the report gives them.
    #[serde(default)]
    pub test_durations: std::collections::BTreeMap<String, f64>,
    /// Where the statuses came from: `junit` (the report) or `log` (the `-rA` summary).
    #[serde(default)]
    pub results_source: String,
    /// Tests that failed because the network is off (see
    /// [`crate::ecosystem::ParsedRun::network_failures`]).
    #[serde(default, skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    pub network_failures: std::collections::BTreeSet<String>,
    /// Tests that depend on something that failed for want of the network (see
    /// [`crate::ecosystem::ParsedRun::network_dependents`]).
    #[serde(default, skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    pub network_dependents: std::collections::BTreeSet<String>,
    /// What the run's output said of why some of its tests may have no result (see
    /// [`crate::ecosystem::Interruption`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// The tests the run asked for by name before the rest (see
    /// [`crate::ecosystem::ParsedRun::asked_for`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_for: Option<std::collections::BTreeSet<String>>,
    /// `TZ` in the run's container; `None` for runs stored before it was set (the
    /// image's own, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// How the run chose its tests (see [`crate::ecosystem::ParsedRun::selection`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_selection: Option<String>,
    /// The tests reported as parts of a test the runner ran (see
    /// [`crate::ecosystem::ParsedRun::part_of`]).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub part_of: std::collections::BTreeMap<String, String>,
    /// The modules the run's output says it could not import (Python's `No module
    /// named 'py'`), kept with the run: a validate that resumes after it still adds
    /// their packages.
    #[serde(default, skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    pub missing_modules: std::collections::BTreeSet<String>,
}

/// A validated task: a candidate plus its labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub candidate: Candidate,
    pub fail_to_pass: Vec<String>,
    pub pass_to_pass: Vec<String>,
    #[serde(default)]
    pub flaky_tests: Vec<String>,
    /// Tests that failed because the network is off in validation: never labelled.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub needs_network: Vec<String>,
    /// The FAIL_TO_PASS tests that gave no result before the gold patch
    /// ([`crate::model::labels::Labels::no_result_before`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail_to_pass_no_result_before: Vec<String>,
    pub validation_runs: u32,
    pub image: Option<String>,
    /// The environment ladder's rung that built the task's environment; `None` for
    /// tasks validated before the ladder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment_rung: Option<Rung>,
}

/// Fixtures of the unit tests that store or release tasks.
#[cfg(test)]
impl Task {
    /// A task of pull request `number` of `repo` with one FAIL_TO_PASS test: fixed
    /// commits, a gold patch naming the number, created at the epoch, never merged.
    pub(crate) fn example(repo: &str, number: u64) -> Task {
        let repo: RepoSlug = repo.parse().unwrap();
        Task {
            candidate: Candidate {
                instance_id: Candidate::instance_id_for(&repo, number),
                repo,
                pull_number: number,
                issue_numbers: vec![1],
                base_commit: "a".repeat(40),
                head_commit: "b".repeat(40),
                patch: format!("gold {number}"),
                test_patch: "tests".into(),
                problem_statement: "broken\n".into(),
                hints_text: String::new(),
                created_at: DateTime::UNIX_EPOCH,
                merged_at: None,
                version: "1.0".into(),
                environment_setup_commit: "e".repeat(40),
                test_files: Vec::new(),
            },
            fail_to_pass: vec!["t::a".into()],
            pass_to_pass: Vec::new(),
            flaky_tests: Vec::new(),
            needs_network: Vec::new(),
            fail_to_pass_no_result_before: Vec::new(),
            validation_runs: 3,
            image: None,
            environment_rung: None,
        }
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ`, the form of SWE-bench's `created_at`.
pub fn format_swebench_time(time: &DateTime<Utc>) -> String {
    time.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The released row: SWE-bench's twelve string fields, in SWE-bench's order, then
/// our extra columns. `FAIL_TO_PASS` / `PASS_TO_PASS` are JSON-encoded lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRow {
    pub instance_id: String,
    pub repo: String,
    pub base_commit: String,
    pub patch: String,
    pub test_patch: String,
    pub problem_statement: String,
    pub hints_text: String,
    pub created_at: String,
    pub version: String,
    #[serde(rename = "FAIL_TO_PASS", deserialize_with = "json_list_or_string")]
    pub fail_to_pass: String,
    #[serde(rename = "PASS_TO_PASS", deserialize_with = "json_list_or_string")]
    pub pass_to_pass: String,
    pub environment_setup_commit: String,
}

/// The twelve SWE-bench columns, in order.
pub const SWEBENCH_COLUMNS: [&str; 12] = [
    "instance_id",
    "repo",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "hints_text",
    "created_at",
    "version",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "environment_setup_commit",
];

impl TaskRow {
    /// A candidate as a row, with the given labels (empty before validation).
    pub fn from_candidate(candidate: &Candidate, fail_to_pass: &[String], pass_to_pass: &[String]) -> Self {
        TaskRow {
            instance_id: candidate.instance_id.clone(),
            repo: candidate.repo.to_string(),
            base_commit: candidate.base_commit.clone(),
            patch: candidate.patch.clone(),
            test_patch: candidate.test_patch.clone(),
            problem_statement: candidate.problem_statement.clone(),
            hints_text: candidate.hints_text.clone(),
            created_at: format_swebench_time(&candidate.created_at),
            version: candidate.version.clone(),
            fail_to_pass: encode_test_list(fail_to_pass),
            pass_to_pass: encode_test_list(pass_to_pass),
            environment_setup_commit: candidate.environment_setup_commit.clone(),
        }
    }

    pub fn fail_to_pass_list(&self) -> Result<Vec<String>, serde_json::Error> {
        serde_json::from_str(&self.fail_to_pass)
    }

    pub fn pass_to_pass_list(&self) -> Result<Vec<String>, serde_json::Error> {
        serde_json::from_str(&self.pass_to_pass)
    }
}

/// A list of test ids as SWE-bench stores it: a JSON string holding a JSON list.
pub fn encode_test_list(tests: &[String]) -> String {
    serde_json::to_string(tests).expect("a list of strings always serializes")
}

/// Accepts both encodings found in published SWE-bench rows: a JSON list (the older
/// format) or a string holding a JSON list (the current one). Writes the latter.
fn json_list_or_string<'de, D>(deserializer: D) -> Result<String, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Encoded(String),
        List(Vec<String>),
    }
    match Either::deserialize(deserializer)? {
        Either::Encoded(text) => {
            serde_json::from_str::<Vec<String>>(&text).map_err(|error| {
                serde::de::Error::custom(format!("a test list must be a JSON list of strings: {error}"))
            })?;
            Ok(text)
        }
        Either::List(list) => Ok(encode_test_list(&list)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_slug_accepts_github_names() {
        for good in ["psf/requests", "pylint-dev/astroid", "pvlib/pvlib-python", "a/b.c_d", "x1/.github"] {
            let slug: RepoSlug = good.parse().unwrap();
            assert_eq!(slug.to_string(), good);
        }
        let slug: RepoSlug = "sqlfluff/sqlfluff".parse().unwrap();
        assert_eq!(slug.double_underscore(), "sqlfluff__sqlfluff");
    }

    #[test]
    fn repo_slug_rejects_malformed_names_with_the_reason() {
        for (bad, problem) in [
            ("requests", "no `/`"),
            ("a/b/c", "more than one"),
            ("/name", "owner"),
            ("-x/name", "owner"),
            ("owner/", "name"),
            ("owner/..", "name"),
            ("own er/name", "owner"),
            ("owner/na me", "name"),
        ] {
            let error = bad.parse::<RepoSlug>().unwrap_err();
            assert!(error.to_string().contains(problem), "{bad}: {error}");
            assert!(error.to_string().contains("OWNER/NAME"), "{bad}: {error}");
        }
    }

    #[test]
    fn task_row_accepts_both_test_list_encodings_and_writes_one() {
        let base = r#""instance_id":"a__b-1","repo":"a/b","base_commit":"x","patch":"p","test_patch":"t","problem_statement":"s","hints_text":"","created_at":"2021-01-01T00:00:00Z","version":"1.0","environment_setup_commit":"y""#;
        let old: TaskRow =
            serde_json::from_str(&format!(r#"{{{base},"FAIL_TO_PASS":["t::a"],"PASS_TO_PASS":[]}}"#)).unwrap();
        let new: TaskRow =
            serde_json::from_str(&format!(r#"{{{base},"FAIL_TO_PASS":"[\"t::a\"]","PASS_TO_PASS":"[]"}}"#)).unwrap();
        assert_eq!(old, new);
        assert_eq!(new.fail_to_pass, r#"["t::a"]"#);
        assert_eq!(new.fail_to_pass_list().unwrap(), vec!["t::a".to_string()]);
        let bad = serde_json::from_str::<TaskRow>(&format!(r#"{{{base},"FAIL_TO_PASS":"nope","PASS_TO_PASS":"[]"}}"#));
        assert!(bad.unwrap_err().to_string().contains("JSON list"));
    }
}
