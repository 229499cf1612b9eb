//! Rust's runtimes: Debian's `rustc` and `cargo` of bookworm (1.63, cargo 1.65) and
//! trixie (1.85), with gcc as the linker and the build tools that crates building C
//! code run (`make`, `cmake`, `pkg-config`; others are added by the ladder when a
//! build names them, see `missing.rs`). Never an upstream image.

use crate::ecosystem::runtimes::{BaseImage, Check, DebianSuite, Runtimes, VersionForm};

pub static RUNTIMES: Runtimes = Runtimes {
    language: "rust",
    aliases: &[],
    key_prefix: "rust",
    version_form: VersionForm::MajorMinor,
    tag_prefix: "",
    // The build tools that crates building C code run (as the C image has them).
    packages: &[
        "rustc",
        "cargo",
        "git",
        "ca-certificates",
        "patch",
        "gcc",
        "g++",
        "libc6-dev",
        "make",
        "cmake",
        "pkg-config",
    ],
    command: "bash",
    check: Check { command: "rustc --version && cargo --version", expect: "rustc {version}." },
    images: &[
        BaseImage { version: "1.63", suite: DebianSuite::Bookworm, by_default: true },
        BaseImage { version: "1.85", suite: DebianSuite::Trixie, by_default: true },
    ],
    upstream: None,
};
