//! Go's runtimes: Debian's `golang-go` of bookworm (1.19) and trixie (1.24), with a
//! C compiler for cgo. Never an upstream image.

use crate::ecosystem::runtimes::{BaseImage, Check, DebianSuite, Runtimes, VersionForm};

pub static RUNTIMES: Runtimes = Runtimes {
    language: "go",
    aliases: &[],
    key_prefix: "go",
    version_form: VersionForm::MajorMinor,
    tag_prefix: "",
    packages: &["golang-go", "git", "ca-certificates", "patch", "gcc", "libc6-dev"],
    command: "bash",
    check: Check { command: "go version", expect: "go version go{version}" },
    images: &[
        BaseImage { version: "1.19", suite: DebianSuite::Bookworm, by_default: true },
        BaseImage { version: "1.24", suite: DebianSuite::Trixie, by_default: true },
    ],
    upstream: None,
};
