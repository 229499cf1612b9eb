//! Node's runtimes (JavaScript and TypeScript alike): Debian's `nodejs` and `npm` of
//! bookworm (18) and trixie (20), with what node-gyp needs to build a native addon
//! from source (python3, make, a C++ compiler). Never an upstream image.

use crate::ecosystem::runtimes::{BaseImage, Check, DebianSuite, Runtimes, VersionForm};

pub static RUNTIMES: Runtimes = Runtimes {
    language: "node",
    aliases: &["javascript", "typescript"],
    key_prefix: "node",
    version_form: VersionForm::Major,
    tag_prefix: "",
    packages: &["nodejs", "npm", "git", "ca-certificates", "patch", "python3", "make", "g++", "libc6-dev"],
    command: "bash",
    check: Check {
        command: r#"node --version >/dev/null && npm --version >/dev/null && echo "node $(node --version) npm $(npm --version)""#,
        expect: "node v{version}.",
    },
    images: &[
        BaseImage { version: "18", suite: DebianSuite::Bookworm, by_default: true },
        BaseImage { version: "20", suite: DebianSuite::Trixie, by_default: true },
    ],
    upstream: None,
};
