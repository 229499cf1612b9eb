//! The project's own CI configuration, read as evidence for inference, never run: the
//! runtime versions its jobs set up, the environment variables its test jobs set, the
//! Debian packages they install, the services (databases) they start, and the
//! commands of the steps that run tests, each with the file and job it came from.
//!
//! Read (at the environment commit, from the files every language's inference reads,
//! [`reads`]): GitHub Actions (`.github/workflows/*.yml|yaml`), Travis CI
//! (`.travis.yml`), GitLab CI (`.gitlab-ci.yml`), Azure Pipelines
//! (`azure-pipelines.yml`) and CircleCI (`.circleci/config.yml`), with a YAML parser
//! (yaml-rust2: see Cargo.toml for why). A file that does not parse, an action or a
//! template this reader does not know, and a value whose expression cannot be resolved
//! (`${{ inputs.x }}`, `<< parameters.x >>`) are left out with a note
//! ([`CiEvidence::notes`]), never guessed and never a failure. A matrix is resolved:
//! `${{ matrix.python-version }}` is each value of that axis (its `include:` entries
//! too), and an axis named after a runtime (`python-version`, `node`, `go`, `jdk`,
//! `rust`) names that runtime's versions even where no step refers to it.
//!
//! GCC (decision, 2026-12-07) is read where CI names its version: a matrix axis named
//! after it (`gcc`, `gcc-version`: `gcc-10`, `g++-9`, `gcc10` or a bare `10`) or after
//! the compiler (`compiler`, `cc`, `cxx`: only values that name GCC with a version),
//! the image `gcc:10`, a job's `CC`/`CXX` (`gcc-10`, `/usr/bin/g++-11`), and the
//! Debian packages `gcc-N`/`g++-N` a job installs; `clang`, and `gcc` with no version,
//! name none.
//!
//! What each language decides from it (the runtime among its catalogue's, the test
//! command's flags, the variables and packages it takes) is the language's own
//! inference, which says so in the spec it returns ([`crate::model::EnvironmentSpec::ci`]);
//! docs/languages/ci-evidence.md has the rules and their precedence.

mod github;
pub mod ladder;
mod others;
pub mod shell;
mod travis;
mod yaml;

use std::collections::BTreeSet;
use std::sync::LazyLock;

use super::RepoFiles;
use crate::model::EnvironmentSpec;

/// The runtimes a CI job can set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Language {
    Python,
    Node,
    Go,
    Java,
    Rust,
    /// C's and C++'s compiler, by major version (`10`).
    Gcc,
}

impl Language {
    /// The language a matrix axis is named after (`python-version`, `node_version`,
    /// `go`, `jdk`, `rust`, `toolchain`), when it is.
    fn of_axis(name: &str) -> Option<Language> {
        match axis_stem(name).as_str() {
            "python" | "py" | "python-ver" | "pyver" => Some(Language::Python),
            "node" | "nodejs" | "node-js" => Some(Language::Node),
            "go" | "golang" => Some(Language::Go),
            "java" | "jdk" | "java-ver" => Some(Language::Java),
            "rust" | "toolchain" | "rust-toolchain" => Some(Language::Rust),
            _ => None,
        }
    }

    /// The runtime a matrix axis's value names: a runtime's axis names it as written;
    /// GCC's (`gcc`, `gcc-version`) and the compiler's (`compiler`, `cc`, `cxx`) name
    /// GCC's major when the value says it (see [`gcc_version`]).
    fn of_axis_value(axis: &str, value: &str) -> Option<(Language, String)> {
        if let Some(language) = Language::of_axis(axis) {
            return Some((language, value.to_string()));
        }
        let bare = match axis_stem(axis).as_str() {
            "gcc" | "gxx" | "g++" => true,
            "compiler" | "compilers" | "cc" | "cxx" => false,
            _ => return None,
        };
        Some((Language::Gcc, gcc_version(value, bare)?))
    }

    /// The language of a container image's name (`python`, `cimg/python`, `golang`,
    /// `node`, `rust`, `eclipse-temurin`, `maven`), when it names one.
    fn of_image(name: &str) -> Option<Language> {
        match name.rsplit('/').next().unwrap_or(name) {
            "python" => Some(Language::Python),
            "node" => Some(Language::Node),
            "golang" | "go" => Some(Language::Go),
            "rust" => Some(Language::Rust),
            "openjdk"
            | "eclipse-temurin"
            | "amazoncorretto"
            | "adoptopenjdk"
            | "sapmachine"
            | "zulu-openjdk"
            | "maven"
            | "gradle"
            | "ibm-semeru-runtimes" => Some(Language::Java),
            "gcc" => Some(Language::Gcc),
            _ => None,
        }
    }

    /// How messages name it.
    pub fn label(self) -> &'static str {
        match self {
            Language::Python => "Python",
            Language::Node => "Node",
            Language::Go => "Go",
            Language::Java => "Java",
            Language::Rust => "Rust",
            Language::Gcc => "GCC",
        }
    }
}

/// Where a piece of evidence came from: the file and the job.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Origin {
    pub file: String,
    pub job: String,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.job.is_empty() {
            write!(formatter, "`{}`", self.file)
        } else {
            write!(formatter, "`{}` job `{}`", self.file, self.job)
        }
    }
}

/// A runtime version a job sets up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeVersion {
    pub language: Language,
    /// As written (`3.10`, `18.x`, `1.21`, `17`, `stable`), expressions resolved.
    pub version: String,
    /// What set it up (`actions/setup-python`, matrix axis `python-version`, image
    /// `python:3.9`, travis `python`).
    pub how: String,
    pub origin: Origin,
    /// Whether the job runs tests (a step of it does).
    pub test_job: bool,
}

/// A variable a test job sets (the file's, the job's, or a test step's own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvVar {
    pub name: String,
    pub value: String,
    pub origin: Origin,
}

/// A Debian package a test job installs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    pub name: String,
    pub origin: Origin,
}

/// A service a test job starts (a database), by name and image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Service {
    pub name: String,
    pub image: String,
    pub origin: Origin,
}

/// A command that runs tests (a language's runner or the project's own script).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestStep {
    /// The command line, expressions resolved (one line of a step's script).
    pub command: String,
    pub runner: shell::Runner,
    pub origin: Origin,
}

/// What the CI files of a repository say (see the module doc).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CiEvidence {
    pub runtimes: Vec<RuntimeVersion>,
    pub env: Vec<EnvVar>,
    pub packages: Vec<Package>,
    pub services: Vec<Service>,
    pub test_steps: Vec<TestStep>,
    /// Every command line of the jobs that run tests (their builds: a `cmake`
    /// configure, a `./configure`), with its job.
    pub test_job_lines: Vec<(String, Origin)>,
    /// What was left out and why (a file that does not parse, an unknown action, an
    /// expression that cannot be resolved), one sentence each.
    pub ignored: Vec<String>,
}

/// Whether `path` is a CI file this module reads (every language's inference reads it).
pub fn reads(path: &str) -> bool {
    let yaml = path.ends_with(".yml") || path.ends_with(".yaml");
    (path.starts_with(".github/workflows/") && yaml && path.matches('/').count() == 2)
        || matches!(path, ".travis.yml" | ".gitlab-ci.yml" | "azure-pipelines.yml" | ".azure-pipelines.yml")
        || path == ".circleci/config.yml"
}

/// One job of a CI file as a reader gives it (expressions resolved), before
/// [`CiEvidence::absorb`] reads its steps.
#[derive(Debug, Default)]
struct Job {
    name: String,
    /// Runtimes its set-up steps name: language, version, what named it.
    runtimes: Vec<(Language, String, String)>,
    /// The images it runs in (their tags name runtimes).
    images: Vec<String>,
    /// The file's and the job's variables, in that order (a later one wins).
    env: Vec<(String, String)>,
    steps: Vec<Step>,
    services: Vec<(String, String)>,
    /// Debian packages it declares outside a command (Travis's `addons.apt`).
    packages: Vec<String>,
    /// Lines left out for an expression that cannot be resolved.
    unresolved: Vec<String>,
}

/// One step: its shell lines and its own variables.
#[derive(Debug, Default)]
struct Step {
    lines: Vec<String>,
    env: Vec<(String, String)>,
}

impl Step {
    fn of_script(script: &str, env: Vec<(String, String)>) -> Step {
        Step { lines: shell::logical_lines(script), env }
    }
}

/// Most values an expression expands to (a matrix of matrices stays readable).
const MOST_EXPANSIONS: usize = 32;

/// `text` with each expression between `open` and `close` replaced by each of the
/// values `lookup` gives it (every combination, at most [`MOST_EXPANSIONS`]); `None`
/// when one cannot be resolved.
fn expand(text: &str, open: &str, close: &str, lookup: &dyn Fn(&str) -> Option<Vec<String>>) -> Option<Vec<String>> {
    let Some(start) = text.find(open) else { return Some(vec![text.to_string()]) };
    let end = start + open.len() + text[start + open.len()..].find(close)?;
    let token = &text[start..end + close.len()];
    let values = lookup(text[start + open.len()..end].trim())?;
    // A value that is itself an expression (`PATH: ${{ env.PATH }}:/x`) is not followed.
    if values.iter().any(|value| value.contains(open)) {
        return None;
    }
    let mut expanded = Vec::new();
    for value in values {
        for more in expand(&text.replace(token, &value), open, close, lookup)? {
            if !expanded.contains(&more) && expanded.len() < MOST_EXPANSIONS {
                expanded.push(more);
            }
        }
    }
    Some(expanded)
}

/// Whether a variable is a secret or looks like one: its value comes from the CI's
/// secrets, or its name or value says token, password or key.
fn is_secret(name: &str, value: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let named = [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "API_KEY",
        "APIKEY",
        "ACCESS_KEY",
        "PRIVATE_KEY",
        "CREDENTIAL",
        "AUTH",
    ]
    .iter()
    .any(|word| upper.contains(word));
    let from_secrets = value.contains("secrets.") || value.contains("$(") && upper.contains("KEY");
    let token_shaped = ["ghp_", "gho_", "ghs_", "github_pat_", "xox", "AKIA", "sk-", "glpat-"]
        .iter()
        .any(|prefix| value.starts_with(prefix))
        || (value.len() >= 32 && !value.contains(' ') && value.chars().all(|c| c.is_ascii_alphanumeric()));
    named || from_secrets || token_shaped
}

/// A matrix axis's name without its case, `_` and `-version(s)` suffix
/// (`Python_Version` -> `python`), as [`Language::of_axis`] reads it.
fn axis_stem(name: &str) -> String {
    let name = name.to_ascii_lowercase().replace('_', "-");
    name.strip_suffix("-version").or_else(|| name.strip_suffix("-versions")).unwrap_or(&name).to_string()
}

/// GCC's major version a CI value names (`gcc-10`, `g++-9`, `gcc10`, `gcc-10.2`,
/// `/usr/bin/g++-11`), and a bare number's (`10`, `10.2`) when `bare` (the value of
/// an axis named after GCC); `None` for another compiler (`clang-12`) or `gcc` with no
/// version.
fn gcc_version(value: &str, bare: bool) -> Option<String> {
    static NAMED: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"^(?:gcc|g\+\+)-?(\d+)(?:\.\d+)*$").expect("valid regex"));
    static NUMBER: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"^(\d+)(?:\.\d+)*$").expect("valid regex"));
    let value = value.trim();
    let value = value.rsplit('/').next().unwrap_or(value);
    let captures = NAMED.captures(value).or_else(|| if bare { NUMBER.captures(value) } else { None })?;
    Some(captures[1].to_string())
}

/// The language and version a container image's tag names (`golang:1.21` -> Go 1.21,
/// `python:3.9-slim` -> Python 3.9, `maven:3-eclipse-temurin-17` -> Java 17,
/// `cimg/node:18.1` -> Node 18.1), when it names one.
fn image_runtime(image: &str) -> Option<(Language, String)> {
    let image = image.split('@').next().unwrap_or(image);
    let (name, tag) = match image.rsplit_once(':') {
        Some((name, tag)) if !tag.contains('/') => (name, tag),
        _ => return None,
    };
    let language = Language::of_image(name)?;
    let base = name.rsplit('/').next().unwrap_or(name);
    let version = if language == Language::Java && matches!(base, "maven" | "gradle") {
        // `3-eclipse-temurin-17`, `3.8-openjdk-11`, `7.6-jdk17`: the JDK after its word.
        let pattern =
            regex::Regex::new(r"(?:jdk|openjdk|temurin|corretto|zulu|java|semeru)-?(\d+)").expect("valid regex");
        pattern.captures(tag)?[1].to_string()
    } else {
        let digits: String = tag.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        let digits = digits.trim_end_matches('.').to_string();
        if digits.is_empty() {
            return None;
        }
        if language == Language::Gcc {
            // GCC is chosen by its major (`gcc:10.2` is GCC 10).
            return gcc_version(&digits, true).map(|major| (language, major));
        }
        digits
    };
    Some((language, version))
}

/// A service's name from its image (`postgres:14` -> `postgres`, `cimg/redis:7.0` ->
/// `redis`).
fn service_name(image: &str) -> String {
    let name = image.split(['@', ':']).next().unwrap_or(image);
    name.rsplit('/').next().unwrap_or(name).to_string()
}

/// At most this many unknown actions are named in their note; the rest are counted.
const MOST_ACTIONS_NAMED: usize = 8;

/// At most this many notes go into a spec (`ci`): the rest are counted.
const MOST_NOTES: usize = 12;

impl CiEvidence {
    /// The evidence of every CI file among `files` (see [`reads`]).
    pub fn read(files: &RepoFiles) -> CiEvidence {
        let mut evidence = CiEvidence::default();
        let mut unknown_actions: BTreeSet<String> = BTreeSet::new();
        for (path, text) in files.iter().filter(|(path, _)| reads(path)) {
            let parsed = yaml::parse_first(text);
            let document = match parsed {
                Ok(document) => document,
                Err(error) => {
                    let first = error.lines().next().unwrap_or_default().to_string();
                    evidence.ignored.push(format!("`{path}` is not YAML that parses ({first}); not read"));
                    continue;
                }
            };
            let mut notes = Vec::new();
            let jobs = if path.starts_with(".github/") {
                github::jobs(&document, &mut notes, &mut unknown_actions)
            } else if path == ".travis.yml" {
                travis::jobs(&document, &mut notes)
            } else if path == ".gitlab-ci.yml" {
                others::gitlab_jobs(&document, &mut notes)
            } else if path.ends_with("azure-pipelines.yml") {
                others::azure_jobs(&document, &mut notes)
            } else {
                others::circleci_jobs(&document, &mut notes)
            };
            evidence.ignored.extend(notes.into_iter().map(|note| format!("`{path}`: {note}")));
            for job in jobs {
                evidence.absorb(path, job);
            }
        }
        if !unknown_actions.is_empty() {
            let mut names: Vec<String> =
                unknown_actions.iter().take(MOST_ACTIONS_NAMED).map(|name| format!("`{name}`")).collect();
            if unknown_actions.len() > MOST_ACTIONS_NAMED {
                names.push(format!("{} more", unknown_actions.len() - MOST_ACTIONS_NAMED));
            }
            evidence
                .ignored
                .push(format!("steps of actions this reader does not know, not read: {}", names.join(", ")));
        }
        evidence
    }

    /// Takes one job's evidence in.
    fn absorb(&mut self, file: &str, job: Job) {
        let origin = Origin { file: file.to_string(), job: job.name.clone() };
        let mut tests = Vec::new();
        let mut packages: Vec<String> = job.packages.clone();
        let mut step_env: Vec<(String, String)> = Vec::new();
        for step in &job.steps {
            let mut step_tests = false;
            for line in &step.lines {
                let mut ran_tests = false;
                for words in shell::segments(line) {
                    let (assignments, words) = shell::program(&words);
                    packages.extend(shell::apt_packages(words));
                    if let Some(runner) = shell::test_runner(words) {
                        ran_tests = true;
                        step_env.extend(assignments);
                        tests.push(TestStep { command: line.clone(), runner, origin: origin.clone() });
                    }
                }
                step_tests |= ran_tests;
            }
            if step_tests {
                step_env.extend(step.env.iter().cloned());
            }
        }
        let expression = regex::Regex::new(r"\$\{\{[^}]*\}\}|<<[^>]*>>").expect("valid regex");
        for line in &job.unresolved {
            let plain = expression.replace_all(line, "");
            let is_test =
                shell::segments(&plain).iter().any(|words| shell::test_runner(shell::program(words).1).is_some());
            if is_test {
                self.ignored.push(format!(
                    "{origin}: the test command `{line}` has an expression that cannot be resolved; not read"
                ));
            }
        }
        let test_job = !tests.is_empty();
        let mut runtimes = job.runtimes.clone();
        for image in &job.images {
            if let Some((language, version)) = image_runtime(image) {
                runtimes.push((language, version, format!("image `{image}`")));
            }
        }
        // The C compiler a job's variables or packages name.
        for (name, value) in job.env.iter().chain(&step_env) {
            if matches!(name.as_str(), "CC" | "CXX") {
                runtimes.extend(gcc_version(value, false).map(|major| (Language::Gcc, major, format!("`{name}`"))));
            }
        }
        for package in &packages {
            runtimes.extend(
                gcc_version(package, false).map(|major| (Language::Gcc, major, format!("package `{package}`"))),
            );
        }
        for (language, version, how) in runtimes {
            let known = self
                .runtimes
                .iter()
                .any(|known| known.language == language && known.version == version && known.origin == origin);
            if !known && !version.is_empty() {
                self.runtimes.push(RuntimeVersion { language, version, how, origin: origin.clone(), test_job });
            }
        }
        if !test_job {
            return;
        }
        self.test_steps.extend(tests);
        for step in &job.steps {
            self.test_job_lines.extend(step.lines.iter().map(|line| (line.clone(), origin.clone())));
        }
        for (name, value) in job.env.iter().chain(&step_env) {
            if is_secret(name, value) || value.contains("${{") {
                continue;
            }
            match self.env.iter_mut().find(|known| known.name == *name && known.origin == origin) {
                Some(known) => known.value = value.clone(),
                None => self.env.push(EnvVar { name: name.clone(), value: value.clone(), origin: origin.clone() }),
            }
        }
        for name in packages {
            if !self.packages.iter().any(|known| known.name == name) {
                self.packages.push(Package { name, origin: origin.clone() });
            }
        }
        for (name, image) in job.services {
            if !self.services.iter().any(|known| known.name == name && known.image == image) {
                self.services.push(Service { name, image, origin: origin.clone() });
            }
        }
    }

    /// The commands of the steps that run tests, as written (expressions resolved), in
    /// file and job order: for a runner that reads them (the project's own harness).
    pub fn test_commands(&self) -> impl Iterator<Item = &str> {
        self.test_steps.iter().map(|step| step.command.as_str())
    }

    /// The test steps whose command runs `runner`.
    pub fn steps_of(&self, runner: shell::Runner) -> impl Iterator<Item = &TestStep> {
        self.test_steps.iter().filter(move |step| step.runner == runner)
    }

    /// The simple commands of the test steps that run `runner`: each with its words
    /// from the program on (see [`shell::program`]) and the step.
    pub fn runner_commands(&self, runner: shell::Runner) -> Vec<(Vec<String>, &TestStep)> {
        let mut found = Vec::new();
        for step in self.steps_of(runner) {
            for words in shell::segments(&step.command) {
                let (_, words) = shell::program(&words);
                if shell::test_runner(words) == Some(runner) {
                    found.push((words.to_vec(), step));
                }
            }
        }
        found
    }

    /// The versions of `language` the jobs set up (of test jobs only, when
    /// `test_jobs_only`), each once, with where it was first seen.
    pub fn versions(&self, language: Language, test_jobs_only: bool) -> Vec<(&str, &RuntimeVersion)> {
        let mut found: Vec<(&str, &RuntimeVersion)> = Vec::new();
        for runtime in &self.runtimes {
            if runtime.language == language
                && (runtime.test_job || !test_jobs_only)
                && !found.iter().any(|(version, _)| *version == runtime.version)
            {
                found.push((runtime.version.as_str(), runtime));
            }
        }
        found
    }

    /// The versions of `language` the test jobs set up, or every job's when no test
    /// job names one (a set-up job, a matrix its test steps do not read).
    pub fn tested_versions(&self, language: Language) -> Vec<(&str, &RuntimeVersion)> {
        let versions = self.versions(language, true);
        if versions.is_empty() { self.versions(language, false) } else { versions }
    }

    /// The value the test jobs give variable `name` (the first job that sets it), with
    /// where.
    pub fn env_var(&self, name: &str) -> Option<&EnvVar> {
        self.env.iter().find(|var| var.name == name)
    }

    /// Every value the test jobs give variable `name`, in file and job order.
    pub fn env_values(&self, name: &str) -> impl Iterator<Item = &EnvVar> {
        self.env.iter().filter(move |var| var.name == name)
    }

    /// What inference records of the evidence whatever it decides: the services the
    /// test jobs start (their tests may need them: none runs here), and what was left
    /// out.
    pub fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = self
            .services
            .iter()
            .map(|service| {
                format!(
                    "CI starts the service `{}` (image `{}`) for {}: tests that need it have no such service here",
                    service.name, service.image, service.origin
                )
            })
            .collect();
        notes.extend(self.ignored.iter().cloned());
        notes
    }

    /// `spec` with `decisions` (what inference took from CI, one sentence each) and
    /// [`Self::notes`] in its `ci` record, at most [`MOST_NOTES`] lines.
    pub fn record(&self, spec: &mut EnvironmentSpec, decisions: Vec<String>) {
        let mut lines: Vec<String> = decisions;
        lines.extend(self.notes());
        lines.dedup();
        if lines.len() > MOST_NOTES {
            let more = lines.len() - (MOST_NOTES - 1);
            lines.truncate(MOST_NOTES - 1);
            lines.push(format!("and {more} more notes of CI"));
        }
        spec.ci = lines;
    }
}

/// Whether a Debian package of CI's `apt-get install` is one inference and the ladder
/// leave out: compilers, build tools, and tools that measure, format or document
/// (`valgrind`: a test suite that finds it runs under it), and the CI machine's own
/// administration (`sudo`, nlohmann/json's CircleCI job; formatters such as
/// `astyle`). C's inference decided it first (docs/languages/c.md); every language's
/// ladder shares it.
pub fn unwanted_package(name: &str) -> bool {
    const WHOLE: &[&str] =
        &["sudo", "astyle", "clang-format", "git", "curl", "wget", "apt-utils", "software-properties-common"];
    if WHOLE.contains(&name) {
        return true;
    }
    const PREFIXES: &[&str] = &[
        "gcc",
        "g++",
        "clang",
        "llvm",
        "lld",
        "cmake",
        "ninja",
        "meson",
        "make",
        "autoconf",
        "automake",
        "libtool",
        "lcov",
        "gcovr",
        "doxygen",
        "graphviz",
        "texlive",
        "valgrind",
        "cppcheck",
        "ccache",
        "mingw",
        "wine",
        "qemu",
        "iwyu",
        "sphinx",
        "python3-sphinx",
        "pandoc",
        "asciidoc",
        "shellcheck",
        "codespell",
    ];
    PREFIXES.iter().any(|prefix| name.starts_with(prefix))
}

/// Where each of `versions` was seen, for a decision's sentence: `3.8, 3.9 (`ci.yml` job `test`)`.
pub fn versions_said(versions: &[(&str, &RuntimeVersion)]) -> String {
    let names: Vec<&str> = versions.iter().map(|(version, _)| *version).collect();
    let origins: BTreeSet<String> = versions.iter().map(|(_, runtime)| runtime.origin.to_string()).collect();
    format!("{} ({})", names.join(", "), origins.into_iter().collect::<Vec<_>>().join(", "))
}

/// The runtime CI narrows a language's usual choice to, among `available` versions
/// (those the language may choose; any order): the usual choice when CI names it or
/// names none; else the available version CI names nearest to it (ties: the older);
/// else, when every version CI names is newer than the usual choice, the oldest
/// available at least CI's oldest, and when every one is older, the newest available
/// at most CI's newest; else the usual choice. `distance` measures two versions apart.
pub fn narrow<V: Ord + Copy>(usual: V, named: &[V], available: &[V], distance: impl Fn(V, V) -> u64) -> V {
    if named.is_empty() || named.contains(&usual) {
        return usual;
    }
    let mut sorted: Vec<V> = available.to_vec();
    sorted.sort();
    sorted.dedup();
    if let Some(nearest) = sorted
        .iter()
        .copied()
        .filter(|version| named.contains(version))
        .min_by_key(|version| (distance(*version, usual), *version))
    {
        return nearest;
    }
    let (lowest, highest) =
        (*named.iter().min().expect("named is not empty"), *named.iter().max().expect("named is not empty"));
    if lowest > usual {
        return sorted.iter().copied().find(|version| *version >= lowest).unwrap_or(usual);
    }
    if highest < usual {
        return sorted.iter().copied().rev().find(|version| *version <= highest).unwrap_or(usual);
    }
    usual
}

#[cfg(test)]
mod tests;
