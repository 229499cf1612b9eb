//! Travis CI: the runtime keys (`python:`, `node_js:`, `go:`, `jdk:`, `rust:`), `env:`
//! (a string, a list, or `global:` with `matrix:`/`jobs:`; encrypted entries left
//! out), `services:`, `addons.apt.packages`, and the `before_install`, `install`,
//! `before_script` and `script` phases; each `jobs.include` (or `matrix.include`)
//! entry is a job of its own over the file's keys.

use yaml_rust2::Yaml;

use super::yaml::{entries, get, items, scalar, scalars, script};
use super::{Job, Language, Step, shell};

/// The keys that name a runtime's versions.
const VERSION_KEYS: &[(&str, Language)] = &[
    ("python", Language::Python),
    ("node_js", Language::Node),
    ("go", Language::Go),
    ("jdk", Language::Java),
    ("rust", Language::Rust),
];

/// The phases whose commands are read.
const PHASES: &[&str] = &["before_install", "install", "before_script", "script"];

/// The assignments of a Travis `env` entry (`A=1 B="x y"`).
fn assignments(text: &str) -> Vec<(String, String)> {
    shell::segments(text)
        .into_iter()
        .flatten()
        .filter(|word| shell::is_assignment(word))
        .filter_map(|word| word.split_once('=').map(|(name, value)| (name.to_string(), value.to_string())))
        .collect()
}

/// The variables of an `env:` value: the first value of each name (a matrix's entries
/// are jobs of their own; the first stands for them).
fn env_of(node: &Yaml) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    let mut add = |pairs: Vec<(String, String)>| {
        for (name, value) in pairs {
            if !found.iter().any(|(known, _)| *known == name) {
                found.push((name, value));
            }
        }
    };
    match node {
        Yaml::Hash(_) => {
            for key in ["global", "matrix", "jobs"] {
                for entry in items(get(node, key).unwrap_or(&Yaml::Null)) {
                    add(scalar(entry).map(|text| assignments(&text)).unwrap_or_default());
                }
            }
        }
        other => {
            for entry in items(other) {
                add(scalar(entry).map(|text| assignments(&text)).unwrap_or_default());
            }
        }
    }
    found
}

/// One job from the keys of `layers`, the later layer's keys first.
fn job_of(name: String, layers: &[&Yaml]) -> Job {
    let value = |key: &str| layers.iter().rev().find_map(|layer| get(layer, key));
    let mut job = Job { name, ..Job::default() };
    for (key, language) in VERSION_KEYS {
        for version in value(key).map(scalars).unwrap_or_default() {
            let version = if *language == Language::Java {
                // `openjdk8`, `oraclejdk11`, `openjdk-17`: the number.
                version.chars().filter(char::is_ascii_digit).collect()
            } else {
                version
            };
            job.runtimes.push((*language, version, format!("travis `{key}`")));
        }
    }
    for layer in layers {
        job.env.extend(get(layer, "env").map(env_of).unwrap_or_default());
    }
    for phase in PHASES {
        for command in value(phase).map(script).unwrap_or_default() {
            job.steps.push(Step::of_script(&command, Vec::new()));
        }
    }
    // Travis's documented default `script` of a language, when the file gives none.
    if value("script").is_none() {
        let default = match value("language").and_then(scalar).as_deref() {
            Some("node_js") => Some("npm test"),
            Some("rust") => Some("cargo test --verbose"),
            Some("go") => Some("go test -v ./..."),
            _ => None,
        };
        job.steps.extend(default.map(|command| Step::of_script(command, Vec::new())));
    }
    for service in value("services").map(scalars).unwrap_or_default() {
        job.services.push((service.clone(), service));
    }
    if let Some(apt) = value("addons").and_then(|addons| get(addons, "apt")) {
        job.packages.extend(get(apt, "packages").map(scalars).unwrap_or_default());
    }
    job
}

/// The jobs of a `.travis.yml`: the file's own keys, and each `include` entry over them.
/// A job whose `os:` (its own, else the file's) names only macOS or Windows is not
/// read, as GitHub's jobs for them are not: tasks run on Linux.
pub(super) fn jobs(document: &Yaml, notes: &mut Vec<String>) -> Vec<Job> {
    let off_linux = |layers: &[&Yaml]| {
        let systems = layers.iter().rev().find_map(|layer| get(layer, "os")).map(scalars).unwrap_or_default();
        (!systems.is_empty() && systems.iter().all(|system| matches!(system.as_str(), "osx" | "windows")))
            .then(|| systems.join(", "))
    };
    let mut found = Vec::new();
    match off_linux(&[document]) {
        Some(systems) => notes.push(format!("the file's jobs run on {systems} only, not read")),
        None => found.push(job_of("travis".to_string(), &[document])),
    }
    for key in ["jobs", "matrix"] {
        let Some(matrix) = get(document, key) else { continue };
        for (index, entry) in items(get(matrix, "include").unwrap_or(&Yaml::Null)).into_iter().enumerate() {
            let name = get(entry, "name").and_then(scalar).unwrap_or_else(|| format!("{key}.include[{index}]"));
            if let Some(systems) = off_linux(&[document, entry]) {
                notes.push(format!("job `{name}` runs on {systems} only, not read"));
                continue;
            }
            found.push(job_of(name, &[document, entry]));
        }
    }
    // An empty mapping's job (no key at all) is nothing.
    found.retain(|job| !job.steps.is_empty() || !job.runtimes.is_empty() || entries(document).is_empty());
    found
}
