//! What a language and its test framework need, behind one trait ([`Ecosystem`]):
//! recognise a project from its files at a commit, infer an environment spec
//! (runtime, system packages, install steps with dependency time travel, test
//! command), write the environment image's Dockerfile and the shell setup every
//! container script runs, say which changed files are tests and which of them to
//! run, and turn the runner's structured report (or its log) into test ids with
//! pass/fail/skip/error.
//!
//! Implementations: [`python`] (pytest, and the test frameworks of
//! [`python::framework`]: unittest, Django's runner, SymPy's), [`go`] (`go test`),
//! [`node`] (JavaScript and TypeScript: Jest, Mocha, Vitest, AVA, tap, `node --test`),
//! [`java`] (Maven with Surefire; Gradle: [`java::gradle`]), [`rust`] (`cargo test`)
//! and [`c`] (C and C++: automake's `make check`, CTest, a Makefile's test target).
//! A new ecosystem is one folder implementing [`Ecosystem`] plus one line in [`ALL`]:
//! its runtimes and base images are declared there too, in the catalogue's form
//! ([`runtimes`]), which config validation and scripts/setup.sh read.
//! Stages pick the implementation by the project's files ([`detect`], then its test
//! framework: [`detect_with_framework`]) or by the name stored in its environment spec
//! ([`for_spec`]); they never test the language themselves.
//!
//! This module runs nothing: containers and images are [`crate::sandbox`]'s.

/// The [`Parts`] of a language folder with the rooms every language has, named at
/// the call site (the language's `mod.rs`): `runtimes::RUNTIMES`, `infer::infer` and
/// `infer::reads`, `image::environment_dockerfile`, `image::script_setup` and
/// `image::harness_setup`, with the function that picks a diff's runnable test files
/// and how the build context carries the repository (a folder unless named).
/// A folder that lacks one of them does not compile, so the layout is checked.
macro_rules! language_parts {
    (runnable_test_files: $runnable_test_files:path) => {
        $crate::ecosystem::language_parts!(
            runnable_test_files: $runnable_test_files,
            testbed_copy: $crate::sandbox::images::TestbedCopy::Folder
        )
    };
    (runnable_test_files: $runnable_test_files:path, testbed_copy: $testbed_copy:expr) => {{
        // A static, not a promoted constant: it refers to the catalogue's static.
        static PARTS: $crate::ecosystem::Parts = $crate::ecosystem::Parts {
            runtimes: &runtimes::RUNTIMES,
            reads_for_inference: infer::reads,
            runnable_test_files: $runnable_test_files,
            infer: infer::infer,
            environment_dockerfile: image::environment_dockerfile,
            testbed_copy: $testbed_copy,
            script_setup: image::script_setup,
            harness_setup: image::harness_setup,
        };
        &PARTS
    }};
}
use language_parts;

mod c;
pub mod ci;
mod dockerfile;
mod go;
mod java;
mod node;
mod python;
pub mod repo_config;
pub mod runtimes;
mod rust;

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use crate::model::drop_reason::ValidateDropReason;
use crate::model::{EnvironmentSpec, TestStatus};
use crate::sandbox::images::{EnvironmentRequest, ImageSettings, TestbedCopy};

/// What an environment image refreshes apt's lists with (a test checks it on the base images).
pub use dockerfile::APT_UPDATE;
pub use python::framework::TestFramework;

/// Whether `version` is a Gradle version as a wrapper's `distributionUrl` names it
/// (`8.5`, `7.6.4`): the keys of `validate.gradle_distributions`.
pub fn is_gradle_version(version: &str) -> bool {
    java::gradle::infer::parse_version(version).is_some()
}

/// Concrete ecosystems for other modules' unit tests; stages themselves never name a
/// language (the language modules are private: only the trait reaches them).
#[cfg(test)]
pub(crate) mod for_tests {
    pub(crate) use super::node::is_node_test_path;
    pub(crate) use super::python::Pytest;
    pub(crate) use super::python::infer::PRE_INSTALL_TOOLS;
}

/// Every ecosystem, in the order [`detect`] asks them. The first is the default.
pub static ALL: &[&dyn Ecosystem] = &[
    &python::Pytest,
    &python::unittest::Unittest,
    &python::django::DjangoRunner,
    &python::sympy::SympyRunner,
    &go::GoTest,
    &node::NodeTest,
    &java::MavenTest,
    &java::gradle::GradleTest,
    &rust::CargoTest,
    // Last: many projects of other languages carry a Makefile.
    &c::MakeCheck,
];

/// [`Ecosystem::tests_to_run`]'s default, for an ecosystem that answers otherwise only
/// for some specs (C: a harness over a build in a folder).
pub fn default_tests_to_run<E: Ecosystem + ?Sized>(
    ecosystem: &E,
    test_patch: &str,
    spec: &EnvironmentSpec,
) -> Vec<String> {
    let patterns = if spec.test_path_patterns.is_empty() {
        None
    } else {
        let mut builder = globset::GlobSetBuilder::new();
        for pattern in &spec.test_path_patterns {
            if let Ok(glob) = globset::Glob::new(pattern) {
                builder.add(glob);
            }
        }
        builder.build().ok()
    };
    let mut files = ecosystem.runnable_test_files(test_patch);
    for file in ecosystem.test_data_files(test_patch) {
        if !files.contains(&file) {
            files.push(file);
        }
    }
    files.into_iter().filter(|file| patterns.as_ref().is_none_or(|set| set.is_match(file))).collect()
}

/// The files inference reads, by path.
pub type RepoFiles = BTreeMap<String, String>;

/// Results of one test run: status and duration per test id, and the tests whose
/// failure the ecosystem recognises as the network being off (jobs run without one):
/// they are reported as needing the network, never labelled.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedRun {
    pub tests: BTreeMap<String, TestStatus>,
    pub durations: BTreeMap<String, f64>,
    pub network_failures: BTreeSet<String>,
    /// Tests that depend on something that failed for want of the network (C: the
    /// tests that require a CTest fixture whose setup could not clone their data):
    /// they need the network unless they pass in some run of the task (one that
    /// passes without what the setup would have fetched does not need it).
    pub network_dependents: BTreeSet<String>,
    /// The run's own words for why some of its tests may have no result
    /// ([`Interruption::evidence`]), when it says so.
    pub interrupted: Option<String>,
    /// The tests the run asked for by name before it ran the rest (Go: the tests the
    /// test patch touches, then whole packages), with the tests they hold
    /// (`name/...`): a test outside them with no result in the run was not reached,
    /// which says nothing of it. `None`: every test with no result counts as failing.
    pub asked_for: Option<BTreeSet<String>>,
    /// How the run chose its tests, in its own words, when the runner chose them at
    /// run time (C: the CTest tests mapped from the touched files, or every test when
    /// none mapped); `None` when the tests to run were given.
    pub selection: Option<String>,
    /// The tests reported as parts of a test the runner ran, with that test: a
    /// GoogleTest case → the CTest test whose program reported it. Other benchmarks
    /// name the runner's test (Multi-SWE-bench's `format-test`), so a comparison
    /// needs both names.
    pub part_of: BTreeMap<String, String>,
}

/// What a run's output says of why some of its tests gave no result: the runner or a
/// part of it stopped (a crash, a panic, a timeout), or tests did not build or
/// collect. A FAIL_TO_PASS test with no result before the gold patch is shown with it,
/// apart from those that failed there (the row's `fail_to_pass_no_result_before`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interruption {
    /// One line of the run's own output that says what happened.
    pub evidence: String,
    /// Whether the passes the run did report are void: a pytest session that stops
    /// with an `INTERNALERROR` never prints the summary SWE-bench's log parser reads,
    /// so the harness sees none of its tests, and a row graded by it must agree.
    pub voids_passes: bool,
}

/// What a process says when it writes past the container's file-size limit
/// (`validate.file_size_bytes`): the shell's report of `SIGXFSZ`, and Python's
/// `EFBIG`.
pub const FILE_SIZE_LIMIT_WORDS: &[&str] = &["File size limit exceeded", "[Errno 27] File too large"];

/// A run that wrote past the file-size limit, in any language (zstd's `playTests.sh`
/// writes a 4 GiB file: zstd-1726, zstd-3942), whose results stand.
fn file_size_limit(log: &str) -> Option<Interruption> {
    log.lines()
        .find(|line| FILE_SIZE_LIMIT_WORDS.iter().any(|words| line.contains(words)))
        .map(|line| Interruption::keeping_results(line.trim()))
}

impl Interruption {
    /// An interruption whose reported results stand (a runner that prints each
    /// result as it comes: `go test -v`, cargo's libtest).
    pub fn keeping_results(evidence: impl Into<String>) -> Self {
        Interruption { evidence: evidence.into(), voids_passes: false }
    }

    /// The first line of `log` that contains one of `markers`, trimmed, as the
    /// evidence of an interruption that keeps the reported results.
    pub fn first_line_with(log: &str, markers: &[&str]) -> Option<Self> {
        log.lines()
            .find(|line| markers.iter().any(|marker| line.contains(marker)))
            .map(|line| Interruption::keeping_results(line.trim()))
    }
}

impl ParsedRun {
    /// Records a result of `id`, keeping the worse status when the name was already
    /// reported (the same name in two packages or targets).
    pub fn record(&mut self, id: &str, status: TestStatus) {
        let merged = self.tests.get(id).map_or(status, |known| known.worse(status));
        self.tests.insert(id.to_string(), merged);
    }

    /// Records a test as [`Self::record`] does, with its duration when the runner gave
    /// one, and as a network failure when the text it failed with (`failure`) names one
    /// of the language's `network_errors` (the container has no network).
    pub fn record_test(
        &mut self,
        id: &str,
        status: TestStatus,
        seconds: Option<f64>,
        failure: Option<&str>,
        network_errors: &[&str],
    ) {
        if let Some(seconds) = seconds {
            self.durations.insert(id.to_string(), seconds);
        }
        if failure.is_some_and(|text| network_errors.iter().any(|phrase| text.contains(phrase))) {
            self.network_failures.insert(id.to_string());
        }
        self.record(id, status);
    }
}

crate::spelled::spelled_enum! {
    /// Where a run's results were read from.
    ///
    /// Its spelling is the one stored with each validation run (`results_source`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum ResultsSource {
        /// A structured report the runner wrote (JUnit XML, JSON).
        Report => "junit",
        /// The runner's printed output.
        Log => "log",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InferError {
    #[error(
        "no {language} project file ({expected}) at the environment commit; add an [[environment]] entry to \
         configs/repos/<owner>__<name>.toml"
    )]
    NotRecognised { language: &'static str, expected: &'static str },
    #[error(
        "the project requires {language} `{requires}`, and no configured base image fits (available: {available}); \
         add one to validate.base_images or pin `runtime` in configs/repos/<owner>__<name>.toml"
    )]
    NoRuntime { language: &'static str, requires: String, available: String },
    #[error("{language}: {what} is not supported: {why}")]
    Unsupported { language: &'static str, what: String, why: &'static str },
}

impl InferError {
    /// No configured base image serves what the project requires; the message lists
    /// the runtimes there are, so the user sees what to add or pin.
    pub fn no_runtime(language: &'static str, requires: String, runtimes: &[String]) -> Self {
        let available = if runtimes.is_empty() { "none".to_string() } else { runtimes.join(", ") };
        InferError::NoRuntime { language, requires, available }
    }
}

/// A runtime a project needs that no base image provides, and why it needs it: the
/// task is tried on the nearest runtime there is, and when that fails it is dropped as
/// `runtime_unavailable` naming this.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RuntimeNeed {
    /// The runtime key it needs (`3.8`), or, when no known runtime fits, the
    /// project's own constraint (`>=3.15`).
    pub runtime: String,
    /// What says so (`requires-python \`>=3.5, <3.9\``, the task's date).
    pub why: String,
}

impl std::fmt::Display for RuntimeNeed {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{} ({})", self.runtime, self.why)
    }
}

/// A language's inference: the files it read, the task's date, the runtimes that have a
/// base image.
pub type InferFn = fn(&RepoFiles, DateTime<Utc>, &[String]) -> Result<EnvironmentSpec, InferError>;

/// What a language's own modules supply to the methods that every ecosystem answers
/// the same way (by asking its `infer` and `image` modules): named once per language
/// ([`Ecosystem::parts`]), so that an impl states only what differs.
pub struct Parts {
    /// The language's runtimes and their base images: its entry in the catalogue
    /// ([`runtimes`]), shared by the ecosystems of one language ([`Ecosystem::runtimes`]).
    pub runtimes: &'static runtimes::Runtimes,
    /// Whether inference reads the file at a path ([`Ecosystem::reads_for_inference`]).
    pub reads_for_inference: fn(&str) -> bool,
    /// The files of a diff that can be run as tests ([`Ecosystem::runnable_test_files`]).
    pub runnable_test_files: fn(&str) -> Vec<String>,
    /// An environment spec from the files inference read ([`Ecosystem::infer`]).
    pub infer: InferFn,
    /// The environment image's Dockerfile ([`Ecosystem::environment_dockerfile`]).
    pub environment_dockerfile: fn(&EnvironmentRequest, &str, &ImageSettings) -> String,
    /// How that Dockerfile's context carries the repository ([`Ecosystem::testbed_copy`]).
    pub testbed_copy: TestbedCopy,
    /// Every container script's setup, for the task's version ([`Ecosystem::script_setup`]).
    pub script_setup: fn(&str) -> String,
    /// The first lines of SWE-bench's `eval_script`, for the task's version
    /// ([`Ecosystem::harness_setup`]).
    pub harness_setup: fn(&str) -> Vec<String>,
}

/// A language and its test framework.
pub trait Ecosystem: Send + Sync {
    /// The name stored in environment specs (`EnvironmentSpec::ecosystem`).
    fn name(&self) -> &'static str;

    /// The language (the released `language` column): the name, unless the language
    /// has several test frameworks (`python-django` is `python`).
    fn language(&self) -> &'static str {
        self.name()
    }

    /// The language of a task whose test patch touches `test_files` (runnable ones):
    /// [`Ecosystem::language`], unless the ecosystem serves several (Node:
    /// `javascript` or `typescript`).
    fn language_of_tests(&self, _test_files: &[String]) -> &'static str {
        self.language()
    }

    /// Other names that published rows give a test id of ours (Multi-SWE-bench's
    /// per-repository log parsers name JS tests by title alone, or `file:title`):
    /// `validate --compare` counts a published name found when it is one of these.
    fn published_forms(&self, _id: &str) -> Vec<String> {
        Vec::new()
    }

    /// The coarser ids, in published rows' spellings, that hold a test of ours (its
    /// class, its file, its parent test): `validate --compare` reads a published one as
    /// all of our tests it holds together (`validate::grain`). None by default.
    fn published_parents(&self, _id: &str) -> Vec<String> {
        Vec::new()
    }

    /// Our id of a test that a published row names more finely than we do (a Java
    /// release that names each case of a parameterized method, `Foo#bar(String)[1]`,
    /// where our id is the method, `Foo#bar`): `validate --compare` reads published
    /// lists through it. Most ecosystems name tests as published rows do.
    fn published_as_ours(&self, id: &str) -> String {
        id.to_string()
    }

    /// Whether `patch` (a task's gold patch) defines the test `id` itself: a test of
    /// an inline module of a source file the fix changes (Rust's `#[cfg(test)] mod
    /// tests`). No other fix can make such a test pass, so it is never labelled, and a
    /// published row that lists it is compared without it (docs/validation.md). The
    /// default: a language whose tests live in test files, which gold patches leave to
    /// the test patch, says no.
    fn defined_by_the_patch(&self, _id: &str, _patch: &str) -> bool {
        false
    }

    /// Whether the project is one of this ecosystem's, from its file paths at a commit.
    fn recognises(&self, paths: &[String]) -> bool;

    /// The files at a project's root it is recognised by, for a message (`Rust:
    /// Cargo.toml`); empty for one chosen within its language (a test framework's).
    fn project_files(&self) -> &'static str {
        ""
    }

    /// The language's runtimes and their base images: its entry in the catalogue
    /// ([`runtimes`]), shared by the ecosystems of one language.
    fn runtimes(&self) -> &'static runtimes::Runtimes {
        self.parts().runtimes
    }

    /// Whether a runtime key of `validate.base_images` is one of this ecosystem's
    /// (Python's are bare versions such as `3.11`; others carry a prefix: `go1.24`).
    fn owns_runtime(&self, runtime: &str) -> bool {
        self.runtimes().owns(runtime)
    }

    /// Whether inference reads the file at `path`: the language's own files, and the
    /// project's CI files ([`ci::reads`]), which every language reads as evidence.
    fn reads_for_inference(&self, path: &str) -> bool {
        (self.parts().reads_for_inference)(path) || ci::reads(path)
    }

    /// The ecosystem of the project's test framework, when the language has several
    /// (Python: pytest, unittest, Django's runner, SymPy's), from its paths and the
    /// files it reads through `read`; `None` keeps this one (the default).
    fn by_test_framework(
        &self,
        _paths: &[String],
        _read: &mut dyn FnMut(&str) -> Option<String>,
    ) -> Option<&'static dyn Ecosystem> {
        None
    }

    /// The language's inference and image modules ([`Parts`]), which the methods
    /// below ask unless an impl answers them itself.
    fn parts(&self) -> &'static Parts;

    /// An environment spec from the files inference read, as of `date`, choosing among
    /// the runtimes that have a base image.
    fn infer(
        &self,
        files: &RepoFiles,
        date: DateTime<Utc>,
        runtimes: &[String],
    ) -> Result<EnvironmentSpec, InferError> {
        (self.parts().infer)(files, date, runtimes)
    }

    /// Whether it recognises the project only by files that other languages' projects
    /// carry too (a Go module's `mkdocs-requirements.txt` for its docs): an ecosystem
    /// that recognises it by its own manifest goes first ([`detect`]).
    fn recognises_only_by_shared_files(&self, _paths: &[String]) -> bool {
        false
    }

    /// The runtime the project needs when none of `runtimes` (those with a base image)
    /// is one it can have, as of `date` (inference then takes the nearest one there
    /// is). The default: inference finds a runtime or fails, so no need is recorded.
    fn runtime_needed(&self, _files: &RepoFiles, _date: DateTime<Utc>, _runtimes: &[String]) -> Option<RuntimeNeed> {
        None
    }

    /// The steps a complete per-repository config entry gets before its own, when it
    /// gives none (e.g. current build tools). The default: none.
    fn default_pre_install(&self) -> Vec<String> {
        Vec::new()
    }

    /// The files of a diff that can be run as tests (before the spec's patterns).
    fn runnable_test_files(&self, diff: &str) -> Vec<String> {
        (self.parts().runnable_test_files)(diff)
    }

    /// Files of a test patch that select tests only through the repository's tree,
    /// once the task is known to be this ecosystem's (Go: a data file outside
    /// `testdata/`, read by the nearest package above it with tests); not
    /// [`Ecosystem::runnable_test_files`], which says from a patch alone whose it is.
    fn test_data_files(&self, _test_patch: &str) -> Vec<String> {
        Vec::new()
    }

    /// The test files of a test patch to run: [`Ecosystem::runnable_test_files`] and
    /// [`Ecosystem::test_data_files`], kept within `spec.test_path_patterns` when it has any.
    fn tests_to_run(&self, test_patch: &str, spec: &EnvironmentSpec) -> Vec<String> {
        default_tests_to_run(self, test_patch, spec)
    }

    /// The local base image of a runtime (built by `scripts/setup.sh`):
    /// `swe-harvest/base:` and the runtime's tag in the catalogue (`py3.11`, `go1.24`).
    fn local_base_image(&self, runtime: &str) -> String {
        format!("{}:{}", runtimes::BASE_REPO, self.runtimes().tag(runtime))
    }

    /// The Dockerfile of an environment image on `base`.
    fn environment_dockerfile(&self, request: &EnvironmentRequest, base: &str, settings: &ImageSettings) -> String {
        (self.parts().environment_dockerfile)(request, base, settings)
    }

    /// How the environment image's build context carries the repository: what its
    /// Dockerfile copies.
    fn testbed_copy(&self) -> TestbedCopy {
        self.parts().testbed_copy
    }

    /// Files the environment image's build context holds besides the repository (name,
    /// content), for its Dockerfile to `COPY` (a script too long to read well inline,
    /// a Gradle distribution of `settings`).
    fn environment_context_files(
        &self,
        _request: &EnvironmentRequest,
        _settings: &ImageSettings,
    ) -> Vec<(String, Vec<u8>)> {
        Vec::new()
    }

    /// Shell text that every container script of a task runs after the sandbox's
    /// preamble: environment variables and an `install_repository` function that
    /// installs `/testbed` offline (dependencies are in the image already).
    fn script_setup(&self, version: &str) -> String {
        (self.parts().script_setup)(version)
    }

    /// The shell command that runs `files` (already quoted, or a shell expansion such
    /// as `"$@"`) with `test_command`, writing a structured report to `report`.
    fn test_invocation(&self, test_command: &str, report: &str, files: &str) -> String;

    /// One phase's results: from its structured report when that has tests, else from
    /// its log.
    fn parse_results(&self, report: Option<&str>, log: &str, test_files: &[String]) -> (ParsedRun, ResultsSource) {
        let from_report =
            report.map(|report| self.parse_report(report, test_files)).filter(|run| !run.tests.is_empty());
        let (mut run, source) = match from_report {
            Some(run) => (run, ResultsSource::Report),
            None => (self.parse_log(log, test_files), ResultsSource::Log),
        };
        if let Some(interruption) = self.interruption(log).or_else(|| file_size_limit(log)) {
            if interruption.voids_passes {
                run.tests.retain(|_, status| matches!(status, TestStatus::Failed | TestStatus::Error));
            }
            run.interrupted = Some(interruption.evidence);
        }
        run.selection = self.test_selection(log);
        self.read_network_failures(log, &mut run);
        (run, source)
    }

    /// What a run's log shows of tests that failed for want of the network beyond
    /// what their own failures said, recorded in `run` (C: a CTest fixture's setup
    /// that could not clone its test data, in [`ParsedRun::network_failures`], and the
    /// tests that require it, in [`ParsedRun::network_dependents`]). The default reads
    /// nothing.
    fn read_network_failures(&self, _log: &str, _run: &mut ParsedRun) {}

    /// How the run chose its tests, from its own output (see [`ParsedRun::selection`]).
    /// The default reads nothing: the tests to run were given.
    fn test_selection(&self, _log: &str) -> Option<String> {
        None
    }

    /// Why some tests of a run may have no result, in the run's own output (see
    /// [`Interruption`]). The default reads nothing.
    fn interruption(&self, _log: &str) -> Option<Interruption> {
        None
    }

    /// The tests of a structured report that [`Ecosystem::test_invocation`] had the
    /// runner write (`test_files`: the files run). The default reads none: a runner
    /// that writes no report (results then come from the log).
    fn parse_report(&self, _report: &str, _test_files: &[String]) -> ParsedRun {
        ParsedRun::default()
    }

    /// The tests of a run's printed output, for a run without a report (a compile
    /// failure, a runner that writes none, SWE-bench's eval script).
    fn parse_log(&self, log: &str, test_files: &[String]) -> ParsedRun;

    /// For SWE-bench's harness: the lines an `eval_script` runs first (activate the
    /// environment, variables), the command that prints what its log parser reads,
    /// and that parser's name in `swebench.harness.log_parsers`.
    fn harness_setup(&self, version: &str) -> Vec<String> {
        (self.parts().harness_setup)(version)
    }
    fn harness_test_command(&self, test_command: &str) -> String;
    /// What the harness's test command is given: the test files (quoted), or what a
    /// language runs instead (Go: their packages).
    fn harness_test_targets(&self, test_files: &[String]) -> String {
        crate::sandbox::script::shell_words(test_files)
    }
    fn harness_log_parser(&self) -> &'static str;

    /// The environment ladder: the spec of the next rung after the last rung tried
    /// failed (see [`FailedRung`]), or `None` when no rung is left. The default has no
    /// ladder.
    fn next_rung(&self, _failed: &FailedRung<'_>) -> Option<EnvironmentSpec> {
        None
    }

    /// The next move of the loop that settles a task's environment
    /// (`validate::ladder::settle`) after `setback` in the environment it tried last
    /// (`tried`: the rungs tried before it, first to last). The default: packages
    /// when [`Ecosystem::packages_to_add`] names some after the task's runs; when the
    /// image did not build, did not run the existing tests, or the task's runs ran
    /// nothing, the Debian packages of the project's CI that the environment lacks
    /// (once: [`ci::ladder`]), else the next rung ([`Ecosystem::next_rung`]); else stop
    /// (the last outcome stands). A language overrides this for a setback only it can
    /// read (a runner's time limit, a tool its build lacks), and leaves the others to
    /// [`usual_next_move`].
    fn next_move(&self, tried: &[EnvironmentSpec], setback: &Setback<'_>, context: &LadderContext<'_>) -> Move {
        usual_next_move(self, tried, setback, context)
    }

    /// The packages to add to the environment the task just ran in (`extra_packages`),
    /// from what its runs show (`runs`): none by default. Python adds the
    /// distributions of modules the runs could not import.
    fn packages_to_add(&self, _runs: &RunsSeen<'_>) -> Vec<String> {
        Vec::new()
    }

    /// The modules a run's output says it could not import (Python's
    /// `No module named 'py'`), as the runtime names them: none by default.
    fn missing_modules(&self, _log: &str) -> Vec<String> {
        Vec::new()
    }

    /// The line of a test session's output that shows it reached for the network
    /// (Python: astropy's `download_file` of a data file, failing with
    /// `urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name
    /// resolution>`), when it does: a session that ran no test for that needs the
    /// network, or a file the mirror lacks (one kept in git LFS, or left out of the
    /// snapshot), and its diagnosis says so. None by default.
    fn network_reached_for(&self, _log: &str) -> Option<String> {
        None
    }

    /// The packages that the gold and test patches (`patches`) add to the project's
    /// declared dependencies and that its environment, built at the environment
    /// commit, must hold for the runs after the patches (`extra_packages`). The
    /// default adds none.
    fn packages_the_patches_add(&self, _patches: &[&str]) -> Vec<String> {
        Vec::new()
    }

    /// A runtime as messages name it (`Python 3.11`, `go1.24`): the key by default.
    fn runtime_label(&self, runtime: &str) -> String {
        runtime.to_string()
    }

    /// Where the language's page says how to bring a runtime no base image provides
    /// (`docs/languages/python.md`), for the hint of a `runtime_unavailable` drop.
    fn runtimes_page(&self) -> String {
        format!("docs/languages/{}.md", self.language())
    }

    /// `test_command` with the runner told to stop at the first failing test, where
    /// it has such an option (probe's mutants need only one failure to be killed);
    /// unchanged by default.
    fn stop_at_first_failure(&self, test_command: &str) -> String {
        test_command.to_string()
    }

    /// The test command of a released task whose row names none (rows of releases
    /// made before rows carried one): none by default.
    fn default_test_command(&self) -> &'static str {
        ""
    }

    /// Whether the language can measure the golden tests' change coverage
    /// (`validate --coverage`, `evaluate --mode swt`: a line counter that its tests
    /// run under). Only Python's can; the others say so instead of measuring nothing.
    fn measures_change_coverage(&self) -> bool {
        false
    }
}

/// What `of` finds in each patch, in order, each once (for
/// [`Ecosystem::packages_the_patches_add`]).
pub fn each_once(patches: &[&str], of: impl Fn(&str) -> Vec<String>) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for patch in patches {
        for item in of(patch) {
            if !found.contains(&item) {
                found.push(item);
            }
        }
    }
    found
}

/// [`Ecosystem::next_move`]'s default, for a language that reads a setback of its own
/// first and leaves the others to it.
pub fn usual_next_move<E: Ecosystem + ?Sized>(
    ecosystem: &E,
    tried: &[EnvironmentSpec],
    setback: &Setback<'_>,
    context: &LadderContext<'_>,
) -> Move {
    let failure = match setback {
        Setback::BuildFailed { log, .. } => RungFailure::BuildFailed { log },
        // A test session that reached for the network needs it, or a file the mirror
        // lacks: no other rung has either.
        Setback::Unusable { log } if ecosystem.network_reached_for(log).is_some() => return Move::Stop,
        Setback::Unusable { .. } => RungFailure::Unusable,
        Setback::RunFailed { .. } => return Move::Stop,
        Setback::Ran(runs) => {
            let packages = ecosystem.packages_to_add(runs);
            if !packages.is_empty() {
                return Move::AddPackages(packages);
            }
            if runs.anything_ran {
                return Move::Stop;
            }
            RungFailure::NothingRan
        }
    };
    // A build the proxy refused a host: Debian's packages reach no other host.
    let refused = matches!(setback, Setback::BuildFailed { refused, .. } if !refused.is_empty());
    if !refused && let Some(next) = ci::ladder::next_spec(tried, &failure, context.files) {
        return Move::Climb(next);
    }
    ecosystem.next_rung(&FailedRung { tried, failure, context }).map_or(Move::Stop, Move::Climb)
}

/// What [`Ecosystem::next_rung`] decides from: the rungs tried for this environment
/// (first to last), how the last of them failed, and what inference read.
#[derive(Debug, Clone, Copy)]
pub struct FailedRung<'a> {
    pub tried: &'a [EnvironmentSpec],
    pub failure: RungFailure<'a>,
    pub context: &'a LadderContext<'a>,
}

/// How the last rung of the environment ladder failed.
#[derive(Debug, Clone, Copy)]
pub enum RungFailure<'a> {
    /// The image did not build; its build log.
    BuildFailed { log: &'a str },
    /// The image built, but the existing tests of the touched test files did not run.
    Unusable,
    /// The image passed its check, but no test ran to a verdict in the task's own runs,
    /// before or after the fix.
    NothingRan,
}

/// What went wrong in the environment the loop tried last, as [`Ecosystem::next_move`]
/// reads it.
#[derive(Debug, Clone, Copy)]
pub enum Setback<'a> {
    /// The image did not build; its build log, and the destinations the build proxy
    /// refused it (none when it reached only the registries).
    BuildFailed { log: &'a str, refused: &'a [String] },
    /// The image built, but the existing tests of the touched test files did not run
    /// at the environment commit; the output of its check.
    Unusable { log: &'a str },
    /// A run of the task failed before its tests gave results (the install, a patch,
    /// a time or memory limit): why, and the tail of its log.
    RunFailed { reason: ValidateDropReason, detail: &'a str },
    /// The task ran in the environment; what its runs showed.
    Ran(&'a RunsSeen<'a>),
}

/// What the task's runs in one environment showed.
#[derive(Debug, Clone, Copy)]
pub struct RunsSeen<'a> {
    /// The environment they ran in.
    pub spec: &'a EnvironmentSpec,
    /// Whether these are the task's first runs (no environment ran it before).
    pub first: bool,
    /// Whether they make a task (a FAIL_TO_PASS test).
    pub labelled: bool,
    /// Whether any test ran to a verdict (passed, failed, xfail, xpass), before or
    /// after the fix.
    pub anything_ran: bool,
    /// The modules they could not import ([`Ecosystem::missing_modules`]) before and
    /// after the gold patch.
    pub missing_before: &'a BTreeSet<String>,
    pub missing_after: &'a BTreeSet<String>,
    /// The project's paths at the base commit and those the patches touch (only
    /// listed when a module was missing: the project's own are never installed).
    pub project_paths: &'a [String],
}

/// The next move of the loop that settles a task's environment.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // one move per rung tried: a box would buy nothing
pub enum Move {
    /// Another rung: this spec, built and checked afresh (inferred specs only: a
    /// complete per-repository config is the user's word).
    Climb(EnvironmentSpec),
    /// The same rung with these packages added (`extra_packages`): kept when its image
    /// builds and its runs run a test, else undone.
    AddPackages(Vec<String>),
    /// No move left: the last outcome stands.
    Stop,
}

/// What the ladder may look at: what inference read.
#[derive(Debug, Clone, Copy)]
pub struct LadderContext<'a> {
    pub files: &'a RepoFiles,
    pub date: DateTime<Utc>,
    /// The runtimes that have a base image.
    pub runtimes: &'a [String],
}

/// An ecosystem shows as its name (in the `Debug` of the types that hold one).
impl std::fmt::Debug for dyn Ecosystem {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.name())
    }
}

/// The ecosystem of a project, from its file paths at a commit: the first of [`ALL`]
/// that recognises it, or the first of all (whose inference then says what is missing).
pub fn detect(paths: &[String]) -> &'static dyn Ecosystem {
    let recognising: Vec<&'static dyn Ecosystem> =
        ALL.iter().copied().filter(|ecosystem| ecosystem.recognises(paths)).collect();
    recognising
        .iter()
        .copied()
        .find(|ecosystem| !ecosystem.recognises_only_by_shared_files(paths))
        .or_else(|| recognising.first().copied())
        .unwrap_or(ALL[0])
}

/// At most this many build files below the root are named when none is at the root.
const BUILD_FILES_NAMED: usize = 6;

/// Build files at a project's root that name a build system or language no ecosystem
/// here runs, with its name: a diagnosis says which it is (lombok's 17 SWE-bench
/// Multilingual rows are an Ant build; Ruby's and PHP's rows have their own files).
const UNSUPPORTED_BUILDS: &[(&str, &str)] = &[
    ("build.xml", "Ant"),
    ("Gemfile", "Ruby (Bundler)"),
    ("Rakefile", "Ruby (Rake)"),
    ("composer.json", "PHP (Composer)"),
    ("meson.build", "Meson"),
    ("MODULE.bazel", "Bazel"),
    ("WORKSPACE", "Bazel"),
    ("WORKSPACE.bazel", "Bazel"),
    ("build.sbt", "sbt (Scala)"),
    ("mix.exs", "Elixir (Mix)"),
    ("Package.swift", "Swift (SwiftPM)"),
    ("stack.yaml", "Haskell (Stack)"),
    ("dune-project", "OCaml (dune)"),
];

/// When no ecosystem recognises a project by the files at its root, what its inference
/// failure says in place of the fallback's ("no Python project file"): the files each
/// language is recognised by, and the shallowest build files below the root, since a
/// project built from a folder is not inferred (micropython's `ports/unix/Makefile`,
/// a C project whose tests are Python scripts: its 4 held-out rows were dropped as
/// "no Python project file").
pub fn unrecognised(paths: &[String]) -> Option<String> {
    if ALL.iter().any(|ecosystem| ecosystem.recognises(paths)) {
        return None;
    }
    let recognised_files: Vec<&str> =
        ALL.iter().map(|ecosystem| ecosystem.project_files()).filter(|files| !files.is_empty()).collect();
    let is_build_file = |name: &str| {
        let name = [name.to_string()];
        ALL.iter().any(|ecosystem| ecosystem.recognises(&name) && !ecosystem.recognises_only_by_shared_files(&name))
    };
    let mut below: Vec<&String> =
        paths.iter().filter(|path| path.rsplit_once('/').is_some_and(|(_, name)| is_build_file(name))).collect();
    below.sort_by_key(|path| (path.matches('/').count(), path.as_str()));
    let below = match below.len() {
        0 => String::new(),
        count => {
            let named: Vec<String> = below.iter().take(BUILD_FILES_NAMED).map(|path| format!("`{path}`")).collect();
            let more = count.saturating_sub(BUILD_FILES_NAMED);
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            format!(
                "; build files below the root: {}{more}, and a project built from a folder is not inferred",
                named.join(", ")
            )
        }
    };
    let unsupported: Vec<String> = UNSUPPORTED_BUILDS
        .iter()
        .filter(|(file, _)| paths.iter().any(|path| path == file))
        .map(|(file, build)| format!("{build} (`{file}`)"))
        .collect();
    let unsupported = if unsupported.is_empty() {
        String::new()
    } else {
        format!("its root has the build files of {}, which swe-harvest does not run; ", unsupported.join(", "))
    };
    Some(format!(
        "no supported language recognises the project: {unsupported}none of the files it is recognised by is at the \
         repository's root at the environment commit ({}){below}; add an [[environment]] entry to \
         configs/repos/<owner>__<name>.toml that says how to build and test it",
        recognised_files.join("; ")
    ))
}

/// The ecosystem of a project at a commit, test framework included: `chosen` (a
/// per-repository config's `test_framework`) when given, else the language from the
/// paths ([`detect`]) refined by its test-framework detection, which reads files
/// through `read` ([`Ecosystem::by_test_framework`]).
pub fn detect_with_framework(
    paths: &[String],
    read: &mut dyn FnMut(&str) -> Option<String>,
    chosen: Option<TestFramework>,
) -> &'static dyn Ecosystem {
    if let Some(framework) = chosen {
        return framework.ecosystem();
    }
    let language = detect(paths);
    language.by_test_framework(paths, read).unwrap_or(language)
}

/// The language of a task, from its test patch: the first ecosystem other than the
/// fallback (Python) that has tests to run in it, else Python. Every released row
/// carries it (`language`). A pure function of the row, so that rows validated
/// before ecosystems had names get one too.
pub fn language_of_test_patch(test_patch: &str) -> &'static str {
    let fallback = ALL[0].language();
    ALL.iter()
        .filter(|ecosystem| ecosystem.language() != fallback)
        .find_map(|ecosystem| {
            let files = ecosystem.runnable_test_files(test_patch);
            (!files.is_empty()).then(|| ecosystem.language_of_tests(&files))
        })
        .unwrap_or(fallback)
}

/// The ecosystem by name; `None` for a name this build does not know.
pub fn by_name(name: &str) -> Option<&'static dyn Ecosystem> {
    ALL.iter().copied().find(|ecosystem| ecosystem.name() == name)
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the environment names the ecosystem `{0}`, which this build of swe-harvest does not know; update swe-harvest")]
pub struct UnknownEcosystem(pub String);

/// The ecosystem of an environment spec. Specs stored before ecosystems had names
/// (an empty name) are Python's.
pub fn for_spec(spec: &EnvironmentSpec) -> Result<&'static dyn Ecosystem, UnknownEcosystem> {
    if spec.ecosystem.is_empty() {
        return Ok(ALL[0]);
    }
    by_name(&spec.ecosystem).ok_or_else(|| UnknownEcosystem(spec.ecosystem.clone()))
}

/// What the languages' tests share.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::Ecosystem;

    /// A project's file paths at a commit.
    pub fn paths(list: &[&str]) -> Vec<String> {
        list.iter().map(|path| path.to_string()).collect()
    }

    /// The header lines of a diff that changes `paths` (what test-file selection reads).
    pub fn diff_of(paths: &[&str]) -> String {
        paths.iter().map(|path| format!("--- a/{path}\n+++ b/{path}\n")).collect()
    }

    /// That `ecosystem` recognises each project of `recognised` (its paths) and none
    /// of `not_recognised`.
    pub fn assert_recognition(ecosystem: &dyn Ecosystem, recognised: &[&[&str]], not_recognised: &[&[&str]]) {
        for project in recognised {
            assert!(ecosystem.recognises(&paths(project)), "{} does not recognise {project:?}", ecosystem.name());
        }
        for project in not_recognised {
            assert!(!ecosystem.recognises(&paths(project)), "{} recognises {project:?}", ecosystem.name());
        }
    }
}

#[cfg(test)]
mod tests {
    //! A new ecosystem needs nothing but its implementation: this fake one (a project
    //! tested by a shell script that prints `ok NAME` / `not ok NAME`) goes through the
    //! stage code that every ecosystem goes through, and that code asks it, not Python.

    use chrono::TimeZone;

    use super::*;
    use crate::ecosystem::repo_config::RepoConfig;
    use crate::sandbox::images::EnvironmentRequest;
    use crate::validate::attempt::{self, RunRequest};
    use crate::validate::spec;

    struct ShellTests;

    /// Its "modules": inference and what it reads, test selection, the image and the
    /// scripts' setup.
    fn reads_shell(path: &str) -> bool {
        path == "run_tests.sh"
    }
    fn shell_test_files(diff: &str) -> Vec<String> {
        crate::git::diff::files_changed_by(diff).into_iter().filter(|file| file.ends_with(".t")).collect()
    }
    fn infer_shell(files: &RepoFiles, _: DateTime<Utc>, runtimes: &[String]) -> Result<EnvironmentSpec, InferError> {
        if !files.contains_key("run_tests.sh") {
            return Err(InferError::NotRecognised { language: "shell", expected: "run_tests.sh" });
        }
        let runtime = runtimes.first().cloned().unwrap_or_default();
        Ok(EnvironmentSpec::inferred("shell", runtime, Vec::new(), "sh run_tests.sh".into()))
    }
    fn shell_dockerfile(_: &EnvironmentRequest, base: &str, _: &ImageSettings) -> String {
        format!("FROM {base}\n")
    }
    fn shell_script_setup(_: &str) -> String {
        "install_repository() { true; }".into()
    }
    fn shell_harness_setup(_: &str) -> Vec<String> {
        Vec::new()
    }

    static SHELL_RUNTIMES: runtimes::Runtimes = runtimes::Runtimes {
        language: "shell",
        aliases: &[],
        key_prefix: "sh",
        version_form: runtimes::VersionForm::Major,
        tag_prefix: "",
        packages: &["bash"],
        command: "sh",
        check: runtimes::Check { command: "echo sh", expect: "sh" },
        images: &[],
        upstream: None,
    };

    impl Ecosystem for ShellTests {
        fn name(&self) -> &'static str {
            "shell"
        }
        fn recognises(&self, paths: &[String]) -> bool {
            paths.iter().any(|path| path == "run_tests.sh")
        }
        fn parts(&self) -> &'static Parts {
            static PARTS: Parts = Parts {
                runtimes: &SHELL_RUNTIMES,
                reads_for_inference: reads_shell,
                runnable_test_files: shell_test_files,
                infer: infer_shell,
                environment_dockerfile: shell_dockerfile,
                testbed_copy: TestbedCopy::Folder,
                script_setup: shell_script_setup,
                harness_setup: shell_harness_setup,
            };
            &PARTS
        }
        fn default_pre_install(&self) -> Vec<String> {
            Vec::new()
        }
        fn test_invocation(&self, test_command: &str, report: &str, files: &str) -> String {
            format!("{test_command} --tap={report} {files}")
        }
        fn parse_log(&self, log: &str, _: &[String]) -> ParsedRun {
            let mut run = ParsedRun::default();
            for line in log.lines() {
                if let Some(name) = line.strip_prefix("not ok ") {
                    run.tests.insert(name.into(), TestStatus::Failed);
                } else if let Some(name) = line.strip_prefix("ok ") {
                    run.tests.insert(name.into(), TestStatus::Passed);
                }
            }
            run
        }
        fn harness_test_command(&self, test_command: &str) -> String {
            test_command.into()
        }
        fn harness_log_parser(&self) -> &'static str {
            "parse_log_tap"
        }
    }

    #[test]
    fn a_new_ecosystem_plugs_into_the_stage_code_without_changes_elsewhere() {
        let date = Utc.with_ymd_and_hms(2024, 1, 1, 0, 0, 0).unwrap();
        let files: RepoFiles = [("run_tests.sh".to_string(), "#!/bin/sh".to_string())].into();
        let spec = spec::resolve(&ShellTests, &RepoConfig::default(), "1.0", || files, date, &["5".into()]).unwrap();
        assert_eq!((spec.ecosystem.as_str(), spec.test_command.as_str()), ("shell", "sh run_tests.sh"));

        let test_patch = "--- a/t/a.t\n+++ b/t/a.t\n--- a/t/helper.sh\n+++ b/t/helper.sh\n--- a/u/b.t\n+++ b/u/b.t\n";
        assert_eq!(ShellTests.tests_to_run(test_patch, &spec), vec!["t/a.t".to_string(), "u/b.t".to_string()]);
        let only_t = EnvironmentSpec { test_path_patterns: vec!["t/**".into()], ..spec.clone() };
        assert_eq!(ShellTests.tests_to_run(test_patch, &only_t), vec!["t/a.t".to_string()]);

        let request = RunRequest {
            instance_id: "a__b-1".into(),
            attempt: 1,
            time_zone: crate::validate::attempt::TIME_ZONE,
            image: "img".into(),
            mirror: Default::default(),
            base_commit: String::new(),
            version: "1.0".into(),
            test_patch: test_patch.into(),
            gold_patch: String::new(),
            test_files: vec!["t/a.t".into()],
            test_command: spec.test_command.clone(),
            log_dir: Default::default(),
            data_dir_label: String::new(),
        };
        let script = attempt::script(&ShellTests, &request, std::time::Duration::from_secs(9));
        assert!(
            script.contains("timeout -k 5 9 sh run_tests.sh --tap=/swe-harvest/out/\"$phase\".xml t/a.t"),
            "{script}"
        );
        assert!(script.contains("install_repository() { true; }"), "{script}");
        assert!(!script.contains("SETUPTOOLS_SCM_PRETEND_VERSION"), "nothing of Python's: {script}");

        let (run, source) = ShellTests.parse_results(None, "ok t/a.t::one\nnot ok t/a.t::two\n", &[]);
        assert_eq!(source, ResultsSource::Log);
        assert_eq!(run.tests["t/a.t::two"], TestStatus::Failed);
    }

    /// In any language: a run that wrote past the container's file-size limit says so
    /// (zstd-1726: `make test-zstd` stopped at it after the fix), and what it reported
    /// stands.
    #[test]
    fn runners_that_can_stop_at_their_first_failure_are_told_to_and_the_others_run_as_they_are() {
        let stop = |name: &str, command: &str| {
            by_name(name).unwrap_or_else(|| panic!("{name}")).stop_at_first_failure(command)
        };
        assert_eq!(stop("python", "pytest -rA"), "pytest -rA -x");
        assert_eq!(stop("python", "pytest -rA -x"), "pytest -rA -x");
        assert_eq!(stop("go", "go test -json -count=1"), "go test -failfast -json -count=1");
        assert_eq!(stop("java", "mvn -B -o test"), "mvn -B -o test -Dsurefire.skipAfterFailureCount=1");
        assert_eq!(stop("rust", "cargo test --no-fail-fast"), "cargo test --no-fail-fast");
    }

    #[test]
    fn a_run_that_wrote_past_the_file_size_limit_says_so_and_keeps_its_results() {
        let log = "ok t/a.t::one\n./playTests.sh: line 9:  41 File size limit exceeded (core dumped) ./datagen -g5G\nnot ok t/a.t::two\n";
        let (run, _) = ShellTests.parse_results(None, log, &[]);
        assert_eq!(
            run.interrupted.as_deref(),
            Some("./playTests.sh: line 9:  41 File size limit exceeded (core dumped) ./datagen -g5G")
        );
        assert_eq!(run.tests.len(), 2, "{:?}", run.tests);
        let python = ShellTests.parse_results(None, "ok t/a.t::one\nOSError: [Errno 27] File too large\n", &[]).0;
        assert_eq!(python.interrupted.as_deref(), Some("OSError: [Errno 27] File too large"));
        assert_eq!(ShellTests.parse_results(None, "ok t/a.t::one\n", &[]).0.interrupted, None);
    }

    #[test]
    fn the_language_of_a_row_is_the_ecosystem_whose_tests_its_test_patch_runs() {
        let go = "--- a/core/x_test.go\n+++ b/core/x_test.go\n";
        let python = "--- a/tests/test_x.py\n+++ b/tests/test_x.py\n";
        let java = "--- a/core/src/test/java/a/XTest.java\n+++ b/core/src/test/java/a/XTest.java\n";
        let rust = "--- a/tests/test_buf.rs\n+++ b/tests/test_buf.rs\n";
        assert_eq!(language_of_test_patch(go), "go");
        assert_eq!(language_of_test_patch(java), "java");
        assert_eq!(language_of_test_patch(rust), "rust");
        assert_eq!(language_of_test_patch(python), "python");
        assert_eq!(language_of_test_patch(""), "python");
        assert_eq!(language_of_test_patch("--- a/test/unit/a.js\n+++ b/test/unit/a.js\n"), "javascript");
        assert_eq!(language_of_test_patch("--- a/tests/a.tests.ts\n+++ b/tests/a.tests.ts\n"), "typescript");
    }

    /// micropython's shape: no build file at the root, a Makefile per port, tests that
    /// are Python scripts, a requirements file of its docs.
    #[test]
    fn a_project_no_language_recognises_is_told_what_each_looks_for_and_where_its_build_files_are() {
        use super::fixtures::paths;
        let ports: Vec<String> = ["unix", "esp32", "rp2", "stm32", "nrf", "zephyr", "windows"]
            .iter()
            .map(|port| format!("ports/{port}/Makefile"))
            .collect();
        let mut micropython = paths(&["README.md", "py/obj.c", "tests/run-tests.py", "tests/basics/fun1.py"]);
        micropython.extend(ports);
        micropython.extend(paths(&["mpy-cross/Makefile", "docs/requirements.txt", "examples/x/package.json"]));
        let message = unrecognised(&micropython).expect("no language recognises it");
        for wanted in
            ["Python: pyproject.toml", "Go: go.mod", "Rust: Cargo.toml", "JavaScript/TypeScript: package.json"]
        {
            assert!(message.contains(wanted), "{wanted}: {message}");
        }
        assert!(message.contains("C/C++: configure.ac, configure.in, CMakeLists.txt, Makefile"), "{message}");
        // The shallowest first; a docs requirements file is no project's build file.
        assert!(
            message.contains(
                "build files below the root: `mpy-cross/Makefile`, `examples/x/package.json`, `ports/esp32/Makefile`, \
                 `ports/nrf/Makefile`, `ports/rp2/Makefile`, `ports/stm32/Makefile` and 3 more"
            ),
            "{message}"
        );
        assert!(!message.contains("docs/requirements.txt"), "{message}");
        assert!(message.contains("configs/repos/<owner>__<name>.toml"), "{message}");
        let bare = unrecognised(&paths(&["README", "src/a.c"])).expect("nothing recognised");
        assert!(!bare.contains("below the root"), "{bare}");
        assert!(!bare.contains("does not run"), "{bare}");
        // A build system no language here runs is named (lombok's root: Ant, and a Maven
        // file of a Docker example below it).
        let lombok = unrecognised(&paths(&["build.xml", "src/core/lombok/Lombok.java", "docker/maven/pom.xml"]))
            .expect("nothing recognised");
        assert!(
            lombok.contains("its root has the build files of Ant (`build.xml`), which swe-harvest does not run"),
            "{lombok}"
        );
        let ruby = unrecognised(&paths(&["Gemfile", "Rakefile", "lib/x.rb"])).expect("nothing recognised");
        assert!(ruby.contains("Ruby (Bundler) (`Gemfile`), Ruby (Rake) (`Rakefile`)"), "{ruby}");
        // A project some language recognises keeps that language's own message.
        assert_eq!(unrecognised(&paths(&["Makefile", "ports/unix/Makefile"])), None);
        assert_eq!(unrecognised(&paths(&["docs/requirements.txt", "requirements.txt"])), None);
    }

    #[test]
    fn a_rust_project_that_maturin_packages_for_python_is_tested_by_cargo() {
        use super::fixtures::paths;
        let detect_in = |files: &[(&str, &str)]| {
            let listed: Vec<&str> = files.iter().map(|(path, _)| *path).collect();
            let mut read =
                |wanted: &str| files.iter().find(|(path, _)| *path == wanted).map(|(_, text)| text.to_string());
            detect_with_framework(&paths(&listed), &mut read, None).name()
        };
        let maturin = "[build-system]\nrequires = [\"maturin>=1.0,<2.0\"]\nbuild-backend = \"maturin\"\n\n[tool.maturin]\nbindings = \"bin\"\n";
        // ruff's shape: a workspace whose wheel ships its binary; no Python test runner anywhere.
        let ruff = [
            ("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n"),
            ("pyproject.toml", maturin),
            ("docs/requirements.txt", "mkdocs\n"),
        ];
        assert_eq!(detect_in(&ruff), "rust");
        // Bindings whose Python side has pytest tests (pydantic-core, orjson: in its config or its CI) stay Python.
        let tested = format!("{maturin}\n[tool.pytest.ini_options]\ntestpaths = \"tests\"\n");
        let bindings = [("Cargo.toml", "[package]\nname = \"core\"\n"), ("pyproject.toml", tested.as_str())];
        assert_eq!(detect_in(&bindings), "python");
        let in_ci =
            [("Cargo.toml", ""), ("pyproject.toml", maturin), (".github/workflows/ci.yaml", "run: pytest -q test\n")];
        assert_eq!(detect_in(&in_ci), "python");
        // Another backend beside a Cargo.toml, or maturin without one: Python.
        assert_eq!(
            detect_in(&[
                ("Cargo.toml", ""),
                ("pyproject.toml", "[build-system]\nbuild-backend = \"setuptools.build_meta\"\n")
            ]),
            "python"
        );
        assert_eq!(detect_in(&[("pyproject.toml", maturin)]), "python");
    }

    #[test]
    fn detection_and_names_find_the_registered_ecosystems() {
        use super::fixtures::paths;
        assert_eq!(detect(&paths(&["setup.py"])).name(), "python");
        // Nothing recognised: the first ecosystem, whose inference says what is missing.
        assert_eq!(detect(&paths(&["README"])).name(), "python");
        assert_eq!(by_name("python").map(|ecosystem| ecosystem.name()), Some("python"));
        assert!(by_name("cobol").is_none());
        let legacy = EnvironmentSpec::default();
        assert_eq!(for_spec(&legacy).unwrap().name(), "python", "specs stored before ecosystems are Python's");
        // The test framework refines the language; a config's choice wins.
        let django = paths(&["setup.py", "django/__init__.py", "tests/runtests.py"]);
        assert_eq!(detect_with_framework(&django, &mut |_| None, None).name(), "python-django");
        assert_eq!(detect_with_framework(&django, &mut |_| None, Some(TestFramework::Pytest)).name(), "python");
        let config: crate::ecosystem::repo_config::RepoConfig =
            toml::from_str("test_framework = \"unittest\"").unwrap();
        assert_eq!(
            detect_with_framework(&paths(&["setup.py"]), &mut |_| None, config.test_framework).name(),
            "python-unittest"
        );
        for ecosystem in ALL {
            assert_eq!(
                for_spec(&EnvironmentSpec { ecosystem: ecosystem.name().into(), ..EnvironmentSpec::default() })
                    .unwrap()
                    .name(),
                ecosystem.name()
            );
        }
        let unknown = EnvironmentSpec { ecosystem: "cobol".into(), ..EnvironmentSpec::default() };
        let Err(error) = for_spec(&unknown) else { panic!("an unknown ecosystem is an error") };
        assert!(error.to_string().contains("`cobol`"), "{error}");
    }
}
