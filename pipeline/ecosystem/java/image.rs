//! Java's environment images and the setup of every container script.
//!
//! The environment: the repository at the environment commit, its dependencies and
//! build plugins resolved from Maven Central into the unprivileged user's local
//! repository (`/home/harvest/.m2/repository`) by compiling the tests
//! (`mvn test-compile`), then the existing tests run once with failures ignored, so
//! that Surefire's test-framework provider (resolved only when tests run) is there
//! too: the Maven repository is warm, and test runs are offline (`mvn -o`, no network).
//!
//! The JVM trusts the extra CA bundle (`validate.extra_ca_file`) during the build: a
//! small Java program run as root adds every certificate of the bundle to a copy of
//! the JDK's truststore (`/etc/swe-harvest/cacerts`), which `MAVEN_OPTS` names in the
//! install step only (keytool imports one certificate per JVM start: a bundle of 150
//! would take a minute). Another Maven repository than Maven Central
//! (`validate.registries.maven_repository`) is a mirror of `central` in the user's
//! `~/.m2/settings.xml`, written only when it is set.
//!
//! A `~/.m2/toolchains.xml` names the image's JDK, so that builds that require a JDK
//! through maven-toolchains-plugin find it.

use super::results;
use crate::ecosystem::dockerfile::Dockerfile;
use crate::sandbox::images::{CA_PATH, EnvironmentRequest, ImageSettings};
use crate::sandbox::script::shell_quote;

/// Where every container script writes the test helper (run by `bash`: `/tmp` is not
/// executable in containers).
pub const MAVEN_TEST_HELPER: &str = "/tmp/swe-harvest-maven-test";
/// The truststore with the extra CA, made while the image is built.
pub(crate) const TRUSTSTORE: &str = "/etc/swe-harvest/cacerts";

/// The environment of every step, build and run: Maven's local repository and
/// toolchains in the user's home, also for root (SWE-bench's harness runs as root, and
/// the JVM takes `user.home` from the password entry, not from `HOME`).
const JAVA_ENV: &str = "HOME=/home/harvest MAVEN_OPTS=-Duser.home=/home/harvest";

/// The flag of [`MAVEN_HEAP`], for the constants built from it.
macro_rules! maven_heap {
    () => {
        "-XX:MaxRAMPercentage=50"
    };
}

/// Maven's own JVM in test runs (not the tests' JVM, which Surefire forks with the
/// POM's `argLine`): the client compiler only and the serial collector. A Maven run of
/// a task is short (a minute of plugin loading and `javac`, which runs inside Maven's
/// JVM) and the optimising compiler's threads only compete with it for the cores;
/// measured on gson and jackson-dataformat-xml (two cores, loaded), a run took about
/// half the time. Not in the image's `ENV` (images stay as they were built; the
/// dependency resolution there is a different load).
const RUN_MAVEN_OPTS: &str =
    concat!("export MAVEN_OPTS=\"$MAVEN_OPTS -XX:TieredStopAtLevel=1 -XX:+UseSerialGC ", maven_heap!(), "\"");

/// Maven's own JVM, where `javac` runs, in the install step and in runs
/// ([`RUN_MAVEN_OPTS`]): half the container's memory for its heap, not the JVM's
/// default quarter (fastjson2's 2,025 test sources ran `javac` out of a 1 GiB heap in a
/// 4 GiB build: `OutOfMemoryError`). Surefire's forks, where the tests run, keep their
/// own.
const MAVEN_HEAP: &str = maven_heap!();

/// Adds the certificates of a PEM bundle (argument 2) to a copy of a truststore
/// (argument 1), written to argument 3. Run as a single-file source program (Java 11+).
pub(crate) const IMPORT_CA_PROGRAM: &str = "import java.io.*; import java.security.KeyStore; \
import java.security.cert.Certificate; import java.security.cert.CertificateFactory; \
public class ImportCa { public static void main(String[] args) throws Exception { \
KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType()); \
try (InputStream in = new FileInputStream(args[0])) { store.load(in, \"changeit\".toCharArray()); } \
int count = 0; \
try (InputStream in = new FileInputStream(args[1])) { \
for (Certificate certificate : CertificateFactory.getInstance(\"X.509\").generateCertificates(in)) { \
store.setCertificateEntry(\"swe-harvest-\" + count++, certificate); } } \
try (OutputStream out = new FileOutputStream(args[2])) { store.store(out, \"changeit\".toCharArray()); } \
System.out.println(\"swe-harvest: \" + count + \" certificates added to the truststore\"); } }";

/// The shell text that splits the build proxy's URL (`$HTTPS_PROXY`, set only in builds,
/// see [`crate::sandbox::egress`]) into `$proxy_host` and `$proxy_port`; run only when it
/// is set.
const SPLIT_PROXY: &str =
    "proxy=${HTTPS_PROXY#http://}; proxy=${proxy%/}; proxy_host=${proxy%:*}; proxy_port=${proxy##*:}";

/// Before the install step: Maven reads no proxy from the environment, so the build
/// proxy becomes a `<proxies>` entry of the user's settings (added to the mirror's,
/// when there is one) for the install step only; [`MAVEN_PROXY_AFTER`] restores them.
const MAVEN_PROXY_BEFORE: &str = "if [ -n \"${HTTPS_PROXY:-}\" ]; then {split}; \
     entry=\"<proxies><proxy><id>swe-harvest-https</id><active>true</active><protocol>https</protocol><host>$proxy_host</host><port>$proxy_port</port></proxy><proxy><id>swe-harvest-http</id><active>true</active><protocol>http</protocol><host>$proxy_host</host><port>$proxy_port</port></proxy></proxies>\"; \
     if [ -f /home/harvest/.m2/settings.xml ]; then cp /home/harvest/.m2/settings.xml /tmp/swe-harvest-settings.xml; \
     sed -i \"s#</settings>#$entry</settings>#\" /home/harvest/.m2/settings.xml; \
     else printf '<settings>%s</settings>\\n' \"$entry\" > /home/harvest/.m2/settings.xml; fi; fi; ";
const MAVEN_PROXY_AFTER: &str = "; if [ -f /tmp/swe-harvest-settings.xml ]; then mv /tmp/swe-harvest-settings.xml /home/harvest/.m2/settings.xml; \
     elif [ -n \"${HTTPS_PROXY:-}\" ]; then rm -f /home/harvest/.m2/settings.xml; fi";

/// The build proxy as Gradle's system properties, appended to the Gradle user home's
/// `gradle.properties` (which the install step removes at its end).
pub(crate) fn gradle_proxy_properties() -> String {
    format!(
        "if [ -n \"${{HTTPS_PROXY:-}}\" ]; then {SPLIT_PROXY}; \
         printf 'systemProp.%s.proxyHost=%s\\nsystemProp.%s.proxyPort=%s\\n' https \"$proxy_host\" https \"$proxy_port\" http \"$proxy_host\" http \"$proxy_port\" \
         >> /home/harvest/.gradle/gradle.properties; fi; "
    )
}

/// The shell text (`&& printf ... > settings.xml `) that makes another Maven repository
/// than Maven Central the mirror of `central`; empty for Maven Central itself. The URL
/// holds no XML or shell metacharacter (the config checks it).
fn central_mirror(repository: &str) -> String {
    if repository == crate::sandbox::Registries::MAVEN {
        return String::new();
    }
    let settings = format!(
        "<settings><mirrors><mirror><id>swe-harvest-central</id><mirrorOf>central</mirrorOf><url>{repository}</url>\
         </mirror></mirrors></settings>"
    );
    format!("&& printf '%s\\n' {} > /home/harvest/.m2/settings.xml ", shell_quote(&settings))
}

/// The Dockerfile of an environment image on `base`.
pub fn environment_dockerfile(request: &EnvironmentRequest, base: &str, settings: &ImageSettings) -> String {
    let spec = &request.spec;
    let mut dockerfile = Dockerfile::new("a Java environment image (see pipeline/ecosystem/java/image.rs)", base);
    dockerfile.system_packages(spec, "");
    let toolchains = format!(
        "&& jdk=$(dirname \"$(dirname \"$(readlink -f \"$(command -v javac)\")\")\") \
         && version=$(javac -version 2>&1 | sed -n 's/^javac \\([0-9]*\\).*/\\1/p') \
         && printf '<toolchains><toolchain><type>jdk</type><provides><version>%s</version></provides><configuration><jdkHome>%s</jdkHome></configuration></toolchain></toolchains>\\n' \"$version\" \"$jdk\" > /home/harvest/.m2/toolchains.xml \
         {mirror}",
        mirror = central_mirror(&settings.registries.maven_repository),
    );
    dockerfile.unprivileged_user("/home/harvest/.m2 /testbed /swe-harvest/out /etc/swe-harvest", &toolchains);
    let trust_the_ca = add_extra_ca_to_truststore(&mut dockerfile, settings);
    let maven_opts = if trust_the_ca {
        format!(
            "export MAVEN_OPTS=\"$MAVEN_OPTS {MAVEN_HEAP} -Djavax.net.ssl.trustStore={TRUSTSTORE} -Djavax.net.ssl.trustStorePassword=changeit\"; "
        )
    } else {
        format!("export MAVEN_OPTS=\"$MAVEN_OPTS {MAVEN_HEAP}\"; ")
    };
    dockerfile.enter_testbed(JAVA_ENV);
    let before = format!("{maven_opts}{}", MAVEN_PROXY_BEFORE.replace("{split}", SPLIT_PROXY));
    dockerfile.install(spec, Vec::new(), &before, MAVEN_PROXY_AFTER);
    dockerfile.empty_testbed();
    dockerfile.finish(request, "")
}

/// With an extra CA in `settings`: its bundle copied into the image and added to a copy
/// of the JDK's truststore ([`TRUSTSTORE`]), which the install step then names (Maven's
/// and Gradle's alike); whether it did.
pub(crate) fn add_extra_ca_to_truststore(dockerfile: &mut Dockerfile, settings: &ImageSettings) -> bool {
    if settings.extra_ca.is_none() {
        return false;
    }
    dockerfile.extra_ca(settings);
    dockerfile.push(format!(
        "RUN printf '%s\\n' {program} > /tmp/ImportCa.java \
         && java /tmp/ImportCa.java /etc/ssl/certs/java/cacerts {CA_PATH} {TRUSTSTORE} \
         && chmod 644 {TRUSTSTORE} && rm /tmp/ImportCa.java",
        program = shell_quote(IMPORT_CA_PROGRAM)
    ));
    true
}

/// The helper that runs Maven on the test classes of the given files: its arguments
/// are the report's path, the test command's words, `--`, then the files. Classes are
/// the `.java` files under a module's `src/test/java/` that exist (a test patch may
/// delete one), selected by simple name (`-Dtest=FooTest,BarTest`: every Surefire
/// version reads that form; the results keep the classes asked for by their full
/// name); modules are the folders before `src/test/`, built with what they need
/// (`-pl a,b -am`). Surefire's XML reports of the run are joined into the report.
pub const MAVEN_TEST_HELPER_SCRIPT: &str = r#"#!/bin/bash
report="$1"; shift
command=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do command+=("$1"); shift; done
[ "$#" -gt 0 ] && shift
classes=()
modules=()
for file in "$@"; do
    case "/$file" in
        */src/test/java/*.java) ;;
        *) continue ;;
    esac
    [ -f "$file" ] || continue
    module="${file%%src/test/java/*}"; module="${module%/}"; [ -n "$module" ] || module=.
    class="${file##*/}"; class="${class%.java}"
    case " ${classes[*]} " in *" $class "*) ;; *) classes+=("$class") ;; esac
    case " ${modules[*]} " in *" $module "*) ;; *) modules+=("$module") ;; esac
done
find . -path '*/target/surefire-reports' -type d -prune -exec rm -rf {} + 2>/dev/null
if [ "${#classes[@]}" -eq 0 ]; then
    echo "swe-harvest: no test class of the touched test files exists"
    : > "$report"
    exit 0
fi
selection=()
if [ "${modules[*]}" != "." ]; then
    selection=(-pl "$(IFS=,; echo "${modules[*]}")" -am)
fi
echo "swe-harvest: mvn test of ${classes[*]} in ${modules[*]}"
"${command[@]}" "${selection[@]}" -Dtest="$(IFS=,; echo "${classes[*]}")" test
code=$?
{
    echo '<testsuites>'
    find . -path '*/target/surefire-reports/TEST-*.xml' -exec sed '/^<?xml/d' {} +
    echo '</testsuites>'
} > "$report"
exit $code
"#;

/// The function SWE-bench's `eval_script` runs the tests with: one Maven run per test
/// class, named by its full name in `-Dtest=` (Surefire 2.19 and later read that
/// form), then, from that run's XML reports, two lines per test method that
/// `parse_log_maven` reads as that method's verdict (`-Dtest=com.pkg.FooTest#bar`,
/// `BUILD SUCCESS|FAILURE`: [`results::harness_report_function`]). The parser takes an id
/// from a line naming `-Dtest=` and its status from the `BUILD` line after it, so it
/// reads each class's own run too, as an id of its own that no row lists.
pub const HARNESS_FUNCTION: &str = r#"swe_harvest_maven_each() {
    local command=() file module class
    while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do command+=("$1"); shift; done
    [ "$#" -gt 0 ] && shift
    for file in "$@"; do
        case "/$file" in */src/test/java/*.java) ;; *) continue ;; esac
        [ -f "$file" ] || continue
        module="${file%%src/test/java/*}"; module="${module%/}"
        class="${file#*src/test/java/}"; class="${class%.java}"; class="${class//\//.}"
        find . -path '*/target/surefire-reports' -type d -prune -exec rm -rf {} + 2>/dev/null
        if [ -n "$module" ]; then
            "${command[@]}" -pl "$module" -am -Dtest="$class" test
        else
            "${command[@]}" -Dtest="$class" test
        fi
        swe_harvest_report_lines '*/target/surefire-reports/TEST-*.xml'
    done
}"#;

/// Every container script's setup: the environment and the test helper.
pub fn script_setup(_version: &str) -> String {
    format!(
        "export {JAVA_ENV}\n{RUN_MAVEN_OPTS}\ncat > {MAVEN_TEST_HELPER} <<'SWE_HARVEST_MAVEN_TEST'\n{MAVEN_TEST_HELPER_SCRIPT}SWE_HARVEST_MAVEN_TEST\nchmod +x {MAVEN_TEST_HELPER}\ninstall_repository() {{ echo \"Maven: nothing to install; dependencies and plugins are in the image's local repository\"; }}"
    )
}

/// The lines SWE-bench's `eval_script` runs first.
pub fn harness_setup(_version: &str) -> Vec<String> {
    vec![
        format!("export {JAVA_ENV}"),
        RUN_MAVEN_OPTS.to_string(),
        results::harness_report_function(),
        HARNESS_FUNCTION.to_string(),
    ]
}

/// Runs a test helper script (Maven's or Gradle's) with a fake build tool (`echo ...`)
/// in a folder holding `files_present`, on the touched `files`; its last output line.
#[cfg(test)]
pub(crate) fn run_helper_script(script: &str, tool: &[&str], files_present: &[&str], files: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    for file in files_present {
        let path = dir.path().join(file);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, "class X {}").unwrap();
    }
    let helper = dir.path().join("helper.sh");
    fs_err::write(&helper, script).unwrap();
    let output = std::process::Command::new("bash")
        .arg(&helper)
        .arg(dir.path().join("report.xml"))
        .args(tool)
        .args(files)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).lines().last().unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::sandbox::images::fixtures::{self, settings};

    /// The Dockerfile of the tests' one request, built with `settings`.
    fn dockerfile(settings: &ImageSettings) -> String {
        let request = fixtures::request_for("java", "jdk17", &["mvn -B test-compile"], "mvn -B -o");
        environment_dockerfile(&request, "swe-harvest/base:jdk17", settings)
    }

    #[test]
    fn the_ca_goes_into_a_truststore_that_only_the_install_step_names() {
        let text = dockerfile(&settings(Some(b"CA")));
        let install = fixtures::step_line(&text, "mvn -B test-compile", &["trustStore"]);
        assert!(install.contains("-Djavax.net.ssl.trustStore=/etc/swe-harvest/cacerts"), "{install}");
        assert!(text.contains("java /tmp/ImportCa.java /etc/ssl/certs/java/cacerts /etc/swe-harvest/ca.crt"), "{text}");
        let without = dockerfile(&settings(None));
        assert!(!without.contains("trustStore") && !without.contains("ca.crt"), "{without}");
    }

    /// fastjson2's `javac` ran out of the JVM's default heap (a quarter of the build's
    /// memory): Maven's JVM gets half, in the install step with or without a CA, and
    /// in runs.
    #[test]
    fn mavens_jvm_gets_half_the_containers_memory_in_the_install_step_and_in_runs() {
        for with_ca in [Some(b"CA".as_slice()), None] {
            let text = dockerfile(&settings(with_ca));
            let install = fixtures::step_line(&text, "mvn -B test-compile", &[]);
            assert!(install.contains(&format!("export MAVEN_OPTS=\"$MAVEN_OPTS {MAVEN_HEAP}")), "{install}");
        }
        assert!(RUN_MAVEN_OPTS.contains(MAVEN_HEAP), "{RUN_MAVEN_OPTS}");
    }

    /// The helper run with a fake `mvn` (`echo`) in a folder with the given files.
    fn helper_command(files_present: &[&str], files: &[&str]) -> String {
        run_helper_script(MAVEN_TEST_HELPER_SCRIPT, &["echo", "mvn", "-o", "--"], files_present, files)
    }

    #[test]
    fn another_maven_repository_is_the_mirror_of_central() {
        let text = dockerfile(&settings(None));
        assert!(!text.contains("<mirrors>"), "Maven Central needs no mirror: {text}");
        let mirrored =
            fixtures::mirrored(|registries| registries.maven_repository = "https://maven.example.com/central".into());
        let text = dockerfile(&mirrored);
        assert!(
            text.contains("<mirrorOf>central</mirrorOf><url>https://maven.example.com/central</url>")
                && text.contains("> /home/harvest/.m2/settings.xml"),
            "{text}"
        );
    }

    #[test]
    fn the_helper_runs_existing_test_classes_in_their_modules() {
        let present = ["gson/src/test/java/com/g/ATest.java", "extras/src/test/java/com/g/x/BTest.java"];
        let touched = [
            "gson/src/test/java/com/g/ATest.java",
            "extras/src/test/java/com/g/x/BTest.java",
            "gson/src/test/resources/data.json",
            "gson/src/test/java/com/g/GoneTest.java",
        ];
        assert_eq!(helper_command(&present, &touched), "mvn -o -pl gson,extras -am -Dtest=ATest,BTest test");
        assert_eq!(
            helper_command(&["src/test/java/a/CTest.java"], &["src/test/java/a/CTest.java"]),
            "mvn -o -Dtest=CTest test",
            "a single-module build selects no module"
        );
        let nothing = helper_command(&[], &["src/test/java/a/GoneTest.java"]);
        assert!(nothing.contains("no test class"), "nothing left: nothing runs: {nothing}");
    }
}
