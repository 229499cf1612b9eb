//! Python's runtimes: the `python3` of each Debian suite (bullseye 3.9, bookworm
//! 3.11, trixie 3.13, forky 3.14), with venv, pip, Python's headers and a compiler
//! for the sdists of a task's date; or `python:X-slim` plus the compiler where Docker
//! Hub answers, which is also the only source of a runtime no suite has (`py3.8`).
//! Nothing is built from CPython's source (docs/languages/python.md, "Runtimes").

use crate::ecosystem::runtimes::{BaseImage, Check, DebianSuite, Runtimes, Upstream, VersionForm};

/// What an sdist needs to build, besides Python's headers.
const BUILD_PACKAGES: &[&str] = &["gcc", "g++", "make", "libc6-dev", "pkg-config", "git", "patch"];

pub static RUNTIMES: Runtimes = Runtimes {
    language: "python",
    aliases: &[],
    key_prefix: "",
    version_form: VersionForm::MajorMinor,
    tag_prefix: "py",
    packages: &[
        "python3",
        "python3-venv",
        "python3-pip",
        "python3-dev",
        "gcc",
        "g++",
        "make",
        "libc6-dev",
        "pkg-config",
        "git",
        "ca-certificates",
        "patch",
    ],
    command: "python3",
    // The version, then gcc compiles against Python.h (what a C extension's sdist needs).
    check: Check {
        command: r#"python3 --version && printf '#include <Python.h>\nint main(void) { return Py_IsInitialized(); }\n' | gcc -fsyntax-only -x c -I"$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" -"#,
        expect: "Python {version}.",
    },
    images: &[
        BaseImage { version: "3.9", suite: DebianSuite::Bullseye, by_default: true },
        BaseImage { version: "3.11", suite: DebianSuite::Bookworm, by_default: true },
        BaseImage { version: "3.13", suite: DebianSuite::Trixie, by_default: true },
        BaseImage { version: "3.14", suite: DebianSuite::Forky, by_default: true },
    ],
    upstream: Some(Upstream { image: "python:{version}-slim", packages: BUILD_PACKAGES }),
};
