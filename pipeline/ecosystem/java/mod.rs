//! Java projects built with Maven and tested with Surefire: recognised by a top-level
//! `pom.xml` (Gradle builds are [`gradle`]'s), the JDK chosen from the Java level the POM declares among the base
//! images (`jdk11`, `jdk17`, `jdk21`), dependencies, plugins and Surefire's provider
//! resolved into the image's local Maven repository while it is built ([`image`]),
//! the touched test classes run offline (`mvn -o`), read back from Surefire's XML
//! reports by [`results`].
//!
//! Test ids (decision, 2026-11-28): the test method, `com.pkg.FooTest#bar`, as
//! SWE-bench Multilingual's and SWE-bench-java's rows name theirs and as `-Dtest=`
//! selects one; a row that names classes (Multi-SWE-bench's `f2p_tests` keys) is
//! compared with all of each class's methods together ([`published_java_parents`],
//! `validate::grain`). SWE-bench's
//! `parse_log_maven` names a test by the `-Dtest=` line before its `BUILD` verdict: the
//! eval script runs each class once and prints those two lines per method from the
//! run's XML reports ([`image::HARNESS_FUNCTION`]), rather than one Maven run per
//! method.
//!
//! Which tests run: the classes of the `.java` files under `src/test/java/` that the
//! test patch touches, in the modules that hold them (`-pl module -am` in a
//! multi-module build); test resources are test files (extract keeps them in the test
//! patch) but select nothing to run. Never the whole build.
//!
//! A test class that does not compile before the gold patch (it calls what the fix
//! adds) fails the module's `test-compile`, so no touched class reports a result; its
//! methods are then missing from the pre run, which the label rules count as a
//! failure, so the methods that pass after the fix are FAIL_TO_PASS (Multi-SWE-bench's
//! `n2p`). The pre run's log keeps the compiler's message.

pub mod gradle;
pub mod image;
pub mod infer;
pub mod results;
pub mod runtimes;

use std::collections::BTreeSet;

use super::{Ecosystem, Interruption, ParsedRun, Parts};
use crate::git::diff::files_changed_by;

/// The ecosystem's name in environment specs, and the language.
pub const NAME: &str = "java";

/// Java with Maven and Surefire.
pub struct MavenTest;

/// Maven's and Gradle's words for tests left without a result: the forked test JVM
/// died, or the tests did not compile.
pub(crate) const JAVA_INTERRUPTIONS: &[&str] =
    &["The forked VM terminated without properly saying goodbye", "COMPILATION ERROR", "Compilation failed"];

/// The test class a file names: `gson/src/test/java/com/g/FooTest.java` ->
/// `com.g.FooTest`; `None` for anything but a `.java` file under `src/test/java/`.
pub fn test_class_of(path: &str) -> Option<String> {
    let rooted = format!("/{path}");
    let (_, class) = rooted.split_once("/src/test/java/")?;
    Some(class.strip_suffix(".java")?.replace('/', "."))
}

/// The test classes of the files run: the report and the log keep only these.
pub fn test_classes(test_files: &[String]) -> BTreeSet<String> {
    test_files.iter().filter_map(|file| test_class_of(file)).collect()
}

/// The files of a diff that name a test class to run.
pub fn java_test_files(diff: &str) -> Vec<String> {
    files_changed_by(diff).into_iter().filter(|file| test_class_of(file).is_some()).collect()
}

impl Ecosystem for MavenTest {
    fn name(&self) -> &'static str {
        NAME
    }

    fn recognises(&self, paths: &[String]) -> bool {
        paths.iter().any(|path| path == "pom.xml")
    }

    fn project_files(&self) -> &'static str {
        "Java (Maven): pom.xml"
    }

    fn parts(&self) -> &'static Parts {
        super::language_parts!(runnable_test_files: java_test_files)
    }

    fn test_invocation(&self, test_command: &str, report: &str, files: &str) -> String {
        format!("bash {} {report} {test_command} -- {files}", image::MAVEN_TEST_HELPER)
    }

    /// Surefire's `skipAfterFailureCount` (2.19 and later; earlier ones ignore it).
    fn stop_at_first_failure(&self, test_command: &str) -> String {
        if test_command.contains("skipAfterFailureCount") {
            test_command.to_string()
        } else {
            format!("{test_command} -Dsurefire.skipAfterFailureCount=1")
        }
    }

    fn parse_report(&self, report: &str, test_files: &[String]) -> ParsedRun {
        results::parse_surefire_xml(report, &test_classes(test_files))
    }

    /// The harness function's report lines (`evaluate --mode swe` reads its eval
    /// script's output), else Surefire's console lines.
    fn parse_log(&self, log: &str, test_files: &[String]) -> ParsedRun {
        results::parse_java_log(log, &test_classes(test_files))
    }

    /// A forked test JVM that died (a crash, `System.exit`) or tests that do not
    /// compile leave tests without a result.
    fn interruption(&self, log: &str) -> Option<Interruption> {
        Interruption::first_line_with(log, JAVA_INTERRUPTIONS)
    }

    /// One Maven run per class (see [`image::HARNESS_FUNCTION`]), then the `-Dtest=`
    /// and `BUILD SUCCESS|FAILURE` lines per method that SWE-bench's `parse_log_maven`
    /// reads.
    fn harness_test_command(&self, test_command: &str) -> String {
        format!("swe_harvest_maven_each {test_command} --")
    }

    fn harness_log_parser(&self) -> &'static str {
        "parse_log_maven"
    }

    fn published_forms(&self, id: &str) -> Vec<String> {
        published_java_forms(id)
    }

    fn published_parents(&self, id: &str) -> Vec<String> {
        published_java_parents(id)
    }

    fn published_as_ours(&self, id: &str) -> String {
        results::published_as_ours(id)
    }
}

/// The simple name of a class (`com.pkg.FooTest` -> `FooTest`), if it has a package.
fn simple_name(class: &str) -> Option<String> {
    class.rsplit_once('.').map(|(_, simple)| simple.to_string()).filter(|simple| !simple.is_empty())
}

/// A test's other published names at its own grain. A method (`com.pkg.FooTest#bar`):
/// `com.pkg.FooTest > bar` and `FooTest > bar` (SWE-bench Multilingual's Gradle rows).
/// A class (read from the console): its simple name. Its class is its parent
/// ([`published_java_parents`]).
pub fn published_java_forms(id: &str) -> Vec<String> {
    let Some((class, method)) = id.split_once('#') else {
        return simple_name(id).into_iter().collect();
    };
    let mut forms = vec![format!("{class} > {method}")];
    forms.extend(simple_name(class).map(|simple| format!("{simple} > {method}")));
    forms
}

/// The coarser ids that hold a method (`com.pkg.FooTest$Inner#bar`): its outer class by
/// full and simple name (Multi-SWE-bench's rows name classes; SWE-bench Multilingual's
/// javaparser rows `Issue4560Test`), read by `validate --compare` as all of the class's
/// methods together (decision, 2026-12-07; before, one fail-to-pass method was enough).
pub fn published_java_parents(id: &str) -> Vec<String> {
    if !id.contains('#') {
        return Vec::new();
    }
    let outer = results::class_of(id);
    let mut parents = vec![outer.clone()];
    parents.extend(simple_name(&outer));
    parents
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_method_is_also_published_in_gradles_form_and_held_by_its_class() {
        assert_eq!(
            MavenTest.published_forms("com.github.javaparser.Issue4560Test#resolves"),
            ["com.github.javaparser.Issue4560Test > resolves", "Issue4560Test > resolves"]
        );
        assert_eq!(
            MavenTest.published_parents("com.github.javaparser.Issue4560Test#resolves"),
            ["com.github.javaparser.Issue4560Test", "Issue4560Test"]
        );
        assert_eq!(MavenTest.published_parents("com.pkg.FooTest$Inner#bar"), ["com.pkg.FooTest", "FooTest"]);
        assert!(MavenTest.published_parents("com.pkg.FooTest").is_empty());
        assert_eq!(MavenTest.published_forms("com.github.javaparser.Issue4560Test"), ["Issue4560Test"]);
        assert!(MavenTest.published_forms("FooTest").is_empty());
        assert_eq!(
            MavenTest.published_as_ours("org.jsoup.ConnectTest#doesGet(String)[1]"),
            "org.jsoup.ConnectTest#doesGet"
        );
        assert_eq!(MavenTest.published_as_ours("org.jsoup.ConnectTest"), "org.jsoup.ConnectTest");
    }

    #[test]
    fn a_dead_test_jvm_or_a_compile_error_is_named() {
        let log = "[ERROR] ExecutionException The forked VM terminated without properly saying goodbye. VM crash or System.exit called?\n";
        assert!(MavenTest.interruption(log).is_some_and(|found| found.evidence.contains("forked VM")));
        assert!(MavenTest.interruption("[ERROR] COMPILATION ERROR :\n").is_some());
        assert_eq!(MavenTest.interruption("[ERROR] Tests run: 2, Failures: 1\n"), None);
    }
    use crate::ecosystem::ResultsSource;

    #[test]
    fn maven_projects_are_recognised_at_the_root() {
        // Gradle's project is not Maven's.
        crate::ecosystem::fixtures::assert_recognition(
            &MavenTest,
            &[&["README.md", "pom.xml"]],
            &[&["build.gradle.kts", "gradlew"], &["tools/pom.xml", "setup.py"]],
        );
    }

    #[test]
    fn test_files_are_under_src_test_and_classes_are_the_java_files_there() {
        let diff = "--- a/gson/src/test/java/com/g/FooTest.java\n+++ b/gson/src/test/java/com/g/FooTest.java\n\
                    --- a/gson/src/main/java/com/g/Foo.java\n+++ b/gson/src/main/java/com/g/Foo.java\n\
                    --- a/src/test/resources/data.json\n+++ b/src/test/resources/data.json\n";
        assert_eq!(java_test_files(diff), vec!["gson/src/test/java/com/g/FooTest.java".to_string()]);
        assert_eq!(test_class_of("src/test/java/com/g/FooTest.java").as_deref(), Some("com.g.FooTest"));
        assert_eq!(test_class_of("src/test/resources/a.json"), None);
    }

    /// Extract's default rule (`**/test/**`) already puts `src/test/` in the test patch.
    #[test]
    fn the_default_extract_rule_classifies_java_test_trees_as_tests() {
        let rule = crate::extract::test_paths::TestPathRule::new(
            crate::ecosystem::repo_config::Compat::Native,
            &crate::ecosystem::repo_config::default_test_patterns(),
        )
        .unwrap();
        assert!(rule.is_test("gson/src/test/java/com/g/FooTest.java"));
        assert!(rule.is_test("src/test/resources/com/g/data.json"));
        assert!(!rule.is_test("src/main/java/com/g/Foo.java"));
    }

    #[test]
    fn results_keep_the_touched_classes_and_fall_back_to_the_log() {
        let files = ["src/test/java/com/acme/CalcTest.java".to_string()];
        let xml = "<testsuite name=\"com.acme.CalcTest\"><testcase name=\"a\" classname=\"com.acme.CalcTest\"/></testsuite>\
                   <testsuite name=\"com.other.CalcTest\"><testcase name=\"a\" classname=\"com.other.CalcTest\"/></testsuite>";
        let (run, source) = MavenTest.parse_results(Some(xml), "", &files);
        assert_eq!(source, ResultsSource::Report);
        assert_eq!(run.tests.keys().collect::<Vec<_>>(), vec!["com.acme.CalcTest#a"]);
        let log =
            "[ERROR] COMPILATION ERROR :\n[ERROR] CalcTest.java:[9,16] cannot find symbol\n[INFO] BUILD FAILURE\n";
        let (run, source) = MavenTest.parse_results(Some("<testsuites>\n</testsuites>\n"), log, &files);
        assert_eq!(source, ResultsSource::Log);
        assert!(run.tests.is_empty(), "a compile failure reports no class: {run:?}");
    }

    #[test]
    fn the_harness_runs_each_class_through_the_function() {
        assert_eq!(MavenTest.harness_test_command("mvn -B -o"), "swe_harvest_maven_each mvn -B -o --");
        assert_eq!(MavenTest.harness_log_parser(), "parse_log_maven");
    }
}
