//! C's and C++'s runtimes: Debian's compilers and the build systems C projects test
//! with (autotools' `make check`, CMake's CTest, plain make), bison and flex for
//! generated parsers: bookworm (GCC 12, CMake 3.25), made by default; bullseye
//! (GCC 10, CMake 3.18: for code older than glibc 2.34, such as Catch2's of 2021 whose
//! `SIGSTKSZ` is no constant since) and trixie (GCC 14, CMake 3.31), made when asked
//! for by tag (one image keeps CI's set-up short; inference takes the newest GCC there
//! that the task's date allows). No
//! valgrind: autotools projects' tests (jq's) use it only when it is installed.

use crate::ecosystem::runtimes::{BaseImage, Check, DebianSuite, Runtimes, VersionForm};

pub static RUNTIMES: Runtimes = Runtimes {
    language: "c",
    aliases: &["cpp"],
    key_prefix: "gcc",
    version_form: VersionForm::Major,
    tag_prefix: "",
    packages: &[
        "gcc",
        "g++",
        "make",
        "libc6-dev",
        "autoconf",
        "automake",
        "libtool",
        "cmake",
        "pkg-config",
        "bison",
        "flex",
        "file",
        "git",
        "ca-certificates",
        "patch",
    ],
    command: "bash",
    check: Check {
        command: r#"autoreconf --version >/dev/null && cmake --version >/dev/null && echo "gcc $(gcc -dumpversion), $(cmake --version | head -n 1), $(make --version | head -n 1)""#,
        expect: "gcc {version},",
    },
    images: &[
        BaseImage { version: "10", suite: DebianSuite::Bullseye, by_default: false },
        BaseImage { version: "12", suite: DebianSuite::Bookworm, by_default: true },
        BaseImage { version: "14", suite: DebianSuite::Trixie, by_default: false },
    ],
    upstream: None,
};
