//! Rust projects tested with `cargo test`: recognised by a top-level `Cargo.toml`
//! (a package or a workspace), the toolchain chosen among the Rust base images by
//! the project's rust-version, toolchain file and the task's date ([`infer`]), the
//! dependencies resolved, vendored and compiled while the environment image is built
//! ([`image`]), the test targets of the touched files run one `cargo test` each
//! (the helper of [`image`]), libtest's lines read back by [`results`].
//!
//! Test ids (decision): the names libtest prints (`test_get_int`,
//! `bytes_mut::tests::test_original_capacity_to_repr`), with no crate or target,
//! exactly as SWE-bench 5.x's `parse_log_cargo` and Multi-SWE-bench's Rust rows name
//! them, so that published rows compare directly and SWE-bench's harness grades ours.
//! The same name in two targets that one task runs is one id whose status is the
//! worse of the two.
//!
//! Which files are tests (extract's native rule, `extract.test_patterns`): files under
//! `tests/` (integration tests, their shared modules and fixtures) and `benches/`,
//! and `tests.rs` / `test.rs` modules anywhere (rayon's `src/slice/test.rs`: the
//! `#[cfg(test)] mod test;` of a source folder). `examples/` are not (decision: they
//! are programs a fix may have to change, like the library; `cargo test` only builds
//! them). Inline `#[cfg(test)]` modules (decision): a file is split whole, so a
//! source file whose test module a PR changes goes to `patch`, as the source file it
//! is; the task's tests are then the ones of its test files, and a test that the gold
//! patch itself declares is never labelled ([`defined_tests`]: no other fix could
//! pass it). Rows from elsewhere
//! (Multi-SWE-bench puts such files in `test_patch`) are run as they come: a source
//! file in a test patch selects its crate's unit tests.
//!
//! Which tests run: per touched file, a target of the workspace member that holds it
//! (see [`image::CARGO_TEST_HELPER_SCRIPT`]): `tests/NAME.rs` is `--test NAME`, a file
//! of `src/` the library's unit tests (`--lib`), another file under `tests/` every test
//! target of its member; never the whole workspace, never benches, examples or
//! doc-tests. A test patch that touches no `.rs` file runs nothing (its fixtures alone
//! say no Rust test changed), unless it touches an insta snapshot
//! (`src/<folder>/snapshots/*.snap`: the unit tests of that source folder's target).
//!
//! Compile errors: each target runs in its own `cargo test`; a target that does not
//! compile before the gold patch (a new test calling what the fix adds) reports no
//! test, each of its tests is missing from the pre run, which counts as a failure, so
//! its tests that pass after the fix are FAIL_TO_PASS (Multi-SWE-bench's `n2p`). The
//! other targets still run. The compiler's message is in the pre run's log.

pub mod defined_tests;
pub mod image;
pub mod infer;
pub mod missing;
pub mod results;
pub mod runtimes;

use super::{Ecosystem, FailedRung, Interruption, LadderContext, Move, ParsedRun, Parts, Setback};
use crate::git::diff::files_changed_by;
use crate::model::{EnvironmentSpec, Rung};
use crate::sandbox::images::{EnvironmentRequest, ImageSettings};

/// Rust with `cargo test`.
pub struct CargoTest;

/// Whether a changed file of a Rust test patch can select a test target: a `.rs`
/// file outside `benches/` and `examples/` and other than a build script, any file
/// under a `tests/` folder (fixtures such as trybuild's `.stderr`), or an insta
/// snapshot ([`is_insta_snapshot`]).
fn selects_a_target(path: &str) -> bool {
    let components: Vec<&str> = path.split('/').collect();
    let folders = &components[..components.len() - 1];
    if folders.iter().any(|folder| matches!(*folder, "benches" | "examples")) {
        return false;
    }
    let name = components[components.len() - 1];
    (path.ends_with(".rs") && name != "build.rs") || folders.contains(&"tests") || is_insta_snapshot(path)
}

/// An insta snapshot: `<folder>/snapshots/<crate>__<module path>__<name>.snap`, written
/// by a test of a source file in `<folder>`, so it selects that file's target (under
/// `src/`, the library's unit tests). ruff's test patches are fixtures and snapshots
/// only: their tests are the lint rules' `#[test_case]`s, which the patch leaves alone.
fn is_insta_snapshot(path: &str) -> bool {
    let mut components = path.rsplit('/');
    let name = components.next().unwrap_or(path);
    name.ends_with(".snap") && name.contains("__") && components.next() == Some("snapshots")
}

/// The files of a diff that select a Rust test target: none unless the diff touches a
/// `.rs` file or an insta snapshot; then those of [`selects_a_target`].
pub fn rust_test_files(diff: &str) -> Vec<String> {
    let files = files_changed_by(diff);
    if !files.iter().any(|file| file.ends_with(".rs") || is_insta_snapshot(file)) {
        return Vec::new();
    }
    files.into_iter().filter(|file| selects_a_target(file)).collect()
}

impl Ecosystem for CargoTest {
    fn name(&self) -> &'static str {
        "rust"
    }

    fn recognises(&self, paths: &[String]) -> bool {
        paths.iter().any(|path| path == "Cargo.toml")
    }

    fn project_files(&self) -> &'static str {
        "Rust: Cargo.toml"
    }

    fn parts(&self) -> &'static Parts {
        super::language_parts!(runnable_test_files: rust_test_files)
    }

    /// The dependency stage's script ([`image::DEPENDENCY_SCRIPT`]).
    fn environment_context_files(&self, _: &EnvironmentRequest, _: &ImageSettings) -> Vec<(String, Vec<u8>)> {
        vec![(image::DEPENDENCY_SCRIPT_NAME.to_string(), image::DEPENDENCY_SCRIPT.as_bytes().to_vec())]
    }

    /// The helper takes the test command, `--` and the files; libtest has no stable
    /// structured report, so `report` stays unwritten and results come from the log.
    fn test_invocation(&self, test_command: &str, _report: &str, files: &str) -> String {
        format!("bash {} {test_command} -- {files}", image::CARGO_TEST_HELPER)
    }

    fn parse_log(&self, log: &str, _test_files: &[String]) -> ParsedRun {
        results::parse_cargo_test_log(log)
    }

    /// A test of an inline module that the patch adds ([`defined_tests`]).
    fn defined_by_the_patch(&self, id: &str, patch: &str) -> bool {
        defined_tests::defines_test(id, patch)
    }

    /// A test binary killed by a signal (a crash, an abort) reports none of the tests
    /// it had not finished; tests that do not compile report none at all.
    fn interruption(&self, log: &str) -> Option<Interruption> {
        Interruption::first_line_with(log, &["(signal: ", "error: could not compile"])
    }

    /// The same helper as the validation runs (written by [`Self::harness_setup`]):
    /// its output is libtest's lines, which `parse_log_cargo` reads.
    fn harness_test_command(&self, test_command: &str) -> String {
        format!("bash {} {test_command} --", image::CARGO_TEST_HELPER)
    }

    fn harness_log_parser(&self) -> &'static str {
        "parse_log_cargo"
    }

    /// A tool or library that the build says it lacks ([`missing`]): the same
    /// environment with its Debian packages (three times at most: one may come to
    /// light only once another is there); everything else as usual.
    fn next_move(&self, tried: &[EnvironmentSpec], setback: &Setback<'_>, context: &LadderContext<'_>) -> Move {
        let log = match setback {
            Setback::BuildFailed { log, .. } | Setback::Unusable { log } => Some(*log),
            _ => None,
        };
        if let (Some(log), Some(last)) = (log, tried.last()) {
            let added_before = tried.iter().filter(|spec| spec.rung == Rung::SystemTools).count();
            let packages: Vec<String> = missing::packages_for(&missing::lacking(log))
                .into_iter()
                .filter(|package| !last.system_packages.contains(package))
                .collect();
            if !packages.is_empty() && added_before < 3 {
                let mut system_packages = last.system_packages.clone();
                system_packages.extend(packages);
                system_packages.sort();
                system_packages.dedup();
                return Move::Climb(EnvironmentSpec { system_packages, rung: Rung::SystemTools, ..last.clone() });
            }
        }
        super::usual_next_move(self, tried, setback, context)
    }

    fn missing_modules(&self, log: &str) -> Vec<String> {
        missing::lacking(log)
    }

    /// The crates.io packages that the patches' `Cargo.lock` adds (`name@version`),
    /// or, for a patch that changes no `Cargo.lock`, the requirements its manifests
    /// add (`name@^0.17`): the environment vendors them beside the environment
    /// commit's, for the runs after the gold patch resolve offline (sharkdp/bat-1402's
    /// fix adds `serial_test`; tracing-1853's, a project without a lockfile, moves
    /// `opentelemetry` to 0.17).
    fn packages_the_patches_add(&self, patches: &[&str]) -> Vec<String> {
        super::each_once(patches, |diff| {
            let mut crates = crates_added_to_cargo_lock(diff);
            crates.extend(requirements_added_to_manifests(diff));
            crates
        })
    }

    /// One rung: the neighbouring toolchain (the nearest newer image, else the
    /// nearest older), when the first did not build (dependencies that need a newer
    /// compiler) or ran no test.
    fn next_rung(&self, failed: &FailedRung<'_>) -> Option<EnvironmentSpec> {
        let last = failed.tried.last()?;
        if failed.tried.iter().any(|spec| spec.rung == Rung::NeighbourRuntime) {
            return None;
        }
        let own = infer::minor_of(&last.runtime)?;
        let mut others: Vec<(u32, &String)> = failed
            .context
            .runtimes
            .iter()
            .filter(|runtime| self.owns_runtime(runtime))
            .filter_map(|runtime| infer::minor_of(runtime).map(|minor| (minor, runtime)))
            .filter(|(minor, _)| *minor != own)
            .collect();
        others.sort();
        let newer = others.iter().find(|(minor, _)| *minor > own);
        let older = others.iter().rev().find(|(minor, _)| *minor < own);
        let (_, runtime) = newer.or(older)?;
        Some(EnvironmentSpec { runtime: (*runtime).clone(), rung: Rung::NeighbourRuntime, ..last.clone() })
    }
}

/// The crates.io packages (`name@version`) that a diff adds to a `Cargo.lock`, or
/// moves to another version: a `[[package]]` whose `version` line the diff adds and
/// whose source is a registry. A hunk shows a changed version with its package's name
/// and source around it (three lines of context).
pub fn crates_added_to_cargo_lock(diff: &str) -> Vec<String> {
    #[derive(Default)]
    struct Package {
        name: String,
        version: Option<String>,
        registry: bool,
    }
    let mut crates = Vec::new();
    let mut package = Package::default();
    let mut finish = |package: &mut Package| {
        if let (Some(version), true) = (package.version.take(), package.registry) {
            if !package.name.is_empty() {
                crates.push(format!("{}@{version}", package.name));
            }
        }
        *package = Package::default();
    };
    let mut in_lock = false;
    for line in diff.lines() {
        if let Some(header) = line.strip_prefix("diff --git ") {
            finish(&mut package);
            in_lock = header.ends_with("/Cargo.lock");
            continue;
        }
        if !in_lock || line.starts_with("+++") || line.starts_with("---") {
            continue;
        }
        if line.starts_with("@@") {
            finish(&mut package);
            continue;
        }
        let (added, text) = match line.split_at_checked(1) {
            Some(("+", text)) => (true, text),
            Some((" ", text)) => (false, text),
            _ => continue,
        };
        let value = |key: &str| {
            text.strip_prefix(key)
                .and_then(|rest| rest.strip_prefix(" = \""))
                .and_then(|rest| rest.strip_suffix('"'))
                .map(str::to_string)
        };
        if text == "[[package]]" {
            finish(&mut package);
        } else if let Some(name) = value("name") {
            package.name = name;
        } else if let Some(version) = value("version") {
            package.version = added.then_some(version);
        } else if text.starts_with("source = \"registry+") {
            package.registry = true;
        }
    }
    finish(&mut package);
    crates
}

/// The crates.io requirements (`name@REQ`, REQ with its operator: `^0.17` for
/// Cargo's bare `0.17`) that a diff adds to a `Cargo.toml`'s dependency tables, when
/// the diff changes no `Cargo.lock` (whose exact versions say more). A line counts in
/// a table the hunk shows as one of dependencies (`[dependencies]`,
/// `[target.'cfg(unix)'.dev-dependencies]`, `[dependencies.name]`'s `version`, its
/// `package` the crate's name when the hunk shows it before), or, in
/// a hunk that shows no table, as an inline table with a `version`. Path, git and
/// workspace dependencies have no requirement of a registry.
pub fn requirements_added_to_manifests(diff: &str) -> Vec<String> {
    if diff.lines().any(|line| line.strip_prefix("diff --git ").is_some_and(|header| header.ends_with("/Cargo.lock"))) {
        return Vec::new();
    }
    let mut crates = Vec::new();
    let (mut in_manifest, mut table): (bool, Option<String>) = (false, None);
    // A `[dependencies.name]` table's `package`: the crate's own name.
    let mut package: Option<String> = None;
    for line in diff.lines() {
        if let Some(header) = line.strip_prefix("diff --git ") {
            in_manifest = header.ends_with("/Cargo.toml");
            table = None;
            continue;
        }
        if !in_manifest || line.starts_with("+++") || line.starts_with("---") {
            continue;
        }
        if line.starts_with("@@") {
            table = None;
            continue;
        }
        let (added, text) = match line.split_at_checked(1) {
            Some(("+", text)) => (true, text.trim()),
            Some((" ", text)) => (false, text.trim()),
            _ => continue,
        };
        if let Some(header) = text.strip_prefix('[') {
            table = Some(header.trim_start_matches('[').split(']').next().unwrap_or_default().trim().to_string());
            package = None;
            continue;
        }
        let Some((key, value)) = single_entry(text) else { continue };
        if key == "package" {
            package = value.as_str().map(str::to_string);
        }
        if !added {
            continue;
        }
        let requirement = match table.as_deref().map(dependency_table) {
            Some(DependencyTable::List) => dependency_requirement(&key, &value),
            Some(DependencyTable::One(name)) if key == "version" => {
                let name = package.as_deref().unwrap_or(name);
                value.as_str().map(|version| (name.to_string(), version.to_string()))
            }
            Some(_) => None,
            None if value.is_table() => dependency_requirement(&key, &value),
            None => None,
        };
        if let Some((name, version)) = requirement {
            let version = version.trim();
            let operator = version.starts_with(['^', '~', '=', '<', '>', '*']);
            crates.push(if operator { format!("{name}@{version}") } else { format!("{name}@^{version}") });
        }
    }
    crates
}

enum DependencyTable<'a> {
    /// `[dependencies]`, `[workspace.dependencies]`, `[target.X.dev-dependencies]`.
    List,
    /// `[dependencies.name]`.
    One(&'a str),
    Other,
}

fn dependency_table(table: &str) -> DependencyTable<'_> {
    const KINDS: [&str; 3] = ["dependencies", "dev-dependencies", "build-dependencies"];
    let kind = |word: &str| KINDS.contains(&word);
    let mut words = table.rsplit('.');
    match (words.next(), words.next()) {
        (Some(last), _) if kind(last) => DependencyTable::List,
        (Some(name), Some(before)) if kind(before) => DependencyTable::One(name.trim_matches('"')),
        _ => DependencyTable::Other,
    }
}

/// One `key = value` line as TOML, when it is one.
fn single_entry(text: &str) -> Option<(String, toml::Value)> {
    let parsed: toml::Table = toml::from_str(text).ok()?;
    let mut entries = parsed.into_iter();
    let entry = entries.next()?;
    entries.next().is_none().then_some(entry)
}

/// A dependency's crates.io name and requirement: `name = "1"`, or an inline table
/// with a `version` (its `package` is the crate's name) and no `path`, `git` or
/// `registry` of another source.
fn dependency_requirement(key: &str, value: &toml::Value) -> Option<(String, String)> {
    match value {
        toml::Value::String(version) => Some((key.to_string(), version.clone())),
        toml::Value::Table(fields) => {
            let elsewhere = ["path", "git", "registry"].iter().any(|field| fields.contains_key(*field));
            let version = fields.get("version")?.as_str()?;
            let name = fields.get("package").and_then(toml::Value::as_str).unwrap_or(key);
            (!elsewhere).then(|| (name.to_string(), version.to_string()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;

    #[test]
    fn a_test_binary_killed_by_a_signal_or_a_compile_error_is_named() {
        let crashed = "test a ... ok\nerror: test failed, to rerun pass `--lib`\n\nCaused by:\n  process didn't exit successfully: `/t/deps/x-1` (signal: 11, SIGSEGV: invalid memory reference)\n";
        let interruption = CargoTest.interruption(crashed).expect("a crash");
        assert!(interruption.evidence.contains("SIGSEGV") && !interruption.voids_passes, "{interruption:?}");
        assert!(CargoTest.interruption("error: could not compile `x` (lib test) due to 1 previous error\n").is_some());
        assert_eq!(CargoTest.interruption("test a ... FAILED\nerror: test failed, to rerun pass `--lib`\n"), None);
    }
    use crate::ecosystem::RepoFiles;
    use crate::ecosystem::RungFailure;
    use crate::ecosystem::fixtures::diff_of;

    #[test]
    fn rust_projects_are_recognised_by_a_cargo_toml_at_the_root() {
        crate::ecosystem::fixtures::assert_recognition(
            &CargoTest,
            &[&["README.md", "Cargo.toml", "src/lib.rs"]],
            &[&["tools/Cargo.toml", "go.mod"]],
        );
    }

    #[test]
    fn test_files_are_rust_files_and_test_fixtures_but_not_benches_or_examples() {
        let files = rust_test_files(&diff_of(&[
            "test_suite/tests/test_gen.rs",
            "test_suite/tests/ui/remote/nonremote_getter.stderr",
            "src/slice/test.rs",
            "benches/bytes.rs",
            "examples/demo.rs",
            "build.rs",
            "CHANGELOG.md",
        ]));
        assert_eq!(
            files,
            vec![
                "test_suite/tests/test_gen.rs",
                "test_suite/tests/ui/remote/nonremote_getter.stderr",
                "src/slice/test.rs"
            ]
        );
        // Fixtures alone, or a Python test patch: no Rust test to run.
        assert!(rust_test_files(&diff_of(&["tests/ui/x.stderr"])).is_empty());
        assert!(rust_test_files(&diff_of(&["tests/test_x.py", "tests/data/a.json"])).is_empty());
        // ruff's shape: a fixture and the insta snapshot of the test that reads it. A
        // Jest snapshot (`__snapshots__/`) is not insta's.
        let snapshot = "crates/ruff_linter/src/rules/flake8_pie/snapshots/ruff_linter__rules__flake8_pie__tests__PIE800_PIE800.py.snap";
        let ruff =
            rust_test_files(&diff_of(&["crates/ruff_linter/resources/test/fixtures/flake8_pie/PIE800.py", snapshot]));
        assert_eq!(ruff, vec![snapshot]);
        assert!(rust_test_files(&diff_of(&["src/__snapshots__/app.test.js.snap", "src/app.test.js"])).is_empty());
        assert_eq!(crate::ecosystem::language_of_test_patch(&diff_of(&[snapshot])), "rust");
    }

    #[test]
    fn the_harness_runs_the_helper_and_reads_its_output_with_parse_log_cargo() {
        let command = CargoTest.harness_test_command(infer::TEST_COMMAND);
        assert_eq!(command, "bash /tmp/swe-harvest-cargo-test cargo test --offline --no-fail-fast --");
        assert_eq!(CargoTest.harness_log_parser(), "parse_log_cargo");
        let setup = CargoTest.harness_setup("1.0");
        assert!(setup[0].starts_with("export HOME=/home/harvest") && setup[0].contains("CARGO_NET_OFFLINE=true"));
        assert!(setup[1].starts_with("cat > /tmp/swe-harvest-cargo-test <<'SWE_HARVEST_CARGO_TEST'\n#!/bin/bash\n"));
    }

    #[test]
    fn the_ladder_tries_the_neighbouring_toolchain_once() {
        let files = RepoFiles::new();
        let runtimes = vec!["rust1.63".to_string(), "rust1.85".to_string(), "3.11".to_string()];
        let context = LadderContext {
            files: &files,
            date: Utc.with_ymd_and_hms(2021, 1, 1, 0, 0, 0).unwrap(),
            runtimes: &runtimes,
        };
        let first = EnvironmentSpec { ecosystem: "rust".into(), runtime: "rust1.63".into(), ..Default::default() };
        let next_rung =
            |tried: &[EnvironmentSpec], failure| CargoTest.next_rung(&FailedRung { tried, failure, context: &context });
        let next = next_rung(std::slice::from_ref(&first), RungFailure::BuildFailed { log: "" }).unwrap();
        assert_eq!((next.runtime.as_str(), next.rung), ("rust1.85", Rung::NeighbourRuntime));
        assert!(next_rung(&[first.clone(), next], RungFailure::Unusable).is_none());
        let newest = EnvironmentSpec { runtime: "rust1.85".into(), ..first };
        let older = next_rung(&[newest], RungFailure::Unusable).unwrap();
        assert_eq!(older.runtime, "rust1.63", "no newer image: the nearest older");
    }

    #[test]
    fn the_crates_a_diff_adds_to_cargo_lock_are_those_whose_version_it_adds_from_a_registry() {
        let diff = "diff --git a/Cargo.toml b/Cargo.toml\n+serial_test = \"0.5\"\n\
                    diff --git a/Cargo.lock b/Cargo.lock\n--- a/Cargo.lock\n+++ b/Cargo.lock\n\
                    @@ -10,6 +10,26 @@\n [[package]]\n name = \"bat\"\n version = \"0.17.1\"\n dependencies = [\n+ \"serial_test\",\n ]\n\
                    @@ -40,7 +60,7 @@\n [[package]]\n name = \"lazy_static\"\n-version = \"1.4.0\"\n+version = \"1.5.0\"\n source = \"registry+https://github.com/rust-lang/crates.io-index\"\n\
                    @@ -90,3 +110,15 @@\n+[[package]]\n+name = \"serial_test\"\n+version = \"0.5.1\"\n+source = \"registry+https://github.com/rust-lang/crates.io-index\"\n+checksum = \"abc\"\n\
                    +\n+[[package]]\n+name = \"local_helper\"\n+version = \"0.1.0\"\n\
                    diff --git a/src/lib.rs b/src/lib.rs\n+version = \"9.9.9\"\n";
        assert_eq!(crates_added_to_cargo_lock(diff), ["lazy_static@1.5.0", "serial_test@0.5.1"]);
        assert_eq!(CargoTest.packages_the_patches_add(&[diff, diff]), ["lazy_static@1.5.0", "serial_test@0.5.1"]);
        assert!(crates_added_to_cargo_lock("diff --git a/Cargo.toml b/Cargo.toml\n+x = \"1\"\n").is_empty());
        assert!(requirements_added_to_manifests(diff).is_empty(), "the lockfile's versions say more");
    }

    /// tracing-1853's fix: a manifest's requirement moved, in a project without a
    /// lockfile; and the shapes of a dependency a hunk can show.
    #[test]
    fn the_requirements_a_diff_adds_to_a_manifest_without_a_lockfile_are_its_dependencies() {
        let diff = "diff --git a/tracing-opentelemetry/Cargo.toml b/tracing-opentelemetry/Cargo.toml\n\
                    --- a/tracing-opentelemetry/Cargo.toml\n+++ b/tracing-opentelemetry/Cargo.toml\n\
                    @@ -1,5 +1,5 @@\n [package]\n name = \"tracing-opentelemetry\"\n-version = \"0.16.0\"\n+version = \"0.17.0\"\n\
                    -edition = \"2018\"\n+edition = \"2021\"\n\
                    @@ -22,7 +22,7 @@ rust-version = \"1.46.0\"\n\
                    -opentelemetry = { version = \"0.16\", default-features = false, features = [\"trace\"] }\n\
                    +opentelemetry = { version = \"0.17\", default-features = false, features = [\"trace\"] }\n\
                    +tracing-core = { path = \"../tracing-core\", version = \"0.1\" }\n\
                    +log = \"0.4\"\n\
                    @@ -40,6 +40,9 @@\n [dev-dependencies]\n+async-trait = \"0.1\"\n+tokio = { package = \"tokio\", version = \">= 1.8, < 2\" }\n\
                    +local = { path = \"../local\" }\n+shared = { workspace = true }\n\
                    +\n+[target.'cfg(unix)'.build-dependencies]\n+cc = \"~1.0.50\"\n\
                    +\n+[dependencies.renamed]\n+package = \"serde\"\n+version = \"1.0.100\"\n\
                    +\n+[features]\n+default = \"x\"\n\
                    diff --git a/src/lib.rs b/src/lib.rs\n+x = { version = \"1\" }\n";
        assert_eq!(
            requirements_added_to_manifests(diff),
            ["opentelemetry@^0.17", "async-trait@^0.1", "tokio@>= 1.8, < 2", "cc@~1.0.50", "serde@^1.0.100"]
        );
        assert_eq!(CargoTest.packages_the_patches_add(&[diff])[0], "opentelemetry@^0.17");
    }
}
