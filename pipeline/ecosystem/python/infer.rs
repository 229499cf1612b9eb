//! Environment inference for repositories without a per-repository config: reads the
//! packaging and CI files at the environment commit (pyproject.toml, setup.cfg,
//! setup.py, requirements*.txt, tox.ini, GitHub workflows, .travis.yml, conda
//! environment files) and proposes
//! an [`EnvironmentSpec`]. A pure function over file contents; reading them from the
//! mirror is the stage's job, building the image [`super::image`]'s.
//!
//! What it decides, and why:
//! - runtime: the newest runtime among those with a base image that the project
//!   declared support for (classifiers, tox envs, CI matrices, within
//!   `requires-python`) and that was released before the environment date: pytest of
//!   a 2021 project does not run on Python 3.11. Without a declared one that is
//!   available, the oldest available runtime allowed by `requires-python` that was
//!   released before the date, or else the oldest allowed one;
//! - pre-install (run without the date cap): current setuptools and wheel, plus the
//!   `[build-system]` requirements, because old setuptools cannot do editable
//!   installs (PEP 660): the dependencies travel in time, the build backend does not;
//! - install (run with `UV_EXCLUDE_NEWER` = the date): one `uv pip install` of the
//!   repository in editable mode with its test extras, together with its test
//!   requirement files and pytest, so that one resolution picks versions that fit
//!   together. When the project's name is written down, only the project is built
//!   without isolation (dependencies from source get build tools of the date) and
//!   setuptools-scm's pretended version is the project's alone; setuptools projects
//!   are installed in `compat` editable mode (/testbed on `sys.path`). Then, best
//!   effort, the test dependencies that only the CI's files name (tox `deps`, conda
//!   environment files);
//! - test command: pytest with `-rA`, plus the plugins that the pytest config's
//!   `addopts` needs (`--cov` needs pytest-cov, `-n` pytest-xdist, ...).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, NaiveDate, Utc};

use pep440_rs::{Version, VersionSpecifiers};
use pep508_rs::{PackageName, Requirement, VersionOrUrl};

use crate::ecosystem::ci::{self, CiEvidence, Language};
use crate::ecosystem::{InferError, RepoFiles, RuntimeNeed};
use crate::model::EnvironmentSpec;
use crate::sandbox::script::shell_quote;

/// The default test command of inferred specs. The runner adds `--junitxml` and the
/// test files. Old pytest takes these options too (tried on Python 3.9: 2.8.7 and
/// 2.9.2, which run there only with `--assert=plain`, 3.0.7, 3.2.5, 4.6.11).
pub const DEFAULT_TEST_COMMAND: &str = "pytest -rA -p no:cacheprovider";

/// Build tools installed before the project, with their own date cap
/// ([`pre_install_tools`]).
pub const PRE_INSTALL_TOOLS: &str = "'setuptools>=64,<82' wheel";
/// Where the install ladder keeps its first rung's output while it climbs.
const FIRST_RUNG_LOG: &str = "/tmp/swe-harvest-rung-1.log";
/// What uv says when requirements do not resolve (uv 0.4 to 0.13).
const UNRESOLVED: &str = "No solution found when resolving dependencies";

/// What inference says of a repository without Python packaging.
const NOT_A_PYTHON_PROJECT: InferError = InferError::NotRecognised {
    language: "Python",
    expected: "pyproject.toml, setup.py, setup.cfg, requirements*.txt",
};

/// Whether inference reads `path`.
pub fn reads(path: &str) -> bool {
    let top_level = !path.contains('/');
    let name = path.rsplit('/').next().unwrap_or(path);
    (top_level
        && matches!(name, "pyproject.toml" | "setup.cfg" | "setup.py" | "tox.ini" | "pytest.ini" | ".travis.yml"))
        || (top_level && name.ends_with(".txt") && name.contains("requirements"))
        || (path.starts_with("requirements/") && name.ends_with(".txt") && path.matches('/').count() == 1)
        || (path.starts_with(".github/workflows/") && (name.ends_with(".yml") || name.ends_with(".yaml")))
        || conda_environment_file(path)
}

/// When each CPython minor version was released (first final release).
const RELEASES: &[(&str, (i32, u32, u32))] = &[
    ("3.5", (2015, 9, 13)),
    ("3.6", (2016, 12, 23)),
    ("3.7", (2018, 6, 27)),
    ("3.8", (2019, 10, 14)),
    ("3.9", (2020, 10, 5)),
    ("3.10", (2021, 10, 4)),
    ("3.11", (2022, 10, 24)),
    ("3.12", (2023, 10, 2)),
    ("3.13", (2024, 10, 7)),
    ("3.14", (2025, 10, 7)),
];

fn released_by(runtime: &str, date: DateTime<Utc>) -> bool {
    match RELEASES.iter().find(|(version, _)| *version == runtime) {
        Some((_, (year, month, day))) => {
            NaiveDate::from_ymd_opt(*year, *month, *day).is_some_and(|released| released <= date.date_naive())
        }
        // A runtime newer than this table: released after every date we know.
        None => false,
    }
}

/// Whether CPython's support of `runtime` (five years from its first release) had
/// ended by `date`.
fn end_of_life_by(runtime: &str, date: DateTime<Utc>) -> bool {
    runtime_released(runtime)
        .and_then(|released| released.checked_add_months(chrono::Months::new(5 * 12)))
        .is_some_and(|end| end <= date.date_naive())
}

/// `3.11` -> (3, 11).
fn minor(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.trim().split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.trim_end_matches(|c: char| !c.is_ascii_digit()).parse().ok()?;
    Some((major, minor))
}

/// Patch releases a minor version is tried at: no CPython minor version had more.
const PATCH_RELEASES: u64 = 40;

/// Whether a `requires-python` specifier set (`>=3.6, !=3.7.*, <3.11`, PEP 440) admits
/// the runtime `3.X`: some release `3.X.p` of it satisfies every clause (`>=3.9.2`
/// admits 3.9; `~=3.6.1` admits 3.6 and not 3.7). A set that PEP 440 cannot read
/// admits everything: inference should not fail on a typo.
pub fn requires_python_allows(requires: &str, runtime: &str) -> bool {
    let Some((major, minor)) = minor(runtime) else { return true };
    if requires.trim().is_empty() {
        return true;
    }
    match requires.parse::<VersionSpecifiers>() {
        Ok(specifiers) => (0..=PATCH_RELEASES)
            .any(|patch| specifiers.contains(&Version::new([u64::from(major), u64::from(minor), patch]))),
        Err(error) => {
            tracing::debug!(requires, %error, "requires-python is no PEP 440 specifier set; every runtime is allowed");
            true
        }
    }
}

/// How far apart two runtimes are, in minor versions.
fn distance((major, minor): (u32, u32), (other_major, other_minor): (u32, u32)) -> u32 {
    (major * 100 + minor).abs_diff(other_major * 100 + other_minor)
}

/// The known runtime ([`RELEASES`]) that `requires-python` admits and that is nearest
/// to one of `available` (ties: the older): what a project that admits none of them
/// needs (`>=3.5, <3.9` with 3.9 and newer: 3.8).
fn nearest_admitted(requires: &str, available: &[(u32, u32)]) -> Option<&'static str> {
    RELEASES
        .iter()
        .map(|(runtime, _)| *runtime)
        .filter(|runtime| requires_python_allows(requires, runtime))
        .filter_map(|runtime| minor(runtime).map(|version| (version, runtime)))
        .min_by_key(|(version, _)| {
            (available.iter().map(|other| distance(*version, *other)).min().unwrap_or(u32::MAX), *version)
        })
        .map(|(_, runtime)| runtime)
}

/// Everything inference learned from the files, before deciding.
#[derive(Debug, Default)]
struct Facts {
    requires_python: Option<String>,
    declared: BTreeSet<(u32, u32)>,
    extras: BTreeSet<String>,
    build_requires: Vec<String>,
    requirement_files: Vec<String>,
    installable: bool,
    addopts: String,
    /// The project's distribution name, when written as a literal (pyproject.toml's
    /// `[project]`, setup.cfg's `[metadata]`, one `name=` in setup.py).
    name: Option<String>,
    /// `[build-system] build-backend`, when pyproject.toml names one.
    backend: Option<String>,
    /// Test dependencies named only in the CI's files (tox deps, conda environment
    /// files), by normalised name: PEP 508 requirements.
    optional: BTreeMap<String, String>,
    /// The versions among `declared` that CI sets up (see [`crate::ecosystem::ci`]).
    ci_declared: BTreeSet<(u32, u32)>,
    /// What the CI files say, read once for the facts and the decisions.
    ci: CiEvidence,
}

impl Facts {
    /// Whether setuptools builds the project: it names no other backend (PEP 517's
    /// default is setuptools).
    fn built_by_setuptools(&self) -> bool {
        self.backend.as_deref().is_none_or(|backend| backend.starts_with("setuptools"))
    }

    /// Records an optional dependency; one named differently in two files: the name alone.
    fn add_optional(&mut self, (name, requirement): (String, String)) {
        match self.optional.get(&name) {
            Some(known) if *known != requirement => {
                self.optional.insert(name.clone(), name);
            }
            Some(_) => {}
            None => {
                self.optional.insert(name, requirement);
            }
        }
    }
}

fn facts(files: &RepoFiles) -> Facts {
    let mut facts = Facts::default();
    let classifier = regex::Regex::new(r"Programming Language :: Python :: (3\.\d+)").expect("valid regex");
    let tox_env = regex::Regex::new(r"\bpy3(\d{1,2})\b").expect("valid regex");
    let requires_kw = regex::Regex::new(r#"python_requires\s*=\s*['"]([^'"]+)['"]"#).expect("valid regex");
    let setup_extra = regex::Regex::new(r#"['"]([A-Za-z0-9_.-]+)['"]\s*:"#).expect("valid regex");
    // `EXTRAS_REQUIRE['dev'] = ...`: an extra added after the dict was written.
    let setup_extra_item = regex::Regex::new(r#"\[['"]([A-Za-z0-9_.-]+)['"]\]\s*="#).expect("valid regex");

    let setup_name =
        regex::Regex::new(r#"(?:^|[\s,(])name\s*=\s*['"]([A-Za-z0-9][A-Za-z0-9._-]*)['"]"#).expect("valid regex");
    let mut names: BTreeMap<&str, String> = BTreeMap::new();

    for (path, text) in files {
        if conda_environment_file(path) {
            for requirement in conda_dependencies(text) {
                facts.add_optional(requirement);
            }
        }
        for capture in classifier.captures_iter(text) {
            facts.declared.extend(minor(&capture[1]));
        }
        match path.as_str() {
            "pyproject.toml" => {
                facts.installable |= text.contains("[build-system]");
                if let Ok(table) = text.parse::<toml::Table>() {
                    if let Some(project) = table.get("project").and_then(|value| value.as_table()) {
                        facts.installable = true;
                        if let Some(name) = project.get("name").and_then(|value| value.as_str()) {
                            names.insert("pyproject.toml", name.to_string());
                        }
                        if let Some(requires) = project.get("requires-python").and_then(|value| value.as_str()) {
                            facts.requires_python = Some(requires.to_string());
                        }
                        if let Some(extras) = project.get("optional-dependencies").and_then(|value| value.as_table()) {
                            facts.extras.extend(extras.keys().cloned());
                        }
                    }
                    facts.backend = table
                        .get("build-system")
                        .and_then(|value| value.get("build-backend"))
                        .and_then(|value| value.as_str())
                        .map(String::from);
                    if let Some(requires) = table
                        .get("build-system")
                        .and_then(|value| value.get("requires"))
                        .and_then(|value| value.as_array())
                    {
                        // A PEP 508 requirement holds no control character; one that does (a
                        // newline would end the Dockerfile's RUN line) is not a requirement.
                        facts.build_requires.extend(
                            requires
                                .iter()
                                .filter_map(|value| value.as_str())
                                .filter(|requirement| !requirement.chars().any(char::is_control))
                                .map(String::from),
                        );
                    }
                    if let Some(addopts) = table
                        .get("tool")
                        .and_then(|value| value.get("pytest"))
                        .and_then(|value| value.get("ini_options"))
                        .and_then(|value| value.get("addopts"))
                    {
                        match addopts {
                            toml::Value::String(text) => facts.addopts.push_str(text),
                            toml::Value::Array(items) => {
                                for item in items.iter().filter_map(|item| item.as_str()) {
                                    facts.addopts.push(' ');
                                    facts.addopts.push_str(item);
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
            "setup.py" => {
                facts.installable = true;
                let literal: BTreeSet<&str> =
                    setup_name.captures_iter(text).filter_map(|capture| capture.get(1)).map(|m| m.as_str()).collect();
                // Several `name=` (an Extension's, a variable's) say nothing for sure.
                if literal.len() == 1 {
                    names.insert("setup.py", literal.into_iter().collect());
                }
                if let Some(capture) = requires_kw.captures(text) {
                    facts.requires_python.get_or_insert(capture[1].to_string());
                }
                // `extras_require={...}` inline, or a dict defined earlier (`EXTRAS_REQUIRE = {...}`).
                let lower = text.to_lowercase();
                for (start, _) in lower.match_indices("extras_require") {
                    let window = &text[start..text.len().min(start + 3000)];
                    let window = window.split(['(', ')']).next().unwrap_or(window);
                    facts.extras.extend(setup_extra.captures_iter(window).map(|capture| capture[1].to_string()));
                    let head = &window[..window.len().min(40)];
                    facts.extras.extend(setup_extra_item.captures_iter(head).map(|capture| capture[1].to_string()));
                }
            }
            "setup.cfg" | "tox.ini" | "pytest.ini" => {
                let sections = ini_sections(text);
                if path == "setup.cfg" {
                    facts.installable |= sections.contains_key("metadata") || sections.contains_key("options");
                    if let Some(requires) = sections.get("options").and_then(|options| options.get("python_requires")) {
                        facts.requires_python.get_or_insert(requires.clone());
                    }
                    if let Some(extras) = sections.get("options.extras_require") {
                        facts.extras.extend(extras.keys().cloned());
                    }
                    if let Some(name) = sections.get("metadata").and_then(|metadata| metadata.get("name")) {
                        names.insert("setup.cfg", name.clone());
                    }
                }
                if path == "tox.ini" {
                    if let Some(envlist) = sections.get("tox").and_then(|tox| tox.get("envlist")) {
                        for capture in tox_env.captures_iter(envlist) {
                            facts.declared.insert((3, capture[1].parse().unwrap_or(0)));
                        }
                    }
                    for (section, keys) in &sections {
                        if section == "testenv" || section.starts_with("testenv:py") {
                            for requirement in keys.get("deps").into_iter().flat_map(|deps| tox_dependencies(deps)) {
                                facts.add_optional(requirement);
                            }
                        }
                    }
                }
                for section in ["tool:pytest", "pytest"] {
                    if let Some(addopts) = sections.get(section).and_then(|pytest| pytest.get("addopts")) {
                        facts.addopts.push(' ');
                        facts.addopts.push_str(addopts);
                    }
                }
            }
            _ => {}
        }
    }
    // The versions CI sets up or tests on (a matrix's `python-version`, `setup-python`,
    // Travis's `python:`, an image's tag), read by the CI reader: declared as well.
    facts.ci = CiEvidence::read(files);
    for (version, _) in facts.ci.versions(Language::Python, false) {
        if let Some(version) = minor(version).filter(|(major, _)| *major == 3) {
            facts.declared.insert(version);
            facts.ci_declared.insert(version);
        }
    }
    // Test requirement files first, then the plain one; never docs or lint sets.
    let unwanted = ["doc", "lint", "pre_commit", "pre-commit", "precommit", "typing", "mypy", "style", "release"];
    let requirement_files: Vec<&String> = files
        .keys()
        .filter(|path| path.ends_with(".txt"))
        .filter(|path| {
            let name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
            !unwanted.iter().any(|word| name.contains(word))
        })
        .collect();
    let testish = |path: &str| {
        let name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
        name.contains("test") || (path.starts_with("requirements/") && name == "dev.txt") || name.contains("-dev")
    };
    let mut chosen: Vec<String> =
        requirement_files.iter().filter(|path| testish(path)).map(|path| path.to_string()).collect();
    if chosen.is_empty() {
        chosen.extend(requirement_files.iter().filter(|path| path.contains("dev")).map(|path| path.to_string()));
    }
    for plain in ["requirements.txt", "requirements/base.txt", "requirements/main.txt"] {
        if files.contains_key(plain) && !chosen.iter().any(|path| path == plain) {
            chosen.push(plain.to_string());
        }
    }
    facts.requirement_files = chosen;
    facts.name = ["pyproject.toml", "setup.cfg", "setup.py"]
        .iter()
        .filter_map(|file| names.get(file))
        .find(|name| project_name(name))
        .cloned();
    facts
}

/// Whether `name` is a distribution name as PEP 508 writes it.
fn project_name(name: &str) -> bool {
    name.parse::<PackageName>().is_ok()
}

/// A named requirement as PEP 508 reads it (`numpy>=1.17; python_version < "3.8"`),
/// with its normalised name (PEP 503); `None` for what is none, or names a URL.
fn named_requirement(text: &str) -> Option<(String, Requirement)> {
    let requirement = text.parse::<Requirement>().ok()?;
    if matches!(requirement.version_or_url, Some(VersionOrUrl::Url(_))) {
        return None;
    }
    Some((requirement.name.to_string(), requirement))
}

/// The environment variable that pretends a version for one distribution only
/// (setuptools-scm reads `SETUPTOOLS_SCM_PRETEND_VERSION_FOR_<NAME>` before the
/// global one): `my.pkg` -> `SETUPTOOLS_SCM_PRETEND_VERSION_FOR_MY_PKG`.
fn pretend_variable(name: &str) -> String {
    let normalized = name.parse::<PackageName>().map_or_else(|_| name.to_lowercase(), |name| name.to_string());
    format!("SETUPTOOLS_SCM_PRETEND_VERSION_FOR_{}", normalized.replace('-', "_").to_uppercase())
}

/// Optional dependencies never installed: the build tools (their versions are the
/// pre-install's), tox itself, and conda packages that are no Python package (or have
/// none on PyPI).
const NOT_OPTIONAL: &[&str] = &[
    "python",
    "pip",
    "setuptools",
    "wheel",
    "uv",
    "tox",
    "conda",
    "mamba",
    "compilers",
    "c-compiler",
    "cxx-compiler",
    "fortran-compiler",
    "make",
    "cmake",
    "git",
    "nodejs",
    "openjdk",
    "pkg-config",
    "pre-commit",
];

/// Conda packages whose PyPI distribution has another name. `iris` on PyPI is a
/// placeholder that raises on import (xarray's CI files name SciTools' iris).
const CONDA_TO_PYPI: &[(&str, &str)] = &[
    ("iris", "scitools-iris"),
    ("pytables", "tables"),
    ("msgpack-python", "msgpack"),
    ("matplotlib-base", "matplotlib"),
    ("dask-core", "dask"),
    ("pytorch", "torch"),
    ("py-xgboost", "xgboost"),
    ("python-graphviz", "graphviz"),
    ("pyqt", "pyqt5"),
];

/// A requirement line of tox `deps` or of a conda file's `pip:` list as a PEP 508
/// requirement, with its normalised name; `None` for what is none (options such as
/// `-r file`, paths, URLs, `{[testenv]deps}` substitutions, factor-conditional
/// lines `py27: mock`, build tools).
fn optional_requirement(line: &str) -> Option<(String, String)> {
    let text = unquote(line.split(" #").next().unwrap_or(line));
    // A control character (a newline would end the Dockerfile's RUN line) or a tox
    // substitution is no requirement to hand on, whatever a parser makes of it.
    if text.chars().any(char::is_control) || text.contains(['{', '$']) {
        return None;
    }
    let (name, _) = named_requirement(text)?;
    (!NOT_OPTIONAL.contains(&name.as_str())).then(|| (name, text.to_string()))
}

/// `text` trimmed, without the quotes around it (YAML's `- "numpy>=1.17"`).
fn unquote(text: &str) -> &str {
    let text = text.trim();
    for quote in ['"', '\''] {
        if let Some(inner) = text.strip_prefix(quote).and_then(|rest| rest.strip_suffix(quote)) {
            return inner.trim();
        }
    }
    text
}

/// The requirements of tox `deps` (one a line).
fn tox_dependencies(deps: &str) -> Vec<(String, String)> {
    deps.lines().filter_map(optional_requirement).collect()
}

/// Conda environment files that CI installs: `environment*.yml` at the top,
/// `ci/*.yml`, `ci/requirements/*.yml`, `ci/deps/*.yml` (or `.yaml`), not those for
/// docs, linting or the oldest supported versions.
fn conda_environment_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
    let yaml = name.ends_with(".yml") || name.ends_with(".yaml");
    let directory = &path[..path.len() - name.len()];
    let place = (directory.is_empty() && name.starts_with("environment"))
        || matches!(directory, "ci/" | "ci/requirements/" | "ci/deps/");
    let unwanted = ["doc", "lint", "mypy", "typing", "min", "bare", "benchmark", "asv"];
    yaml && place && !unwanted.iter().any(|word| name.contains(word))
}

/// A conda package spec (`numpy`, `numpy=1.17`, `numpy>=1.17`, `conda-forge::numpy 1.17*`,
/// `numpy=1.17=py_0`) as a PEP 508 requirement.
fn conda_requirement(spec: &str) -> Option<(String, String)> {
    let text = unquote(spec.split(" #").next().unwrap_or(spec));
    let text = text.rsplit("::").next().unwrap_or(text);
    let name_end = text.find(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c))).unwrap_or(text.len());
    let (name, rest) = text.split_at(name_end);
    let key = name.parse::<PackageName>().ok()?.to_string();
    if NOT_OPTIONAL.contains(&key.as_str()) || key.starts_with("lib") {
        return None;
    }
    let name = CONDA_TO_PYPI.iter().find(|(conda, _)| *conda == key).map_or(name, |(_, pypi)| pypi);
    // `numpy >= 1.16.0`: the spaces inside a constraint say nothing.
    let rest = rest.trim();
    let spaceless: String;
    let rest = if rest.starts_with(['<', '>', '!', '~', '=']) {
        spaceless = rest.chars().filter(|c| !c.is_whitespace()).collect();
        spaceless.as_str()
    } else {
        rest
    };
    let version_ok =
        |version: &str| !version.is_empty() && version.chars().all(|c| c.is_ascii_alphanumeric() || ".*+!".contains(c));
    let constraint = if rest.starts_with(['<', '>', '!', '~']) || rest.starts_with("==") {
        // `>=1.2,<2` stays; a build string (`=py_0` after the version) does not.
        let operators: String = rest.chars().take_while(|c| "<>=!~".contains(*c)).collect();
        let version: String = rest[operators.len()..].chars().take_while(|c| *c != '=' && *c != ' ').collect();
        let clauses_ok = version.split(',').all(|clause| {
            let clause = clause.trim_start_matches(|c| "<>=!~".contains(c));
            version_ok(clause)
        });
        clauses_ok.then(|| format!("{operators}{version}"))
    } else {
        // `=1.2` and `1.2*` are conda's prefix matches.
        let version: String = rest.trim_start_matches('=').chars().take_while(|c| *c != '=' && *c != ' ').collect();
        let version = version.trim_end_matches(".*").trim_end_matches('*');
        version_ok(version).then(|| format!("=={version}.*"))
    };
    // The constraint only when PEP 508 reads it; the name alone otherwise.
    let requirement = constraint
        .map(|constraint| format!("{name}{constraint}"))
        .filter(|text| named_requirement(text).is_some())
        .unwrap_or_else(|| name.to_string());
    let (key, _) = named_requirement(&requirement)?;
    Some((key, requirement))
}

/// The packages of a conda environment file's `dependencies:` list, and of its
/// `pip:` sub-list.
fn conda_dependencies(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut inside = false;
    let mut pip_indent: Option<usize> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if indent == 0 && !trimmed.starts_with('-') {
            inside = trimmed.trim_end() == "dependencies:";
            pip_indent = None;
            continue;
        }
        let Some(item) = trimmed.strip_prefix("- ").or_else(|| trimmed.strip_prefix('-')) else { continue };
        if !inside {
            continue;
        }
        let item = item.trim();
        match pip_indent {
            Some(pip) if indent > pip => {
                found.extend(optional_requirement(item));
                continue;
            }
            _ => pip_indent = None,
        }
        if item.trim_end() == "pip:" {
            pip_indent = Some(indent);
        } else {
            found.extend(conda_requirement(item));
        }
    }
    found
}

/// `[section] key = value` with indented continuation lines, enough for setup.cfg and tox.ini.
fn ini_sections(text: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut sections: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut section = String::new();
    let mut key: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if trimmed.starts_with('[') && trimmed.ends_with(']') {
            section = trimmed[1..trimmed.len() - 1].trim().to_string();
            key = None;
            continue;
        }
        if line.starts_with(char::is_whitespace) && !trimmed.is_empty() {
            if let Some(key) = &key {
                let value = sections.entry(section.clone()).or_default().entry(key.clone()).or_default();
                value.push('\n');
                value.push_str(trimmed);
            }
            continue;
        }
        if let Some((name, value)) = trimmed.split_once('=').or_else(|| trimmed.split_once(':')) {
            let name = name.trim().to_string();
            sections.entry(section.clone()).or_default().insert(name.clone(), value.trim().to_string());
            key = Some(name);
        }
    }
    sections
}

/// pytest plugins that `addopts` options need.
fn plugins_for(addopts: &str) -> Vec<&'static str> {
    let mut plugins = Vec::new();
    let words: Vec<&str> = addopts.split_whitespace().collect();
    let has = |prefix: &str| words.iter().any(|word| *word == prefix || word.starts_with(&format!("{prefix}=")));
    if has("--cov") || addopts.contains("--cov") {
        plugins.push("pytest-cov");
    }
    if has("-n")
        || has("--numprocesses")
        || words
            .iter()
            .any(|word| word.starts_with("-n") && word.len() > 2 && word[2..].chars().all(|c| c.is_ascii_digit()))
    {
        plugins.push("pytest-xdist");
    }
    if has("--timeout") {
        plugins.push("pytest-timeout");
    }
    if has("--mpl") {
        plugins.push("pytest-mpl");
    }
    if has("--benchmark-skip") || has("--benchmark-disable") {
        plugins.push("pytest-benchmark");
    }
    if has("--doctest-rst") || has("--doctest-plus") {
        plugins.push("pytest-doctestplus");
    }
    plugins
}

/// The build tools installed before the project (which is built with them, without
/// isolation), dated too: as of the task's date, but at least setuptools 64 (editable
/// installs by PEP 660, August 2022) and a release that knows the runtime. Today's
/// setuptools (71 and later) prefers the environment's own `packaging` to its vendored
/// one, and a dated `packaging` breaks it ("canonicalize_version() got an unexpected
/// keyword argument 'strip_trailing_zero'", flask of 2021). setuptools 82 removed
/// `pkg_resources`, which the test suites of many projects of their time import.
pub fn pre_install_tools(date: DateTime<Utc>, runtime: &str) -> String {
    let cutoff = build_tools_cutoff(date, runtime);
    let flag = shell_quote(&format!("setuptools={cutoff}T00:00:00Z"));
    format!("{PRE_INSTALL_TOOLS_PREFIX}{flag} {PRE_INSTALL_TOOLS}")
}

/// The date the build tools are taken as of: the task's, but not before setuptools 64
/// (editable installs by PEP 660) nor before the runtime.
pub fn build_tools_cutoff(date: DateTime<Utc>, runtime: &str) -> NaiveDate {
    let editable = NaiveDate::from_ymd_opt(2022, 9, 1).expect("a valid date");
    [Some(date.date_naive()), Some(editable), runtime_released(runtime)].into_iter().flatten().max().unwrap_or(editable)
}

/// How [`pre_install_tools`]' command begins (the ladder redates it for another runtime).
pub const PRE_INSTALL_TOOLS_PREFIX: &str = "uv pip install --upgrade --exclude-newer-package ";

/// Proposes an environment for a repository whose packaging files are `files`, as of
/// `date`, given the runtimes that have a base image.
pub fn infer(files: &RepoFiles, date: DateTime<Utc>, available: &[String]) -> Result<EnvironmentSpec, InferError> {
    let facts = facts(files);
    if !facts.installable && facts.requirement_files.is_empty() {
        return Err(NOT_A_PYTHON_PROJECT);
    }
    let runtime = choose_runtime(&facts, date, available)?;

    let mut pre_install = vec![pre_install_tools(date, &runtime)];
    let build_requires: Vec<String> = facts
        .build_requires
        .iter()
        .filter(|requirement| {
            named_requirement(requirement).is_none_or(|(name, _)| !matches!(name.as_str(), "setuptools" | "wheel"))
        })
        .map(|requirement| shell_quote(requirement))
        .collect();
    if !build_requires.is_empty() {
        pre_install.push(format!("uv pip install {}", build_requires.join(" ")));
    }

    // Extras: the test ones and `dev` (which often adds what the tests import, e.g.
    // marshmallow 2's `simplejson`); the ladder below drops `dev` when it does not resolve.
    let named = |names: &[&str]| -> Vec<String> {
        facts.extras.iter().filter(|extra| names.contains(&extra.to_lowercase().as_str())).cloned().collect()
    };
    let test_extras = named(&["test", "tests", "testing"]);
    let dev_extras = named(&["dev", "develop"]);
    // The project by its name when that is known (`-e 'name[test] @ .'`), so that uv
    // can build only the project without isolation (its build tools are the
    // pre-install's) and every dependency from source in isolation, with build tools
    // of the date: today's setuptools-scm in a dependency's build reports `0.0.0`.
    let name = facts.name.as_deref().filter(|_| facts.installable);
    let with_extras = |extras: &[String]| {
        let extras = if extras.is_empty() { String::new() } else { format!("[{}]", extras.join(",")) };
        match name {
            _ if !facts.installable => String::new(),
            Some(name) => format!(" -e {}", shell_quote(&format!("{name}{extras} @ ."))),
            None if extras.is_empty() => " -e .".to_string(),
            None => format!(" -e {}", shell_quote(&format!(".{extras}"))),
        }
    };
    let isolation = match name {
        Some(name) => format!(" --no-build-isolation-package {}", shell_quote(name)),
        None => " --no-build-isolation".to_string(),
    };
    // setuptools' editable installs through an import hook leave /testbed off
    // `sys.path`; `compat` puts it there, as `setup.py develop` did (projects that
    // find their own modules by path need it).
    let compat = match name {
        _ if !facts.installable || !facts.built_by_setuptools() => String::new(),
        Some(name) => format!(" --config-settings-package {}", shell_quote(&format!("{name}:editable_mode=compat"))),
        None => " -C editable_mode=compat".to_string(),
    };
    let flags = format!("{isolation}{compat}");
    let all_extras: Vec<String> = test_extras.iter().chain(&dev_extras).cloned().collect();
    let extras_project = with_extras(&all_extras);
    let test_project = with_extras(&test_extras);
    let project = with_extras(&[]);
    let mut requirements = String::new();
    for file in &facts.requirement_files {
        requirements.push_str(&format!(" -r {}", shell_quote(file)));
    }
    let mut tools = String::from(" pytest");
    for plugin in plugins_for(&facts.addopts) {
        tools.push(' ');
        tools.push_str(plugin);
    }
    // setuptools-scm's pretended version (there is no `.git` in /testbed) for the
    // project only, when setuptools builds it (hatch-vcs and others read only the
    // global variable): the global one reaches every dependency built from source.
    let scoped_pretend = name.filter(|_| facts.built_by_setuptools()).map(pretend_variable);
    // A ladder: the first rung that resolves wins, and the build log says which
    // (test requirement files often pin what no longer resolves, or was yanked). The
    // last rung installs the project as before names and isolation per package (a
    // name read wrong, a dependency whose build refuses `editable_mode`).
    let fallback_pretend = match &scoped_pretend {
        Some(variable) => format!("SETUPTOOLS_SCM_PRETEND_VERSION=\"${variable}\" "),
        None => String::new(),
    };
    let fallback_project = if facts.installable { " -e ." } else { "" };
    // The second rung builds the project in isolation with its own declared build
    // tools: a test requirement may pin an old setuptools into the environment
    // (pylint's `setuptools==41.6.0`), which the build without isolation would use.
    let isolated = if requirements.is_empty() || !facts.installable {
        String::new()
    } else {
        format!("uv pip install{compat}{extras_project}{requirements}{tools}")
    };
    let mut rungs: Vec<String> = Vec::new();
    let candidates = [
        format!("uv pip install{flags}{extras_project}{requirements}{tools}"),
        isolated.clone(),
        format!("uv pip install{flags}{extras_project}{tools}"),
        format!("uv pip install{flags}{test_project}{requirements}{tools}"),
        format!("uv pip install{flags}{test_project}{tools}"),
        format!("uv pip install{flags}{project}{tools}"),
        format!("{fallback_pretend}uv pip install --no-build-isolation{fallback_project}{tools}"),
    ];
    for rung in candidates {
        if !rung.is_empty() && !rungs.contains(&rung) && (facts.installable || rung.contains(" -r ")) {
            rungs.push(rung);
        }
    }
    // The isolated rung installs what the first does: when the first's requirements
    // do not resolve (a pin yanked or never published), it cannot resolve them either,
    // and its isolated build of the project costs seconds for nothing. The first
    // rung's output is kept to tell.
    let tell_resolution = rungs.contains(&isolated);
    let ladder = rungs
        .iter()
        .enumerate()
        .map(|(index, rung)| {
            let number = index + 1;
            if index == 0 && tell_resolution {
                format!("{{ {rung} 2>{FIRST_RUNG_LOG}; status=$?; cat {FIRST_RUNG_LOG} >&2; [ $status = 0 ]; }}")
            } else if index == 0 {
                format!("{{ {rung}; }}")
            } else if *rung == isolated {
                format!(
                    "{{ if grep -qs '{UNRESOLVED}' {FIRST_RUNG_LOG}; then echo 'swe-harvest: install rung {number} \
                     skipped: the requirements of rung 1 do not resolve'; false; else echo 'swe-harvest: install rung \
                     {number}'; {rung}; fi; }}"
                )
            } else {
                format!("{{ echo 'swe-harvest: install rung {number}'; {rung}; }}")
            }
        })
        .collect::<Vec<_>>()
        .join(" || ");
    let mut install = Vec::new();
    if let Some(variable) = &scoped_pretend {
        install.push(format!(
            "export {variable}=\"${{SETUPTOOLS_SCM_PRETEND_VERSION:-0.0.0}}\"; unset SETUPTOOLS_SCM_PRETEND_VERSION"
        ));
    }
    install.push(ladder);
    if tell_resolution {
        install.push(format!("rm -f {FIRST_RUNG_LOG}"));
    }
    let optional: Vec<String> = facts.optional.values().cloned().collect();
    if !optional.is_empty() {
        install.push(optional_install(&optional));
        let names: Vec<String> = facts.optional.keys().cloned().collect();
        install.push(remove_optional_that_break_on_import(&names));
    }

    let evidence = &facts.ci;
    let mut decisions = Vec::new();
    let from_ci = minor(&runtime).filter(|version| facts.ci_declared.contains(version)).and_then(|version| {
        evidence.versions(Language::Python, false).into_iter().find(|(named, _)| minor(named) == Some(version))
    });
    if let Some((_, found)) = from_ci {
        decisions.push(format!("runtime {runtime}: among the versions CI sets up ({} in {})", found.how, found.origin));
    }
    let mut test_command = DEFAULT_TEST_COMMAND.to_string();
    let (options, said) = pytest_options_of_ci(evidence);
    for option in &options {
        test_command.push(' ');
        test_command.push_str(option);
    }
    if !options.is_empty() {
        decisions.push(format!("{PYTEST_OPTIONS_FROM_CI} `{}` from CI's test command ({said})", options.join(" ")));
    }
    let mut spec = EnvironmentSpec {
        ecosystem: "python".to_string(),
        runtime,
        system_packages: Vec::new(),
        pre_install,
        install,
        extra_packages: Vec::new(),
        test_command,
        test_path_patterns: Vec::new(),
        source: "inferred".to_string(),
        rung: Default::default(),
        ci: Vec::new(),
    };
    evidence.record(&mut spec, decisions);
    Ok(spec)
}

/// How the record of [`pytest_options_of_ci`]'s options begins (the other Python
/// frameworks' specs leave it out: their test command is their own).
pub const PYTEST_OPTIONS_FROM_CI: &str = "pytest options";

/// The options of CI's pytest commands that the test command takes too (decision: what
/// changes which tests can run or how they import, never what selects files or
/// reports): `-p no:NAME` (a plugin turned off), `--import-mode`, `--asyncio-mode`,
/// and a project's own switches of skipped tests (`--runslow`, `--run-network`), each
/// once, with where they were found. Plugins turned on (`-p NAME`) are not taken: they
/// may not be installed.
pub fn pytest_options_of_ci(evidence: &CiEvidence) -> (Vec<String>, String) {
    let mut options: Vec<String> = Vec::new();
    let mut origins: BTreeSet<String> = BTreeSet::new();
    let default: Vec<&str> = DEFAULT_TEST_COMMAND.split_whitespace().collect();
    let switch = regex::Regex::new(r"^--run[-_]?[a-z][a-z0-9_-]*$").expect("valid regex");
    for (words, step) in evidence.runner_commands(ci::shell::Runner::Pytest) {
        let mut index = 0;
        while index < words.len() {
            let word = words[index].as_str();
            index += 1;
            let next = words.get(index).map(String::as_str).unwrap_or_default();
            let option = if word == "-p" && next.starts_with("no:") {
                index += 1;
                Some(format!("-p {next}"))
            } else if let Some(plugin) = word.strip_prefix("-p").filter(|plugin| plugin.starts_with("no:")) {
                Some(format!("-p {plugin}"))
            } else if ["--import-mode=", "--asyncio-mode="].iter().any(|prefix| word.starts_with(prefix)) {
                Some(word.to_string())
            } else if matches!(word, "--import-mode" | "--asyncio-mode") && !next.is_empty() {
                index += 1;
                Some(format!("{word}={next}"))
            } else if switch.is_match(word) {
                Some(word.to_string())
            } else {
                None
            };
            let Some(option) = option else { continue };
            let known = default.windows(2).any(|pair| pair.join(" ") == option) || default.contains(&option.as_str());
            if !known && !options.contains(&option) {
                options.push(option);
                origins.insert(step.origin.to_string());
            }
        }
    }
    (options, origins.into_iter().collect::<Vec<_>>().join(", "))
}

/// The install step of test dependencies named only in the CI's files: best effort,
/// after the main install and never failing it. All at once; when that fails, one by
/// one, each allowed to fail (`swe-harvest: optional test dependency X skipped`).
/// Each install is constrained to what is installed already, the project itself
/// included (`uv pip list --format freeze` names the editable install by name and
/// version, where `uv pip freeze` gives only its path), so that no optional package
/// moves the environment's own versions, nor replaces the project with a release of
/// it: pvfactors 1.5.2, a test dependency of pvlib 0.8, requires pvlib 0.9, and
/// installed it from PyPI over the editable install (pvlib-python-1154).
///
/// Optional packages come from wheels: of the environment's date first, else the
/// newest that fit what is installed, and only then from source, for at most
/// [`OPTIONAL_BUILD_SECONDS`]. A runtime newer than the date often has no wheel of
/// the date for a package with native code: building it (statsmodels, numba's
/// llvmlite, shapely without GEOS) took minutes or failed after them, twice over
/// (all at once, then alone), for a package that only some tests import.
fn optional_install(requirements: &[String]) -> String {
    let list = requirements.iter().map(|requirement| shell_quote(requirement)).collect::<Vec<_>>().join(" ");
    let constraints = "/tmp/swe-harvest-installed.txt";
    let pin = format!("{{ uv pip list --format freeze > {constraints} || true; }}");
    let wheels = format!("uv pip install --no-build -c {constraints}");
    let prefix = "swe-harvest: optional test dependency $requirement";
    format!(
        "{{ echo 'swe-harvest: optional test dependencies'; {pin}; {wheels} {list} \
         || for requirement in {list}; do {pin}; {wheels} \"$requirement\" \
         || {{ echo \"{prefix}: no wheel of the environment's date; trying newer wheels\"; \
         env -u UV_EXCLUDE_NEWER {wheels} \"$requirement\"; }} \
         || {{ echo \"{prefix}: no wheel fits; building it, for at most {OPTIONAL_BUILD_SECONDS} s\"; \
         timeout {OPTIONAL_BUILD_SECONDS} uv pip install -c {constraints} \"$requirement\"; }} \
         || echo \"{prefix} skipped\"; done; rm -f {constraints}; }}"
    )
}

/// How long an optional test dependency with no wheel may take to build from source:
/// enough for a pure-Python sdist or a small extension (ephem: 7 s), not for a
/// scientific package compiled on a few cores (statsmodels: over 3 minutes).
const OPTIONAL_BUILD_SECONDS: u32 = 60;

/// Removes each optional test dependency whose import raises anything but an
/// `ImportError`: a test's `importorskip` skips a missing module, but a package that
/// raises otherwise (PyPI's `eccodes` without its C library, a placeholder such as
/// PyPI's `iris`) breaks the collection of every test file that tries it.
fn remove_optional_that_break_on_import(names: &[String]) -> String {
    let list = names.iter().map(|name| format!("'{name}'")).collect::<Vec<_>>().join(", ");
    let script = [
        "import importlib, importlib.metadata as metadata, subprocess".to_string(),
        format!("for name in [{list}]:"),
        "    try:".into(),
        "        tops = (metadata.distribution(name).read_text('top_level.txt') or '').split() or [name.replace('-', '_')]".into(),
        "    except Exception:".into(),
        "        continue".into(),
        "    for top in tops:".into(),
        "        try:".into(),
        "            importlib.import_module(top)".into(),
        "        except ImportError:".into(),
        "            pass".into(),
        "        except BaseException as error:".into(),
        "            print('swe-harvest: optional test dependency', name, 'removed: importing', top, 'raises', repr(error)[:200])".into(),
        "            subprocess.run(['uv', 'pip', 'uninstall', name])".into(),
        "            break".into(),
    ];
    let file = "/tmp/swe-harvest-optional-check.py";
    let lines = script.iter().map(|line| shell_quote(line)).collect::<Vec<_>>().join(" ");
    format!("{{ printf '%s\\n' {lines} > {file}; python {file} || true; rm -f {file}; }}")
}

fn choose_runtime(facts: &Facts, date: DateTime<Utc>, available: &[String]) -> Result<String, InferError> {
    let mut runtimes: Vec<(u32, u32, &String)> =
        available.iter().filter_map(|runtime| minor(runtime).map(|(major, minor)| (major, minor, runtime))).collect();
    runtimes.sort();
    let requires = facts.requires_python.as_deref().unwrap_or_default();
    let allowed: Vec<&(u32, u32, &String)> =
        runtimes.iter().filter(|(_, _, runtime)| requires_python_allows(requires, runtime)).collect();
    if allowed.is_empty() {
        // `requires-python` admits no runtime with an image: the task is tried on the
        // one nearest to what it admits, and dropped as `runtime_unavailable` when it
        // fails there ([`runtime_needed`] says which runtime it needs).
        let versions: Vec<(u32, u32)> = runtimes.iter().map(|(major, minor, _)| (*major, *minor)).collect();
        let nearest = nearest_admitted(requires, &versions).and_then(minor).and_then(|wanted| {
            runtimes.iter().min_by_key(|(major, minor, _)| (distance(wanted, (*major, *minor)), (*major, *minor)))
        });
        return nearest.map(|(_, _, runtime)| runtime.to_string()).ok_or_else(|| InferError::NoRuntime {
            language: "Python",
            requires: requires.to_string(),
            available: available.join(", "),
        });
    }
    let released = |runtime: &String| released_by(runtime, date);
    let declared_and_released =
        allowed.iter().rfind(|(major, minor, runtime)| facts.declared.contains(&(*major, *minor)) && released(runtime));
    // Nothing declared: the oldest runtime still supported then (old enough for the
    // dependencies of the date, new enough that they still ship for it); else the newest
    // released one; else, before every runtime here, the oldest.
    let supported = |runtime: &String| released(runtime) && !end_of_life_by(runtime, date);
    let pick = declared_and_released
        .or_else(|| allowed.iter().find(|(_, _, runtime)| supported(runtime)))
        .or_else(|| allowed.iter().rfind(|(_, _, runtime)| released(runtime)))
        .or_else(|| allowed.first());
    Ok(pick.map(|(_, _, runtime)| runtime.to_string()).expect("allowed is not empty"))
}

/// The runtime a project needs when no runtime of `available` is one it can have:
/// - its `requires-python` admits none of them: the admitted runtime nearest to them
///   (`>=3.5, <3.9` with 3.9 and newer: 3.8);
/// - every one it admits came out after the environment's date (its dependencies of
///   that date may have no release for them): the newest runtime released by then that
///   it admits, a declared one first (a project of 2019 wants 3.8 rather than 3.9).
///
/// `None` when a runtime of `available` fits.
pub fn runtime_needed(files: &RepoFiles, date: DateTime<Utc>, available: &[String]) -> Option<RuntimeNeed> {
    let facts = facts(files);
    let requires = facts.requires_python.as_deref().unwrap_or_default();
    let versions: Vec<(u32, u32)> = available.iter().filter_map(|runtime| minor(runtime)).collect();
    if versions.is_empty() {
        return None;
    }
    let admitted = |runtime: &str| requires_python_allows(requires, runtime);
    if !available.iter().any(|runtime| minor(runtime).is_some() && admitted(runtime)) {
        let runtime = nearest_admitted(requires, &versions).map_or_else(|| requires.to_string(), String::from);
        return Some(RuntimeNeed { runtime, why: format!("requires-python `{requires}`") });
    }
    let chosen = choose_runtime(&facts, date, available).ok()?;
    if released_by(&chosen, date) {
        return None;
    }
    let of_the_date = |declared_only: bool| {
        RELEASES.iter().rev().map(|(runtime, _)| *runtime).find(|runtime| {
            admitted(runtime)
                && released_by(runtime, date)
                && (!declared_only || minor(runtime).is_some_and(|version| facts.declared.contains(&version)))
        })
    };
    let runtime = of_the_date(true).or_else(|| of_the_date(false))?;
    let released = runtime_released(&chosen).map_or_else(String::new, |day| format!(", released on {day}"));
    Some(RuntimeNeed {
        runtime: runtime.to_string(),
        why: format!(
            "a runtime of the environment's date, {}: the oldest runtime with an image that the project allows is {chosen}{released}",
            date.date_naive()
        ),
    })
}

/// The runtimes among `available` that the project allows (`requires-python`),
/// oldest first: the environment ladder's neighbouring runtimes come from these.
pub fn allowed_runtimes(files: &RepoFiles, available: &[String]) -> Vec<String> {
    let facts = facts(files);
    let mut runtimes: Vec<((u32, u32), &String)> =
        available.iter().filter_map(|runtime| minor(runtime).map(|version| (version, runtime))).collect();
    runtimes.sort();
    runtimes
        .into_iter()
        .filter(|(_, runtime)| {
            facts.requires_python.as_deref().is_none_or(|requires| requires_python_allows(requires, runtime))
        })
        .map(|(_, runtime)| runtime.clone())
        .collect()
}

/// When a runtime's first final release came out, if known.
pub fn runtime_released(runtime: &str) -> Option<NaiveDate> {
    RELEASES
        .iter()
        .find(|(version, _)| *version == runtime)
        .and_then(|(_, (year, month, day))| NaiveDate::from_ymd_opt(*year, *month, *day))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn files(entries: &[(&str, &str)]) -> RepoFiles {
        entries.iter().map(|(path, text)| (path.to_string(), text.to_string())).collect()
    }

    fn date(year: i32, month: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(year, month, 1, 0, 0, 0).unwrap()
    }

    fn available() -> Vec<String> {
        vec!["3.9".into(), "3.11".into(), "3.13".into()]
    }

    #[test]
    fn requires_python_specifiers() {
        assert!(requires_python_allows(">=3.6", "3.9"));
        assert!(!requires_python_allows(">=3.10", "3.9"));
        assert!(requires_python_allows(">=3.6, <3.10", "3.9"));
        assert!(!requires_python_allows(">=3.6,<3.10", "3.11"));
        assert!(requires_python_allows(">=2.7, !=3.0.*, !=3.1.*", "3.11"));
        assert!(!requires_python_allows("!=3.9.*", "3.9"));
        assert!(requires_python_allows("~=3.8", "3.13"));
        assert!(!requires_python_allows("==3.8.*", "3.9"));
        assert!(requires_python_allows(">=3.9.2", "3.9"), "a patch-level bound is met by later patches");
        assert!(requires_python_allows("<3.11.4", "3.11"));
        assert!(requires_python_allows("", "3.11"));
        // `~=3.6.1` is `>=3.6.1, ==3.6.*`: 3.6 only.
        assert!(requires_python_allows("~=3.6.1", "3.6"));
        assert!(!requires_python_allows("~=3.6.1", "3.7"));
        assert!(requires_python_allows(">3.8", "3.8"), "3.8.1 is after 3.8 (PEP 440)");
        assert!(requires_python_allows(">= 3.6 , < 4", "3.13"), "spaces around clauses");
        assert!(requires_python_allows(">=3.6.*", "3.9"), "not PEP 440: every runtime");
    }

    #[test]
    fn runtime_is_the_newest_declared_one_released_by_the_date() {
        let setup = files(&[(
            "setup.py",
            "setup(name='x', classifiers=['Programming Language :: Python :: 3.9', \
             'Programming Language :: Python :: 3.10', 'Programming Language :: Python :: 3.11'])",
        )]);
        // In mid-2021, 3.11 did not exist yet.
        assert_eq!(infer(&setup, date(2021, 6), &available()).unwrap().runtime, "3.9");
        assert_eq!(infer(&setup, date(2023, 6), &available()).unwrap().runtime, "3.11");
        // 3.13 is available but the project never declared it.
        assert_eq!(infer(&setup, date(2025, 6), &available()).unwrap().runtime, "3.11");
    }

    #[test]
    fn runtime_comes_from_tox_and_ci_when_there_are_no_classifiers() {
        let tox = files(&[("setup.py", "setup(name='x')"), ("tox.ini", "[tox]\nenvlist = py37, py38, py311, lint\n")]);
        assert_eq!(infer(&tox, date(2024, 1), &available()).unwrap().runtime, "3.11");
        let ci = files(&[
            ("setup.py", "setup(name='x')"),
            (
                ".github/workflows/ci.yml",
                "jobs:\n  test:\n    strategy:\n      matrix:\n        python-version: [\"3.8\", \"3.9\", \"3.13\"]\n",
            ),
        ]);
        assert_eq!(infer(&ci, date(2025, 1), &available()).unwrap().runtime, "3.13");
    }

    /// CI evidence in Python: the versions a workflow's matrix tests are declared
    /// (the newest available one wins), and its pytest command's `-p no:` and
    /// `--runslow` options join the test command; the spec says both came from CI.
    #[test]
    fn ci_evidence_chooses_the_runtime_and_adds_the_options_of_its_pytest_command() {
        let workflow = "jobs:\n  test:\n    strategy:\n      matrix:\n        py: ['3.9', '3.11']\n    steps:\n      \
                        - uses: actions/setup-python@v5\n        with:\n          python-version: ${{ matrix.py }}\n      \
                        - run: python -m pytest -p no:randomly --runslow -x tests\n";
        let plain = files(&[("setup.py", "setup(name='x')")]);
        let with_ci = files(&[("setup.py", "setup(name='x')"), (".github/workflows/test.yml", workflow)]);
        let without = infer(&plain, date(2024, 1), &available()).unwrap();
        let spec = infer(&with_ci, date(2024, 1), &available()).unwrap();
        assert_eq!(without.runtime, "3.9", "nothing declared: the oldest supported");
        assert_eq!(spec.runtime, "3.11");
        assert_eq!(without.test_command, DEFAULT_TEST_COMMAND);
        assert_eq!(spec.test_command, format!("{DEFAULT_TEST_COMMAND} -p no:randomly --runslow"));
        assert!(without.ci.is_empty());
        assert_eq!(
            spec.ci,
            vec![
                "runtime 3.11: among the versions CI sets up (`actions/setup-python` in `.github/workflows/test.yml` job `test`)",
                "pytest options `-p no:randomly --runslow` from CI's test command (`.github/workflows/test.yml` job `test`)",
            ]
        );
        // The other frameworks keep the runtime's record, not pytest's options.
        let unittest =
            crate::ecosystem::by_name("python-unittest").unwrap().infer(&with_ci, date(2024, 1), &available()).unwrap();
        assert_eq!(unittest.ci.len(), 1, "{:?}", unittest.ci);
    }

    #[test]
    fn runtime_without_declarations_follows_requires_python_and_the_date() {
        let old = files(&[("setup.py", "setup(name='x', python_requires='>=2.7')")]);
        // Nothing declared: the oldest available runtime released by then.
        assert_eq!(infer(&old, date(2019, 8), &available()).unwrap().runtime, "3.9", "nothing released: oldest");
        let every: Vec<String> = ["3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13"].map(String::from).to_vec();
        assert_eq!(infer(&old, date(2019, 8), &every).unwrap().runtime, "3.7", "the oldest released by then");
        assert_eq!(infer(&old, date(2018, 1), &every).unwrap().runtime, "3.7", "nothing released yet: oldest");
        // 3.7's support ended in June 2023, 3.8's in October 2024.
        assert_eq!(infer(&old, date(2023, 8), &every).unwrap().runtime, "3.8", "the oldest still supported");
        assert_eq!(infer(&old, date(2025, 1), &every).unwrap().runtime, "3.9");
        let only_old: Vec<String> = vec!["3.7".into(), "3.8".into()];
        assert_eq!(infer(&old, date(2026, 1), &only_old).unwrap().runtime, "3.8", "none supported: newest released");
        let modern = files(&[("pyproject.toml", "[project]\nname='x'\nrequires-python='>=3.10'\n")]);
        assert_eq!(infer(&modern, date(2024, 1), &available()).unwrap().runtime, "3.11");
        // Nothing here is allowed: the nearest runtime there is (the task is tried there).
        let too_old = files(&[("pyproject.toml", "[project]\nname='x'\nrequires-python='<3.8'\n")]);
        assert_eq!(infer(&too_old, date(2020, 1), &available()).unwrap().runtime, "3.9");
        let too_new = files(&[("pyproject.toml", "[project]\nname='x'\nrequires-python='>=3.14'\n")]);
        assert_eq!(infer(&too_new, date(2026, 1), &available()).unwrap().runtime, "3.13");
        let between = files(&[("pyproject.toml", "[project]\nname='x'\nrequires-python='==3.10.*'\n")]);
        assert_eq!(infer(&between, date(2022, 1), &available()).unwrap().runtime, "3.9", "ties: the older");
        // No runtime known at all fits: no runtime.
        let impossible = files(&[("pyproject.toml", "[project]\nname='x'\nrequires-python='<3'\n")]);
        let error = infer(&impossible, date(2020, 1), &available()).unwrap_err();
        assert!(matches!(error, InferError::NoRuntime { .. }), "{error}");
        assert!(error.to_string().contains("<3"));
    }

    #[test]
    fn a_runtime_no_image_provides_is_named_with_its_reason() {
        let need = |text: &str, when: DateTime<Utc>| {
            runtime_needed(&files(&[("pyproject.toml", text)]), when, &available()).map(|need| need.runtime)
        };
        // requires-python admits no runtime with an image: the nearest it admits.
        let old = "[project]\nname='x'\nrequires-python='>=3.5, <3.9'\n";
        assert_eq!(need(old, date(2019, 11)).as_deref(), Some("3.8"));
        let needed = runtime_needed(&files(&[("pyproject.toml", old)]), date(2024, 1), &available()).unwrap();
        assert!(needed.why.contains("requires-python `>=3.5, <3.9`"), "{needed}");
        let new = "[project]\nname='x'\nrequires-python='>=3.14'\n";
        assert_eq!(need(new, date(2026, 1)).as_deref(), Some("3.14"));
        // Every runtime here came out after the date: the newest of the date, a declared one first.
        let undeclared = "[project]\nname='x'\n";
        assert_eq!(need(undeclared, date(2019, 11)).as_deref(), Some("3.8"));
        let declared = "[project]\nname='x'\nclassifiers=['Programming Language :: Python :: 3.7']\n";
        let needed = runtime_needed(&files(&[("pyproject.toml", declared)]), date(2019, 11), &available()).unwrap();
        assert_eq!(needed.runtime, "3.7");
        assert!(needed.why.contains("2019-11-01") && needed.why.contains("3.9, released on 2020-10-05"), "{needed}");
        // A runtime here fits: nothing is needed.
        assert_eq!(need(undeclared, date(2021, 1)), None);
        let modern = "[project]\nname='x'\nrequires-python='>=3.9'\n";
        assert_eq!(need(modern, date(2019, 11)), None, "the project admits no runtime of its date");
    }

    #[test]
    fn install_uses_test_extras_test_requirements_and_addopts_plugins() {
        let repo = files(&[
            ("setup.py", "setup(name='x', extras_require={'docs': ['sphinx'], \"tests\": ['pytest', 'mock']})"),
            ("requirements/tests.txt", "pytest\n"),
            ("requirements/docs.txt", "sphinx\n"),
            ("requirements.txt", "numpy\n"),
            ("setup.cfg", "[tool:pytest]\naddopts = --cov=x\n    -n 2\n"),
        ]);
        let spec = infer(&repo, date(2022, 3), &available()).unwrap();
        let flags = "--no-build-isolation-package x --config-settings-package x:editable_mode=compat";
        assert_eq!(
            spec.install,
            vec![
                "export SETUPTOOLS_SCM_PRETEND_VERSION_FOR_X=\"${SETUPTOOLS_SCM_PRETEND_VERSION:-0.0.0}\"; \
                 unset SETUPTOOLS_SCM_PRETEND_VERSION"
                    .to_string(),
                format!(
                    "{{ uv pip install {flags} -e 'x[tests] @ .' -r requirements/tests.txt -r requirements.txt pytest \
                     pytest-cov pytest-xdist 2>{FIRST_RUNG_LOG}; status=$?; cat {FIRST_RUNG_LOG} >&2; [ $status = 0 ]; }} \
                     || {{ if grep -qs '{UNRESOLVED}' {FIRST_RUNG_LOG}; then echo 'swe-harvest: install rung 2 skipped: \
                     the requirements of rung 1 do not resolve'; false; else echo 'swe-harvest: install rung 2'; \
                     uv pip install --config-settings-package x:editable_mode=compat \
                     -e 'x[tests] @ .' -r requirements/tests.txt -r requirements.txt pytest pytest-cov pytest-xdist; fi; }} \
                     || {{ echo 'swe-harvest: install rung 3'; uv pip install {flags} -e 'x[tests] @ .' pytest pytest-cov pytest-xdist; }} \
                     || {{ echo 'swe-harvest: install rung 4'; uv pip install {flags} -e 'x @ .' pytest pytest-cov pytest-xdist; }} \
                     || {{ echo 'swe-harvest: install rung 5'; SETUPTOOLS_SCM_PRETEND_VERSION=\"$SETUPTOOLS_SCM_PRETEND_VERSION_FOR_X\" \
                     uv pip install --no-build-isolation -e . pytest pytest-cov pytest-xdist; }}"
                ),
                format!("rm -f {FIRST_RUNG_LOG}"),
            ]
        );
        assert_eq!(
            spec.pre_install,
            vec![format!(
                "uv pip install --upgrade --exclude-newer-package setuptools=2022-09-01T00:00:00Z {PRE_INSTALL_TOOLS}"
            )]
        );
        assert_eq!(spec.test_command, DEFAULT_TEST_COMMAND);
        assert_eq!(spec.source, "inferred");
    }

    #[test]
    fn build_backend_requirements_are_preinstalled_without_setuptools_twice() {
        let repo = files(&[(
            "pyproject.toml",
            "[build-system]\nrequires = [\"setuptools>=45\", \"setuptools_scm[toml]>=6.2\"]\n\n[project]\nname = 'x'\n\
             [project.optional-dependencies]\ntest = ['pytest']\ndev = ['black']\n",
        )]);
        let spec = infer(&repo, date(2023, 1), &available()).unwrap();
        assert_eq!(spec.pre_install[1], "uv pip install 'setuptools_scm[toml]>=6.2'");
        assert!(spec.install[1].contains("-e 'x[test] @ .'"), "{:?}", spec.install);
    }

    #[test]
    fn build_tools_are_dated_but_build_editable_projects_and_know_the_runtime() {
        let cutoff = |date: DateTime<Utc>, runtime: &str| {
            let command = pre_install_tools(date, runtime);
            command.split("setuptools=").nth(1).unwrap().split('T').next().unwrap().to_string()
        };
        assert_eq!(cutoff(date(2021, 5), "3.9"), "2022-09-01", "setuptools 64 at least");
        assert_eq!(cutoff(date(2025, 3), "3.11"), "2025-03-01", "the task's date");
        assert_eq!(cutoff(date(2021, 5), "3.13"), "2024-10-07", "a setuptools that knows 3.13");
    }

    #[test]
    fn a_repository_without_python_packaging_cannot_be_inferred() {
        let repo = files(&[("tox.ini", "[tox]\nenvlist = py39\n")]);
        assert_eq!(infer(&repo, date(2022, 1), &available()), Err(NOT_A_PYTHON_PROJECT));
        let only_requirements = files(&[("requirements.txt", "flask\n")]);
        let spec = infer(&only_requirements, date(2022, 1), &available()).unwrap();
        assert_eq!(
            spec.install,
            vec!["{ uv pip install --no-build-isolation -r requirements.txt pytest; }".to_string()]
        );
    }

    #[test]
    fn extras_of_a_dict_defined_before_setup_and_no_lint_or_docs_requirements() {
        let repo = files(&[
            (
                "setup.py",
                "EXTRAS_REQUIRE = {\n    \"tests\": [\"pytest\"],\n    \"lint\": [\"flake8\"],\n}\n\
                 EXTRAS_REQUIRE['dev'] = EXTRAS_REQUIRE['tests'] + ['simplejson']\n\
                 setup(name='x', extras_require=EXTRAS_REQUIRE)\n",
            ),
            ("requirements_test.txt", "pytest\n"),
            ("requirements_test_pre_commit.txt", "pylint==2.12.2\n"),
            ("requirements-docs.txt", "sphinx\n"),
        ]);
        let spec = infer(&repo, date(2021, 1), &available()).unwrap();
        let first = spec.install[1].split(" || ").next().unwrap();
        let flags = "--no-build-isolation-package x --config-settings-package x:editable_mode=compat";
        assert_eq!(
            first,
            format!(
                "{{ uv pip install {flags} -e 'x[tests,dev] @ .' -r requirements_test.txt pytest \
                 2>{FIRST_RUNG_LOG}; status=$?; cat {FIRST_RUNG_LOG} >&2; [ $status = 0 ]; }}"
            )
        );
        assert!(spec.install[1].contains("-e 'x[tests] @ .' pytest;"), "a rung without dev: {}", spec.install[1]);
    }

    #[test]
    fn wanted_files() {
        for path in
            ["setup.py", "pyproject.toml", "requirements-dev.txt", "requirements/test.txt", ".github/workflows/ci.yaml"]
        {
            assert!(reads(path), "{path}");
        }
        for path in ["environment.yml", "ci/requirements/py39.yml", "ci/deps/actions-38.yaml", "ci/test.yml"] {
            assert!(reads(path), "{path}");
        }
        for path in [
            "src/setup.py",
            "docs/requirements.txt",
            "requirements/sub/x.txt",
            "README.md",
            "ci/requirements/doc.yml",
            "ci/requirements/min-all-deps.yml",
            "docs/environment.yml",
        ] {
            assert!(!reads(path), "{path}");
        }
    }

    #[test]
    fn a_build_requirement_with_a_newline_never_reaches_the_dockerfile() {
        let repo = files(&[(
            "pyproject.toml",
            "[build-system]\nrequires = [\"setuptools\", \"flit_core\\nRUN curl evil\", \"hatchling\"]\n[project]\nname = \"x\"\n",
        )]);
        let spec = infer(&repo, date(2024, 1), &available()).unwrap();
        let text = spec.pre_install.join("\n");
        assert!(text.contains("hatchling"), "{text}");
        assert!(!text.contains("evil"), "{text}");
        assert!(spec.pre_install.iter().all(|line| !line.contains('\n')), "{:?}", spec.pre_install);
    }
    #[test]
    fn the_project_name_comes_from_a_literal_only() {
        let name = |entries: &[(&str, &str)]| facts(&files(entries)).name;
        assert_eq!(name(&[("pyproject.toml", "[project]\nname = \"my.pkg\"\n")]), Some("my.pkg".into()));
        assert_eq!(name(&[("setup.cfg", "[metadata]\nname = calc-lib\n")]), Some("calc-lib".into()));
        assert_eq!(name(&[("setup.py", "setup(\n    name='calc',\n    version='1.0')\n")]), Some("calc".into()));
        // A variable, or several literals (an Extension's): unknown.
        assert_eq!(name(&[("setup.py", "setup(name=about['__title__'])\n")]), None);
        assert_eq!(name(&[("setup.py", "setup(name='calc', ext_modules=[Extension(name='calc._speedups')])\n")]), None);
        // pyproject.toml wins over setup.py.
        assert_eq!(
            name(&[("pyproject.toml", "[project]\nname = \"a\"\n"), ("setup.py", "setup(name='b')\n")]),
            Some("a".into())
        );
        assert_eq!(pretend_variable("My.Pkg_name-x"), "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_MY_PKG_NAME_X");
    }

    #[test]
    fn without_a_name_or_setuptools_the_install_is_as_before() {
        let unnamed = files(&[("setup.py", "setup(name=NAME)\n")]);
        let spec = infer(&unnamed, date(2022, 1), &available()).unwrap();
        assert_eq!(
            spec.install,
            vec![
                "{ uv pip install --no-build-isolation -C editable_mode=compat -e . pytest; } \
                 || { echo 'swe-harvest: install rung 2'; uv pip install --no-build-isolation -e . pytest; }"
                    .to_string()
            ],
            "the global pretended version stays: there is no name to scope it to"
        );
        // hatch-vcs reads only the global variable, and hatchling knows no `editable_mode`.
        let hatch = files(&[(
            "pyproject.toml",
            "[build-system]\nrequires = [\"hatchling\", \"hatch-vcs\"]\nbuild-backend = \"hatchling.build\"\n\
             [project]\nname = \"calc\"\ndynamic = [\"version\"]\n",
        )]);
        let spec = infer(&hatch, date(2024, 1), &available()).unwrap();
        assert_eq!(
            spec.install,
            vec![
                "{ uv pip install --no-build-isolation-package calc -e 'calc @ .' pytest; } \
                 || { echo 'swe-harvest: install rung 2'; uv pip install --no-build-isolation -e . pytest; }"
                    .to_string()
            ]
        );
    }

    #[test]
    fn tox_deps_are_optional_test_dependencies() {
        let tox = "[tox]\nenvlist = py39\n\n[testenv]\ndeps =\n    pytest>=6\n    toolz  # for the pipes\n    \
                   -r{toxinidir}/requirements.txt\n    py27: mock\n    {[base]deps}\n    .[test]\n    \
                   git+https://example.com/x.git\n    setuptools\n    mock; python_version < \"3.3\"\n\n\
                   [testenv:py311]\ndeps = hypothesis\n\n[testenv:docs]\ndeps = sphinx\n";
        let facts = facts(&files(&[("setup.py", "setup(name='x')"), ("tox.ini", tox)]));
        assert_eq!(
            facts.optional.values().cloned().collect::<Vec<_>>(),
            vec!["hypothesis", "mock; python_version < \"3.3\"", "pytest>=6", "toolz"]
        );
    }

    #[test]
    fn conda_environment_files_are_optional_test_dependencies() {
        let environment = "name: test\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.9\n  - pip\n  \
                           - numpy=1.17\n  - conda-forge::pandas>=1.0,<2  # tables\n  - pytables\n  \
                           - scikit-learn >= 0.22\n  - \"h5py\"\n  \
                           - matplotlib-base 3.1*\n  - libnetcdf\n  - scipy=1.4=py39_0\n  - pip:\n      \
                           - toolz>=0.10\n      - -e ..\n      - git+https://example.com/x\n  - bottleneck\n  - iris\n\
                           variables:\n  - not_a_dependency\n";
        let found: Vec<String> =
            conda_dependencies(environment).into_iter().map(|(_, requirement)| requirement).collect();
        assert_eq!(
            found,
            vec![
                "numpy==1.17.*",
                "pandas>=1.0,<2",
                "tables",
                "scikit-learn>=0.22",
                "h5py",
                "matplotlib==3.1.*",
                "scipy==1.4.*",
                "toolz>=0.10",
                "bottleneck",
                "scitools-iris"
            ]
        );
        // Lists at column 0, and the same package pinned differently in two files: the name alone.
        let repo = files(&[
            ("setup.py", "setup(name='x')"),
            ("ci/requirements/py39.yml", "dependencies:\n- dask=2.0\n- bottleneck\n"),
            ("ci/requirements/py311.yml", "dependencies:\n- dask-core=2.1\n"),
            ("ci/requirements/doc.yml", "dependencies:\n- sphinx\n"),
        ]);
        let spec = infer(&repo, date(2021, 1), &available()).unwrap();
        let optional = &spec.install[spec.install.len() - 2];
        assert!(optional.contains(" bottleneck dask || for requirement in bottleneck dask; do"), "{optional}");
        let check = spec.install.last().unwrap();
        assert!(check.contains("for name in ['\\''bottleneck'\\'', '\\''dask'\\'']:"), "{check}");
        assert!(!optional.contains("sphinx"), "{optional}");
        assert!(optional.contains("echo \"swe-harvest: optional test dependency $requirement skipped\""), "{optional}");
        assert_eq!(spec, infer(&repo, date(2021, 1), &available()).unwrap(), "deterministic");
    }
}
