//! A Go project's environment from its `go.mod` (or `go.work`) at the environment
//! commit: the toolchain is the oldest Go among the base images there that is at
//! least the `go` directive (the language version the module declares), else the
//! newest there (Go before 1.21 builds a newer directive's code when it can;
//! `GOTOOLCHAIN=local` keeps a newer Go from trying to download another). Runtimes are
//! named `go1.N`, like their base images (`swe-harvest/base:go1.N`).
//!
//! The date plays no part yet (decision): Debian packages two Go releases here, and
//! the directive says which the project needs; modules are pinned by `go.sum`, so
//! there is nothing to time-travel.

use chrono::{DateTime, Utc};

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
    let install = vec!["go mod download".into(), WARM_BUILD_CACHE.into()];
    Ok(EnvironmentSpec::inferred("go", runtime, install, TEST_COMMAND.into()))
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
