//! The tools and system libraries that a Rust build says it lacks, and the Debian
//! packages that provide them. Crates that build C code run `make`, `cmake`,
//! `protoc` or `pkg-config` from their build scripts, or ask pkg-config for a
//! library; the base images hold the usual build tools (see `runtimes.rs`), and the
//! rest is added by Rust's move of the loop that settles an environment
//! ([`super::CargoTest`]'s `next_move`): the same rung with these packages, as the
//! rung `system-tools`.
//!
//! Decision: only what the build's own words name (the messages of the `cc`,
//! `cmake`, `pkg-config` and `prost-build` crates, and of build scripts that run a
//! command which is not there), mapped by the tables below; a tool or library not in
//! them is named in the diagnosis and not guessed at.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

/// Tools, by the name a build runs them by, and their Debian packages.
const TOOLS: &[(&str, &str)] = &[
    ("make", "make"),
    ("gmake", "make"),
    ("cmake", "cmake"),
    ("pkg-config", "pkg-config"),
    ("pkgconf", "pkg-config"),
    ("protoc", "protobuf-compiler"),
    ("clang", "clang"),
    ("libclang", "libclang-dev"),
    ("perl", "perl"),
    ("nasm", "nasm"),
    ("yasm", "yasm"),
    ("python3", "python3"),
    ("python", "python3"),
    ("autoconf", "autoconf"),
    ("autoreconf", "autoconf"),
    ("automake", "automake"),
    ("libtool", "libtool"),
    ("c++", "g++"),
    ("g++", "g++"),
    ("git", "git"),
    ("flex", "flex"),
    ("bison", "bison"),
    ("m4", "m4"),
];

/// pkg-config's names of libraries, and the Debian packages of their headers.
const LIBRARIES: &[(&str, &str)] = &[
    ("openssl", "libssl-dev"),
    ("libssl", "libssl-dev"),
    ("libcrypto", "libssl-dev"),
    ("zlib", "zlib1g-dev"),
    ("sqlite3", "libsqlite3-dev"),
    ("libcurl", "libcurl4-openssl-dev"),
    ("dbus-1", "libdbus-1-dev"),
    ("alsa", "libasound2-dev"),
    ("libudev", "libudev-dev"),
    ("libsystemd", "libsystemd-dev"),
    ("x11", "libx11-dev"),
    ("xkbcommon", "libxkbcommon-dev"),
    ("fontconfig", "libfontconfig-dev"),
    ("freetype2", "libfreetype-dev"),
    ("libgit2", "libgit2-dev"),
    ("libssh2", "libssh2-1-dev"),
    ("libzstd", "libzstd-dev"),
    ("liblzma", "liblzma-dev"),
    ("bzip2", "libbz2-dev"),
    ("libsodium", "libsodium-dev"),
    ("libpq", "libpq-dev"),
    ("libffi", "libffi-dev"),
    ("expat", "libexpat1-dev"),
    ("libxml-2.0", "libxml2-dev"),
    ("glib-2.0", "libglib2.0-dev"),
    ("gtk+-3.0", "libgtk-3-dev"),
    ("libpcap", "libpcap-dev"),
    ("libseccomp", "libseccomp-dev"),
    ("libusb-1.0", "libusb-1.0-0-dev"),
    ("protobuf", "libprotobuf-dev"),
    ("libpcre2-8", "libpcre2-dev"),
    ("oniguruma", "libonig-dev"),
    ("libarchive", "libarchive-dev"),
    ("hidapi-hidraw", "libhidapi-dev"),
    ("wayland-client", "libwayland-dev"),
];

/// The crates' own words for a missing tool (`false`) or pkg-config library (`true`),
/// each capturing the name; compiled once (every run's output is read with them).
static LACKING: LazyLock<Vec<(Regex, bool)>> = LazyLock::new(|| {
    [
        // cmake crate: "is `cmake` not installed?"
        (r"is `([A-Za-z0-9_.+-]+)` not installed", false),
        // cc crate: `failed to find tool "c++": No such file or directory`
        (r#"failed to find tool "?([A-Za-z0-9_.+-]+)"?: No such file"#, false),
        // prost-build: "Could not find `protoc`."
        (r"Could not find `(protoc)`", false),
        // bindgen / clang-sys
        (r"(?:Unable to find|couldn't find any valid shared libraries matching: \['?)(libclang)", false),
        // pkg-config crate, and pkg-config's and pkgconf's own words
        (r"The system library `([^`]+)` required by crate", true),
        (
            r"Package '?([A-Za-z0-9_.+-]+)'?,? (?:was not found in the pkg-config search path|required by '[^']*', not found)",
            true,
        ),
        // openssl-sys without pkg-config
        (r"Could not find directory of (OpenSSL) installation", true),
    ]
    .into_iter()
    .map(|(pattern, library)| (Regex::new(pattern).expect("valid regex"), library))
    .collect()
});

/// A build script's `running: "make" "-j2"` line (the command it ran).
static RUNNING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"running: (?:cd "[^"]*" && )?"?([^"\s]+)"?"#).expect("valid regex"));

/// What the build output `log` says it could not find: tools by name (`make`), and
/// pkg-config libraries as `pkg-config library zlib`.
pub fn lacking(log: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut push = |name: String| {
        if !found.contains(&name) {
            found.push(name);
        }
    };
    if log.contains("The pkg-config command could not be found") {
        push("pkg-config".into());
    }
    for (pattern, library) in LACKING.iter() {
        for capture in pattern.captures_iter(log) {
            let name = capture[1].to_lowercase();
            push(if *library { format!("pkg-config library {name}") } else { name });
        }
    }
    // A build script that ran a command which is not there (jemalloc-sys runs `make`):
    // `running: "make" "-j2"` then "failed to execute command: No such file or directory".
    let mut last_command: Option<String> = None;
    for line in log.lines() {
        if let Some(capture) = RUNNING.captures(line) {
            last_command = Some(capture[1].rsplit('/').next().unwrap_or_default().to_string());
        }
        if line.contains("failed to execute command: No such file or directory") {
            if let Some(command) = last_command.take() {
                push(command);
            }
        }
    }
    found
}

/// The Debian packages of what [`lacking`] found, sorted (what the tables do not know
/// is left out).
pub fn packages_for(lacking: &[String]) -> Vec<String> {
    let packages: BTreeSet<String> = lacking
        .iter()
        .filter_map(|name| match name.strip_prefix("pkg-config library ") {
            Some(library) => LIBRARIES.iter().find(|(known, _)| *known == library).map(|(_, package)| *package),
            None => TOOLS.iter().find(|(known, _)| known == name).map(|(_, package)| *package),
        })
        .map(str::to_string)
        .collect();
    packages.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crates_own_words_name_the_tool_or_library_the_build_lacks() {
        let cmake = "running: cd \"/t/out/build\" && \"cmake\" \"/t/vendor/foo\"\n\
                     --- stderr\nthread 'main' panicked at src/lib.rs:1:\n\
                     failed to execute command: No such file or directory (os error 2)\nis `cmake` not installed?\n";
        assert_eq!(lacking(cmake), ["cmake"]);
        let jemalloc = "running: \"make\" \"-j\" \"2\"\n--- stderr\nthread 'main' panicked at build.rs:\n\
                        failed to execute command: No such file or directory (os error 2)\n";
        assert_eq!(lacking(jemalloc), ["make"]);
        let pkg_config = "called `Result::unwrap()` on an `Err` value: \npkg-config exited with status code 1\n\
                          > PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 pkg-config --libs --cflags zlib\n\n\
                          The system library `zlib` required by crate `calc` was not found.\n";
        assert_eq!(lacking(pkg_config), ["pkg-config library zlib"]);
        let pkgconf = "Package 'sqlite3', required by 'virtual:world', not found\n";
        assert_eq!(lacking(pkgconf), ["pkg-config library sqlite3"]);
        let prost = "Could not find `protoc`. If `protoc` is installed, try setting the `PROTOC` environment variable";
        assert_eq!(lacking(prost), ["protoc"]);
        assert!(lacking("error[E0425]: cannot find function `mul` in this scope").is_empty());
    }

    #[test]
    fn known_names_map_to_debian_packages_and_unknown_ones_to_nothing() {
        let names: Vec<String> =
            ["make", "protoc", "pkg-config library zlib", "pkg-config library openssl", "frobnicate"]
                .map(String::from)
                .into();
        assert_eq!(packages_for(&names), ["libssl-dev", "make", "protobuf-compiler", "zlib1g-dev"]);
    }
}
