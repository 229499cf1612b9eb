//! Go's runtimes: Debian's `golang-go` of bookworm (1.19) and trixie (1.24), with a
//! C compiler for cgo; and, made only when asked for (`SWE_HARVEST_BASE_IMAGES=go1.27`),
//! forky's (1.27) for modules whose `go` directive is newer than 1.24. Forky is
//! Debian's testing suite and moves: when its `golang-go` is another release, the
//! image's check fails at set-up, naming the version it found. Never an upstream image.

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
        BaseImage { version: "1.27", suite: DebianSuite::Forky, by_default: false },
    ],
    upstream: None,
};
