//! `go test` results: the JSON events of `go test -json` (the report), or the `-v`
//! lines `--- PASS: TestName (0.00s)` of a log (the fallback, and what SWE-bench's
//! `parse_log_gotest` reads). Ids are the test names Go prints (`TestName`,
//! `TestName/subtest`); see the module doc of [`super`] for why they carry no package.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use crate::ecosystem::ParsedRun;
use crate::model::TestStatus;

/// One event of `go test -json` (`go doc test2json`), the fields we read.
#[derive(Debug, Deserialize)]
struct Event {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Test", default)]
    test: Option<String>,
    #[serde(rename = "Elapsed", default)]
    elapsed: Option<f64>,
    #[serde(rename = "Output", default)]
    output: Option<String>,
}

/// Go's wording of a missing network: a name that does not resolve, a network that
/// cannot be reached (`dial tcp: lookup example.com: no such host`).
const NETWORK_ERRORS: &[&str] =
    &["no such host", "network is unreachable", "Temporary failure in name resolution", "server misbehaving"];

/// The line of the helper's report that names the tests of its first pass
/// ([`super::image::test_helper_script`]), space-separated after it.
pub const ASKED_FOR: &str = "# swe-harvest asked for: ";
/// The line of the helper's report where its pass over the whole packages begins.
pub const WHOLE_PACKAGES: &str = "# swe-harvest whole packages";

/// How `go test` marks a package whose tests did not build (`FAIL\tpkg [build failed]`).
pub const NOT_BUILT: &[&str] = &["[build failed]", "[setup failed]"];

/// Whether `test` is one of `asked` or a subtest of one (`TestX/case`).
fn is_asked(asked: &BTreeSet<String>, test: &str) -> bool {
    asked.contains(test) || test.split_once('/').is_some_and(|(parent, _)| asked.contains(parent))
}

/// The results in the JSON events of `go test -json`; lines that are not events (a
/// build error printed before them) are skipped. In the helper's report, the tests of
/// its first pass keep the results of that pass, and the run says which they were
/// ([`ParsedRun::asked_for`]) unless a package did not build: then every test of it
/// is missing for that reason, which counts as failing.
pub fn parse_go_test_json(report: &str) -> ParsedRun {
    let mut run = ParsedRun::default();
    let mut outputs: BTreeMap<String, String> = BTreeMap::new();
    let mut asked: Option<BTreeSet<String>> = None;
    let mut whole_packages = false;
    for line in report.lines() {
        if let Some(names) = line.strip_prefix(ASKED_FOR) {
            asked = Some(names.split_whitespace().map(String::from).collect());
            continue;
        }
        if line == WHOLE_PACKAGES {
            whole_packages = true;
            continue;
        }
        if !line.starts_with('{') {
            continue;
        }
        let Ok(event) = serde_json::from_str::<Event>(line) else { continue };
        let Some(test) = event.test else { continue };
        if whole_packages && asked.as_ref().is_some_and(|asked| is_asked(asked, &test)) {
            continue;
        }
        let status = match event.action.as_str() {
            "pass" => TestStatus::Passed,
            "fail" => TestStatus::Failed,
            "skip" => TestStatus::Skipped,
            "output" => {
                outputs.entry(test).or_default().push_str(event.output.as_deref().unwrap_or_default());
                continue;
            }
            _ => continue,
        };
        let failure = outputs.get(&test).filter(|_| status == TestStatus::Failed);
        run.record_test(&test, status, event.elapsed, failure.map(String::as_str), NETWORK_ERRORS);
    }
    let build_failed = NOT_BUILT.iter().any(|marker| report.contains(marker));
    run.asked_for = asked.filter(|_| !build_failed);
    run
}

/// The results in `go test -v` output: `--- PASS: name (0.00s)` (subtests indented).
pub fn parse_go_test_log(log: &str) -> ParsedRun {
    let mut run = ParsedRun::default();
    for line in log.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("--- ") else { continue };
        let Some((verdict, rest)) = rest.split_once(": ") else { continue };
        let status = match verdict {
            "PASS" => TestStatus::Passed,
            "FAIL" => TestStatus::Failed,
            "SKIP" => TestStatus::Skipped,
            _ => continue,
        };
        let Some((name, _duration)) = rest.rsplit_once(" (") else { continue };
        run.record(name, status);
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_pass_decides_the_asked_for_tests_and_the_second_the_rest() {
        let report = "# swe-harvest asked for: TestTouched\n\
            {\"Action\":\"pass\",\"Package\":\"m\",\"Test\":\"TestTouched/case\",\"Elapsed\":0}\n\
            {\"Action\":\"pass\",\"Package\":\"m\",\"Test\":\"TestTouched\",\"Elapsed\":0}\n\
            # swe-harvest whole packages\n\
            {\"Action\":\"pass\",\"Package\":\"m\",\"Test\":\"TestEarly\",\"Elapsed\":0}\n\
            {\"Action\":\"output\",\"Package\":\"m\",\"Test\":\"TestSlow\",\"Output\":\"panic: test timed out after 2m0s\\n\"}\n\
            {\"Action\":\"fail\",\"Package\":\"m\",\"Test\":\"TestSlow\",\"Elapsed\":120}\n\
            {\"Action\":\"fail\",\"Package\":\"m\",\"Test\":\"TestTouched\",\"Elapsed\":0}\n";
        let run = parse_go_test_json(report);
        assert_eq!(run.tests.get("TestTouched"), Some(&TestStatus::Passed), "the first pass's result stands");
        assert_eq!(run.tests.get("TestTouched/case"), Some(&TestStatus::Passed));
        assert_eq!(run.tests.get("TestSlow"), Some(&TestStatus::Failed));
        assert_eq!(run.asked_for, Some(["TestTouched".to_string()].into()));
        let unbuilt = format!("{report}FAIL\tm/other [build failed]\n");
        assert_eq!(
            parse_go_test_json(&unbuilt).asked_for,
            None,
            "a package that did not build: no result is a failure"
        );
        assert_eq!(parse_go_test_json("{\"Action\":\"pass\",\"Test\":\"TestA\"}\n").asked_for, None);
    }

    /// Two packages, as `go test -json` of Go 1.19 writes them: one with a subtest and a
    /// failure that the network explains, one whose name repeats with another result.
    const EVENTS: &str = r#"{"Time":"2023-01-01T00:00:00Z","Action":"run","Package":"example.com/m/a","Test":"TestAdd"}
{"Time":"2023-01-01T00:00:00Z","Action":"output","Package":"example.com/m/a","Test":"TestAdd","Output":"=== RUN   TestAdd\n"}
{"Time":"2023-01-01T00:00:00Z","Action":"run","Package":"example.com/m/a","Test":"TestAdd/negative_numbers"}
{"Time":"2023-01-01T00:00:00Z","Action":"pass","Package":"example.com/m/a","Test":"TestAdd/negative_numbers","Elapsed":0}
{"Time":"2023-01-01T00:00:00Z","Action":"pass","Package":"example.com/m/a","Test":"TestAdd","Elapsed":0.01}
{"Time":"2023-01-01T00:00:00Z","Action":"output","Package":"example.com/m/a","Test":"TestFetch","Output":"    a_test.go:9: Get \"https://example.com\": dial tcp: lookup example.com on 127.0.0.11:53: no such host\n"}
{"Time":"2023-01-01T00:00:00Z","Action":"fail","Package":"example.com/m/a","Test":"TestFetch","Elapsed":0}
{"Time":"2023-01-01T00:00:00Z","Action":"skip","Package":"example.com/m/a","Test":"TestSlow","Elapsed":0}
{"Time":"2023-01-01T00:00:00Z","Action":"pass","Package":"example.com/m/b","Test":"TestNew","Elapsed":0}
{"Time":"2023-01-01T00:00:00Z","Action":"fail","Package":"example.com/m/a","Elapsed":0.02}
{"Time":"2023-01-01T00:00:00Z","Action":"fail","Package":"example.com/m/c","Test":"TestNew","Elapsed":0}
"#;

    #[test]
    fn json_events_give_names_with_subtests_and_the_worse_of_repeated_names() {
        let run = parse_go_test_json(&format!("# example.com/m/d\nd/x_test.go:3:2: undefined: Foo\n{EVENTS}"));
        let statuses: Vec<(&str, &TestStatus)> = run.tests.iter().map(|(id, status)| (id.as_str(), status)).collect();
        assert_eq!(
            statuses,
            vec![
                ("TestAdd", &TestStatus::Passed),
                ("TestAdd/negative_numbers", &TestStatus::Passed),
                ("TestFetch", &TestStatus::Failed),
                ("TestNew", &TestStatus::Failed),
                ("TestSlow", &TestStatus::Skipped),
            ]
        );
        assert_eq!(run.network_failures.iter().collect::<Vec<_>>(), vec!["TestFetch"]);
        assert_eq!(run.durations["TestAdd"], 0.01);
    }

    #[test]
    fn verbose_lines_give_the_same_names() {
        let log = "=== RUN   TestAdd\n--- PASS: TestAdd (0.01s)\n    --- PASS: TestAdd/negative_numbers (0.00s)\n\
                   --- FAIL: TestSub (0.00s)\n--- SKIP: TestSlow (0.00s)\nFAIL\texample.com/m/a\t0.02s\n";
        let run = parse_go_test_log(log);
        assert_eq!(run.tests.len(), 4);
        assert_eq!(run.tests["TestAdd/negative_numbers"], TestStatus::Passed);
        assert_eq!(run.tests["TestSub"], TestStatus::Failed);
        assert_eq!(run.tests["TestSlow"], TestStatus::Skipped);
    }
}
