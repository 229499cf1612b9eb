//! Java's runtimes (Maven's and Gradle's projects alike): Debian's headless OpenJDK
//! and Maven of bullseye (JDK 11, Maven 3.6), bookworm (17, 3.8) and trixie (21, 3.9);
//! `ca-certificates-java` makes the JVM's truststore from Debian's CA list. No
//! Gradle: Debian's (4.4) builds no project of the last years, and a wrapper
//! downloads its distribution from services.gradle.org (see [`super::gradle`]).

use crate::ecosystem::runtimes::{BaseImage, Check, DebianSuite, Runtimes, VersionForm};

pub static RUNTIMES: Runtimes = Runtimes {
    language: "java",
    aliases: &[],
    key_prefix: "jdk",
    version_form: VersionForm::Major,
    tag_prefix: "",
    packages: &["openjdk-{version}-jdk-headless", "maven", "ca-certificates-java", "git", "ca-certificates", "patch"],
    command: "bash",
    check: Check {
        command: r#"javac -version 2>&1 && test -s /etc/ssl/certs/java/cacerts && maven=$(mvn -B -v 2>&1) && echo "$maven" | head -n 1"#,
        expect: "javac {version}.",
    },
    images: &[
        BaseImage { version: "11", suite: DebianSuite::Bullseye, by_default: true },
        BaseImage { version: "17", suite: DebianSuite::Bookworm, by_default: true },
        BaseImage { version: "21", suite: DebianSuite::Trixie, by_default: true },
    ],
    upstream: None,
};
