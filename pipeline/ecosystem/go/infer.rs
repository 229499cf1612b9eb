//! A Go project's environment from its `go.mod` (or `go.work`) at the environment
//! commit: the toolchain is the oldest Go among the base images there that is at
//! least the `go` directive (the language version the module declares), else the
//! newest there (Go before 1.21 builds a newer directive's code when it can;
//! `GOTOOLCHAIN=local` keeps a newer Go from trying to download another). Runtimes are
//! named `go1.N`, like their base images (`swe-harvest/base:go1.N`).
//!
//! The project's CI (decision, 2026-12-07; [`crate::ecosystem::ci`]): the Go versions
//! its test jobs set up narrow that choice among the toolchains at least the directive
//! ([`ci::narrow`]: a module that declares `go 1.18` but is tested on 1.21 and 1.22
//! gets the oldest toolchain at least 1.21); the build tags of its `go test` commands
//! (`-tags integration`, all of them, once) join the test command, and its test jobs'
//! `CGO_ENABLED`, `GOFLAGS` and `GOEXPERIMENT` are set for it (`env NAME=VALUE go
//! test ...`). `-race` and other flags are not taken: they change no test's verdict.
//!
//! The date plays no part yet (decision): Debian packages two Go releases here, and
//! the directive says which the project needs; modules are pinned by `go.sum`, so
//! there is nothing to time-travel.

use chrono::{DateTime, Utc};

use crate::ecosystem::ci::{self, CiEvidence, Language};
use crate::ecosystem::{InferError, RepoFiles, RuntimeNeed};
use crate::model::EnvironmentSpec;

/// The test command: JSON events (the helper adds the packages), no cached results.
pub const TEST_COMMAND: &str = "go test -json -count=1";

/// Compiles the module's packages and their dependencies into the image's build
/// cache; a package that does not compile at the environment commit is no reason to
/// fail the image.
pub const WARM_BUILD_CACHE: &str = "go build ./... >/dev/null 2>&1 || true";

/// `1.21.3` or `1.19` -> (1, 21).
fn major_minor(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.trim().trim_start_matches("go").split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().map_or(Some(0), |minor| {
        let digits: String = minor.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    })?;
    Some((major, minor))
}

/// The `go` directive of a `go.mod` or `go.work`.
pub fn go_directive(text: &str) -> Option<(u32, u32)> {
    text.lines().find_map(|line| {
        let line = line.split("//").next().unwrap_or_default().trim();
        line.strip_prefix("go ").and_then(major_minor)
    })
}

/// The toolchain for a directive among `runtimes` (`go1.N`, others ignored).
pub fn choose_runtime(directive: Option<(u32, u32)>, runtimes: &[String]) -> Option<String> {
    let mut known: Vec<((u32, u32), &String)> =
        runtimes.iter().filter_map(|runtime| major_minor(runtime.strip_prefix("go")?).map(|v| (v, runtime))).collect();
    known.sort();
    let wanted = directive.unwrap_or((1, 0));
    known.iter().find(|(version, _)| *version >= wanted).or(known.last()).map(|(_, runtime)| (*runtime).clone())
}

/// The Go the module needs when its `go` directive is newer than every toolchain of
/// `runtimes` (Go 1.21 and later refuse to build a newer directive's module, and
/// `GOTOOLCHAIN=local` keeps them from fetching another toolchain): the task is then
/// tried on the newest there is and, lost to its environment, dropped as
/// `runtime_unavailable`, naming it. `None` when a toolchain there meets it.
pub fn runtime_needed(files: &RepoFiles, runtimes: &[String]) -> Option<RuntimeNeed> {
    let (file, text) = ["go.mod", "go.work"].iter().find_map(|file| Some((*file, files.get(*file)?)))?;
    let (major, minor) = go_directive(text)?;
    let newest = runtimes.iter().filter_map(|runtime| major_minor(runtime.strip_prefix("go")?)).max()?;
    (newest < (major, minor)).then(|| RuntimeNeed {
        runtime: format!("go{major}.{minor}"),
        why: format!("{file}'s `go {major}.{minor}` directive"),
    })
}

/// The files inference reads: the module or workspace file.
pub fn reads(path: &str) -> bool {
    matches!(path, "go.mod" | "go.work")
}

pub fn infer(files: &RepoFiles, _date: DateTime<Utc>, runtimes: &[String]) -> Result<EnvironmentSpec, InferError> {
    let manifest = files
        .get("go.mod")
        .or_else(|| files.get("go.work"))
        .ok_or(InferError::NotRecognised { language: "Go", expected: "go.mod or go.work" })?;
    let directive = go_directive(manifest);
    let runtime = choose_runtime(directive, runtimes).ok_or_else(|| {
        let requires = directive.map_or("any".to_string(), |(major, minor)| format!("go {major}.{minor}"));
        InferError::no_runtime("Go", requires, runtimes)
    })?;
    let evidence = CiEvidence::read(files);
    let mut decisions = Vec::new();
    let runtime = ci_runtime(&runtime, directive, runtimes, &evidence, &mut decisions);
    let mut test_command = TEST_COMMAND.to_string();
    if let Some((tags, said)) = ci_build_tags(&evidence) {
        test_command = test_command.replacen("go test", &format!("go test -tags {tags}"), 1);
        decisions.push(format!("build tags `{tags}` from CI's `go test` ({said})"));
    }
    let variables: Vec<&ci::EnvVar> =
        CI_VARIABLES.iter().filter_map(|name| evidence.env_var(name)).filter(|var| !var.value.contains('$')).collect();
    if !variables.is_empty() {
        let assignments: Vec<String> = variables
            .iter()
            .map(|var| crate::sandbox::script::shell_quote(&format!("{}={}", var.name, var.value)))
            .collect();
        test_command = format!("env {} {test_command}", assignments.join(" "));
        decisions.push(format!("`{}` from CI's test job ({})", assignments.join(" "), variables[0].origin));
    }
    let install = vec!["go mod download".into(), WARM_BUILD_CACHE.into()];
    let mut spec = EnvironmentSpec::inferred("go", runtime, install, test_command);
    evidence.record(&mut spec, decisions);
    Ok(spec)
}

/// The variables of CI's test jobs that the test command sets.
const CI_VARIABLES: &[&str] = &["CGO_ENABLED", "GOFLAGS", "GOEXPERIMENT"];

/// The toolchain CI's tested Go versions narrow `usual` to, among those at least the
/// directive (see the module doc); a decision says so when it differs.
fn ci_runtime(
    usual: &str,
    directive: Option<(u32, u32)>,
    runtimes: &[String],
    evidence: &CiEvidence,
    decisions: &mut Vec<String>,
) -> String {
    let mut versions = evidence.tested_versions(Language::Go);
    let parse = |version: &str| major_minor(version.trim_start_matches(['^', '~', '>', '=', 'v']));
    versions.retain(|(version, _)| parse(version).is_some());
    let named: Vec<(u32, u32)> = versions.iter().filter_map(|(version, _)| parse(version)).collect();
    let available: Vec<(u32, u32)> = runtimes
        .iter()
        .filter_map(|runtime| major_minor(runtime.strip_prefix("go")?))
        .filter(|version| directive.is_none_or(|directive| *version >= directive))
        .collect();
    let Some(usual_version) = usual.strip_prefix("go").and_then(major_minor) else { return usual.to_string() };
    let distance = |(a, b): (u32, u32), (c, d): (u32, u32)| u64::from((a * 1000 + b).abs_diff(c * 1000 + d));
    let chosen = ci::narrow(usual_version, &named, &available, distance);
    if chosen == usual_version {
        return usual.to_string();
    }
    let chosen = format!("go{}.{}", chosen.0, chosen.1);
    decisions.push(format!("runtime {chosen}, not {usual}: CI tests Go {}", ci::versions_said(&versions)));
    chosen
}

/// The build tags of CI's `go test` commands, each once, comma-joined, with where.
fn ci_build_tags(evidence: &CiEvidence) -> Option<(String, String)> {
    let mut tags: Vec<String> = Vec::new();
    let mut origins: Vec<String> = Vec::new();
    for (words, step) in evidence.runner_commands(ci::shell::Runner::GoTest) {
        for (index, word) in words.iter().enumerate() {
            let named = match word.as_str() {
                "-tags" | "--tags" => words.get(index + 1).cloned(),
                other => other.strip_prefix("-tags=").or_else(|| other.strip_prefix("--tags=")).map(str::to_string),
            };
            for tag in named.iter().flat_map(|list| list.split([',', ' '])) {
                let valid = !tag.is_empty() && tag.chars().all(|c| c.is_ascii_alphanumeric() || "_.!".contains(c));
                if valid && !tags.iter().any(|known| known == tag) {
                    tags.push(tag.to_string());
                    let origin = step.origin.to_string();
                    if !origins.contains(&origin) {
                        origins.push(origin);
                    }
                }
            }
        }
    }
    (!tags.is_empty()).then(|| (tags.join(","), origins.join(", ")))
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn runtimes() -> Vec<String> {
        vec!["go1.24".into(), "go1.19".into(), "3.11".into()]
    }

    #[test]
    fn the_directive_is_read_past_comments_and_patch_versions() {
        assert_eq!(go_directive("module x\n\ngo 1.16\n"), Some((1, 16)));
        assert_eq!(go_directive("module x\ngo 1.21.3 // pinned\ntoolchain go1.22.0\n"), Some((1, 21)));
        assert_eq!(go_directive("module x\n"), None);
    }

    #[test]
    fn the_oldest_toolchain_that_meets_the_directive_wins_else_the_newest() {
        assert_eq!(choose_runtime(Some((1, 16)), &runtimes()).as_deref(), Some("go1.19"));
        assert_eq!(choose_runtime(Some((1, 19)), &runtimes()).as_deref(), Some("go1.19"));
        assert_eq!(choose_runtime(Some((1, 20)), &runtimes()).as_deref(), Some("go1.24"));
        assert_eq!(choose_runtime(Some((1, 26)), &runtimes()).as_deref(), Some("go1.24"));
        assert_eq!(choose_runtime(None, &runtimes()).as_deref(), Some("go1.19"));
        assert_eq!(choose_runtime(Some((1, 20)), &["3.11".to_string()]), None);
    }

    #[test]
    fn a_directive_newer_than_every_toolchain_there_is_a_runtime_needed() {
        let files = |text: &str| RepoFiles::from([("go.mod".to_string(), text.to_string())]);
        let need = runtime_needed(&files("module x\n\ngo 1.25.0\n"), &runtimes()).expect("no Go 1.25 image");
        assert_eq!(need.runtime, "go1.25");
        assert_eq!(need.why, "go.mod's `go 1.25` directive");
        assert_eq!(runtime_needed(&files("module x\n\ngo 1.24\n"), &runtimes()), None, "go1.24 meets it");
        assert_eq!(runtime_needed(&files("module x\n"), &runtimes()), None, "no directive, no need");
        assert_eq!(runtime_needed(&RepoFiles::new(), &runtimes()), None);
        let workspace = RepoFiles::from([("go.work".to_string(), "go 1.26\n".to_string())]);
        assert_eq!(runtime_needed(&workspace, &runtimes()).unwrap().why, "go.work's `go 1.26` directive");
    }

    /// CI evidence in Go: a module declaring `go 1.18` that CI tests on 1.22 and 1.23
    /// gets go1.24 instead of go1.19; the tags of its `go test` and its test job's
    /// CGO_ENABLED go into the test command; the spec says so.
    #[test]
    fn ci_evidence_chooses_the_toolchain_the_tags_and_cgo() {
        let date = Utc.with_ymd_and_hms(2024, 6, 1, 0, 0, 0).unwrap();
        let workflow = "jobs:\n  test:\n    strategy:\n      matrix:\n        go: ['1.22.x', '1.23.x']\n    env:\n      \
                        CGO_ENABLED: 0\n    steps:\n      - uses: actions/setup-go@v5\n        with:\n          \
                        go-version: ${{ matrix.go }}\n      - run: go test -race -tags integration,sqlite ./...\n      \
                        - run: go test -tags=integration ./cmd/...\n";
        let plain: RepoFiles = [("go.mod".to_string(), "module x\n\ngo 1.18\n".to_string())].into();
        let mut with_ci = plain.clone();
        with_ci.insert(".github/workflows/test.yml".into(), workflow.into());
        let without = infer(&plain, date, &runtimes()).unwrap();
        let spec = infer(&with_ci, date, &runtimes()).unwrap();
        assert_eq!((without.runtime.as_str(), without.test_command.as_str()), ("go1.19", TEST_COMMAND));
        assert_eq!(spec.runtime, "go1.24");
        assert_eq!(spec.test_command, "env CGO_ENABLED=0 go test -tags integration,sqlite -json -count=1");
        assert_eq!(spec.ci.len(), 3, "{:?}", spec.ci);
        assert!(spec.ci[0].starts_with("runtime go1.24, not go1.19: CI tests Go 1.22.x, 1.23.x"), "{:?}", spec.ci);
        // A CI that tests what the directive picks changes nothing.
        let same = workflow.replace("['1.22.x', '1.23.x']", "['1.19']");
        with_ci.insert(".github/workflows/test.yml".into(), same);
        assert_eq!(infer(&with_ci, date, &runtimes()).unwrap().runtime, "go1.19");
    }

    #[test]
    fn inference_needs_go_mod_and_a_go_base_image() {
        let date = Utc.with_ymd_and_hms(2023, 1, 1, 0, 0, 0).unwrap();
        let files: RepoFiles = [("go.mod".to_string(), "module example.com/x\n\ngo 1.20\n".to_string())].into();
        let spec = infer(&files, date, &runtimes()).unwrap();
        assert_eq!((spec.ecosystem.as_str(), spec.runtime.as_str()), ("go", "go1.24"));
        assert_eq!(spec.test_command, TEST_COMMAND);
        let Err(error) = infer(&files, date, &["3.11".to_string()]) else { panic!("no Go image") };
        assert!(error.to_string().contains("go 1.20"), "{error}");
        assert!(matches!(infer(&RepoFiles::new(), date, &runtimes()), Err(InferError::NotRecognised { .. })));
    }
}
