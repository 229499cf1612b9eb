//! GitHub Actions workflows: each job's `strategy.matrix` (axes and `include:`
//! entries), its container and services, the variables of the workflow, the job and
//! each step, the `run:` scripts, and the set-up actions it knows
//! (`actions/setup-python|node|go|java`, `dtolnay/rust-toolchain`,
//! `actions-rs/toolchain`, `actions-rs/cargo`). `${{ matrix.* }}` and `${{ env.* }}`
//! are resolved; any other expression leaves its value out.

use std::collections::{BTreeMap, BTreeSet};

use yaml_rust2::Yaml;

use super::yaml::{entries, get, items, scalar, scalar_entries, scalars};
use super::{Job, Language, Step, expand};

/// Actions that set up nothing inference reads and run no command of the project's:
/// no note for them.
const QUIET_ACTIONS: &[&str] = &[
    "actions/checkout",
    "actions/cache",
    "actions/upload-artifact",
    "actions/download-artifact",
    "actions/github-script",
    "actions/labeler",
    "actions/stale",
    "actions/setup-dotnet",
    "actions/configure-pages",
    "actions/upload-pages-artifact",
    "actions/deploy-pages",
    "actions/dependency-review-action",
    "actions/attest-build-provenance",
    "actions/create-release",
    "actions/upload-release-asset",
    "codecov/codecov-action",
    "coverallsapp/github-action",
    "Swatinem/rust-cache",
    "taiki-e/install-action",
    "pre-commit/action",
    "github/codeql-action/init",
    "github/codeql-action/analyze",
    "github/codeql-action/autobuild",
    "github/codeql-action/upload-sarif",
    "docker/setup-buildx-action",
    "docker/setup-qemu-action",
    "docker/login-action",
    "docker/build-push-action",
    "docker/metadata-action",
    "pnpm/action-setup",
    "peaceiris/actions-gh-pages",
    "softprops/action-gh-release",
    "pypa/gh-action-pypi-publish",
    "ruby/setup-ruby",
    "Jimver/cuda-toolkit",
    "lukka/get-cmake",
    "jwlawson/actions-setup-cmake",
    "ilammy/msvc-dev-cmd",
    "msys2/setup-msys2",
    "seanmiddleditch/gha-setup-ninja",
    "hendrikmuhs/ccache-action",
    "gradle/wrapper-validation-action",
    "gradle/actions/setup-gradle",
    "gradle/actions/wrapper-validation",
    "EmbarkStudios/cargo-deny-action",
    "rustsec/audit-check",
    "crate-ci/typos",
    "golangci/golangci-lint-action",
    "actions-rs/clippy-check",
    "actions-rs/audit-check",
    "styfle/cancel-workflow-action",
    "dorny/paths-filter",
];

/// The Python set-up actions: they take `python-version`.
const PYTHON_ACTIONS: &[&str] = &[
    "actions/setup-python",
    "conda-incubator/setup-miniconda",
    "astral-sh/setup-uv",
    "pdm-project/setup-pdm",
    "mamba-org/setup-micromamba",
];

/// The jobs of a workflow.
pub(super) fn jobs(document: &Yaml, notes: &mut Vec<String>, unknown_actions: &mut BTreeSet<String>) -> Vec<Job> {
    let workflow_env = scalar_entries(get(document, "env").unwrap_or(&Yaml::Null));
    let mut found = Vec::new();
    for (id, job) in entries(get(document, "jobs").unwrap_or(&Yaml::Null)) {
        if let Some(called) = get(job, "uses").and_then(scalar) {
            notes.push(format!("job `{id}` calls the workflow `{called}`, which is not read"));
            continue;
        }
        let matrix = matrix_axes(job, &id, notes);
        let mut job_env = workflow_env.clone();
        job_env.extend(scalar_entries(get(job, "env").unwrap_or(&Yaml::Null)));
        let scope = Scope { matrix: &matrix, env: &job_env };
        // Tasks run on Linux: a job only for Windows or macOS sets up, builds and tests
        // in ways a Linux container must not copy (simdjson's MinGW options, a test
        // nlohmann/json excludes on Windows only).
        if let Some(systems) = get(job, "runs-on").and_then(|runs_on| runners(runs_on, &scope)) {
            if !systems.is_empty() && systems.iter().all(|system| not_linux(system)) {
                notes.push(format!("job `{id}` runs on {} only, not read", systems.join(", ")));
                continue;
            }
        }
        let mut read = Job { name: id.clone(), ..Job::default() };
        // Variables with expressions are kept only when those resolve to one value.
        read.env = job_env
            .iter()
            .filter_map(|(name, value)| match scope.resolve(value).as_deref() {
                Some([one]) => Some((name.clone(), one.clone())),
                _ => None,
            })
            .collect();
        let container = get(job, "container");
        let image = container.and_then(|container| get(container, "image").or(Some(container))).and_then(scalar);
        if let Some(image) = image {
            read.images.extend(scope.resolve(&image).unwrap_or_default());
        }
        if let Some(container) = container {
            read.env.extend(scalar_entries(get(container, "env").unwrap_or(&Yaml::Null)));
        }
        for (name, service) in entries(get(job, "services").unwrap_or(&Yaml::Null)) {
            let image = get(service, "image").and_then(scalar).or_else(|| scalar(service));
            if let Some(image) =
                image.and_then(|image| scope.resolve(&image)).and_then(|images| images.into_iter().next())
            {
                read.services.push((name, image));
            }
        }
        for step in items(get(job, "steps").unwrap_or(&Yaml::Null)) {
            if get(step, "if").and_then(scalar).is_some_and(|condition| only_off_linux(&condition)) {
                continue;
            }
            let env = scalar_entries(get(step, "env").unwrap_or(&Yaml::Null))
                .into_iter()
                .filter_map(|(name, value)| match scope.resolve(&value).as_deref() {
                    Some([one]) => Some((name, one.clone())),
                    _ => None,
                })
                .collect();
            if let Some(script) = get(step, "run").and_then(scalar) {
                let mut lines = Vec::new();
                for line in super::shell::logical_lines(&script) {
                    match scope.resolve(&line) {
                        Some(resolved) => lines.extend(resolved),
                        None => read.unresolved.push(line),
                    }
                }
                read.steps.push(Step { lines, env });
                continue;
            }
            let Some(uses) = get(step, "uses").and_then(scalar) else { continue };
            let (action, reference) = uses.split_once('@').unwrap_or((uses.as_str(), ""));
            let with = get(step, "with").unwrap_or(&Yaml::Null);
            let input = |name: &str| -> Vec<String> {
                get(with, name)
                    .map(|value| match value {
                        Yaml::Array(_) => scalars(value),
                        other => scalar(other)
                            .map(|text| text.split(['\n', ',']).map(|v| v.trim().to_string()).collect())
                            .unwrap_or_default(),
                    })
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|value| !value.is_empty())
                    .flat_map(|value| scope.resolve(&value).unwrap_or_default())
                    .collect()
            };
            let set_up: Option<(Language, Vec<String>)> = match action {
                action if PYTHON_ACTIONS.contains(&action) => Some((Language::Python, input("python-version"))),
                "actions/setup-node" => Some((Language::Node, input("node-version"))),
                "actions/setup-go" => Some((Language::Go, input("go-version"))),
                "actions/setup-java" => Some((Language::Java, input("java-version"))),
                "dtolnay/rust-toolchain" => {
                    // `@1.70` or `@stable` names the toolchain; `@master` takes `toolchain:`.
                    let with_toolchain = input("toolchain");
                    let named = !matches!(reference, "master" | "main" | "");
                    let versions = if !with_toolchain.is_empty() {
                        with_toolchain
                    } else if named {
                        vec![reference.to_string()]
                    } else {
                        Vec::new()
                    };
                    Some((Language::Rust, versions))
                }
                "actions-rs/toolchain" => Some((Language::Rust, input("toolchain"))),
                "actions-rs/cargo" => {
                    // `with: command: test, args: ...` runs `cargo test ...`.
                    let command = input("command").join(" ");
                    let args = get(with, "args").and_then(scalar).unwrap_or_default();
                    let line = format!("cargo {command} {args}").trim().to_string();
                    match scope.resolve(&line) {
                        Some(lines) => read.steps.push(Step { lines, env }),
                        None => read.unresolved.push(line),
                    }
                    None
                }
                action if action.starts_with("./") => {
                    notes.push(format!("job `{id}` runs the local action `{action}`, which is not read"));
                    None
                }
                action if QUIET_ACTIONS.contains(&action) || action.starts_with("docker://") => None,
                action => {
                    unknown_actions.insert(action.to_string());
                    None
                }
            };
            if let Some((language, versions)) = set_up {
                for version in versions {
                    read.runtimes.push((language, version, format!("`{action}`")));
                }
            }
        }
        // An axis named after a runtime names its versions, used by a step or not (after
        // the set-up steps, which say more of how).
        for (axis, values) in &matrix {
            for value in values.iter().filter_map(scalar) {
                if let Some((language, version)) = Language::of_axis_value(axis, &value) {
                    read.runtimes.push((language, version, format!("matrix axis `{axis}`")));
                }
            }
        }
        // `CC: ${{ matrix.config.cc }}`: each compiler the matrix gives the job (a
        // variable of several values is no variable of the job's, above).
        for (name, value) in job_env.iter().filter(|(name, _)| matches!(name.as_str(), "CC" | "CXX")) {
            for value in scope.resolve(value).unwrap_or_default() {
                if let Some(major) = super::gcc_version(&value, false) {
                    read.runtimes.push((Language::Gcc, major, format!("`{name}`")));
                }
            }
        }
        found.push(read);
    }
    found
}

/// The runners a job's `runs-on` names (a label, a list of labels, or a matrix
/// expression's values); `None` when an expression cannot be resolved.
fn runners(runs_on: &Yaml, scope: &Scope) -> Option<Vec<String>> {
    let labels = match runs_on {
        Yaml::Array(_) => scalars(runs_on),
        other => vec![scalar(other)?],
    };
    let mut systems = Vec::new();
    for label in labels {
        systems.extend(scope.resolve(&label)?);
    }
    Some(systems)
}

/// Whether a runner label is a Windows or macOS one (`windows-latest`, `macos-14`,
/// `macOS-latest`); a self-hosted or unknown label counts as Linux.
fn not_linux(label: &str) -> bool {
    let label = label.to_ascii_lowercase();
    label.starts_with("windows") || label.starts_with("macos")
}

/// Whether a step's `if:` runs it only on Windows or macOS (`runner.os == 'Windows'`,
/// `matrix.os == 'macos-latest'`, `startsWith(matrix.os, 'windows')`).
fn only_off_linux(condition: &str) -> bool {
    let condition = condition.to_ascii_lowercase().replace('"', "'");
    if condition.contains("||") || condition.contains("!=") || condition.contains('!') {
        return false;
    }
    ["'windows", "'macos"].iter().any(|system| condition.contains(system))
}

/// A job's matrix: each axis with its values, `include:` entries' values added to
/// their axes (`exclude:` only narrows, and is not read).
fn matrix_axes(job: &Yaml, id: &str, notes: &mut Vec<String>) -> BTreeMap<String, Vec<Yaml>> {
    let mut axes: BTreeMap<String, Vec<Yaml>> = BTreeMap::new();
    let Some(matrix) = get(job, "strategy").and_then(|strategy| get(strategy, "matrix")) else { return axes };
    if let Some(text) = scalar(matrix) {
        notes.push(format!("job `{id}`'s matrix is the expression `{text}`, which is not resolved"));
        return axes;
    }
    let mut add = |axis: &str, value: &Yaml| {
        let values = axes.entry(axis.to_string()).or_default();
        if !values.contains(value) {
            values.push(value.clone());
        }
    };
    for (axis, values) in entries(matrix) {
        match axis.as_str() {
            "include" => {
                for entry in items(values) {
                    for (axis, value) in entries(entry) {
                        add(&axis, value);
                    }
                }
            }
            "exclude" => {}
            _ => {
                for value in items(values) {
                    add(&axis, value);
                }
            }
        }
    }
    axes
}

/// What expressions can be resolved against: the job's matrix and variables.
struct Scope<'a> {
    matrix: &'a BTreeMap<String, Vec<Yaml>>,
    env: &'a [(String, String)],
}

impl Scope<'_> {
    /// The values of an expression's text (`matrix.python-version`,
    /// `matrix['node']`, `matrix.config.rust`, `env.RUSTFLAGS`); `None` for another.
    fn lookup(&self, expression: &str) -> Option<Vec<String>> {
        if let Some(name) = expression.strip_prefix("env.") {
            return self.env.iter().rev().find(|(known, _)| known == name).map(|(_, value)| vec![value.clone()]);
        }
        let path = expression.strip_prefix("matrix")?;
        let path = path.replace("['", ".").replace("']", "").replace("[\"", ".").replace("\"]", "");
        let mut parts = path.trim_start_matches('.').split('.');
        let axis = parts.next().filter(|axis| !axis.is_empty())?;
        let rest: Vec<&str> = parts.collect();
        if !axis.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return None;
        }
        let values: Vec<String> = self
            .matrix
            .get(axis)?
            .iter()
            .filter_map(|value| rest.iter().try_fold(value, |node, key| get(node, key)).and_then(scalar))
            .collect();
        (!values.is_empty()).then_some(values)
    }

    /// `text` with its expressions resolved, each combination of values once; `None`
    /// when one cannot be.
    fn resolve(&self, text: &str) -> Option<Vec<String>> {
        expand(text, "${{", "}}", &|expression| self.lookup(expression))
    }
}
