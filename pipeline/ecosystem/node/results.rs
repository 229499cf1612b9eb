//! Node test results: Jest's and Vitest's JSON report (the same shape:
//! `testResults[].assertionResults[]` with `ancestorTitles`, `title`, `status`), the
//! JSON lines of our Mocha reporter (and of our Karma reporter, in the same shape
//! with an empty file), and, from the log, TAP (AVA, tap, `node --test`)
//! or the verbose lines of Jest, Vitest and Mocha's spec reporter (the fallback when a
//! report is missing or empty).
//!
//! Ids (decision): `file > describe > ... > title`, the file relative to the
//! repository root and the titles from the outermost `describe` in, joined by ` > `
//! (Vitest's own notation; unique where a bare title is not, and stable across
//! runners). The same id twice (two tests of one title) is one id whose status is the
//! worse. A file that fails to load reports no test: its tests are missing, which
//! the label rules count as failures.
//!
//! The file's own id (decision, 2026-12-07): a Jest or Vitest report also gives each
//! file an id of its own, the file's path alone, for what runs while the runner
//! declares its tests (a `describe` body, the file's top level): it fails when that
//! threw (Jest's circus runner and Vitest report the file as a suite that failed to
//! run; Jest's jasmine2 runner, the default before Jest 27, as a test `encountered a
//! declaration exception` under the `describe`, which is then no test id of its own),
//! and passes when the file declared its tests, whatever they then do (each has its
//! id). An `expect` in a `describe` body that fails before the fix and passes after
//! it thus has an id that is FAIL_TO_PASS (iamkun/dayjs-2369, whose published row names
//! the file). The harness printer ([`super::image::PRINTER_SCRIPT`]) prints the same id
//! by the same rule, and Jest's verbose lines give it too (`PASS file`, failed by a
//! `● Test suite failed to run` or a declaration exception under it).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::ecosystem::ParsedRun;
use crate::model::TestStatus;

pub const SEPARATOR: &str = " > ";

/// Node's wording of a missing network.
const NETWORK_ERRORS: &[&str] = &["getaddrinfo ENOTFOUND", "getaddrinfo EAI_AGAIN", "ENETUNREACH", "EAI_AGAIN"];

/// A path as the repository names it: relative to `/testbed` (reports give absolute
/// paths).
pub fn relative(path: &str) -> &str {
    match path.find("/testbed/") {
        Some(at) => &path[at + "/testbed/".len()..],
        None => path.strip_prefix("./").unwrap_or(path),
    }
}

/// `file > describe > title`; empty titles (Vitest's file-level suite) and an empty
/// file (Karma's: a browser knows no test's file) left out.
pub fn test_id(file: &str, titles: &[String]) -> String {
    std::iter::once(relative(file))
        .chain(titles.iter().map(String::as_str))
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(SEPARATOR)
}

fn status_of(text: &str) -> Option<TestStatus> {
    match text {
        "passed" => Some(TestStatus::Passed),
        "failed" => Some(TestStatus::Failed),
        "pending" | "skipped" | "todo" | "disabled" => Some(TestStatus::Skipped),
        _ => None,
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsonReport {
    #[serde(default)]
    test_results: Vec<FileResult>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileResult {
    name: String,
    /// `passed` or `failed` (any failure of the file, a test's or the suite's).
    #[serde(default)]
    status: String,
    /// The failure messages, or the reason the suite failed to run.
    #[serde(default)]
    message: String,
    #[serde(default)]
    assertion_results: Vec<Assertion>,
}

/// The title under which Jest's jasmine2 runner reports an exception thrown while a
/// `describe` body declared its tests.
pub const DECLARATION_EXCEPTION: &str = "encountered a declaration exception";

impl FileResult {
    /// Whether what ran while the file declared its tests threw: a suite that failed
    /// with no test reported (circus, Vitest), or jasmine2's declaration exception.
    fn declaration_failed(&self) -> bool {
        let suite_failed = self.status == "failed" && self.assertion_results.is_empty();
        suite_failed
            || self.assertion_results.iter().any(|test| test.title == DECLARATION_EXCEPTION && test.status == "failed")
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Assertion {
    #[serde(default)]
    ancestor_titles: Vec<String>,
    title: String,
    status: String,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    failure_messages: Vec<serde_json::Value>,
}

/// The tests of a Jest (`--json`) or Vitest (`--reporter=json`) report.
pub fn parse_json_report(report: &str) -> ParsedRun {
    let mut run = ParsedRun::default();
    let Ok(report) = serde_json::from_str::<JsonReport>(report) else { return run };
    for file in report.test_results {
        if !relative(&file.name).is_empty() {
            let failed = file.declaration_failed();
            let declared = if failed { TestStatus::Failed } else { TestStatus::Passed };
            run.record_test(relative(&file.name), declared, None, failed.then_some(&file.message), NETWORK_ERRORS);
        }
        for test in file.assertion_results {
            if test.title == DECLARATION_EXCEPTION {
                continue; // the file's own id says it.
            }
            let Some(status) = status_of(&test.status) else { continue };
            let mut titles = test.ancestor_titles;
            titles.push(test.title);
            let id = test_id(&file.name, &titles);
            // The messages on lines of their own: no phrase spans two.
            let failure = (status == TestStatus::Failed)
                .then(|| test.failure_messages.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"));
            let seconds = test.duration.map(|milliseconds| milliseconds / 1000.0);
            run.record_test(&id, status, seconds, failure.as_deref(), NETWORK_ERRORS);
        }
    }
    run
}

#[derive(Debug, Deserialize)]
struct MochaLine {
    file: String,
    titles: Vec<String>,
    state: String,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    error: Option<String>,
}

/// The tests of our Mocha reporter's JSON lines.
pub fn parse_mocha_lines(report: &str) -> ParsedRun {
    let mut run = ParsedRun::default();
    for line in report.lines().filter(|line| line.starts_with('{')) {
        let Ok(test) = serde_json::from_str::<MochaLine>(line) else { continue };
        let Some(status) = status_of(&test.state) else { continue };
        let id = test_id(&test.file, &test.titles);
        let seconds = test.duration.map(|milliseconds| milliseconds / 1000.0);
        run.record_test(&id, status, seconds, test.error.as_deref(), NETWORK_ERRORS);
    }
    run
}

/// The harness printer's lines (`[PASSED] id` / `[FAILED] id`, as SWE-bench's
/// `parse_log_jest_json` reads them): what `evaluate --mode swe` finds in the output of
/// a task's eval script.
pub fn parse_printed_lines(log: &str) -> ParsedRun {
    let mut run = ParsedRun::default();
    for line in log.lines() {
        let line = line.trim();
        let (status, id) = if let Some(id) = line.strip_prefix("[PASSED] ") {
            (TestStatus::Passed, id)
        } else if let Some(id) = line.strip_prefix("[FAILED] ") {
            (TestStatus::Failed, id)
        } else {
            continue;
        };
        run.record(id, status);
    }
    run
}

/// The file the helper says the next lines test (`# swe-harvest file: PATH`).
const FILE_MARKER: &str = "# swe-harvest file: ";

/// One TAP result line (`ok 1 - name # SKIP`), at its indentation.
fn tap_result(line: &str) -> Option<(usize, String, TestStatus)> {
    let indent = line.len() - line.trim_start().len();
    let text = line.trim_start();
    let (failed, rest) =
        if let Some(rest) = text.strip_prefix("not ok ") { (true, rest) } else { (false, text.strip_prefix("ok ")?) };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start();
    let rest = rest.strip_prefix("- ").unwrap_or(rest);
    let (name, directive) = match rest.split_once(" # ") {
        Some((name, directive)) => (name, directive.to_ascii_uppercase()),
        None => (rest, String::new()),
    };
    let status = if directive.starts_with("SKIP") || directive.starts_with("TODO") {
        TestStatus::Skipped
    } else if failed {
        TestStatus::Failed
    } else {
        TestStatus::Passed
    };
    Some((indent, name.trim().to_string(), status))
}

/// TAP from AVA, tap and `node --test`, after the helper's file markers: nested
/// subtests (indented) become ` > `-joined titles; a test with subtests is a suite,
/// whose own line is not a test.
pub fn parse_tap_log(log: &str) -> ParsedRun {
    let mut run = ParsedRun::default();
    let mut file: Option<String> = None;
    // Per indentation, the results seen deeper than it since its last result.
    let mut pending: BTreeMap<usize, Vec<(Vec<String>, TestStatus)>> = BTreeMap::new();
    let flush =
        |run: &mut ParsedRun, file: &Option<String>, pending: &mut BTreeMap<usize, Vec<(Vec<String>, TestStatus)>>| {
            let Some(file) = file else {
                pending.clear();
                return;
            };
            for (titles, status) in std::mem::take(pending).into_values().flatten() {
                run.record(&test_id(file, &titles), status);
            }
        };
    for line in log.lines() {
        if let Some(path) = line.strip_prefix(FILE_MARKER) {
            flush(&mut run, &file, &mut pending);
            file = Some(path.trim().to_string());
            continue;
        }
        let Some((indent, name, status)) = tap_result(line) else { continue };
        let children: Vec<(Vec<String>, TestStatus)> =
            pending.split_off(&(indent + 1)).into_values().flatten().collect();
        let entries = pending.entry(indent).or_default();
        if children.is_empty() {
            entries.push((vec![name], status));
        } else {
            for (mut titles, child_status) in children {
                titles.insert(0, name.clone());
                entries.push((titles, child_status));
            }
        }
    }
    flush(&mut run, &file, &mut pending);
    // AVA prints `file › title` when it runs several files; one file a run prints
    // the title alone. Node 18 names the top-level subtest by the file's path.
    run
}

/// The verbose lines of Jest (`PASS file`, then `✓ title (3 ms)` under indented
/// `describe` names), Mocha's spec reporter (`✔ title`, `1) title`) after the
/// helper's file markers, and Vitest (`✓ file > describe > title 3ms`).
pub fn parse_verbose_log(log: &str) -> ParsedRun {
    let mut run = ParsedRun::default();
    let mut file: Option<String> = None;
    // The file of Jest's last `PASS`/`FAIL` line, whose own id its details may fail.
    let mut jest_file: Option<String> = None;
    let mut suites: Vec<(usize, String)> = Vec::new();
    let log = crate::sandbox::script::strip_ansi(log);
    for line in log.lines() {
        if let Some(path) = line.strip_prefix(FILE_MARKER) {
            file = Some(path.trim().to_string());
            jest_file = None;
            suites.clear();
            continue;
        }
        let trimmed = line.trim_start();
        if let Some(path) = trimmed.strip_prefix("PASS ").or_else(|| trimmed.strip_prefix("FAIL ")) {
            if line.len() == trimmed.len() {
                file = path.split_whitespace().next().map(str::to_string);
                jest_file = file.clone();
                if let Some(path) = &file {
                    run.record(path, TestStatus::Passed); // the file's own id; a failure below is worse.
                }
                suites.clear();
                continue;
            }
        }
        if trimmed.starts_with('●') {
            if trimmed.trim_start_matches('●').trim() == "Test suite failed to run"
                && let Some(path) = &jest_file
            {
                run.record(path, TestStatus::Failed);
            }
            file = None; // Jest's failure details follow: not results.
            continue;
        }
        let indent = line.len() - trimmed.len();
        let mut chars = trimmed.chars();
        let symbol = chars.next();
        let rest = chars.as_str();
        let status = match symbol {
            Some('✓' | '✔' | '√') => Some(TestStatus::Passed),
            Some('✕' | '×' | '✖') => Some(TestStatus::Failed),
            Some('○' | '↓') => Some(TestStatus::Skipped),
            _ => None,
        };
        let numbered = trimmed
            .split_once(") ")
            .filter(|(number, _)| !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()));
        let (status, title) = match (status, numbered) {
            // Jest: `○ skipped title`, `✎ todo title`.
            (Some(TestStatus::Skipped), _) if rest.starts_with(' ') => {
                (TestStatus::Skipped, rest.trim().strip_prefix("skipped ").unwrap_or(rest.trim()))
            }
            (Some(status), _) if rest.starts_with(' ') => (status, rest.trim()),
            (None, Some((_, title))) => (TestStatus::Failed, title.trim()),
            _ => {
                // A `describe` header within a file's block.
                if file.is_some() && indent > 0 && !trimmed.is_empty() {
                    while suites.last().is_some_and(|(depth, _)| *depth >= indent) {
                        suites.pop();
                    }
                    suites.push((indent, trimmed.to_string()));
                }
                continue;
            }
        };
        // Durations: Jest's ` (3 ms)`, Vitest's ` 3ms`.
        let title = match title.rsplit_once(" (") {
            Some((head, tail)) if tail.ends_with("ms)") || tail.ends_with(" s)") => head,
            _ => title,
        };
        let title = match title.rsplit_once(' ') {
            Some((head, tail))
                if tail.ends_with("ms") && tail[..tail.len() - 2].chars().all(|c| c.is_ascii_digit()) =>
            {
                head
            }
            _ => title,
        };
        if title.contains(SEPARATOR) && file.is_none() {
            run.record(title, status); // Vitest: the id in full.
            continue;
        }
        let Some(file) = &file else { continue };
        if title == DECLARATION_EXCEPTION {
            run.record(file, status.worse(TestStatus::Passed)); // the file's own id says it.
            continue;
        }
        while suites.last().is_some_and(|(depth, _)| *depth >= indent) {
            suites.pop();
        }
        let mut titles: Vec<String> = suites.iter().map(|(_, name)| name.clone()).collect();
        titles.push(title.to_string());
        run.record(&test_id(file, &titles), status);
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_harness_printers_lines_give_one_verdict_per_id() {
        let log = "  ✔ adds\n[PASSED] test/calc.test.js > add > adds\n[FAILED] test/calc.test.js > add > negative\n";
        let run = parse_printed_lines(log);
        assert_eq!(run.tests.get("test/calc.test.js > add > adds"), Some(&TestStatus::Passed));
        assert_eq!(run.tests.get("test/calc.test.js > add > negative"), Some(&TestStatus::Failed));
        assert_eq!(run.tests.len(), 2);
    }

    /// Real output, captured on Debian's Node 18.20.4 (swe-harvest/base:node18) from
    /// Jest 29.7.0, Mocha 10.8.2 (with our reporter) and Vitest 1.6.1 through the
    /// helper, on one file with nested `describe`s, a failure and a skip, and one
    /// file that fails to load (`require('./does-not-exist')`).
    const JEST_JSON: &str = include_str!("../../../tests/fixtures/node/jest.json");
    const JEST_LOG: &str = include_str!("../../../tests/fixtures/node/jest.log");
    const MOCHA_LINES: &str = include_str!("../../../tests/fixtures/node/mocha.jsonl");
    const MOCHA_LOG: &str = include_str!("../../../tests/fixtures/node/mocha.log");
    const VITEST_JSON: &str = include_str!("../../../tests/fixtures/node/vitest.json");
    const VITEST_LOG: &str = include_str!("../../../tests/fixtures/node/vitest.log");
    const NODE_TEST_LOG: &str = include_str!("../../../tests/fixtures/node/node-test.log");

    /// What every runner reports for the fixture's files (`FILE` replaced), and
    /// nothing of the file that does not load.
    fn expected(file: &str, skipped: bool) -> Vec<(String, TestStatus)> {
        let mut list = vec![
            (format!("{file} > calc > add > adds two numbers"), TestStatus::Passed),
            (format!("{file} > calc > add > fails on purpose"), TestStatus::Failed),
            (format!("{file} > calc > top level in calc"), TestStatus::Passed),
        ];
        if skipped {
            list.push((format!("{file} > calc > add > is skipped"), TestStatus::Skipped));
        }
        list.sort_by(|a, b| a.0.cmp(&b.0));
        list
    }

    fn statuses(run: &ParsedRun) -> Vec<(String, TestStatus)> {
        run.tests.iter().map(|(id, status)| (id.clone(), *status)).collect()
    }

    /// The tests of a report, without the files' own ids.
    fn test_statuses(run: &ParsedRun) -> Vec<(String, TestStatus)> {
        statuses(run).into_iter().filter(|(id, _)| id.contains(SEPARATOR)).collect()
    }

    #[test]
    fn jest_and_vitest_reports_give_file_describe_title_ids() {
        assert_eq!(test_statuses(&parse_json_report(JEST_JSON)), expected("test/calc.test.js", true));
        // Vitest's file-level suite has an empty title: not part of the id.
        assert_eq!(test_statuses(&parse_json_report(VITEST_JSON)), expected("test/calc.vitest.test.mjs", true));
        assert!(parse_json_report(JEST_JSON).durations.values().all(|seconds| *seconds < 1.0));
    }

    /// Real reports of Jest 29.7.0 on one file whose `describe` body holds an `expect`
    /// outside any test (iamkun/dayjs-2369's shape), before the fix with the circus
    /// runner (the suite failed to run) and the jasmine2 runner (a test `encountered
    /// a declaration exception`), and after it.
    const DECLARATION_CIRCUS: &str = include_str!("../../../tests/fixtures/node/jest-declaration-circus.json");
    const DECLARATION_JASMINE2: &str = include_str!("../../../tests/fixtures/node/jest-declaration-jasmine2.json");
    const DECLARATION_FIXED: &str = include_str!("../../../tests/fixtures/node/jest-declaration-fixed.json");

    #[test]
    fn a_describe_body_that_throws_fails_the_files_own_id_which_passes_once_it_declares() {
        let file = "test/declare.test.js";
        for before in [DECLARATION_CIRCUS, DECLARATION_JASMINE2] {
            let run = parse_json_report(before);
            assert_eq!(run.tests.get(file), Some(&TestStatus::Failed), "{:?}", run.tests);
            assert!(!run.tests.keys().any(|id| id.contains(DECLARATION_EXCEPTION)), "{:?}", run.tests);
        }
        let after = parse_json_report(DECLARATION_FIXED);
        assert_eq!(after.tests.get(file), Some(&TestStatus::Passed));
        assert_eq!(after.tests.get("test/declare.test.js > add > adds"), Some(&TestStatus::Passed));
        // A file that declared its tests passes whatever they do; one that did not load fails.
        let fixture = parse_json_report(JEST_JSON);
        assert_eq!(fixture.tests.get("test/calc.test.js"), Some(&TestStatus::Passed));
        assert_eq!(fixture.tests.get("test/broken.test.js"), Some(&TestStatus::Failed));
        // Jest's verbose lines (read when a report is missing) give the same file ids.
        let logs = [
            (include_str!("../../../tests/fixtures/node/jest-declaration-circus.log"), TestStatus::Failed),
            (include_str!("../../../tests/fixtures/node/jest-declaration-jasmine2.log"), TestStatus::Failed),
            (include_str!("../../../tests/fixtures/node/jest-declaration-fixed.log"), TestStatus::Passed),
        ];
        for (log, status) in logs {
            let run = parse_verbose_log(log);
            assert_eq!(run.tests.get(file), Some(&status), "{log}");
            assert!(!run.tests.keys().any(|id| id.contains(DECLARATION_EXCEPTION)), "{:?}", run.tests);
        }
        let log = parse_verbose_log(JEST_LOG);
        assert_eq!(log.tests.get("test/calc.test.js"), Some(&TestStatus::Passed));
        assert_eq!(log.tests.get("test/broken.test.js"), Some(&TestStatus::Failed));
        let vitest = parse_json_report(VITEST_JSON);
        assert_eq!(vitest.tests.get("test/calc.vitest.test.mjs"), Some(&TestStatus::Passed));
        assert_eq!(vitest.tests.get("test/broken.vitest.test.mjs"), Some(&TestStatus::Failed));
    }

    #[test]
    fn our_mocha_reporter_lines_give_the_same_ids() {
        assert_eq!(statuses(&parse_mocha_lines(MOCHA_LINES)), expected("test/calc.test.js", true));
    }

    #[test]
    fn the_verbose_logs_give_the_same_ids_when_a_report_is_missing() {
        assert_eq!(test_statuses(&parse_verbose_log(JEST_LOG)), expected("test/calc.test.js", true));
        // Vitest's verbose lines name the test in full; it does not print skips.
        assert_eq!(statuses(&parse_verbose_log(VITEST_LOG)), expected("test/calc.vitest.test.mjs", false));
        // Mocha's spec lines carry no `describe`: the title under the file.
        let mocha = parse_verbose_log(MOCHA_LOG);
        assert_eq!(mocha.tests.get("test/calc.test.js > fails on purpose"), Some(&TestStatus::Failed));
        assert_eq!(mocha.tests.get("test/calc.test.js > adds two numbers"), Some(&TestStatus::Passed));
    }

    #[test]
    fn node_test_tap_gives_the_same_ids() {
        let run = parse_tap_log(NODE_TEST_LOG);
        let file = "test/node.test.mjs";
        let ids: Vec<(String, TestStatus)> = vec![
            (format!("{file} > calc > adds two numbers"), TestStatus::Passed),
            (format!("{file} > calc > fails on purpose"), TestStatus::Failed),
            (format!("{file} > calc > is skipped"), TestStatus::Skipped),
            (format!("{file} > top level"), TestStatus::Passed),
        ];
        assert_eq!(statuses(&run), ids);
    }

    #[test]
    fn tap_nests_subtests_under_their_file_and_suites() {
        let log = "# swe-harvest file: test/a.test.mjs\nTAP version 13\n# Subtest: math\n    # Subtest: adds\n    ok 1 - adds\n      ---\n      ...\n    # Subtest: subtracts\n    not ok 2 - subtracts\n    # Subtest: later\n    ok 3 - later # SKIP\n    1..3\nnot ok 1 - math\nok 2 - top level\n1..2\n";
        let run = parse_tap_log(log);
        let ids: Vec<(&str, &TestStatus)> = run.tests.iter().map(|(id, status)| (id.as_str(), status)).collect();
        assert_eq!(
            ids,
            vec![
                ("test/a.test.mjs > math > adds", &TestStatus::Passed),
                ("test/a.test.mjs > math > later", &TestStatus::Skipped),
                ("test/a.test.mjs > math > subtracts", &TestStatus::Failed),
                ("test/a.test.mjs > top level", &TestStatus::Passed),
            ]
        );
    }
}
