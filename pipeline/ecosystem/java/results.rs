//! Maven's test results: Surefire's XML reports (`target/surefire-reports/TEST-*.xml`,
//! which the test helper concatenates into the phase's report), or the console lines
//! `Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.1 s <<< FAILURE! - in
//! com.pkg.FooTest` of its log (the fallback). Pure functions over text.
//!
//! Ids are test methods, `com.pkg.FooTest#bar` (see the module doc of [`super`] for
//! why): a report's test case is its class and its name up to the first `(`, `[` or
//! space, so the cases of a parameterized method (`bar[0]`, `bar(String)[1]`) are one
//! id, which fails when any case fails or errs, passes when none does and one ran, and
//! is skipped when all were skipped. A nested class keeps its name
//! (`com.pkg.FooTest$Inner#baz`) and is run for its outer class's file. The console
//! names no passing method, so a run read from the log ([`parse_maven_log`]) gives
//! classes; the lines the harness function prints ([`parse_harness_log`]) give methods.

use std::collections::BTreeSet;

use quick_xml::events::{BytesStart, Event};

use crate::ecosystem::ParsedRun;
use crate::model::TestStatus;

/// The JVM's wording of a missing network (a name that does not resolve, a network
/// that cannot be reached).
const NETWORK_ERRORS: &[&str] = &[
    "java.net.UnknownHostException",
    "java.net.NoRouteToHostException",
    "Network is unreachable",
    "Temporary failure in name resolution",
];

/// The id of a test class: the outer class of a nested one.
pub fn class_id(classname: &str) -> String {
    classname.split('$').next().unwrap_or(classname).trim().to_string()
}

/// The id of a report's test case: `class#method`, the method being the case's name
/// up to its parameters (`bar(String)[1]` -> `bar`), which `-Dtest=class#method`
/// selects. The harness function's report lines ([`HARNESS_REPORT_LINES`]) cut names
/// the same way.
pub fn method_id(classname: &str, name: &str) -> String {
    let method = name.trim().split(|c: char| c == '(' || c == '[' || c.is_whitespace()).next().unwrap_or_default();
    format!("{}#{method}", classname.trim())
}

/// Our id of a published method name: its parameters cut as [`method_id`] cuts a
/// report's (`org.jsoup.ConnectTest#doesGet(String)[1]` -> `org.jsoup.ConnectTest#doesGet`,
/// as a third-party jsoup release names them); any other name as it is.
pub fn published_as_ours(id: &str) -> String {
    match id.split_once('#') {
        Some((class, name)) => method_id(class, name),
        None => id.to_string(),
    }
}

/// The class an id belongs to, for the touched-class filter: `com.pkg.FooTest$Inner#baz`
/// -> `com.pkg.FooTest`.
pub fn class_of(id: &str) -> String {
    class_id(id.split('#').next().unwrap_or(id))
}

/// Records one result (a test case, or a console line's summary of a class), keeping
/// the worse status and adding up durations; ids whose class is outside `wanted` (when
/// it has any) are left out.
fn record(run: &mut ParsedRun, wanted: &BTreeSet<String>, id: &str, status: TestStatus, seconds: f64) {
    let id = id.trim().to_string();
    if id.is_empty() || id.starts_with('#') || (!wanted.is_empty() && !wanted.contains(&class_of(&id))) {
        return;
    }
    run.record(&id, status);
    *run.durations.entry(id).or_insert(0.0) += seconds;
}

fn attribute(element: &BytesStart<'_>, name: &str) -> Option<String> {
    element
        .try_get_attribute(name)
        .ok()
        .flatten()
        .and_then(|value| value.unescape_value().ok().map(|value| value.into_owned()))
}

/// The results in Surefire XML reports (one or several `<testsuite>` documents, one
/// after the other). `wanted`: the classes the run was asked for (empty: all). A report
/// that stops in the middle (a JVM killed while writing) gives what was read.
pub fn parse_surefire_xml(xml: &str, wanted: &BTreeSet<String>) -> ParsedRun {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut run = ParsedRun::default();
    // The open <testcase>: its id, time, status so far and failure text.
    let mut open: Option<(String, f64, TestStatus, String)> = None;
    let mut in_failure = false;
    let mut suite = String::new();
    while let Ok(event) = reader.read_event() {
        match event {
            Event::Start(ref element) | Event::Empty(ref element) if element.name().as_ref() == b"testsuite" => {
                suite = attribute(element, "name").unwrap_or_default();
            }
            Event::Start(ref element) | Event::Empty(ref element) if element.name().as_ref() == b"testcase" => {
                let class = attribute(element, "classname").filter(|name| !name.is_empty()).unwrap_or(suite.clone());
                let id = method_id(&class, &attribute(element, "name").unwrap_or_default());
                let time =
                    attribute(element, "time").and_then(|time| time.replace(',', "").parse().ok()).unwrap_or(0.0);
                if matches!(event, Event::Empty(_)) {
                    record(&mut run, wanted, &id, TestStatus::Passed, time);
                } else {
                    open = Some((id, time, TestStatus::Passed, String::new()));
                }
            }
            Event::Start(ref element) | Event::Empty(ref element) if open.is_some() => {
                let status = match element.name().as_ref() {
                    b"failure" | b"rerunFailure" => Some(TestStatus::Failed),
                    b"error" | b"rerunError" => Some(TestStatus::Error),
                    b"skipped" => Some(TestStatus::Skipped),
                    _ => None,
                };
                if let (Some(status), Some(case)) = (status, open.as_mut()) {
                    // A flaky rerun that passed in the end is reported as `flakyFailure`: not a failure.
                    case.2 = case.2.worse(status);
                    if status == TestStatus::Skipped && case.2 == TestStatus::Passed {
                        case.2 = TestStatus::Skipped;
                    }
                    case.3.push_str(&attribute(element, "type").unwrap_or_default());
                    case.3.push_str(&attribute(element, "message").unwrap_or_default());
                }
                in_failure =
                    matches!(status, Some(TestStatus::Failed | TestStatus::Error)) && matches!(event, Event::Start(_));
            }
            Event::Text(text) if in_failure => {
                if let (Some(case), Ok(text)) = (open.as_mut(), text.decode()) {
                    case.3.push_str(&text);
                }
            }
            Event::CData(text) if in_failure => {
                if let Some(case) = open.as_mut() {
                    case.3.push_str(&String::from_utf8_lossy(&text));
                }
            }
            Event::End(element) if matches!(element.name().as_ref(), b"failure" | b"error") => in_failure = false,
            Event::End(element) if element.name().as_ref() == b"testcase" => {
                in_failure = false;
                if let Some((id, time, status, failure)) = open.take() {
                    if matches!(status, TestStatus::Failed | TestStatus::Error)
                        && NETWORK_ERRORS.iter().any(|phrase| failure.contains(phrase))
                        && (wanted.is_empty() || wanted.contains(&class_of(&id)))
                    {
                        run.network_failures.insert(id.clone());
                    }
                    record(&mut run, wanted, &id, status, time);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    run
}

/// The counts of one `Tests run: N, Failures: F, Errors: E, Skipped: S` line.
fn counts(line: &str) -> Option<(u32, u32, u32, u32)> {
    let rest = &line[line.find("Tests run:")?..];
    let number = |key: &str| -> Option<u32> {
        let after = &rest[rest.find(key)? + key.len()..];
        after.trim_start().chars().take_while(char::is_ascii_digit).collect::<String>().parse().ok()
    };
    Some((number("Tests run:")?, number("Failures:")?, number("Errors:")?, number("Skipped:")?))
}

/// The results in Maven's console output. Surefire 2.19 and later end each class's
/// line with `- in com.pkg.FooTest` (3.x: `-- in`); older ones print `Running
/// com.pkg.FooTest` before it. The summary line of a module (no `Time elapsed`) is
/// not a class.
pub fn parse_maven_log(log: &str, wanted: &BTreeSet<String>) -> ParsedRun {
    let mut run = ParsedRun::default();
    let mut running: Option<String> = None;
    for line in log.lines() {
        let line = line.trim();
        let text = line.strip_prefix("[INFO] ").or_else(|| line.strip_prefix("[ERROR] ")).unwrap_or(line);
        if let Some(class) = text.strip_prefix("Running ") {
            running = Some(class.trim().to_string());
            continue;
        }
        if !text.contains("Time elapsed") {
            continue;
        }
        let Some((tests, failures, errors, skipped)) = counts(text) else { continue };
        let class = match text.rsplit_once(" in ") {
            Some((_, class)) if !class.contains(' ') => Some(class.to_string()),
            _ => running.take(),
        };
        let Some(class) = class else { continue };
        let status = if failures + errors > 0 {
            TestStatus::Failed
        } else if tests > skipped {
            TestStatus::Passed
        } else {
            TestStatus::Skipped
        };
        record(&mut run, wanted, &class_id(&class), status, 0.0);
    }
    run
}

/// The results in what the harness functions print (Maven's `image::HARNESS_FUNCTION`,
/// Gradle's), read as SWE-bench's `parse_log_maven` reads them: a line naming
/// `-Dtest=<id>` (a traced command, or a report line) names the test, and the `BUILD
/// SUCCESS` or `BUILD FAILURE` line after it is its verdict. Ids are kept as printed:
/// the report lines' methods, and the class of each traced run.
pub fn parse_harness_log(log: &str) -> ParsedRun {
    let mut run = ParsedRun::default();
    let mut current: Option<String> = None;
    for line in log.lines() {
        let line = line.trim();
        if let Some((_, rest)) = line.split_once("-Dtest=") {
            current = rest.split_whitespace().next().map(str::to_string);
        }
        let status = if line.ends_with("BUILD SUCCESS") {
            TestStatus::Passed
        } else if line.ends_with("BUILD FAILURE") {
            TestStatus::Failed
        } else {
            continue;
        };
        if let Some(id) = current.clone() {
            run.tests.insert(id, status);
        }
    }
    run
}

/// A Java run's log: the harness function's lines when it has them (they name
/// methods), else the console's (classes).
pub fn parse_java_log(log: &str, wanted: &BTreeSet<String>) -> ParsedRun {
    let from_harness = parse_harness_log(log);
    if from_harness.tests.is_empty() { parse_maven_log(log, wanted) } else { from_harness }
}

/// The shell function, for SWE-bench's eval script, that prints the report lines
/// ([`HARNESS_REPORT_LINES`]) of the XML reports matching a `find -path` pattern, with
/// tracing off (a traced awk program would name `-Dtest=` itself).
pub fn harness_report_function() -> String {
    format!(
        "swe_harvest_report_lines() {{\n    {{ set +x; }} 2>/dev/null\n    find . -path \"$1\" -type f -exec cat {{}} + 2>/dev/null | awk '{HARNESS_REPORT_LINES}'\n    set -x\n}}"
    )
}

/// An awk program that prints, for each test method of the Surefire/JUnit XML reports
/// on its input, the two lines `parse_log_maven` reads (`-Dtest=<id>`, then `BUILD
/// SUCCESS` or `BUILD FAILURE`), ids cut as [`method_id`] cuts them; a method whose
/// every case was skipped prints nothing. CDATA sections (captured output, stack
/// traces) are skipped, so a test that prints `<failure>` is not read as failing.
pub const HARNESS_REPORT_LINES: &str = r##"function attr(line, key) {
    if (!match(line, " " key "=\"[^\"]*\"")) return ""
    return substr(line, RSTART + length(key) + 3, RLENGTH - length(key) - 4)
}
function finish() {
    if (id == "") return
    if (!(id in verdict)) { order[++count] = id; verdict[id] = "" }
    if (state == "FAILURE") verdict[id] = "FAILURE"
    else if (state == "SUCCESS" && verdict[id] == "") verdict[id] = "SUCCESS"
    id = ""
}
{
    line = $0
    if (in_cdata) {
        at = index(line, "]]>")
        if (at == 0) next
        line = substr(line, at + 3); in_cdata = 0
    }
    while ((at = index(line, "<![CDATA[")) > 0) {
        rest = substr(line, at + 9); close_at = index(rest, "]]>")
        if (close_at == 0) { line = substr(line, 1, at - 1); in_cdata = 1; break }
        line = substr(line, 1, at - 1) substr(rest, close_at + 3)
    }
}
line ~ /<testsuite[ >]/ { suite = attr(line, "name") }
line ~ /<testcase[ >]/ {
    finish()
    class = attr(line, "classname"); if (class == "") class = suite
    name = attr(line, "name"); sub(/[([ \t].*/, "", name)
    id = class "#" name; state = "SUCCESS"
}
id != "" && line ~ /<(failure|error|rerunFailure|rerunError)[ >\/]/ { state = "FAILURE" }
id != "" && line ~ /<skipped[ >\/]/ && state == "SUCCESS" { state = "SKIPPED" }
line ~ /<\/testcase>/ || line ~ /<testcase[^>]*\/>/ { finish() }
END {
    finish()
    for (i = 1; i <= count; i++) if (verdict[order[i]] != "") printf "-Dtest=%s\nBUILD %s\n", order[i], verdict[order[i]]
}
"##;

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> BTreeSet<String> {
        BTreeSet::new()
    }

    /// Real output: Maven 3.8.7 with Surefire 3.2.5 (JUnit 4 provider) on JDK 17, running
    /// the synthetic project of tests/languages.rs before its fix (`CalcTest`'s two
    /// tests pass, `NegativeTest`'s one fails), the reports joined as the helper joins
    /// them (system properties left out).
    const CAPTURED_REPORTS: &str = include_str!("fixtures/surefire-3.2.5-junit4.xml");
    const CAPTURED_LOG: &str = include_str!("fixtures/maven-3.8.7-surefire-3.2.5.log");

    #[test]
    fn captured_reports_give_methods_and_the_log_their_classes() {
        let from_report = parse_surefire_xml(CAPTURED_REPORTS, &none());
        assert_eq!(
            from_report.tests.into_iter().collect::<Vec<_>>(),
            vec![
                ("com.acme.calc.CalcTest#adds".to_string(), TestStatus::Passed),
                ("com.acme.calc.CalcTest#addsZero".to_string(), TestStatus::Passed),
                ("com.acme.calc.NegativeTest#addsNegatives".to_string(), TestStatus::Failed),
            ]
        );
        assert!(from_report.network_failures.is_empty());
        let from_log = parse_maven_log(CAPTURED_LOG, &none());
        assert_eq!(
            from_log.tests.into_iter().collect::<Vec<_>>(),
            vec![
                ("com.acme.calc.CalcTest".to_string(), TestStatus::Passed),
                ("com.acme.calc.NegativeTest".to_string(), TestStatus::Failed),
            ]
        );
    }

    /// Real output of a real project: google/gson's pull request 1703 before its fix
    /// (Maven 3.6.3, Surefire 3.0.0-M7, JDK 11; stack frames left out), where one test of
    /// `ReadersWritersTest` fails, in a multi-module build (`-pl gson -am`).
    #[test]
    fn a_captured_multi_module_log_gives_its_failing_class() {
        let log = include_str!("fixtures/gson-1703-pre-surefire-3.0.0-M7.log");
        let run = parse_maven_log(log, &none());
        assert_eq!(
            run.tests.into_iter().collect::<Vec<_>>(),
            vec![("com.google.gson.functional.ReadersWritersTest".to_string(), TestStatus::Failed)]
        );
    }

    /// Edge cases written by hand in Surefire's report format: a network failure, a
    /// skipped method and class, a nested class, a parameterized method whose second
    /// case fails, a passing test whose captured output prints `<failure>`.
    const REPORTS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="https://maven.apache.org/surefire/maven-surefire-plugin/xsd/surefire-test-report-3.0.xsd" version="3.0" name="com.acme.calc.CalcTest" time="0.041" tests="2" errors="0" skipped="0" failures="1">
  <properties>
    <property name="java.version" value="17.0.13"/>
  </properties>
  <testcase name="addsNegatives" classname="com.acme.calc.CalcTest" time="0.011">
    <failure message="expected:&lt;0&gt; but was:&lt;2&gt;" type="java.lang.AssertionError"><![CDATA[java.lang.AssertionError: expected:<0> but was:<2>
	at org.junit.Assert.fail(Assert.java:89)
]]></failure>
  </testcase>
  <testcase name="adds" classname="com.acme.calc.CalcTest" time="0.001"/>
  <testcase name="parses(String)[1]" classname="com.acme.calc.CalcTest" time="0.001"/>
  <testcase name="parses(String)[2]" classname="com.acme.calc.CalcTest" time="0.001">
    <error message="bad" type="java.lang.IllegalStateException">java.lang.IllegalStateException: bad</error>
  </testcase>
  <testcase name="prints" classname="com.acme.calc.CalcTest" time="0.001">
    <system-out><![CDATA[writing <failure message="x"/> and
<error> on two lines]]></system-out>
  </testcase>
</testsuite>
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="com.acme.calc.FetchTest" time="0.2" tests="3" errors="1" skipped="1" failures="0">
  <testcase name="fetches" classname="com.acme.calc.FetchTest" time="0.2">
    <error message="example.com: Temporary failure in name resolution" type="java.net.UnknownHostException">java.net.UnknownHostException: example.com</error>
  </testcase>
  <testcase name="later" classname="com.acme.calc.FetchTest" time="0">
    <skipped message="not yet"/>
  </testcase>
  <testcase name="inner" classname="com.acme.calc.FetchTest$Nested" time="0.01"/>
</testsuite>
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="com.acme.calc.SlowTest" tests="1" skipped="1">
  <testcase name="slow" classname="com.acme.calc.SlowTest" time="0"><skipped/></testcase>
</testsuite>
"#;

    /// The statuses of REPORTS by method.
    fn expected_methods() -> Vec<(&'static str, TestStatus)> {
        vec![
            ("com.acme.calc.CalcTest#adds", TestStatus::Passed),
            ("com.acme.calc.CalcTest#addsNegatives", TestStatus::Failed),
            ("com.acme.calc.CalcTest#parses", TestStatus::Error),
            ("com.acme.calc.CalcTest#prints", TestStatus::Passed),
            ("com.acme.calc.FetchTest#fetches", TestStatus::Error),
            ("com.acme.calc.FetchTest#later", TestStatus::Skipped),
            ("com.acme.calc.FetchTest$Nested#inner", TestStatus::Passed),
            ("com.acme.calc.SlowTest#slow", TestStatus::Skipped),
        ]
    }

    #[test]
    fn surefire_reports_give_methods_failed_by_any_case_and_skipped_only_when_all_were() {
        let run = parse_surefire_xml(REPORTS, &none());
        let statuses: Vec<(&str, TestStatus)> = run.tests.iter().map(|(id, status)| (id.as_str(), *status)).collect();
        assert_eq!(statuses, expected_methods());
        assert_eq!(run.network_failures.iter().collect::<Vec<_>>(), vec!["com.acme.calc.FetchTest#fetches"]);
        assert!((run.durations["com.acme.calc.CalcTest#parses"] - 0.002).abs() < 1e-9);
    }

    /// The eval script's report lines, read back as `parse_log_maven` reads them, give
    /// the verdicts our own runs read from the same reports: what validation labels is
    /// what SWE-bench's harness grades.
    #[test]
    fn the_harness_report_lines_give_the_methods_our_reader_gives() {
        let dir = tempfile::tempdir().unwrap();
        let reports = dir.path().join("core/target/surefire-reports");
        fs_err::create_dir_all(&reports).unwrap();
        fs_err::write(reports.join("TEST-com.acme.calc.CalcTest.xml"), REPORTS).unwrap();
        let script = format!(
            "set -x\n{}\nswe_harvest_report_lines '*/target/surefire-reports/TEST-*.xml'\n",
            harness_report_function()
        );
        let output = std::process::Command::new("bash").arg("-c").arg(script).current_dir(dir.path()).output().unwrap();
        let log = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        let graded = parse_harness_log(&log);
        let expected: Vec<(String, TestStatus)> = expected_methods()
            .into_iter()
            .filter(|(_, status)| *status != TestStatus::Skipped)
            .map(|(id, status)| {
                (id.to_string(), if status == TestStatus::Passed { status } else { TestStatus::Failed })
            })
            .collect();
        assert_eq!(graded.tests.into_iter().collect::<Vec<_>>(), expected, "{log}");
        assert!(!log.contains("awk"), "the awk program is not traced: {log}");
    }

    #[test]
    fn only_the_classes_asked_for_are_kept() {
        let wanted: BTreeSet<String> = ["com.acme.calc.FetchTest".to_string()].into();
        let run = parse_surefire_xml(REPORTS, &wanted);
        assert_eq!(
            run.tests.keys().collect::<Vec<_>>(),
            vec![
                "com.acme.calc.FetchTest#fetches",
                "com.acme.calc.FetchTest#later",
                "com.acme.calc.FetchTest$Nested#inner"
            ]
        );
    }

    #[test]
    fn a_truncated_report_gives_what_was_read() {
        let cut = &REPORTS[..REPORTS.find("<testcase name=\"later\"").unwrap()];
        let run = parse_surefire_xml(cut, &none());
        assert_eq!(run.tests["com.acme.calc.CalcTest#addsNegatives"], TestStatus::Failed);
        assert_eq!(run.tests.get("com.acme.calc.FetchTest#later"), None);
    }

    /// Console lines of Surefire 3.x (`-- in`), 2.22 (`- in`) and 2.12 (`Running`).
    #[test]
    fn console_lines_of_old_and_new_surefire_give_the_same_classes() {
        let log = "[INFO] Running com.acme.calc.CalcTest\n\
            [ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.041 s <<< FAILURE! -- in com.acme.calc.CalcTest\n\
            [INFO] Tests run: 4, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.01 s - in com.acme.calc.OtherTest\n\
            Running com.acme.calc.OldTest\n\
            Tests run: 3, Failures: 0, Errors: 0, Skipped: 3, Time elapsed: 0.005 sec\n\
            Running com.acme.calc.OldFailingTest\n\
            Tests run: 1, Failures: 0, Errors: 1, Skipped: 0, Time elapsed: 0.005 sec <<< FAILURE!\n\
            [ERROR] Tests run: 10, Failures: 1, Errors: 1, Skipped: 3\n";
        let run = parse_maven_log(log, &none());
        let statuses: Vec<(&str, TestStatus)> = run.tests.iter().map(|(id, status)| (id.as_str(), *status)).collect();
        assert_eq!(
            statuses,
            vec![
                ("com.acme.calc.CalcTest", TestStatus::Failed),
                ("com.acme.calc.OldFailingTest", TestStatus::Failed),
                ("com.acme.calc.OldTest", TestStatus::Skipped),
                ("com.acme.calc.OtherTest", TestStatus::Passed),
            ]
        );
    }
}
