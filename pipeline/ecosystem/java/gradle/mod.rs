//! Java projects built with Gradle: recognised by a top-level `build.gradle(.kts)` or
//! `settings.gradle(.kts)` and no `pom.xml` (a project with both is Maven's), the
//! Gradle distribution and JDK chosen by [`infer`] (Debian's gradle 4.4.1, or a zip
//! of `validate.gradle_distributions`, by the version the wrapper names),
//! dependencies resolved into the image's Gradle user home while it is built
//! ([`image`]), the touched test classes run offline (`gradle --offline :sub:test
//! --tests com.pkg.FooTest`), read back from Gradle's JUnit XML reports with the
//! Maven path's reader ([`crate::ecosystem::java::results`]: the same format).
//!
//! Test ids, test selection and compile failures are as for Maven (see
//! [`crate::ecosystem::java`]): the fully qualified test class; the classes of the
//! `.java` files under `src/test/java/` that the test patch touches, in the projects
//! that hold them; a test class that does not compile before the fix fails its
//! project's `compileTestJava`, reports nothing, and counts as failed.
//!
//! A separate ecosystem (`java-gradle`, language `java`) rather than a branch in
//! Maven's: its image, helper and harness function share nothing with Maven's but
//! the truststore and the XML reader, and its name in a stored spec says which
//! build tool runs the task.

pub mod image;
pub mod infer;

/// Java's runtimes: Gradle runs on the JDK images.
use super::runtimes;
use super::{java_test_files, results, test_classes};
use crate::ecosystem::{Ecosystem, Interruption, ParsedRun, Parts};
use crate::sandbox::images::{EnvironmentRequest, ImageSettings};

/// The ecosystem's name in environment specs.
pub const NAME: &str = "java-gradle";

/// Java with Gradle.
pub struct GradleTest;

impl Ecosystem for GradleTest {
    fn name(&self) -> &'static str {
        NAME
    }

    fn language(&self) -> &'static str {
        super::NAME
    }

    fn recognises(&self, paths: &[String]) -> bool {
        paths.iter().any(|path| infer::BUILD_FILES.contains(&path.as_str()))
    }

    fn project_files(&self) -> &'static str {
        "Java (Gradle): build.gradle, build.gradle.kts, settings.gradle, settings.gradle.kts"
    }

    /// JDK base images, and configured distributions as `gradle<version>`.
    fn owns_runtime(&self, runtime: &str) -> bool {
        self.runtimes().owns(runtime) || runtime.starts_with(infer::RUNTIME_PREFIX)
    }

    fn parts(&self) -> &'static Parts {
        crate::ecosystem::language_parts!(runnable_test_files: java_test_files)
    }

    /// A configured distribution's zip ([`image::context_files`]).
    fn environment_context_files(
        &self,
        request: &EnvironmentRequest,
        settings: &ImageSettings,
    ) -> Vec<(String, Vec<u8>)> {
        image::context_files(request, settings)
    }

    fn test_invocation(&self, test_command: &str, report: &str, files: &str) -> String {
        format!("bash {} {report} {test_command} -- {files}", image::GRADLE_TEST_HELPER)
    }

    fn parse_report(&self, report: &str, test_files: &[String]) -> ParsedRun {
        results::parse_surefire_xml(report, &test_classes(test_files))
    }

    /// Gradle's console names no test: without a report (a compile failure), the
    /// log gives what the harness function prints (`evaluate --mode swe` reads its
    /// eval script's output so), else what Maven's log reader finds (network errors).
    fn parse_log(&self, log: &str, test_files: &[String]) -> ParsedRun {
        results::parse_java_log(log, &test_classes(test_files))
    }

    fn interruption(&self, log: &str) -> Option<Interruption> {
        Interruption::first_line_with(log, crate::ecosystem::java::JAVA_INTERRUPTIONS)
    }

    /// One Gradle run per class (see [`image::HARNESS_FUNCTION`]).
    fn harness_test_command(&self, test_command: &str) -> String {
        format!("swe_harvest_gradle_each {test_command} --")
    }

    fn harness_log_parser(&self) -> &'static str {
        "parse_log_maven"
    }

    fn published_forms(&self, id: &str) -> Vec<String> {
        super::published_java_forms(id)
    }

    fn published_parents(&self, id: &str) -> Vec<String> {
        super::published_java_parents(id)
    }

    fn published_as_ours(&self, id: &str) -> String {
        results::published_as_ours(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecosystem::ResultsSource;

    #[test]
    fn the_harness_functions_output_gives_a_verdict_per_class_and_method() {
        let log = "+ gradle --offline -Dtest=com.acme.CalcTest :test --tests com.acme.CalcTest\n:test\nBUILD SUCCESSFUL in 6s\n+ echo 'BUILD SUCCESS'\nBUILD SUCCESS\n-Dtest=com.acme.CalcTest#adds\nBUILD SUCCESS\n+ gradle --offline -Dtest=com.acme.NegativeTest :test --tests com.acme.NegativeTest\nBUILD FAILED in 5s\nBUILD FAILURE\n";
        let (run, source) = GradleTest.parse_results(None, log, &[]);
        assert_eq!(source, ResultsSource::Log);
        assert_eq!(run.tests.get("com.acme.CalcTest"), Some(&crate::model::TestStatus::Passed));
        assert_eq!(run.tests.get("com.acme.NegativeTest"), Some(&crate::model::TestStatus::Failed));
        assert_eq!(run.tests.get("com.acme.CalcTest#adds"), Some(&crate::model::TestStatus::Passed));
        assert_eq!(run.tests.len(), 3);
    }

    #[test]
    fn gradle_projects_are_detected_and_maven_wins_when_both_are_there() {
        use crate::ecosystem::fixtures::paths;
        assert_eq!(crate::ecosystem::detect(&paths(&["build.gradle", "gradlew"])).name(), "java-gradle");
        assert_eq!(
            crate::ecosystem::detect(&paths(&["settings.gradle.kts", "app/build.gradle.kts"])).name(),
            "java-gradle"
        );
        assert_eq!(crate::ecosystem::detect(&paths(&["build.gradle", "pom.xml"])).name(), "java");
        assert_eq!(GradleTest.language(), "java");
        assert!(GradleTest.reads_for_inference("gradle/wrapper/gradle-wrapper.properties"));
        assert!(GradleTest.owns_runtime("gradle8.5") && GradleTest.owns_runtime("jdk17"));
        assert!(!GradleTest.owns_runtime("3.11"));
    }

    #[test]
    fn results_come_from_gradle_xml_reports_by_method() {
        let files = ["core/src/test/java/com/acme/CalcTest.java".to_string()];
        // As Gradle 4.4.1 writes it (build/test-results/test/TEST-com.acme.CalcTest.xml).
        let xml = "<testsuites>\n<testsuite name=\"com.acme.CalcTest\" tests=\"2\" skipped=\"0\" failures=\"1\" errors=\"0\">\n\
                   <properties/>\n<testcase name=\"adds\" classname=\"com.acme.CalcTest\" time=\"0.01\"/>\n\
                   <testcase name=\"subtracts\" classname=\"com.acme.CalcTest\" time=\"0.0\">\n\
                   <failure message=\"expected\" type=\"java.lang.AssertionError\">boom</failure>\n</testcase>\n\
                   </testsuite>\n</testsuites>\n";
        let (run, source) = GradleTest.parse_results(Some(xml), "", &files);
        assert_eq!(source, ResultsSource::Report);
        assert_eq!(run.tests.get("com.acme.CalcTest#adds"), Some(&crate::model::TestStatus::Passed));
        assert_eq!(run.tests.get("com.acme.CalcTest#subtracts"), Some(&crate::model::TestStatus::Failed));
        let log =
            "> Task :core:compileTestJava FAILED\nCalcTest.java:9: error: cannot find symbol\nBUILD FAILED in 3s\n";
        let (run, source) = GradleTest.parse_results(Some("<testsuites>\n</testsuites>\n"), log, &files);
        assert_eq!(source, ResultsSource::Log);
        assert!(run.tests.is_empty(), "a compile failure reports no class: {run:?}");
    }

    #[test]
    fn the_harness_runs_each_class_through_the_function() {
        assert_eq!(GradleTest.harness_test_command("gradle --offline"), "swe_harvest_gradle_each gradle --offline --");
        assert_eq!(GradleTest.harness_log_parser(), "parse_log_maven");
    }
}
