//! Gradle's environment images and the setup of every container script.
//!
//! The image: Debian's `gradle` package installed in the first step after `FROM`
//! (decision: in the environment image, not in the `jdk` base images that every
//! Maven project uses; the step is the same text on the same base, so Docker's
//! build cache keeps one layer of it per JDK image, 258 MB, shared by every Gradle
//! image on that JDK; the base images and `scripts/setup.sh` stay as they are), or
//! a configured distribution zip ([`crate::validate::ValidateConfig::gradle_distributions`])
//! copied through the build context and unpacked into `/opt/gradle-<version>`. Then
//! the repository, its dependencies resolved from Maven Central into the Gradle user
//! home (`GRADLE_USER_HOME=/home/harvest/.gradle`, the unprivileged user's, and the
//! same for root: SWE-bench's harness runs as root) by compiling the tests and a
//! test run that matches no test ([`super::infer`]); test runs are `--offline`, with
//! no network.
//!
//! The JVM trusts the extra CA bundle during the build through the truststore that
//! the Maven path makes ([`crate::ecosystem::java::image`]), named as
//! `systemProp.javax.net.ssl.trustStore` in the Gradle user home's
//! `gradle.properties` for the install step only (a system property Gradle gives
//! the build's JVM, daemon or not).

use super::infer::{Distribution, install_dir};
use crate::ecosystem::dockerfile::Dockerfile;
use crate::ecosystem::java::image::{TRUSTSTORE, add_extra_ca_to_truststore};
use crate::ecosystem::java::results;
use crate::sandbox::images::{EnvironmentRequest, ImageSettings};

/// Where every container script writes the test helper.
pub const GRADLE_TEST_HELPER: &str = "/tmp/swe-harvest-gradle-test";
/// The environment of every step, build and run.
const GRADLE_ENV: &str = "HOME=/home/harvest GRADLE_USER_HOME=/home/harvest/.gradle";

/// The name in the build context of a configured distribution's zip.
pub fn distribution_file(version: &str) -> String {
    format!("gradle-{version}-bin.zip")
}

/// The Dockerfile of an environment image on `base`.
pub fn environment_dockerfile(request: &EnvironmentRequest, base: &str, settings: &ImageSettings) -> String {
    let spec = &request.spec;
    let mut dockerfile = Dockerfile::new(
        "a Java environment image built with Gradle (see pipeline/ecosystem/java/gradle/image.rs)",
        base,
    );
    // groovy's postinst links its man page: the folder must exist.
    dockerfile.system_packages(spec, "mkdir -p /usr/share/man/man1; ");
    if let Some(version) = Distribution::of_command(&spec.test_command) {
        let zip = distribution_file(&version);
        let dir = install_dir(&version);
        // `jar` (every JDK has it) unpacks without file modes: the launcher gets its own.
        dockerfile.push(format!("COPY {zip} /tmp/{zip}"));
        dockerfile.push(format!(
            "RUN cd /opt && jar xf /tmp/{zip} && chmod 755 {dir}/bin/gradle && rm /tmp/{zip} && test -d {dir}/lib"
        ));
    }
    dockerfile.unprivileged_user("/home/harvest/.gradle /testbed /swe-harvest/out /etc/swe-harvest", "");
    let trust = if add_extra_ca_to_truststore(&mut dockerfile, settings) {
        format!(
            "printf 'systemProp.javax.net.ssl.trustStore={TRUSTSTORE}\\nsystemProp.javax.net.ssl.trustStorePassword=changeit\\n' \
             > /home/harvest/.gradle/gradle.properties; "
        )
    } else {
        String::new()
    };
    dockerfile.enter_testbed(GRADLE_ENV);
    let before = format!("{trust}{}", crate::ecosystem::java::image::gradle_proxy_properties());
    dockerfile.install(spec, Vec::new(), &before, "; rm -f /home/harvest/.gradle/gradle.properties");
    dockerfile.empty_testbed();
    dockerfile.finish(request, "")
}

/// The configured distribution's zip for the build context, when the spec uses one;
/// a zip that cannot be read is left out (the settings checked it exists: the
/// Dockerfile's `COPY` then names it).
pub fn context_files(request: &EnvironmentRequest, settings: &ImageSettings) -> Vec<(String, Vec<u8>)> {
    let Some(version) = Distribution::of_command(&request.spec.test_command) else { return Vec::new() };
    let Some(path) = settings.gradle_distributions.get(&version) else { return Vec::new() };
    match fs_err::read(path) {
        Ok(bytes) => vec![(distribution_file(&version), bytes)],
        Err(error) => {
            tracing::warn!(%error, "the Gradle distribution {version} cannot be read");
            Vec::new()
        }
    }
}

/// The helper that runs Gradle on the test classes of the given files: its
/// arguments are the report's path, the test command's words, `--`, then the files.
/// Classes are the `.java` files under a project's `src/test/java/` that exist,
/// selected by full name (`--tests com.pkg.FooTest`) on the `test` task of the
/// project that holds them (`:sub:test` for `sub/src/test/java/...`, `:test` at the
/// root; the folder is the project path, Gradle's default layout), each task named
/// once with all its classes (named twice, Gradle keeps the last filter only), all in
/// one run with `--continue`. Gradle's XML reports of the run (`build/test-results/test/`,
/// Surefire's format) are joined into the report.
pub const GRADLE_TEST_HELPER_SCRIPT: &str = r#"#!/bin/bash
report="$1"; shift
command=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do command+=("$1"); shift; done
[ "$#" -gt 0 ] && shift
# A task named twice keeps only its last `--tests`: each task once, with its classes.
order=()
declare -A filters
for file in "$@"; do
    case "/$file" in
        */src/test/java/*.java) ;;
        *) continue ;;
    esac
    [ -f "$file" ] || continue
    module="${file%%src/test/java/*}"; module="${module%/}"
    class="${file#*src/test/java/}"; class="${class%.java}"; class="${class//\//.}"
    task=":${module//\//:}:test"; [ -n "$module" ] || task=":test"
    [ -n "${filters[$task]+set}" ] || order+=("$task")
    filters[$task]+=" --tests $class"
done
tasks=()
for task in "${order[@]}"; do
    read -r -a words <<< "${filters[$task]}"
    tasks+=("$task" "${words[@]}")
done
find . -path '*/build/test-results' -type d -prune -exec rm -rf {} + 2>/dev/null
if [ "${#tasks[@]}" -eq 0 ]; then
    echo "swe-harvest: no test class of the touched test files exists"
    : > "$report"
    exit 0
fi
echo "swe-harvest: gradle ${tasks[*]}"
"${command[@]}" --continue "${tasks[@]}"
code=$?
{
    echo '<testsuites>'
    find . -path '*/build/test-results/test/TEST-*.xml' -exec sed '/^<?xml/d' {} +
    echo '</testsuites>'
} > "$report"
exit $code
"#;

/// The function SWE-bench's `eval_script` runs the tests with: one Gradle run per
/// test class, then `BUILD SUCCESS` or `BUILD FAILURE` by its exit status, then two
/// lines per test method from that run's XML reports
/// ([`crate::ecosystem::java::results::harness_report_function`]), because
/// `parse_log_maven` (the parser the rows name) takes the id from a line naming
/// `-Dtest=` (the traced command names the class, given to Gradle as an unused
/// system property; the report lines name methods) and the status from the next line
/// ending in one of those (Gradle's own `BUILD SUCCESSFUL in 3s` does not match it).
pub const HARNESS_FUNCTION: &str = r#"swe_harvest_gradle_each() {
    local command=() file module class task status
    while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do command+=("$1"); shift; done
    [ "$#" -gt 0 ] && shift
    for file in "$@"; do
        case "/$file" in */src/test/java/*.java) ;; *) continue ;; esac
        [ -f "$file" ] || continue
        module="${file%%src/test/java/*}"; module="${module%/}"
        class="${file#*src/test/java/}"; class="${class%.java}"; class="${class//\//.}"
        task=":${module//\//:}:test"; [ -n "$module" ] || task=":test"
        status=FAILURE
        find . -path '*/build/test-results' -type d -prune -exec rm -rf {} + 2>/dev/null
        "${command[@]}" -Dtest="$class" "$task" --tests "$class" && status=SUCCESS
        echo "BUILD $status"
        swe_harvest_report_lines '*/build/test-results/*/TEST-*.xml'
    done
}"#;

/// Every container script's setup: the environment and the test helper.
pub fn script_setup(_version: &str) -> String {
    format!(
        "export {GRADLE_ENV}\ncat > {GRADLE_TEST_HELPER} <<'SWE_HARVEST_GRADLE_TEST'\n{GRADLE_TEST_HELPER_SCRIPT}SWE_HARVEST_GRADLE_TEST\nchmod +x {GRADLE_TEST_HELPER}\ninstall_repository() {{ echo \"Gradle: nothing to install; dependencies are in the image's Gradle user home\"; }}"
    )
}

/// The lines SWE-bench's `eval_script` runs first.
pub fn harness_setup(_version: &str) -> Vec<String> {
    vec![format!("export {GRADLE_ENV}"), results::harness_report_function(), HARNESS_FUNCTION.to_string()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EnvironmentSpec;
    use crate::sandbox::images::fixtures::{self, settings};

    fn request(test_command: &str, system_packages: &[&str]) -> EnvironmentRequest {
        fixtures::request(EnvironmentSpec {
            ecosystem: "java-gradle".into(),
            runtime: "jdk17".into(),
            system_packages: system_packages.iter().map(|package| package.to_string()).collect(),
            install: vec![format!("{} testClasses", test_command.split(' ').next().unwrap())],
            test_command: test_command.into(),
            ..Default::default()
        })
    }

    #[test]
    fn debian_gradle_is_the_first_step_and_the_ca_is_named_for_the_install_only() {
        let text = environment_dockerfile(&request("gradle --offline", &["gradle"]), "b", &settings(Some(b"CA")));
        let runs: Vec<&str> = text.lines().filter(|line| line.starts_with("RUN ")).collect();
        assert!(runs[0].starts_with("RUN set -e; mkdir -p /usr/share/man/man1; "), "{text}");
        assert!(runs[0].contains("for package in gradle; do") && runs[0].contains("apt-get install"), "{text}");
        let install = runs.iter().find(|line| line.contains("gradle testClasses")).unwrap();
        assert!(install.contains("systemProp.javax.net.ssl.trustStore=/etc/swe-harvest/cacerts"), "{install}");
        assert!(install.ends_with("rm -f /home/harvest/.gradle/gradle.properties"), "{install}");
        assert!(!text.contains("COPY gradle-"), "{text}");
        assert!(text.contains("GRADLE_USER_HOME=/home/harvest/.gradle"), "{text}");
    }

    #[test]
    fn a_configured_distribution_is_copied_and_unpacked() {
        let request = request("/opt/gradle-8.5/bin/gradle --offline", &[]);
        let text = environment_dockerfile(&request, "b", &settings(None));
        assert!(text.contains("COPY gradle-8.5-bin.zip /tmp/gradle-8.5-bin.zip"), "{text}");
        assert!(text.contains("jar xf /tmp/gradle-8.5-bin.zip && chmod 755 /opt/gradle-8.5/bin/gradle"), "{text}");
        assert!(!text.contains("apt-get") && !text.contains("trustStore"), "{text}");
        let dir = tempfile::tempdir().unwrap();
        let zip = dir.path().join("gradle-8.5-bin.zip");
        fs_err::write(&zip, b"PK zip").unwrap();
        let mut with = settings(None);
        with.gradle_distributions.insert("8.5".into(), zip);
        assert_eq!(context_files(&request, &with), vec![("gradle-8.5-bin.zip".to_string(), b"PK zip".to_vec())]);
        assert!(context_files(&super::tests::request("gradle --offline", &["gradle"]), &with).is_empty());
    }

    /// The helper run with a fake `gradle` (`echo`) in a folder with the given files.
    fn helper_command(files_present: &[&str], files: &[&str]) -> String {
        crate::ecosystem::java::image::run_helper_script(
            GRADLE_TEST_HELPER_SCRIPT,
            &["echo", "gradle", "--offline", "--"],
            files_present,
            files,
        )
    }

    #[test]
    fn the_helper_runs_existing_test_classes_on_their_projects_test_tasks() {
        let present = [
            "core/src/test/java/com/g/ATest.java",
            "ext/json/src/test/java/com/g/x/BTest.java",
            "core/src/test/java/com/g/CTest.java",
        ];
        let touched = [
            "core/src/test/java/com/g/ATest.java",
            "core/src/test/java/com/g/CTest.java",
            "ext/json/src/test/java/com/g/x/BTest.java",
            "core/src/test/resources/data.json",
            "core/src/test/java/com/g/GoneTest.java",
        ];
        assert_eq!(
            helper_command(&present, &touched),
            "gradle --offline --continue :core:test --tests com.g.ATest --tests com.g.CTest :ext:json:test --tests com.g.x.BTest"
        );
        assert_eq!(
            helper_command(&["src/test/java/a/CTest.java"], &["src/test/java/a/CTest.java"]),
            "gradle --offline --continue :test --tests a.CTest",
            "the root project's own task"
        );
        let nothing = helper_command(&[], &["src/test/java/a/GoneTest.java"]);
        assert!(nothing.contains("no test class"), "nothing left: nothing runs: {nothing}");
    }
}
