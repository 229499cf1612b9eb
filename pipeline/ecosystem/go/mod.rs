//! Go modules tested with `go test`: recognised by a top-level `go.mod` or `go.work`,
//! the toolchain chosen from the `go` directive among the base images there
//! ([`infer`]), modules downloaded and the build cache warmed while the environment
//! image is built ([`image`]), the packages of the touched test files run with
//! `go test -json`, read back by [`results`].
//!
//! Test ids (decision): `TestName` and `TestName/subtest`, as `go test -v` prints
//! them and as SWE-bench 5.x's `parse_log_gotest` and Multi-SWE-bench name them, so
//! that SWE-bench's harness grades our rows unchanged; they carry no package path. The
//! same name in two packages that one task runs is one id whose status is the worse
//! of the two (a failure anywhere is a failure).
//!
//! Which tests run: the packages (directories) of the `_test.go` files the test patch
//! touches, the package that owns a touched `testdata/` folder, and for another data
//! file of the test patch the nearest folder above it with `_test.go` files (caddy's
//! adapter tests read `caddytest/integration/caddyfile_adapt/*.caddyfiletest`);
//! never `./...`.
//!
//! A package whose tests do not compile before the gold patch (the usual way a new
//! test fails in a compiled language: it calls what the fix adds) reports no test at
//! all; each of its tests is then missing from the pre run, which the label rules
//! count as a failure, so the tests it has after the fix are FAIL_TO_PASS (what
//! Multi-SWE-bench calls `n2p`). The pre run's log keeps the compiler's message.

pub mod image;
pub mod infer;
pub mod results;
pub mod runtimes;

use chrono::{DateTime, Utc};

use super::{Ecosystem, Interruption, ParsedRun, Parts, RepoFiles, RuntimeNeed};
use crate::git::diff::files_changed_by;

/// Go with `go test`.
pub struct GoTest;

/// Whether a path is part of a Go test: a `_test.go` file, or a file under a
/// `testdata/` folder (which `go` itself ignores as a package).
pub fn is_go_test_path(path: &str) -> bool {
    path.ends_with("_test.go") || path.split('/').rev().skip(1).any(|component| component == "testdata")
}

/// Whether a test patch's path is a test's data outside `testdata/`: a file that is
/// no Go source, no module file and no documentation (caddy's
/// `caddytest/integration/caddyfile_adapt/*.caddyfiletest`, read by a test of
/// `caddytest/integration`). Only the tree says which package reads it: the nearest
/// folder at or above it that holds `_test.go` files ([`image::PACKAGE_OF_DATA_FUNCTION`]).
pub fn is_test_data_outside_testdata(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let documentation = [".md", ".rst", ".adoc"].iter().any(|extension| name.ends_with(extension))
        || ["README", "LICENSE", "CHANGELOG", "AUTHORS"].iter().any(|prefix| name.starts_with(prefix));
    !is_go_test_path(path)
        && !name.ends_with(".go")
        && !documentation
        && !matches!(name, "go.mod" | "go.sum" | "go.work" | "go.work.sum")
}

/// The files of a diff that select a package to test: `_test.go` files and files
/// under `testdata/`. (A test patch's other data files select theirs too, but only
/// once the task is known to be Go's: [`Ecosystem::test_data_files`].)
pub fn go_test_files(diff: &str) -> Vec<String> {
    files_changed_by(diff).into_iter().filter(|file| is_go_test_path(file)).collect()
}

/// The package directory a test file selects: the folder of a `_test.go` file, the
/// folder that holds a `testdata/` folder; `.` for the module root.
pub fn package_of(path: &str) -> String {
    let components: Vec<&str> = path.split('/').collect();
    let end = components.iter().position(|component| *component == "testdata").unwrap_or(components.len() - 1);
    if end == 0 { ".".to_string() } else { components[..end].join("/") }
}

impl Ecosystem for GoTest {
    fn name(&self) -> &'static str {
        "go"
    }

    fn recognises(&self, paths: &[String]) -> bool {
        paths.iter().any(|path| path == "go.mod" || path == "go.work")
    }

    fn project_files(&self) -> &'static str {
        "Go: go.mod, go.work"
    }

    fn runtime_needed(&self, files: &RepoFiles, _date: DateTime<Utc>, runtimes: &[String]) -> Option<RuntimeNeed> {
        infer::runtime_needed(files, runtimes)
    }

    fn parts(&self) -> &'static Parts {
        super::language_parts!(runnable_test_files: go_test_files)
    }

    fn test_data_files(&self, test_patch: &str) -> Vec<String> {
        files_changed_by(test_patch).into_iter().filter(|file| is_test_data_outside_testdata(file)).collect()
    }

    fn test_invocation(&self, test_command: &str, report: &str, files: &str) -> String {
        format!("bash {} {report} {test_command} -- {files}", image::GO_TEST_HELPER)
    }

    /// `go test -failfast` (each of the helper's two passes stops at its first failure).
    fn stop_at_first_failure(&self, test_command: &str) -> String {
        if test_command.split_whitespace().any(|word| word == "-failfast") {
            return test_command.to_string();
        }
        match test_command.split_once("go test") {
            Some((before, after)) => format!("{before}go test -failfast{after}"),
            None => test_command.to_string(),
        }
    }

    fn parse_report(&self, report: &str, _test_files: &[String]) -> ParsedRun {
        results::parse_go_test_json(report)
    }

    fn parse_log(&self, log: &str, _test_files: &[String]) -> ParsedRun {
        results::parse_go_test_log(log)
    }

    /// A package that panics (a test's own panic, or Go's `-timeout`) stops there: the
    /// tests it had not reached have no result. A package whose tests do not build
    /// reports none. Results printed before either stand (`go test -v` streams them).
    fn interruption(&self, log: &str) -> Option<Interruption> {
        log.lines()
            .find(|line| line.starts_with("panic: ") || results::NOT_BUILT.iter().any(|marker| line.contains(marker)))
            .map(|line| Interruption::keeping_results(line.trim()))
    }

    /// `go test -v` prints the `--- PASS: name (0.00s)` lines that SWE-bench's
    /// `parse_log_gotest` reads; JSON output would hide them.
    fn harness_test_command(&self, test_command: &str) -> String {
        let words: Vec<&str> = test_command.split_whitespace().filter(|word| *word != "-json").collect();
        let mut command = words.join(" ");
        if !words.contains(&"-v") {
            command.push_str(" -v");
        }
        command
    }

    /// `./dir` per package of the test files (`go test` of a `_test.go` file alone
    /// would leave out the package's other files); a data file's package is found in
    /// the tree when the eval script runs (`$(swe_harvest_go_package_of FILE)`).
    fn harness_test_targets(&self, test_files: &[String]) -> String {
        let mut targets: Vec<String> = Vec::new();
        for file in test_files {
            let target = if is_test_data_outside_testdata(file) {
                format!("\"$(swe_harvest_go_package_of {})\"", crate::sandbox::script::shell_quote(file))
            } else {
                match package_of(file).as_str() {
                    "." => ".".to_string(),
                    dir => crate::sandbox::script::shell_quote(&format!("./{dir}")),
                }
            };
            if !targets.contains(&target) {
                targets.push(target);
            }
        }
        targets.join(" ")
    }

    fn harness_log_parser(&self) -> &'static str {
        "parse_log_gotest"
    }

    fn packages_the_patches_add(&self, patches: &[&str]) -> Vec<String> {
        super::each_once(patches, modules_added_to_go_mod)
    }

    /// Multi-SWE-bench's Go log parsers (one per repository) name a test either as
    /// `go test -v` prints it or by its name up to the last `/` (`get_base_name`: a
    /// subtest `TestX/case` is published as `TestX`, and
    /// `TestH/http://host/a/b?c=d` as `TestH/http://host/a`).
    fn published_forms(&self, id: &str) -> Vec<String> {
        id.rsplit_once('/').map(|(parent, _)| vec![parent.to_string()]).unwrap_or_default()
    }

    /// The tests a subtest runs under: `TestX/a/b` -> `TestX/a`, `TestX` (`go test`
    /// reports them too; a published parent we did not get is read from its subtests).
    fn published_parents(&self, id: &str) -> Vec<String> {
        id.match_indices('/').map(|(at, _)| id[..at].to_string()).filter(|parent| !parent.is_empty()).collect()
    }
}

/// The requirements (`module@version`) that a diff adds to or changes in the
/// top-level `go.mod`: a gold patch that brings a new module (or a new version of one)
/// needs it in the module cache, which the environment filled at the environment
/// commit, and nothing is fetched while tests run.
pub fn modules_added_to_go_mod(diff: &str) -> Vec<String> {
    let mut modules = Vec::new();
    let mut in_go_mod = false;
    for line in diff.lines() {
        if let Some(header) = line.strip_prefix("diff --git ") {
            in_go_mod = header.ends_with(" b/go.mod");
            continue;
        }
        if !in_go_mod || line.starts_with("+++") {
            continue;
        }
        let Some(added) = line.strip_prefix('+') else { continue };
        let added = added.split("//").next().unwrap_or_default().trim();
        let added = added.strip_prefix("require").map(str::trim_start).unwrap_or(added);
        let words: Vec<&str> = added.split_whitespace().collect();
        if let [module, version] = words[..] {
            let is_module = module.contains('.') && !matches!(module, "go" | "module" | "toolchain");
            if is_module && version.starts_with('v') && version[1..].starts_with(|c: char| c.is_ascii_digit()) {
                modules.push(format!("{module}@{version}"));
            }
        }
    }
    modules
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_or_a_build_failure_is_named_and_the_results_before_it_stand() {
        let log = "--- PASS: TestFast (0.00s)\npanic: test timed out after 2m0s\nFAIL\texample.com/m\t120.01s\n";
        let (run, _) = GoTest.parse_results(None, log, &[]);
        assert_eq!(run.interrupted.as_deref(), Some("panic: test timed out after 2m0s"));
        assert_eq!(run.tests.get("TestFast"), Some(&crate::model::TestStatus::Passed));
        let (run, _) =
            GoTest.parse_results(None, "x_test.go:9:2: undefined: New\nFAIL\texample.com/m/a [build failed]\n", &[]);
        assert_eq!(run.interrupted.as_deref(), Some("FAIL\texample.com/m/a [build failed]"));
        assert_eq!(
            GoTest.parse_results(None, "--- PASS: TestFast (0.00s)\nok\texample.com/m\n", &[]).0.interrupted,
            None
        );
    }

    #[test]
    fn go_projects_are_recognised_by_go_mod_or_go_work_at_the_root() {
        crate::ecosystem::fixtures::assert_recognition(
            &GoTest,
            &[&["README.md", "go.mod", "go.sum"], &["go.work", "a/go.mod"]],
            &[&["tools/go.mod", "setup.py"]],
        );
    }

    #[test]
    fn a_go_module_with_a_requirements_file_for_its_docs_is_go_and_a_python_package_is_python() {
        let detected = |files: &[&str]| crate::ecosystem::detect(&crate::ecosystem::fixtures::paths(files)).name();
        // urfave/cli at a held-out row's base commit.
        assert_eq!(detected(&["go.mod", "go.sum", "mkdocs-requirements.txt", "Makefile", "cli.go"]), "go");
        assert_eq!(detected(&["requirements.txt", "app.py"]), "python", "a requirements file alone is Python's");
        assert_eq!(detected(&["pyproject.toml", "go.mod"]), "python", "Python's own manifest, asked first");
    }

    #[test]
    fn test_files_are_test_go_files_and_testdata() {
        let diff = "--- a/core/x_test.go\n+++ b/core/x_test.go\n--- a/core/x.go\n+++ b/core/x.go\n\
                    --- a/core/testdata/in.json\n+++ b/core/testdata/in.json\n--- a/docs/test.md\n+++ b/docs/test.md\n";
        assert_eq!(go_test_files(diff), vec!["core/x_test.go".to_string(), "core/testdata/in.json".to_string()]);
        assert!(!is_go_test_path("core/testdata.go"), "a file named testdata is not under testdata/");
        let data = "--- a/caddytest/integration/caddyfile_adapt/q.caddyfiletest\n+++ b/caddytest/integration/caddyfile_adapt/q.caddyfiletest\n\
                    --- a/go.mod\n+++ b/go.mod\n--- a/core/helpers.go\n+++ b/core/helpers.go\n--- a/docs/test.md\n+++ b/docs/test.md\n";
        assert!(go_test_files(data).is_empty(), "no Go test file: the patch alone does not say Go");
        let spec = crate::model::EnvironmentSpec::default();
        assert_eq!(
            GoTest.tests_to_run(data, &spec),
            vec!["caddytest/integration/caddyfile_adapt/q.caddyfiletest".to_string()]
        );
        assert_eq!(crate::ecosystem::language_of_test_patch(data), "python", "a data file makes no patch Go's");
    }

    #[test]
    fn the_eval_script_finds_a_data_files_package_when_it_runs() {
        let targets = GoTest.harness_test_targets(&[
            "caddytest/integration/caddyfile_adapt/q.caddyfiletest".to_string(),
            "core/x_test.go".to_string(),
            "core/y_test.go".to_string(),
        ]);
        assert_eq!(
            targets,
            "\"$(swe_harvest_go_package_of caddytest/integration/caddyfile_adapt/q.caddyfiletest)\" ./core"
        );
        assert!(image::harness_setup("1").iter().any(|line| line.starts_with("swe_harvest_go_package_of() {")));
    }

    #[test]
    fn packages_are_the_folders_of_test_files_and_the_owners_of_testdata() {
        for (path, package) in [
            ("core/stringx/strings_test.go", "core/stringx"),
            ("main_test.go", "."),
            ("core/testdata/a/b.json", "core"),
            ("testdata/x.txt", "."),
        ] {
            assert_eq!(package_of(path), package);
        }
    }

    #[test]
    fn modules_that_a_patch_requires_in_go_mod_are_named_with_their_versions() {
        let diff = "diff --git a/go.mod b/go.mod\n--- a/go.mod\n+++ b/go.mod\n@@ -1,7 +1,8 @@\n-go 1.14\n+go 1.16\n require (\n\
                    \tgithub.com/a/b v1.4.3\n+\tgithub.com/agiledragon/gomonkey v2.0.2+incompatible\n\
                    -\tk8s.io/utils v0.0.0-20220210201930-3a6ce19ff2f9\n+\tk8s.io/utils v0.0.0-20220706174534-f6158b442e7c // indirect\n )\n\
                    +require golang.org/x/sync v0.1.0\n+replace example.com/x => ../x\n\
                    diff --git a/go.sum b/go.sum\n+github.com/agiledragon/gomonkey v2.0.2+incompatible h1:abc=\n\
                    diff --git a/tools/go.mod b/tools/go.mod\n+\texample.com/tool v1.0.0\n";
        assert_eq!(
            modules_added_to_go_mod(diff),
            vec![
                "github.com/agiledragon/gomonkey@v2.0.2+incompatible".to_string(),
                "k8s.io/utils@v0.0.0-20220706174534-f6158b442e7c".to_string(),
                "golang.org/x/sync@v0.1.0".to_string(),
            ]
        );
        assert!(GoTest.packages_the_patches_add(&["diff --git a/x.go b/x.go\n+package x\n"]).is_empty());
    }

    #[test]
    fn published_forms_are_the_name_up_to_its_last_slash() {
        assert_eq!(GoTest.published_forms("TestAdd"), Vec::<String>::new());
        assert_eq!(GoTest.published_forms("TestAdd/negative"), vec!["TestAdd".to_string()]);
        assert_eq!(
            GoTest.published_forms("TestContentSecurityHandler/http://localhost/a/b?c=d&e=f"),
            vec!["TestContentSecurityHandler/http://localhost/a".to_string()]
        );
        assert_eq!(GoTest.published_forms("TestH/http://remotehost/"), vec!["TestH/http://remotehost".to_string()]);
    }

    #[test]
    fn the_harness_runs_packages_not_files() {
        let files = ["a/x_test.go".to_string(), "a/y_test.go".to_string(), "z_test.go".to_string()];
        assert_eq!(GoTest.harness_test_targets(&files), "./a .");
    }

    #[test]
    fn the_harness_command_prints_verbose_lines_not_json() {
        assert_eq!(GoTest.harness_test_command("go test -json -count=1"), "go test -count=1 -v");
        assert_eq!(GoTest.harness_test_command("go test -v"), "go test -v");
    }
}
