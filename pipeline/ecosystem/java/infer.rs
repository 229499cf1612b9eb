//! A Maven project's environment from its `pom.xml` at the environment commit: the
//! JDK is chosen among the base images (`jdk11`, `jdk17`, `jdk21`, Debian's OpenJDK)
//! from the Java level the build declares, and from the task's date when it declares
//! none.
//!
//! The declared level (decision): `maven.compiler.release`, else
//! `maven.compiler.source` / `maven.compiler.target` (the higher), else the
//! `<release>` / `<source>` / `<target>` of the compiler plugin's configuration, else
//! a `java.version` property (Spring's convention), else the `<version>` of a
//! toolchains `<jdk>` requirement; a `${property}` is resolved once through the POM's
//! `<properties>`. `1.8` is 8. The JDK: the oldest base image that still compiles that
//! level (javac 11 compiles 6 and later, 17 compiles 7 and later, 21 compiles 8 and
//! later; an old level on a new JDK is what breaks, never the reverse), else the
//! newest. With no declaration: the newest JDK released by the task's date (11 from
//! September 2018, 17 from September 2021, 21 from September 2023), so that old build
//! plugins meet the JDK of their time.
//!
//! The project's CI (decision, 2026-12-07; [`crate::ecosystem::ci`]): the JDKs its
//! test jobs set up (`actions/setup-java`, a matrix's `java`, Travis's `jdk`, a
//! `maven:3-eclipse-temurin-17` image) narrow that choice among the JDKs that compile
//! the declared level ([`ci::narrow`]). Its Maven test commands' profiles (`-Pci`;
//! not release, signing, coverage or publishing ones) and properties (`-Dx=y`; not
//! test selection, skips or coverage) join the test command and the image's Maven
//! runs, so that both build the same; its test jobs' `MAVEN_OPTS`,
//! `JAVA_TOOL_OPTIONS` and `_JAVA_OPTIONS` are set for the tests (`env NAME=VALUE
//! mvn ...`). `-pl` is not taken: the helper chooses the modules of the touched files.
//!
//! Gradle builds are [`super::gradle`]'s.

use chrono::{DateTime, Datelike, Utc};
use quick_xml::events::{BytesStart, Event};

use crate::ecosystem::ci::{self, CiEvidence, Language};
use crate::ecosystem::{InferError, RepoFiles};
use crate::model::EnvironmentSpec;

/// The flags of the skipped plugins (which and why: [`TEST_COMMAND`]), in the test
/// command and in the image's install steps too: fastjson2's `package` (tried when its `test-compile` failed) ran
/// javadoc, which fetches the JDK's API docs from docs.oracle.com for its links, and
/// the image failed on the refused host.
macro_rules! skipped_plugins {
    () => {
        "-Denforcer.skip=true -Dcheckstyle.skip=true -Djacoco.skip=true \
         -Danimal.sniffer.skip=true -Drat.skip=true -Dlicense.skip=true \
         -Dforbiddenapis.skip=true -Dspotless.check.skip=true -Dspotbugs.skip=true \
         -Dpmd.skip=true -Dcpd.skip=true -Dmaven.javadoc.skip=true -Dmaven.source.skip=true -Dgpg.skip=true"
    };
}

/// The test command: batch mode (no colours, no progress), offline, with the checks
/// and reports that builds bind before `test` turned off by their standard skip
/// properties. The helper adds `-Dtest=`, `-pl` and the goal.
///
/// The skipped plugins (decision): each only checks the build or reports on it (Maven
/// and JDK versions, style, licence headers, API signatures, static analysis,
/// coverage, javadoc, signing) and writes nothing that compiling or running the tests
/// reads, so results are the same without them; jackson-dataformat-xml's enforcer and
/// JaCoCo goals cost seconds of every Maven run, and the JaCoCo agent instruments every
/// class the tests load. JaCoCo sets `argLine` to empty when skipped, so a POM's
/// `@{argLine}` still resolves. A check that would fail the build before `test` (a
/// style violation in the test patch) no longer hides the tests' verdict. Plugins that
/// make what tests may read are kept: code generators, resources, the OSGi manifest
/// (bnd, bundle: gson's `OSGiManifestIT` reads it).
pub const TEST_COMMAND: &str =
    concat!("mvn -B -o -ntp -DfailIfNoTests=false -Dsurefire.failIfNoSpecifiedTests=false ", skipped_plugins!());

/// A parent POM at a `-SNAPSHOT` version that cannot be resolved (snapshot
/// repositories purge old snapshots, and Sonatype's cannot be reached here: Jackson's
/// modules name `jackson-base:2.14.0-SNAPSHOT` between releases) is replaced by its
/// release (`2.14.0`, `2.15.0-rc3`), installed in the local repository under the
/// snapshot's version (its own `<version>`, often inherited, set to the snapshot's), so that the build and the offline runs resolve it (decision:
/// the release is what the snapshot became; the checkout itself is left unchanged).
/// Maven runs outside the project there: the project does not load without its parent.
pub const RELEASE_FOR_SNAPSHOT_PARENT: &str = r#"parent=$(sed -n '/<parent>/,/<\/parent>/p' pom.xml); version=$(printf '%s\n' "$parent" | sed -n 's:.*<version>\(.*\)</version>.*:\1:p' | head -n 1); case "$version" in *-SNAPSHOT) if ! mvn -B -ntp -q validate >/dev/null 2>&1; then group=$(printf '%s\n' "$parent" | sed -n 's:.*<groupId>\(.*\)</groupId>.*:\1:p' | head -n 1); artifact=$(printf '%s\n' "$parent" | sed -n 's:.*<artifactId>\(.*\)</artifactId>.*:\1:p' | head -n 1); release=${version%-SNAPSHOT}; echo "swe-harvest: the parent POM $group:$artifact:$version cannot be resolved; installing its release $release under that version"; (cd /tmp && mvn -B -ntp -q dependency:get -Dartifact="$group:$artifact:$release:pom" -Dtransitive=false && awk -v a="$artifact" -v r="$release" -v v="$version" 'skip && index($0, "<version>" r "</version>") { skip = 0; next } { skip = 0 } !done && index($0, "<artifactId>" a "</artifactId>") { print; print "<version>" v "</version>"; done = 1; skip = 1; next } { print }' "$HOME/.m2/repository/$(printf '%s' "$group" | tr . /)/$artifact/$release/$artifact-$release.pom" > /tmp/swe-harvest-parent.pom && mvn -B -ntp -q install:install-file -Dfile=/tmp/swe-harvest-parent.pom -DpomFile=/tmp/swe-harvest-parent.pom -Dpackaging=pom); fi ;; esac"#;

/// Resolves the dependencies and plugins of the build up to the test sources and
/// compiles them, through Maven Central; the image fails when this does.
///
/// When `test-compile` fails, `package` is tried once: before `package`, the reactor
/// hands a module the `target/classes` of the siblings it depends on, and a sibling
/// whose jar only packaging makes (a shaded bundle: dubbo's `dubbo-native-plugin`
/// depends on `dubbo`, the shade of every other module, with no sources of its own)
/// has none, so the module does not compile.
pub const RESOLVE_AND_COMPILE: &str = concat!(
    "mvn -B -ntp -DskipTests ",
    skipped_plugins!(),
    " test-compile \
    || { echo 'swe-harvest: test-compile failed; trying package, whose reactor hands each module the jars its siblings package'; \
    mvn -B -ntp -DskipTests ",
    skipped_plugins!(),
    " package; }"
);

/// Starts Surefire on every test class with a method filter that matches no method,
/// failures ignored: Surefire resolves its test-framework provider (surefire-junit4,
/// surefire-junit-platform) only when it has test classes to run, and an offline run
/// needs it in the local repository; no test runs (decision: running the whole suite
/// here took 2.5 of gson's 4.5 minutes of image build for nothing more). Capped, and
/// it keeps only its last lines. Its own failure never fails the image: the install
/// step runs under `set -e`, and a warm-up that failed (javaparser's, after a
/// `test-compile` that succeeded) had dropped the task as `environment_build_failed`.
pub const WARM_TEST_RUN: &str = concat!(
    "timeout 1200 mvn -B -ntp -Dmaven.test.failure.ignore=true -DfailIfNoTests=false \
                                 -Dsurefire.failIfNoSpecifiedTests=false '-Dtest=*#swe_harvest_no_such_method' ",
    skipped_plugins!(),
    " test >/tmp/swe-harvest-warm.log 2>&1 \
                                 || echo 'swe-harvest: the warm-up test run failed (the tests run later, offline); its last lines:'; \
                                 tail -n 20 /tmp/swe-harvest-warm.log"
);

/// The JDK of a base image runtime (`jdk17` -> 17).
pub fn jdk_of(runtime: &str) -> Option<u32> {
    runtime.strip_prefix("jdk")?.parse().ok()
}

/// The oldest Java level a JDK's javac still compiles.
fn oldest_level(jdk: u32) -> u32 {
    match jdk {
        ..=11 => 6,
        12..=20 => 7,
        _ => 8,
    }
}

/// `1.8` -> 8, `11` -> 11, `17.0.2` -> 17.
pub fn java_level(text: &str) -> Option<u32> {
    let text = text.trim();
    let text = text.strip_prefix("1.").filter(|rest| !rest.is_empty()).unwrap_or(text);
    text.split('.').next()?.parse().ok()
}

/// An element of a POM: its name (without a namespace prefix), its text and its
/// children, in document order. Comments are no part of it.
#[derive(Debug, Default)]
struct Element {
    name: String,
    text: String,
    children: Vec<Element>,
}

impl Element {
    /// The first child named `name`.
    fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|child| child.name == name)
    }

    /// The trimmed text of the first child named `name`.
    fn text_of(&self, name: &str) -> Option<&str> {
        self.child(name).map(|child| child.text.trim())
    }

    /// The first element named `name` at any depth below this one, in document order.
    fn find(&self, name: &str) -> Option<&Element> {
        self.children.iter().find_map(|child| if child.name == name { Some(child) } else { child.find(name) })
    }

    /// Every element at any depth below this one, in document order.
    fn descendants(&self) -> Vec<&Element> {
        self.children.iter().flat_map(|child| std::iter::once(child).chain(child.descendants())).collect()
    }
}

/// The POM's root element (`<project>`), read with an XML parser; a POM that stops
/// or breaks in the middle gives what was read before.
fn parse_pom(xml: &str) -> Option<Element> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let name = |element: &BytesStart<'_>| String::from_utf8_lossy(element.local_name().as_ref()).into_owned();
    // The open elements; the first holds the document's top-level elements.
    let mut open = vec![Element::default()];
    loop {
        match reader.read_event() {
            Ok(Event::Start(element)) => open.push(Element { name: name(&element), ..Element::default() }),
            Ok(Event::Empty(element)) => {
                let empty = Element { name: name(&element), ..Element::default() };
                open.last_mut().expect("the document is open").children.push(empty);
            }
            Ok(Event::Text(text)) => {
                if let (Some(element), Ok(text)) = (open.last_mut(), text.decode()) {
                    element.text.push_str(&text);
                }
            }
            Ok(Event::CData(text)) => {
                if let Some(element) = open.last_mut() {
                    element.text.push_str(&String::from_utf8_lossy(&text));
                }
            }
            Ok(Event::GeneralRef(reference)) => {
                let entity = reference.decode().ok().and_then(|name| quick_xml::escape::resolve_xml_entity(&name));
                if let (Some(element), Some(entity)) = (open.last_mut(), entity) {
                    element.text.push_str(entity);
                }
            }
            Ok(Event::End(_)) if open.len() > 1 => {
                let closed = open.pop().expect("more than the document is open");
                open.last_mut().expect("the document is open").children.push(closed);
            }
            Ok(Event::Eof) | Err(_) => break,
            Ok(_) => {}
        }
    }
    while open.len() > 1 {
        let unclosed = open.pop().expect("more than the document is open");
        open.last_mut().expect("the document is open").children.push(unclosed);
    }
    open.pop()?.children.into_iter().find(|element| element.name == "project")
}

/// A value with `${name}` resolved once through the POM's `<properties>`.
fn resolved(project: &Element, value: &str) -> Option<String> {
    match value.strip_prefix("${").and_then(|rest| rest.strip_suffix('}')) {
        Some(name) => project.child("properties")?.text_of(name).map(str::to_string),
        None => Some(value.to_string()),
    }
}

/// The Java level a POM declares (see the module doc for the order).
pub fn declared_level(pom: &str) -> Option<u32> {
    let project = parse_pom(pom)?;
    let level = |value: Option<&str>| value.and_then(|value| resolved(&project, value)).and_then(|v| java_level(&v));
    let no_properties = Element::default();
    let properties = project.child("properties").unwrap_or(&no_properties);
    if let Some(release) = level(properties.text_of("maven.compiler.release")) {
        return Some(release);
    }
    let source_target =
        level(properties.text_of("maven.compiler.source")).max(level(properties.text_of("maven.compiler.target")));
    if source_target.is_some() {
        return source_target;
    }
    // The compiler plugin's own configuration (in `<plugins>`, `<pluginManagement>` or a profile).
    let compiler = project
        .descendants()
        .into_iter()
        .find(|element| element.name == "plugin" && element.text_of("artifactId") == Some("maven-compiler-plugin"));
    if let Some(configuration) = compiler.and_then(|plugin| plugin.child("configuration")) {
        let found = level(configuration.text_of("release"))
            .or_else(|| level(configuration.text_of("source")).max(level(configuration.text_of("target"))));
        if found.is_some() {
            return found;
        }
    }
    if let Some(version) = level(properties.text_of("java.version")) {
        return Some(version);
    }
    // A toolchains requirement: `<jdk><version>[11,)</version></jdk>`, or the range as the text.
    project.find("jdk").and_then(|jdk| {
        let range = jdk.text_of("version").unwrap_or(jdk.text.trim());
        level(Some(range.trim_matches(['[', '(', ')', ']', ','])))
    })
}

/// The JDK for a declared level at a date among `runtimes` (`jdkN`, others ignored).
pub fn choose_runtime(level: Option<u32>, date: DateTime<Utc>, runtimes: &[String]) -> Option<String> {
    let mut known: Vec<(u32, &String)> =
        runtimes.iter().filter_map(|runtime| jdk_of(runtime).map(|jdk| (jdk, runtime))).collect();
    known.sort();
    let chosen = match level {
        Some(level) => known
            .iter()
            .find(|(jdk, _)| *jdk >= level && oldest_level(*jdk) <= level)
            .or_else(|| known.iter().rev().find(|(jdk, _)| *jdk >= level))
            .or(known.last()),
        None => {
            let released = |jdk: u32| match jdk {
                ..=11 => (2018, 9),
                12..=17 => (2021, 9),
                _ => (2023, 9),
            };
            let at = (date.year(), date.month());
            known.iter().rev().find(|(jdk, _)| released(*jdk) <= at).or(known.first())
        }
    };
    chosen.map(|(_, runtime)| (*runtime).clone())
}

/// The file inference reads: the root POM.
pub fn reads(path: &str) -> bool {
    path == "pom.xml"
}

pub fn infer(files: &RepoFiles, date: DateTime<Utc>, runtimes: &[String]) -> Result<EnvironmentSpec, InferError> {
    let Some(pom) = files.get("pom.xml") else {
        return Err(InferError::NotRecognised { language: "Java", expected: "pom.xml" });
    };
    let level = declared_level(pom);
    let runtime = choose_runtime(level, date, runtimes).ok_or_else(|| {
        let requires = level.map_or("any JDK".to_string(), |level| format!("Java {level}"));
        InferError::no_runtime("Java", requires, runtimes)
    })?;
    let evidence = CiEvidence::read(files);
    let mut decisions = Vec::new();
    let runtime = ci_runtime(&runtime, level, runtimes, &evidence, &mut decisions);
    let mut install: Vec<String> =
        vec![RELEASE_FOR_SNAPSHOT_PARENT.into(), RESOLVE_AND_COMPILE.into(), WARM_TEST_RUN.into()];
    let mut test_command = TEST_COMMAND.to_string();
    if let Some((flags, said)) = ci_maven_flags(&evidence) {
        let flags = flags.iter().map(|flag| crate::sandbox::script::shell_quote(flag)).collect::<Vec<_>>().join(" ");
        test_command = test_command.replacen("mvn ", &format!("mvn {flags} "), 1);
        for step in install.iter_mut().skip(1) {
            *step = step.replace("mvn -B -ntp ", &format!("mvn -B -ntp {flags} "));
        }
        decisions.push(format!("Maven flags `{flags}` from CI's test command ({said})"));
    }
    let variables: Vec<&ci::EnvVar> = ["MAVEN_OPTS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS"]
        .iter()
        .filter_map(|name| evidence.env_var(name))
        .filter(|var| !var.value.contains('$') && !var.value.trim().is_empty())
        .collect();
    if !variables.is_empty() {
        let assignments: Vec<String> = variables
            .iter()
            .map(|var| crate::sandbox::script::shell_quote(&format!("{}={}", var.name, var.value.trim())))
            .collect();
        test_command = format!("env {} {test_command}", assignments.join(" "));
        decisions.push(format!("`{}` from CI's test job ({})", assignments.join(" "), variables[0].origin));
    }
    let mut spec = EnvironmentSpec::inferred(super::NAME, runtime, install, test_command);
    evidence.record(&mut spec, decisions);
    Ok(spec)
}

/// The JDK CI's tested JDKs narrow `usual` to, among those that compile `level` (see
/// the module doc); a decision says so when it differs.
fn ci_runtime(
    usual: &str,
    level: Option<u32>,
    runtimes: &[String],
    evidence: &CiEvidence,
    decisions: &mut Vec<String>,
) -> String {
    let (versions, named) = ci_tested_java(evidence);
    let available: Vec<u32> = runtimes
        .iter()
        .filter_map(|runtime| jdk_of(runtime))
        .filter(|jdk| level.is_none_or(|level| *jdk >= level && oldest_level(*jdk) <= level))
        .collect();
    let Some(usual_jdk) = jdk_of(usual) else { return usual.to_string() };
    let chosen = ci::narrow(usual_jdk, &named, &available, |a, b| u64::from(a.abs_diff(b)));
    if chosen == usual_jdk {
        return usual.to_string();
    }
    decisions.push(format!("runtime jdk{chosen}, not {usual}: CI tests Java {}", ci::versions_said(&versions)));
    format!("jdk{chosen}")
}

/// The Java versions CI's test jobs set up that name a level (`17`, `1.8`, `17.0.2`),
/// with where, and their levels (Maven's and Gradle's inference narrow with them).
pub fn ci_tested_java(evidence: &CiEvidence) -> (Vec<(&str, &ci::RuntimeVersion)>, Vec<u32>) {
    let mut versions = evidence.tested_versions(Language::Java);
    versions.retain(|(version, _)| java_level(version).is_some());
    let named = versions.iter().filter_map(|(version, _)| java_level(version)).collect();
    (versions, named)
}

/// Words of profile names that only release, sign, measure or publish.
const UNWANTED_PROFILES: &[&str] =
    &["release", "deploy", "sign", "gpg", "sonar", "coverage", "jacoco", "javadoc", "dist", "publish", "snapshot"];

/// Words of properties that select tests, skip them, or measure them.
const UNWANTED_PROPERTIES: &[&str] =
    &["test", "skip", "jacoco", "coverage", "sonar", "gpg", "surefire", "failsafe", "it.", "argline", "maven.repo"];

/// The profiles (`-Pa,b`) and properties (`-Dname=value`) of CI's Maven test commands
/// that the test command takes (see the module doc), each once, with where.
fn ci_maven_flags(evidence: &CiEvidence) -> Option<(Vec<String>, String)> {
    let mut flags: Vec<String> = Vec::new();
    let mut origins: Vec<String> = Vec::new();
    for (words, step) in evidence.runner_commands(ci::shell::Runner::Maven) {
        let mut found = Vec::new();
        for (index, word) in words.iter().enumerate() {
            let profiles = match word.as_str() {
                "-P" | "--activate-profiles" => words.get(index + 1).cloned(),
                other => other.strip_prefix("-P").filter(|rest| !rest.is_empty()).map(str::to_string),
            };
            if let Some(profiles) = profiles {
                let wanted: Vec<&str> = profiles
                    .split(',')
                    .filter(|profile| {
                        let lower = profile.to_ascii_lowercase();
                        !profile.is_empty()
                            && !profile.starts_with('!')
                            && !UNWANTED_PROFILES.iter().any(|unwanted| lower.contains(unwanted))
                            && profile.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
                    })
                    .collect();
                if !wanted.is_empty() {
                    found.push(format!("-P{}", wanted.join(",")));
                }
            }
            if let Some(property) = word.strip_prefix("-D") {
                let name = property.split('=').next().unwrap_or(property).to_ascii_lowercase();
                let wanted = !UNWANTED_PROPERTIES.iter().any(|unwanted| name.contains(unwanted))
                    && !TEST_COMMAND.contains(word.as_str())
                    && !word.contains('$');
                if wanted && property.contains('=') {
                    found.push(word.clone());
                }
            }
        }
        for flag in found {
            if !flags.contains(&flag) {
                flags.push(flag);
                let origin = step.origin.to_string();
                if !origins.contains(&origin) {
                    origins.push(origin);
                }
            }
        }
    }
    (!flags.is_empty()).then(|| (flags, origins.join(", ")))
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn runtimes() -> Vec<String> {
        vec!["jdk21".into(), "jdk11".into(), "jdk17".into(), "3.11".into(), "go1.24".into()]
    }

    fn date(year: i32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(year, 6, 1, 0, 0, 0).unwrap()
    }

    /// CI evidence in Java: a POM at level 8 (jdk11 by itself) that CI tests on JDK 17
    /// and 21 gets jdk17; its Maven command's `-Pstrict` and `-Dfoo=bar` (not its
    /// release profile nor its test selection) join the test command and the image's
    /// Maven runs; MAVEN_OPTS is set for the tests; the spec says so.
    #[test]
    fn ci_evidence_chooses_the_jdk_the_profiles_and_maven_opts() {
        let pom = "<project><properties><maven.compiler.release>8</maven.compiler.release></properties></project>";
        let workflow = "jobs:\n  build:\n    strategy:\n      matrix:\n        java: [17, 21]\n    env:\n      \
                        MAVEN_OPTS: -Xmx2g\n    steps:\n      - uses: actions/setup-java@v4\n        with:\n          \
                        java-version: ${{ matrix.java }}\n          distribution: temurin\n      \
                        - run: ./mvnw -B -Pstrict,release -Dfoo=bar -Dtest=Quick -DskipITs verify\n";
        let plain: RepoFiles = [("pom.xml".to_string(), pom.to_string())].into();
        let mut with_ci = plain.clone();
        with_ci.insert(".github/workflows/maven.yml".into(), workflow.into());
        let without = infer(&plain, date(2024), &runtimes()).unwrap();
        let spec = infer(&with_ci, date(2024), &runtimes()).unwrap();
        assert_eq!((without.runtime.as_str(), without.test_command.as_str()), ("jdk11", TEST_COMMAND));
        assert_eq!(spec.runtime, "jdk17");
        assert_eq!(spec.test_command, format!("env MAVEN_OPTS=-Xmx2g mvn -Pstrict -Dfoo=bar {}", &TEST_COMMAND[4..]));
        assert!(spec.install[1].starts_with("mvn -B -ntp -Pstrict -Dfoo=bar -DskipTests"), "{:?}", spec.install);
        assert!(
            spec.install[2].contains("mvn -B -ntp -Pstrict -Dfoo=bar -Dmaven.test.failure.ignore"),
            "{:?}",
            spec.install
        );
        assert_eq!(spec.ci.len(), 3, "{:?}", spec.ci);
        assert!(spec.ci[0].starts_with("runtime jdk17, not jdk11: CI tests Java 17, 21"), "{:?}", spec.ci);
        // A level no JDK CI names compiles: CI names nothing to choose from.
        let old = pom.replace(">8<", ">6<");
        with_ci.insert("pom.xml".into(), old);
        assert_eq!(infer(&with_ci, date(2024), &runtimes()).unwrap().runtime, "jdk11");
    }

    /// The install steps under `set -e`, as the image runs them, with a `mvn` on the
    /// path that fails every goal but `test-compile` (javaparser's warm-up failed).
    #[test]
    fn a_warm_up_that_fails_does_not_fail_the_install() {
        let bin = tempfile::tempdir().unwrap();
        let mvn = bin.path().join("mvn");
        fs_err::write(&mvn, "#!/bin/sh\ncase \"$*\" in *test-compile*) exit 0 ;; esac\necho 'BUILD FAILURE'\nexit 1\n")
            .unwrap();
        std::fs::set_permissions(&mvn, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let script = format!("set -e; {RESOLVE_AND_COMPILE}; {WARM_TEST_RUN}; echo installed");
        let output = std::process::Command::new("sh")
            .arg("-c")
            .arg(&script)
            .env("PATH", format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap()))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
        assert!(
            stdout.contains("swe-harvest: the warm-up test run failed") && stdout.contains("BUILD FAILURE"),
            "{stdout}"
        );
        assert!(stdout.ends_with("installed\n"), "{stdout}");
        for step in [RESOLVE_AND_COMPILE, WARM_TEST_RUN, TEST_COMMAND] {
            assert!(
                step.contains("-Dmaven.javadoc.skip=true -Dmaven.source.skip=true"),
                "every Maven run skips them: {step}"
            );
        }
    }

    #[test]
    fn the_level_comes_from_properties_then_the_compiler_plugin_then_java_version() {
        let release = "<project><properties><maven.compiler.release>17</maven.compiler.release></properties></project>";
        assert_eq!(declared_level(release), Some(17));
        let source = "<project><properties><maven.compiler.source>1.8</maven.compiler.source>\
                      <maven.compiler.target>1.8</maven.compiler.target></properties></project>";
        assert_eq!(declared_level(source), Some(8));
        // gson 2.8 (2017): the plugin's configuration, no properties.
        let plugin = "<project><build><plugins><plugin><groupId>org.apache.maven.plugins</groupId>\
                      <artifactId>maven-compiler-plugin</artifactId><version>3.6.1</version>\
                      <configuration><source>1.6</source><target>1.6</target></configuration></plugin></plugins></build></project>";
        assert_eq!(declared_level(plugin), Some(6));
        let through_property = "<project><properties><javac.src.version>11</javac.src.version></properties>\
                      <build><plugins><plugin><artifactId>maven-compiler-plugin</artifactId>\
                      <configuration><release>${javac.src.version}</release></configuration></plugin></plugins></build></project>";
        assert_eq!(declared_level(through_property), Some(11));
        let spring = "<project><properties><java.version>21</java.version></properties></project>";
        assert_eq!(declared_level(spring), Some(21));
        let commented = "<project><!-- <maven.compiler.release>21</maven.compiler.release> --></project>";
        assert_eq!(declared_level(commented), None);
        // A real POM's shape: a declaration, a namespace, a profile's properties that
        // are not the project's, and another plugin's configuration first.
        let real = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
                    <project xmlns=\"http://maven.apache.org/POM/4.0.0\"><modelVersion>4.0.0</modelVersion>\
                    <profiles><profile><properties><java.version>8</java.version></properties></profile></profiles>\
                    <build><plugins><plugin><artifactId>maven-jar-plugin</artifactId>\
                    <configuration><release>9</release></configuration></plugin>\
                    <plugin><artifactId>maven-compiler-plugin</artifactId>\
                    <configuration><release><![CDATA[17]]></release></configuration></plugin></plugins></build></project>";
        assert_eq!(declared_level(real), Some(17));
        let toolchain = "<project><build><plugins><plugin><artifactId>maven-toolchains-plugin</artifactId>\
                         <configuration><toolchains><jdk><version>[11,)</version></jdk></toolchains></configuration>\
                         </plugin></plugins></build></project>";
        assert_eq!(declared_level(toolchain), Some(11));
        assert_eq!(declared_level("<project><properties><maven.compiler.release>17"), Some(17), "a cut POM");
        assert_eq!(declared_level("not xml at all"), None);
    }

    #[test]
    fn the_oldest_jdk_that_compiles_the_level_wins_and_the_date_decides_without_one() {
        assert_eq!(choose_runtime(Some(6), date(2017), &runtimes()).as_deref(), Some("jdk11"));
        assert_eq!(choose_runtime(Some(8), date(2024), &runtimes()).as_deref(), Some("jdk11"));
        assert_eq!(choose_runtime(Some(17), date(2022), &runtimes()).as_deref(), Some("jdk17"));
        assert_eq!(choose_runtime(Some(21), date(2024), &runtimes()).as_deref(), Some("jdk21"));
        assert_eq!(choose_runtime(Some(25), date(2026), &runtimes()).as_deref(), Some("jdk21"), "else the newest");
        // Only JDK 21: level 7 does not compile there, and nothing else is left.
        assert_eq!(choose_runtime(Some(7), date(2020), &["jdk21".to_string()]).as_deref(), Some("jdk21"));
        assert_eq!(choose_runtime(None, date(2019), &runtimes()).as_deref(), Some("jdk11"));
        assert_eq!(choose_runtime(None, date(2022), &runtimes()).as_deref(), Some("jdk17"));
        assert_eq!(choose_runtime(None, date(2025), &runtimes()).as_deref(), Some("jdk21"));
        assert_eq!(choose_runtime(None, date(2015), &runtimes()).as_deref(), Some("jdk11"), "older: the oldest");
        assert_eq!(choose_runtime(Some(8), date(2020), &["3.11".to_string()]), None);
    }

    #[test]
    fn inference_needs_a_pom() {
        let pom = "<project><properties><maven.compiler.release>17</maven.compiler.release></properties></project>";
        let files: RepoFiles = [("pom.xml".to_string(), pom.to_string())].into();
        let spec = infer(&files, date(2023), &runtimes()).unwrap();
        assert_eq!((spec.ecosystem.as_str(), spec.runtime.as_str()), ("java", "jdk17"));
        assert!(spec.test_command.contains(" -o "), "tests run offline: {}", spec.test_command);
        let Err(error) = infer(&files, date(2023), &["3.11".to_string()]) else { panic!("no JDK image") };
        assert!(error.to_string().contains("Java 17"), "{error}");
        assert!(matches!(infer(&RepoFiles::new(), date(2023), &runtimes()), Err(InferError::NotRecognised { .. })));
    }
}
