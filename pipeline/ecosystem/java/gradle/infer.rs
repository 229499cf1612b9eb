//! A Gradle project's environment: which Gradle distribution builds it and on which
//! JDK.
//!
//! The version a project wants (decision): the one its wrapper names
//! (`gradle/wrapper/gradle-wrapper.properties`, `distributionUrl=...gradle-8.5-bin.zip`),
//! since that is what the project built with; a wrapper is never run (it downloads
//! from services.gradle.org, which image builds cannot reach here).
//!
//! The distribution: a zip of `validate.gradle_distributions` configured for exactly
//! that version (an operator downloads it elsewhere; inference sees it as the runtime
//! `gradle<version>`), else Debian's `gradle` package (4.4.1) when the wrapper asks
//! for a 4.x version or there is no wrapper, else [`InferError::Unsupported`] naming
//! the version and the key to set.
//!
//! The JDK: for Debian's gradle, `jdk17` (bookworm's package runs there: checked by
//! hand on `swe-harvest/base:jdk17`, a JUnit 4 project compiled, tested and read
//! back offline), else `jdk11`. For a configured distribution, the newest JDK among
//! the base images that the version runs on, by Gradle's compatibility matrix (21
//! from Gradle 8.5, 17 from 7.3, 11 from 5.0), else the oldest JDK there. The Java
//! level a build script declares (`sourceCompatibility`) is not read: Groovy and
//! Kotlin build scripts say it in too many ways, and a newer JDK compiles old levels
//! down to 8 (21) or 7 (17). The project's CI (decision, 2026-12-07, issue 64)
//! narrows that choice among the JDKs that run the distribution, as Maven's
//! inference does among those that compile the level: the one CI tests (`setup-java`,
//! a `jdk`/`java` matrix axis, a JDK image) nearest the usual choice ([`ci::narrow`]),
//! said in the spec's `ci` record.

use chrono::{DateTime, Utc};

use crate::ecosystem::ci::{self, CiEvidence};
use crate::ecosystem::java::infer::{ci_tested_java, jdk_of};
use crate::ecosystem::{InferError, RepoFiles};
use crate::model::EnvironmentSpec;

/// Where a Gradle wrapper names its distribution.
pub const WRAPPER_PROPERTIES: &str = "gradle/wrapper/gradle-wrapper.properties";
/// The build files that make a project a Gradle one.
pub const BUILD_FILES: &[&str] = &["build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"];
/// Debian's `gradle` package: its version's major, and the package.
const DEBIAN_MAJOR: u32 = 4;
pub const DEBIAN_PACKAGE: &str = "gradle";
/// The prefix of a configured distribution as a runtime (`gradle8.5`).
pub const RUNTIME_PREFIX: &str = "gradle";
/// Where a configured distribution is unpacked in the image (`/opt/gradle-8.5`).
pub fn install_dir(version: &str) -> String {
    format!("/opt/gradle-{version}")
}
/// The options of every Gradle call: no daemon left behind, no colours.
const OPTIONS: &str = "--no-daemon --console=plain";

/// `8.5` -> (8, 5), `7.6.4` -> (7, 6), `8.0-rc-1` -> (8, 0); `None` for what is no
/// Gradle version.
pub fn parse_version(text: &str) -> Option<(u32, u32)> {
    let core = text.split('-').next()?;
    let mut parts = core.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = match parts.next() {
        Some(minor) => minor.parse().ok()?,
        None => 0,
    };
    (parts.all(|part| part.parse::<u32>().is_ok()) && !text.is_empty()).then_some((major, minor))
}

/// The version a wrapper's properties name: `distributionUrl=https\://services.gradle.org/distributions/gradle-8.5-bin.zip` -> `8.5`.
pub fn wrapper_version(properties: &str) -> Option<String> {
    let url = properties.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "distributionUrl").then(|| value.trim())
    })?;
    let name = url.rsplit('/').next()?;
    let version = name.strip_prefix("gradle-")?;
    let version = version.strip_suffix("-bin.zip").or_else(|| version.strip_suffix("-all.zip"))?;
    parse_version(version).map(|_| version.to_string())
}

/// The Gradle that builds a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Distribution {
    /// Debian's package (`gradle` on the PATH).
    Debian,
    /// A zip of `validate.gradle_distributions`, by version.
    Configured(String),
}

impl Distribution {
    /// The command that starts it.
    pub fn command(&self) -> String {
        match self {
            Distribution::Debian => "gradle".to_string(),
            Distribution::Configured(version) => format!("{}/bin/gradle", install_dir(version)),
        }
    }

    /// The configured distribution a test command names (`/opt/gradle-8.5/bin/gradle
    /// ...` -> `8.5`); `None`: Debian's.
    pub fn of_command(test_command: &str) -> Option<String> {
        let rest = test_command.trim_start().strip_prefix("/opt/gradle-")?;
        let (version, _) = rest.split_once("/bin/gradle")?;
        Some(version.to_string())
    }
}

/// The distribution for the version a wrapper wants (`None`: no wrapper), given the
/// configured versions; `Err(version)` when none fits.
pub fn choose_distribution(wanted: Option<&str>, configured: &[String]) -> Result<Distribution, String> {
    let Some(wanted) = wanted else { return Ok(Distribution::Debian) };
    if configured.iter().any(|version| version == wanted) {
        return Ok(Distribution::Configured(wanted.to_string()));
    }
    match parse_version(wanted) {
        Some((DEBIAN_MAJOR, _)) => Ok(Distribution::Debian),
        _ => Err(wanted.to_string()),
    }
}

/// The newest JDK a Gradle version runs on (Gradle's compatibility matrix).
fn newest_jdk(version: (u32, u32)) -> u32 {
    match version {
        (major, minor) if (major, minor) >= (8, 5) => 21,
        (major, minor) if (major, minor) >= (7, 3) => 17,
        (major, _) if major >= 5 => 11,
        _ => 10,
    }
}

/// The JDK base images among `runtimes` (`jdkN`, others ignored) that run a
/// distribution, the preferred last: Debian's gradle runs on 11 and 17 (17
/// preferred); a configured one on those up to the newest its version runs on, else
/// (none that old here) the oldest there is.
fn runnable_jdks(distribution: &Distribution, runtimes: &[String]) -> Vec<u32> {
    let mut jdks: Vec<u32> = runtimes.iter().filter_map(|runtime| jdk_of(runtime)).collect();
    jdks.sort();
    jdks.dedup();
    match distribution {
        Distribution::Debian => [11, 17].into_iter().filter(|jdk| jdks.contains(jdk)).collect(),
        Distribution::Configured(version) => {
            let newest = parse_version(version).map_or(11, newest_jdk);
            let runnable: Vec<u32> = jdks.iter().copied().filter(|jdk| *jdk <= newest).collect();
            if runnable.is_empty() { jdks.first().copied().into_iter().collect() } else { runnable }
        }
    }
}

/// The JDK base image for a distribution among `runtimes` (`jdkN`, others ignored).
pub fn choose_jdk(distribution: &Distribution, runtimes: &[String]) -> Option<String> {
    runnable_jdks(distribution, runtimes).last().map(|jdk| format!("jdk{jdk}"))
}

/// The JDK CI's tested Java versions narrow `usual` to, among those that run the
/// distribution ([`ci::narrow`], as Maven's inference does among those that compile
/// the level); a decision says so when it differs.
fn ci_jdk(
    usual: String,
    distribution: &Distribution,
    runtimes: &[String],
    evidence: &CiEvidence,
    decisions: &mut Vec<String>,
) -> String {
    let (versions, named) = ci_tested_java(evidence);
    let available = runnable_jdks(distribution, runtimes);
    let Some(usual_jdk) = jdk_of(&usual) else { return usual };
    let chosen = ci::narrow(usual_jdk, &named, &available, |a, b| u64::from(a.abs_diff(b)));
    if chosen == usual_jdk {
        return usual;
    }
    let gradle = match distribution {
        Distribution::Debian => "Debian's gradle".to_string(),
        Distribution::Configured(version) => format!("Gradle {version}"),
    };
    decisions.push(format!(
        "runtime jdk{chosen}, not {usual} (among the JDKs {gradle} runs on): CI tests Java {}",
        ci::versions_said(&versions)
    ));
    format!("jdk{chosen}")
}

/// Compiles the main and test sources of every project, which resolves their
/// compile classpaths through Maven Central (network on); the image fails when this
/// does.
fn resolve_and_compile(gradle: &str) -> String {
    format!("{gradle} {OPTIONS} testClasses")
}

/// Starts every project's `test` task with a filter that matches no test, failures
/// ignored: the test runtime classpath and the test framework's runtime are resolved
/// only when tests run, and offline runs need them in the Gradle user home. No test
/// runs, and Gradle then fails the build ("No tests found"), which is ignored (the
/// install step runs under `set -e`). Capped, and it keeps only its last lines.
fn warm_test_run(gradle: &str) -> String {
    format!(
        "timeout 1200 {gradle} {OPTIONS} --continue test --tests swe_harvest.NoSuchTest \
         >/tmp/swe-harvest-warm.log 2>&1 || true; tail -n 20 /tmp/swe-harvest-warm.log"
    )
}

/// The files inference reads: the build files and the wrapper's properties.
pub fn reads(path: &str) -> bool {
    BUILD_FILES.contains(&path) || path == WRAPPER_PROPERTIES
}

pub fn infer(files: &RepoFiles, _date: DateTime<Utc>, runtimes: &[String]) -> Result<EnvironmentSpec, InferError> {
    if !BUILD_FILES.iter().any(|name| files.contains_key(*name)) {
        return Err(InferError::NotRecognised { language: "Java", expected: "build.gradle or build.gradle.kts" });
    }
    let wanted = files.get(WRAPPER_PROPERTIES).and_then(|properties| wrapper_version(properties));
    let configured: Vec<String> =
        runtimes.iter().filter_map(|runtime| runtime.strip_prefix(RUNTIME_PREFIX)).map(str::to_string).collect();
    let distribution =
        choose_distribution(wanted.as_deref(), &configured).map_err(|version| InferError::Unsupported {
            language: "Java",
            what: format!(
                "a Gradle build whose wrapper wants Gradle {version} (`{WRAPPER_PROPERTIES}`), which has no \
                 distribution here"
            ),
            why: "the wrapper downloads it from services.gradle.org, which image builds cannot reach, and \
                  Debian's gradle is 4.4.1; download gradle-<version>-bin.zip elsewhere and name it in the config: \
                  [validate] gradle_distributions = { \"<version>\" = \"/path/to/gradle-<version>-bin.zip\" }",
        })?;
    let runtime = choose_jdk(&distribution, runtimes).ok_or_else(|| {
        let requires = match &distribution {
            Distribution::Debian => "jdk17 or jdk11 (for Debian's gradle)".to_string(),
            Distribution::Configured(version) => format!("a JDK for Gradle {version}"),
        };
        InferError::no_runtime("Java", requires, runtimes)
    })?;
    let evidence = CiEvidence::read(files);
    let mut decisions = Vec::new();
    let runtime = ci_jdk(runtime, &distribution, runtimes, &evidence, &mut decisions);
    let gradle = distribution.command();
    let install = vec![resolve_and_compile(&gradle), warm_test_run(&gradle)];
    let test_command = format!("{gradle} --offline {OPTIONS}");
    let mut spec = EnvironmentSpec {
        system_packages: match distribution {
            Distribution::Debian => vec![DEBIAN_PACKAGE.to_string()],
            Distribution::Configured(_) => Vec::new(),
        },
        ..EnvironmentSpec::inferred(super::NAME, runtime, install, test_command)
    };
    evidence.record(&mut spec, decisions);
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn date() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 6, 1, 0, 0, 0).unwrap()
    }

    fn runtimes(extra: &[&str]) -> Vec<String> {
        ["jdk11", "jdk17", "jdk21", "3.11"].iter().chain(extra).map(|runtime| runtime.to_string()).collect()
    }

    fn project(wrapper: Option<&str>) -> RepoFiles {
        let mut files: RepoFiles = [("build.gradle".to_string(), "apply plugin: 'java'\n".to_string())].into();
        if let Some(url) = wrapper {
            files.insert(
                WRAPPER_PROPERTIES.to_string(),
                format!("distributionBase=GRADLE_USER_HOME\ndistributionUrl={url}\nzipStorePath=wrapper/dists\n"),
            );
        }
        files
    }

    #[test]
    fn the_wrapper_names_the_version() {
        let properties = "#Mon\ndistributionBase=GRADLE_USER_HOME\n\
                          distributionUrl=https\\://services.gradle.org/distributions/gradle-8.5-bin.zip\n";
        assert_eq!(wrapper_version(properties).as_deref(), Some("8.5"));
        let all = "distributionUrl = https\\://services.gradle.org/distributions/gradle-7.6.4-all.zip";
        assert_eq!(wrapper_version(all).as_deref(), Some("7.6.4"));
        let rc = "distributionUrl=https\\://services.gradle.org/distributions/gradle-8.0-rc-1-bin.zip";
        assert_eq!(wrapper_version(rc).as_deref(), Some("8.0-rc-1"));
        assert_eq!(wrapper_version("distributionUrl=https\\://example.com/custom.zip"), None);
        assert_eq!(wrapper_version("zipStorePath=wrapper/dists"), None);
        assert_eq!(parse_version("4.4.1"), Some((4, 4)));
        assert_eq!(parse_version("eight"), None);
    }

    #[test]
    fn a_configured_zip_wins_then_debian_for_4x_or_no_wrapper_else_a_refusal() {
        let configured = ["8.5".to_string()];
        assert_eq!(choose_distribution(Some("8.5"), &configured), Ok(Distribution::Configured("8.5".into())));
        assert_eq!(choose_distribution(Some("4.10.3"), &configured), Ok(Distribution::Debian));
        assert_eq!(choose_distribution(None, &configured), Ok(Distribution::Debian));
        assert_eq!(choose_distribution(Some("8.6"), &configured), Err("8.6".to_string()));
        assert_eq!(
            choose_distribution(Some("4.4.1"), &["4.4.1".to_string()]),
            Ok(Distribution::Configured("4.4.1".into()))
        );
    }

    #[test]
    fn the_jdk_is_the_newest_the_distribution_runs_on() {
        let all = runtimes(&[]);
        assert_eq!(choose_jdk(&Distribution::Debian, &all).as_deref(), Some("jdk17"));
        assert_eq!(choose_jdk(&Distribution::Debian, &["jdk11".into(), "jdk21".into()]).as_deref(), Some("jdk11"));
        assert_eq!(choose_jdk(&Distribution::Debian, &["jdk21".into()]), None);
        assert_eq!(choose_jdk(&Distribution::Configured("8.5".into()), &all).as_deref(), Some("jdk21"));
        assert_eq!(choose_jdk(&Distribution::Configured("7.6.4".into()), &all).as_deref(), Some("jdk17"));
        assert_eq!(choose_jdk(&Distribution::Configured("6.9".into()), &all).as_deref(), Some("jdk11"));
        assert_eq!(choose_jdk(&Distribution::Configured("4.10".into()), &all).as_deref(), Some("jdk11"), "oldest");
    }

    /// CI's `setup-java` 11 narrows Debian's gradle's usual jdk17 to jdk11 (both run
    /// it), and the spec says so; a Java CI tests that the distribution does not run on
    /// (Gradle 7.6's newest is 17) is no choice.
    #[test]
    fn ci_tested_java_narrows_the_jdk_among_those_that_run_the_distribution() {
        let workflow = |java: &str| {
            format!(
                "on: [push]\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      \
                 - uses: actions/setup-java@v4\n        with:\n          java-version: {java}\n      \
                 - run: ./gradlew test\n"
            )
        };
        let mut repo = project(None);
        assert_eq!(infer(&repo, date(), &runtimes(&[])).unwrap().runtime, "jdk17");
        repo.insert(".github/workflows/ci.yml".into(), workflow("11"));
        let spec = infer(&repo, date(), &runtimes(&[])).unwrap();
        assert_eq!(spec.runtime, "jdk11");
        assert!(
            spec.ci.contains(
                &"runtime jdk11, not jdk17 (among the JDKs Debian's gradle runs on): CI tests Java 11 \
                  (`.github/workflows/ci.yml` job `build`)"
                    .to_string()
            ),
            "{:?}",
            spec.ci
        );

        let url = "https\\://services.gradle.org/distributions/gradle-7.6.4-bin.zip";
        let mut zip = project(Some(url));
        zip.insert(".github/workflows/ci.yml".into(), workflow("21"));
        assert_eq!(infer(&zip, date(), &runtimes(&["gradle7.6.4"])).unwrap().runtime, "jdk17");
        zip.insert(".github/workflows/ci.yml".into(), workflow("11"));
        assert_eq!(infer(&zip, date(), &runtimes(&["gradle7.6.4"])).unwrap().runtime, "jdk11");
    }

    #[test]
    fn inference_gives_debian_gradle_a_configured_zip_or_names_the_key_to_set() {
        let debian = infer(&project(None), date(), &runtimes(&[])).unwrap();
        assert_eq!((debian.ecosystem.as_str(), debian.runtime.as_str()), ("java-gradle", "jdk17"));
        assert_eq!(debian.system_packages, vec!["gradle".to_string()]);
        assert!(debian.test_command.starts_with("gradle --offline"), "{}", debian.test_command);
        assert_eq!(Distribution::of_command(&debian.test_command), None);

        let url = "https\\://services.gradle.org/distributions/gradle-8.5-bin.zip";
        let zip = infer(&project(Some(url)), date(), &runtimes(&["gradle8.5"])).unwrap();
        assert_eq!(zip.runtime, "jdk21");
        assert!(zip.system_packages.is_empty());
        assert!(
            zip.install
                .iter()
                .all(|step| step.starts_with("/opt/gradle-8.5/bin/gradle ")
                    || step.contains(" /opt/gradle-8.5/bin/gradle ")),
            "{:?}",
            zip.install
        );
        assert_eq!(Distribution::of_command(&zip.test_command).as_deref(), Some("8.5"));

        let error = infer(&project(Some(url)), date(), &runtimes(&["gradle8.4"])).unwrap_err().to_string();
        assert!(error.contains("Gradle 8.5") && error.contains("gradle_distributions"), "{error}");
        let old = "https\\://services.gradle.org/distributions/gradle-4.10.3-all.zip";
        assert_eq!(infer(&project(Some(old)), date(), &runtimes(&[])).unwrap().system_packages, vec!["gradle"]);
        assert!(matches!(infer(&RepoFiles::new(), date(), &runtimes(&[])), Err(InferError::NotRecognised { .. })));
    }
}
