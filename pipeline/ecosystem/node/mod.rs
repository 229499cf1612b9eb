//! JavaScript and TypeScript projects on Node: recognised by a top-level
//! `package.json`, the runtime, the install (npm, Yarn or pnpm by lockfile; npm's
//! `--before=<date>` without one) and the test runner (Jest, Mocha, Vitest, AVA,
//! tap, `node --test`, Karma in Debian's Chromium) inferred from it ([`infer`]),
//! dependencies installed while the environment image is built ([`image`]), the
//! touched test files run with the runner's structured reporter and read back by
//! [`results`].
//!
//! One ecosystem for both languages (decision): they share the runtime, the package
//! managers and the runners; TypeScript runs through the project's own transform
//! (ts-jest, Vitest, `ts-node/register`). The released `language` is `typescript`
//! when most of the touched test files are TypeScript (`.ts`, `.tsx`, `.mts`,
//! `.cts`), else `javascript`.
//!
//! Test files (extract's native rule and which tests run): JavaScript or TypeScript
//! files under a `test/`, `tests/`, `__tests__/` or `spec/` folder, or named
//! `*.test.*` / `*.spec.*`; declaration files (`.d.ts`) are never run.
//!
//! Test ids (decision): `file > describe > ... > title` ([`results`]); Karma's
//! without the file, which a browser does not know. Published
//! Multi-SWE-bench rows name JS tests as their per-repository log parsers read them:
//! the title alone (axios's Mocha), `file:title` and the file itself (darkreader's
//! Jest); [`Ecosystem::published_forms`] gives those forms so that `validate
//! --compare` compares in theirs. For SWE-bench's harness, the eval script runs the
//! same helper and prints `[PASSED] id` / `[FAILED] id` from the report, which
//! SWE-bench 5.x's `parse_log_jest_json` reads: the harness grades our ids unchanged.

pub mod build_first;
pub mod image;
pub mod infer;
pub mod legacy_openssl;
pub mod legacy_peer_deps;
pub mod results;
pub mod runtimes;

use super::{
    Ecosystem, FailedRung, Interruption, LadderContext, Move, ParsedRun, Parts, RungFailure, Setback, usual_next_move,
};
use crate::git::diff::files_changed_by;
use crate::model::{EnvironmentSpec, Rung};

/// The ecosystem's name in environment specs.
pub const NAME: &str = "node";

/// Node with its project's test runner.
pub struct NodeTest;

const SCRIPT_EXTENSIONS: &[&str] = &["js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts"];
const TYPESCRIPT_EXTENSIONS: &[&str] = &["ts", "tsx", "mts", "cts"];

fn extension(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or("", |(_, extension)| extension)
}

/// Whether a path is a JavaScript or TypeScript test file: under `test/`, `tests/`,
/// `__tests__/` or `spec/`, or named `*.test.*` / `*.spec.*`; not a `.d.ts`.
pub fn is_node_test_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    if !SCRIPT_EXTENSIONS.contains(&extension(path)) || name.ends_with(".d.ts") {
        return false;
    }
    let in_test_folder =
        path.split('/').rev().skip(1).any(|component| matches!(component, "test" | "tests" | "__tests__" | "spec"));
    in_test_folder || name.contains(".test.") || name.contains(".spec.")
}

/// The test files of a diff; a touched snapshot stands for the test file it belongs
/// to (Kong/insomnia's fix changed only `__snapshots__/index.test.ts.snap`, and the
/// task was dropped as `no_test_files`).
pub fn node_test_files(diff: &str) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for file in files_changed_by(diff) {
        let file = snapshot_owner(&file).unwrap_or(file);
        if is_node_test_path(&file) && !files.contains(&file) {
            files.push(file);
        }
    }
    files
}

/// The test file whose snapshots a Jest or Vitest snapshot file holds: they write
/// `dir/__snapshots__/x.test.ts.snap` for `dir/x.test.ts`.
fn snapshot_owner(path: &str) -> Option<String> {
    let (folder, name) = match path.rsplit_once("/__snapshots__/") {
        Some((folder, name)) => (Some(folder), name),
        None => (None, path.strip_prefix("__snapshots__/")?),
    };
    let test = name.strip_suffix(".snap").filter(|test| !test.contains('/'))?;
    Some(folder.map_or_else(|| test.to_string(), |folder| format!("{folder}/{test}")))
}

impl Ecosystem for NodeTest {
    fn name(&self) -> &'static str {
        NAME
    }

    fn language(&self) -> &'static str {
        "javascript"
    }

    fn language_of_tests(&self, test_files: &[String]) -> &'static str {
        let typescript = test_files.iter().filter(|file| TYPESCRIPT_EXTENSIONS.contains(&extension(file))).count();
        if typescript * 2 > test_files.len() { "typescript" } else { "javascript" }
    }

    fn recognises(&self, paths: &[String]) -> bool {
        paths.iter().any(|path| path == "package.json")
    }

    fn project_files(&self) -> &'static str {
        "JavaScript/TypeScript: package.json"
    }

    fn parts(&self) -> &'static Parts {
        super::language_parts!(runnable_test_files: node_test_files)
    }

    fn test_invocation(&self, test_command: &str, report: &str, files: &str) -> String {
        let runner = infer::Runner::of_command(test_command);
        let command = helper_words(test_command);
        format!("bash {} {} {report} {command} -- {files}", image::NODE_TEST_HELPER, runner.as_str())
    }

    /// Jest/Vitest JSON when it has tests, else our Mocha reporter's lines.
    fn parse_report(&self, report: &str, _test_files: &[String]) -> ParsedRun {
        let json = results::parse_json_report(report);
        if json.tests.is_empty() { results::parse_mocha_lines(report) } else { json }
    }

    /// The harness printer's lines (an eval script's output) when there are any; else
    /// TAP or verbose lines, whichever reading finds more.
    fn parse_log(&self, log: &str, _test_files: &[String]) -> ParsedRun {
        let printed = results::parse_printed_lines(log);
        if !printed.tests.is_empty() {
            return printed;
        }
        let tap = results::parse_tap_log(log);
        let verbose = results::parse_verbose_log(log);
        if tap.tests.len() >= verbose.tests.len() { tap } else { verbose }
    }

    /// Jest reports a test file that does not load (a syntax error, a missing
    /// export) as a suite that failed to run: none of its tests has a result.
    fn interruption(&self, log: &str) -> Option<Interruption> {
        Interruption::first_line_with(log, &["Test suite failed to run"])
    }

    /// The helper with `--print`: the runner's own output, then one `[PASSED] id` /
    /// `[FAILED] id` line per test from its report.
    fn harness_test_command(&self, test_command: &str) -> String {
        let runner = infer::Runner::of_command(test_command);
        let test_command = helper_words(test_command);
        format!(
            "bash {} --print {} {} {test_command} --",
            image::NODE_TEST_HELPER,
            runner.as_str(),
            image::HARNESS_REPORT
        )
    }

    fn harness_log_parser(&self) -> &'static str {
        "parse_log_jest_json"
    }

    /// After a check or first run whose tests could not load a build output of the
    /// repository: the same environment building first ([`build_first`]); whose tool
    /// OpenSSL refused a digest: the same with its legacy provider ([`legacy_openssl`]);
    /// else the usual moves.
    fn next_move(&self, tried: &[EnvironmentSpec], setback: &Setback<'_>, context: &LadderContext<'_>) -> Move {
        if let Setback::Unusable { log } = setback
            && let Some(next) =
                build_first::next_spec(tried, log, context.files).or_else(|| legacy_openssl::next_spec(tried, log))
        {
            return Move::Climb(next);
        }
        usual_next_move(self, tried, setback, context)
    }

    /// One rung: when the date-bounded install found no version of a package "with a
    /// date before" the task's (the registry's version times are missing or not the
    /// publish times, or the package is younger than the task), the same install
    /// without the date bound (`relaxed-packages`): the newest versions that
    /// `package.json`'s ranges (or the lockfile) allow.
    /// When npm refused conflicting peer dependencies, the same install as npm 6 did
    /// it ([`legacy_peer_deps`]).
    fn next_rung(&self, failed: &FailedRung<'_>) -> Option<EnvironmentSpec> {
        let last = failed.tried.last()?;
        let RungFailure::BuildFailed { log } = failed.failure else { return None };
        if let Some(next) = legacy_peer_deps::next_spec(last, log) {
            return Some(next);
        }
        if failed.tried.iter().any(|spec| spec.rung == Rung::RelaxedPackages) || !infer::refused_by_date(log) {
            return None;
        }
        let install = last.install.iter().map(|step| infer::without_date_bound(step)).collect();
        Some(EnvironmentSpec { install, rung: Rung::RelaxedPackages, ..last.clone() })
    }

    /// Multi-SWE-bench's forms of `file > describe > title`: `title` (its Mocha
    /// parsers), `describe title` (Mocha's full title, the describe blocks' titles and
    /// the test's joined by spaces: expressjs/express's rows, 2026-11-27; or by ` > `:
    /// SWE-bench Multilingual's immutable-js rows, 2026-11-28), `file:title`
    /// and `file` (its Jest parsers, which also count a file that passes as a test).
    /// The dependencies the patches add to the root `package.json` (a gold patch's
    /// new package, which its test imports: axios-5316's `formdata-node`), installed
    /// into the task's environment ([`image::add_packages_step`]).
    fn packages_the_patches_add(&self, patches: &[&str]) -> Vec<String> {
        super::each_once(patches, dependencies_added_to_package_json)
    }

    /// A file of a workspace package (`packages/NAME/...`) is also named from the
    /// package's folder, where its tests run (Kong/insomnia's rows, 2026-11-28).
    /// The file itself, which Multi-SWE-bench's Jest parsers also count as a test, is
    /// a parent ([`Ecosystem::published_parents`]); our file's own id
    /// ([`results`]) is that id.
    fn published_forms(&self, id: &str) -> Vec<String> {
        let parts: Vec<&str> = id.split(results::SEPARATOR).collect();
        match parts.as_slice() {
            [file, rest @ .., title] if parts.len() >= 2 => {
                let mut forms = vec![title.to_string()];
                if !rest.is_empty() {
                    forms.push(parts[1..].join(" "));
                    forms.push(parts[1..].join(results::SEPARATOR));
                }
                for file in std::iter::once(*file).chain(in_workspace_package(file)) {
                    forms.push(format!("{file}:{title}"));
                }
                forms
            }
            [file] => in_workspace_package(file).map(str::to_string).into_iter().collect(),
            _ => Vec::new(),
        }
    }

    /// A test's file (and the file from its workspace package's folder).
    fn published_parents(&self, id: &str) -> Vec<String> {
        match id.split_once(results::SEPARATOR) {
            Some((file, _)) => std::iter::once(file).chain(in_workspace_package(file)).map(str::to_string).collect(),
            None => Vec::new(),
        }
    }
}

/// The test command as the helper's words in a shell line: its `&&` (between build
/// steps and the runner) quoted, so that the helper, not the shell, runs the steps.
fn helper_words(test_command: &str) -> String {
    test_command.split(' ').map(|word| if word == "&&" { "'&&'" } else { word }).collect::<Vec<_>>().join(" ")
}

/// A path inside a workspace package's folder (`packages/app/src/a.test.ts` ->
/// `src/a.test.ts`), the convention of npm, Yarn and pnpm workspaces and Lerna.
fn in_workspace_package(path: &str) -> Option<&str> {
    let (_, inside) = path.strip_prefix("packages/")?.split_once('/')?;
    (!inside.is_empty()).then_some(inside)
}

/// The sections of `package.json` whose entries are packages to install.
const DEPENDENCY_SECTIONS: &[&str] = &["dependencies", "devDependencies", "optionalDependencies"];

/// The dependencies (`name@range`) that a diff adds to or changes in the top-level
/// `package.json`: added lines `"name": "range"` of a dependency section (or of a
/// section the hunk does not show, when the range is a registry version range and the
/// name no field of the manifest's own). Local, Git and URL sources are left out: no
/// registry serves them.
pub fn dependencies_added_to_package_json(diff: &str) -> Vec<String> {
    let mut added = Vec::new();
    let mut in_manifest = false;
    // The object the hunk is in: `Some(key)` once its opening line was seen.
    let mut section: Option<String> = None;
    for line in diff.lines() {
        if let Some(header) = line.strip_prefix("diff --git ") {
            in_manifest = header.ends_with(" b/package.json");
            continue;
        }
        if !in_manifest || line.starts_with("+++") || line.starts_with("---") {
            continue;
        }
        if line.starts_with("@@") {
            section = None;
            continue;
        }
        let (sign, text) = (line.get(..1).unwrap_or_default(), line.get(1..).unwrap_or_default());
        let text = text.trim().trim_end_matches(',');
        // A section on one line: `"devDependencies": {"mocha": "^10.2.0"}`.
        if let Some((key, inner)) = text.split_once('{').filter(|_| text.ends_with('}')) {
            let key = key.trim().trim_end_matches(':').trim().trim_matches('"');
            if sign == "+" && DEPENDENCY_SECTIONS.contains(&key) {
                let pairs = inner.trim_end_matches('}').split(',');
                added.extend(pairs.filter_map(|pair| registry_dependency(pair, true)));
            }
            continue;
        }
        if let Some(key) = text.strip_suffix('{').map(str::trim).and_then(|key| key.strip_suffix(':')) {
            section = Some(key.trim().trim_matches('"').to_string());
            continue;
        }
        if text.starts_with('}') {
            section = Some(String::new());
            continue;
        }
        let in_dependencies = match section.as_deref() {
            Some(key) => DEPENDENCY_SECTIONS.contains(&key),
            None => true,
        };
        if sign == "+" && in_dependencies {
            added.extend(registry_dependency(text, section.is_some()));
        }
    }
    added
}

/// `name@range` of a manifest entry `"name": "range"` when the range is a registry's
/// (not a local, Git or URL source); outside a known section, not a field of the
/// manifest's own (`version`, `engines`' `node`).
fn registry_dependency(entry: &str, in_known_section: bool) -> Option<String> {
    let (name, range) = entry.split_once(':')?;
    let (name, range) = (name.trim().trim_matches('"'), range.trim().trim_matches('"'));
    let registry_range =
        range.starts_with(|c: char| c.is_ascii_digit() || "^~<>=*x".contains(c)) && !range.contains(':');
    let manifest_field = !in_known_section && matches!(name, "version" | "node" | "npm" | "yarn" | "pnpm");
    (registry_range && !manifest_field && !name.is_empty()).then(|| format!("{name}@{range}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jest_suite_that_failed_to_run_is_named() {
        let log = " FAIL  test/a.test.js\n  ● Test suite failed to run\n\n    SyntaxError: Unexpected token\n";
        assert_eq!(
            NodeTest.interruption(log).map(|found| found.evidence),
            Some("● Test suite failed to run".to_string())
        );
        assert_eq!(NodeTest.interruption(" PASS  test/a.test.js\n"), None);
    }

    #[test]
    fn node_projects_are_recognised_by_package_json_at_the_root() {
        crate::ecosystem::fixtures::assert_recognition(
            &NodeTest,
            &[&["README.md", "package.json", "lib/a.js"]],
            &[&["web/package.json", "setup.py"]],
        );
    }

    #[test]
    fn test_files_are_scripts_under_test_folders_or_named_test_or_spec() {
        for path in [
            "test/unit/adapters/adapters.js",
            "tests/generators/utils/parse.tests.ts",
            "src/__tests__/a.tsx",
            "lib/x.test.mjs",
            "src/y.spec.ts",
            "spec/z.cjs",
        ] {
            assert!(is_node_test_path(path), "{path}");
        }
        for path in ["lib/test.js", "test/fixtures/data.json", "index.d.ts", "test/types/index.d.ts", "src/latest.js"] {
            assert!(!is_node_test_path(path), "{path}");
        }
    }

    #[test]
    fn a_touched_snapshot_runs_the_test_file_it_belongs_to() {
        let diff: String = [
            "packages/app/src/__snapshots__/index.test.ts.snap",
            "packages/app/src/index.test.ts",
            "__snapshots__/root.spec.js.snap",
            "src/__snapshots__/notes.md.snap",
        ]
        .iter()
        .map(|path| format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"))
        .collect();
        assert_eq!(node_test_files(&diff), ["packages/app/src/index.test.ts", "root.spec.js"]);
    }

    #[test]
    fn the_language_is_typescript_when_most_touched_tests_are() {
        let files = |list: &[&str]| list.iter().map(|path| path.to_string()).collect::<Vec<_>>();
        assert_eq!(NodeTest.language_of_tests(&files(&["tests/a.tests.ts"])), "typescript");
        assert_eq!(NodeTest.language_of_tests(&files(&["test/a.js", "test/b.js", "test/c.ts"])), "javascript");
    }

    /// axios-5316's gold patch (SWE-bench Multilingual): a new dev dependency that the
    /// test patch imports.
    #[test]
    fn the_dependencies_a_patch_adds_to_the_root_manifest_are_named_with_their_range() {
        let diff = "diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n\
                    @@ -80,6 +80,7 @@\n     \"fs-extra\": \"^10.1.0\",\n+    \"formdata-node\": \"^5.0.0\",\n     \"gulp\": \"^4.0.2\",\n\
                    @@ -1,4 +1,4 @@\n {\n   \"name\": \"axios\",\n-  \"version\": \"1.1.3\",\n+  \"version\": \"1.2.0\",\n\
                    @@ -20,6 +20,9 @@\n   \"scripts\": {\n+    \"build\": \"gulp build\",\n+    \"pretest\": \"node -v\",\n   },\n\
                    +  \"dependencies\": {\n+    \"form-data\": \"^4.0.0\",\n+    \"local\": \"file:../local\",\n+    \"git\": \"github:a/b\"\n+  },\n\
                    +  \"devDependencies\": {\"left-pad\": \"^1.3.0\", \"mocha\": \"^10.2.0\"},\n\
                    diff --git a/packages/x/package.json b/packages/x/package.json\n+    \"nested\": \"^1.0.0\",\n";
        assert_eq!(
            NodeTest.packages_the_patches_add(&[diff, diff]),
            ["formdata-node@^5.0.0", "form-data@^4.0.0", "left-pad@^1.3.0", "mocha@^10.2.0"].map(String::from)
        );
    }

    #[test]
    fn published_forms_are_multi_swe_bench_names() {
        assert_eq!(
            NodeTest.published_forms("tests/parse.tests.ts > Base64 in CSS"),
            vec!["Base64 in CSS", "tests/parse.tests.ts:Base64 in CSS"]
        );
        assert_eq!(
            NodeTest.published_forms("test/Route.js > Route > errors > should handle throws"),
            vec![
                "should handle throws",
                "Route errors should handle throws",
                "Route > errors > should handle throws",
                "test/Route.js:should handle throws",
            ]
        );
        assert_eq!(
            NodeTest.published_forms("packages/app/src/a.test.ts > parses"),
            vec!["parses", "packages/app/src/a.test.ts:parses", "src/a.test.ts:parses"]
        );
        // The file: its own id, and its parent of every test in it.
        assert_eq!(NodeTest.published_forms("packages/app/src/a.test.ts"), vec!["src/a.test.ts"]);
        assert_eq!(
            NodeTest.published_parents("packages/app/src/a.test.ts > a > parses"),
            vec!["packages/app/src/a.test.ts", "src/a.test.ts"]
        );
        assert!(NodeTest.published_parents("test/a.test.js").is_empty());
    }

    #[test]
    fn the_invocation_names_the_runner_of_the_command() {
        let line = NodeTest.test_invocation("NODE_ENV=test mocha --exit", "/out/pre.xml", "test/a.js");
        assert_eq!(line, "bash /tmp/swe-harvest-node-test mocha /out/pre.xml NODE_ENV=test mocha --exit -- test/a.js");
        let line = NodeTest.test_invocation("npm run build && jest", "/out/pre.json", "a.test.js");
        assert_eq!(line, "bash /tmp/swe-harvest-node-test jest /out/pre.json npm run build '&&' jest -- a.test.js");
        assert!(NodeTest.harness_test_command("npm run build && jest").contains(" npm run build '&&' jest --"));
    }
}
