//! A Rust project's environment from its manifests at the environment commit: the
//! toolchain among the Rust base images (runtimes `rust1.N`, images
//! `swe-harvest/base:rust1.N`), the Debian packages its `-sys` crates need, the
//! warm-up step and the test command.
//!
//! The toolchain (decision): the project's floor is the highest of its declared
//! `rust-version` (any manifest read), what its editions need (2021: 1.56, 2024:
//! 1.85) and what its `Cargo.lock` format needs (version 4: 1.78). A numeric
//! `rust-toolchain(.toml)` channel is what the project built with: the wanted
//! version is that channel (raised to the floor). Otherwise the wanted version is the
//! stable release of the task's date (Rust ships every six weeks: 1.N came out on
//! 2015-05-14 + 42·N days), raised to the floor. The runtime is the oldest base image
//! at least the wanted version, else the newest there is. So with the default images
//! (Debian's 1.63 and 1.85) a project of mid-2022 or earlier gets 1.63 and a later
//! one 1.85. `stable`, `beta` and `nightly` channels pin nothing (nightly features do
//! not build on a stable toolchain whatever we choose: such tasks fail visibly).
//!
//! The date plays no part in the dependencies themselves: crates.io's index carries
//! no publication dates, so a repository without a `Cargo.lock` is resolved
//! rust-version-aware instead (see [`super::image`]).
//!
//! The project's CI (decision, 2026-12-07; [`crate::ecosystem::ci`]): a toolchain file
//! pins first; else, when every toolchain the CI's test jobs set up is a version
//! (`dtolnay/rust-toolchain@1.70`, a matrix of `1.70.0`, `rust:1.75` images; no
//! `stable`), the newest of them is the wanted version (raised to the floor); else the
//! date's. Its `cargo test` commands give the features: `--all-features` when one
//! uses it, else the `--features` of the first that names some (a command with
//! `--no-default-features` is a minimal build's and gives none); the warm-up builds
//! with the same. The `--cfg` flags of the `RUSTFLAGS` its test jobs set join the
//! environment's own (`--cap-lints=warn`) in the test command and the warm-up (tokio's
//! `tokio_unstable`), so that code under `#[cfg(...)]` anywhere is compiled in. Its
//! `apt-get install` packages that are among the Debian packages named below join the
//! system packages (an unknown name would fail the image: they are not checked).
//!
//! System packages (decision): a `-sys` crate (or a crate that brings one on Linux,
//! such as `reqwest`'s default TLS) named in a manifest's dependencies or in the
//! `Cargo.lock` adds the Debian packages that it links against ([`SYSTEM_PACKAGES`]);
//! without a lockfile only direct dependencies are seen.

use chrono::{DateTime, NaiveDate, Utc};

use crate::ecosystem::ci::{self, CiEvidence, Language};
use crate::ecosystem::{InferError, RepoFiles};
use crate::model::EnvironmentSpec;

/// The test command; the helper adds `--manifest-path` and one target per run
/// (see [`super::image::CARGO_TEST_HELPER_SCRIPT`]).
pub const TEST_COMMAND: &str = "cargo test --offline --no-fail-fast";

/// Compiles the default workspace members' dependencies and dev-dependencies, their
/// libraries and binaries (what an integration test links) and their unit tests into
/// the image's target dir; their last lines go to the build log. Not each integration
/// test: a run compiles the one it selects (in 14-19 s for tokio's either way), and
/// compiling all of them was most of a library's image (2026-11-29: tokio's 100-odd
/// test files, 523 s of the step, against 300 s without them, side by side). A target
/// that does not compile at the environment commit is no reason to fail the image.
pub const WARM_TARGET_DIR: &str =
    "cargo build --offline 2>&1 | tail -n 5; cargo test --offline --no-run --lib --bins 2>&1 | tail -n 25";

/// What every install does first: the image's resolved lockfile where the
/// repository has none (its dependencies are the vendored ones).
pub const USE_IMAGE_LOCKFILE: &str = "[ -f Cargo.lock ] || cp /home/harvest/Cargo.lock Cargo.lock";

/// Crates that link against system libraries, and the Debian packages they need.
pub const SYSTEM_PACKAGES: &[(&str, &[&str])] = &[
    ("openssl-sys", &["pkg-config", "libssl-dev"]),
    ("openssl", &["pkg-config", "libssl-dev"]),
    ("native-tls", &["pkg-config", "libssl-dev"]),
    ("hyper-tls", &["pkg-config", "libssl-dev"]),
    ("reqwest", &["pkg-config", "libssl-dev"]),
    ("git2", &["pkg-config", "libssl-dev"]),
    ("libgit2-sys", &["pkg-config", "libssl-dev"]),
    ("libssh2-sys", &["pkg-config", "libssl-dev", "zlib1g-dev"]),
    ("libz-sys", &["pkg-config", "zlib1g-dev"]),
    ("curl-sys", &["pkg-config", "libcurl4-openssl-dev"]),
    ("libsqlite3-sys", &["pkg-config", "libsqlite3-dev"]),
    ("rusqlite", &["pkg-config", "libsqlite3-dev"]),
    ("libdbus-sys", &["pkg-config", "libdbus-1-dev"]),
    ("alsa-sys", &["pkg-config", "libasound2-dev"]),
    ("clang-sys", &["libclang-dev"]),
    ("bindgen", &["libclang-dev"]),
    ("prost-build", &["protobuf-compiler"]),
    ("cmake", &["cmake"]),
];

/// The first stable release: Rust 1.N followed 42·N days after 2015-05-14.
fn first_release() -> NaiveDate {
    NaiveDate::from_ymd_opt(2015, 5, 14).expect("a valid date")
}

/// The minor version of the stable Rust of `date` (1.N).
pub fn stable_minor_at(date: DateTime<Utc>) -> u32 {
    let days = (date.date_naive() - first_release()).num_days();
    u32::try_from(days.max(0) / 42).unwrap_or(0)
}

/// `1.63`, `1.63.0`, `rust1.63` -> 63 (Rust 1.x only).
pub fn minor_of(version: &str) -> Option<u32> {
    let version = version.trim().trim_matches('"').trim_start_matches("rust");
    let mut parts = version.split('.');
    if parts.next()? != "1" {
        return None;
    }
    let minor: String = parts.next()?.chars().take_while(char::is_ascii_digit).collect();
    minor.parse().ok()
}

/// The manifests inference reads: every `Cargo.toml` up to two folders deep (the
/// root, `member/`, `crates/member/`).
pub fn is_manifest_read(path: &str) -> bool {
    path.rsplit('/').next() == Some("Cargo.toml") && path.matches('/').count() <= 2
}

/// Whether inference reads `path`.
pub fn reads(path: &str) -> bool {
    matches!(path, "Cargo.lock" | "rust-toolchain" | "rust-toolchain.toml") || is_manifest_read(path)
}

/// The manifests among the files, parsed (a manifest that is not TOML is skipped).
fn manifests(files: &RepoFiles) -> Vec<toml::Table> {
    files
        .iter()
        .filter(|(path, _)| is_manifest_read(path))
        .filter_map(|(_, text)| text.parse::<toml::Table>().ok())
        .collect()
}

/// The lowest minor version the manifests and the lockfile allow (see the module doc).
pub fn floor_minor(files: &RepoFiles) -> u32 {
    let mut floor = 0;
    for manifest in manifests(files) {
        for table in ["package", "workspace"] {
            let Some(section) = manifest.get(table).and_then(toml::Value::as_table) else { continue };
            // `[workspace.package]` holds what members inherit.
            let section = if table == "workspace" {
                match section.get("package").and_then(toml::Value::as_table) {
                    Some(package) => package,
                    None => continue,
                }
            } else {
                section
            };
            if let Some(minor) = section.get("rust-version").and_then(toml::Value::as_str).and_then(minor_of) {
                floor = floor.max(minor);
            }
            match section.get("edition").and_then(toml::Value::as_str) {
                Some("2021") => floor = floor.max(56),
                Some("2024") => floor = floor.max(85),
                _ => {}
            }
        }
    }
    if files.get("Cargo.lock").is_some_and(|lock| lock.lines().any(|line| line.trim() == "version = 4")) {
        floor = floor.max(78);
    }
    floor
}

/// The toolchain channel of `rust-toolchain.toml` or `rust-toolchain` (TOML, or the
/// legacy one-line form).
pub fn toolchain_channel(files: &RepoFiles) -> Option<String> {
    let text = files.get("rust-toolchain.toml").or_else(|| files.get("rust-toolchain"))?;
    if let Ok(table) = text.parse::<toml::Table>() {
        if let Some(channel) = table.get("toolchain").and_then(|toolchain| toolchain.get("channel")) {
            return channel.as_str().map(str::to_string);
        }
    }
    text.lines().map(str::trim).find(|line| !line.is_empty() && !line.starts_with('#')).map(str::to_string)
}

/// The minor version the project wants at `date` (see the module doc).
pub fn wanted_minor(files: &RepoFiles, date: DateTime<Utc>) -> u32 {
    let floor = floor_minor(files);
    match toolchain_channel(files).as_deref().and_then(minor_of) {
        Some(pinned) => pinned.max(floor),
        None => stable_minor_at(date).max(floor),
    }
}

/// The runtime for `wanted` among `runtimes` (`rust1.N`, others ignored): the oldest
/// at least `wanted`, else the newest.
pub fn choose_runtime(wanted: u32, runtimes: &[String]) -> Option<String> {
    let mut known: Vec<(u32, &String)> = runtimes
        .iter()
        .filter(|runtime| runtime.starts_with("rust"))
        .filter_map(|runtime| minor_of(runtime).map(|minor| (minor, runtime)))
        .collect();
    known.sort();
    known.iter().find(|(minor, _)| *minor >= wanted).or(known.last()).map(|(_, runtime)| (*runtime).clone())
}

/// The names of the crates the project depends on: the dependency tables of every
/// manifest (a renamed dependency by its `package`) and the packages of the lockfile.
fn dependency_names(files: &RepoFiles) -> Vec<String> {
    fn tables(manifest: &toml::Table) -> Vec<&toml::Table> {
        let kinds = ["dependencies", "dev-dependencies", "build-dependencies"];
        let mut found: Vec<&toml::Table> =
            kinds.iter().filter_map(|kind| manifest.get(*kind).and_then(toml::Value::as_table)).collect();
        if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
            for target in targets.values().filter_map(toml::Value::as_table) {
                found.extend(kinds.iter().filter_map(|kind| target.get(*kind).and_then(toml::Value::as_table)));
            }
        }
        if let Some(workspace) = manifest.get("workspace").and_then(toml::Value::as_table) {
            found.extend(workspace.get("dependencies").and_then(toml::Value::as_table));
        }
        found
    }
    let mut names = Vec::new();
    for manifest in manifests(files) {
        for table in tables(&manifest) {
            for (key, value) in table {
                let name = value.get("package").and_then(toml::Value::as_str).unwrap_or(key);
                names.push(name.to_string());
            }
        }
    }
    if let Some(lock) = files.get("Cargo.lock") {
        names.extend(
            lock.lines().filter_map(|line| line.strip_prefix("name = \"")?.strip_suffix('"')).map(str::to_string),
        );
    }
    names
}

/// The Debian packages of the project's `-sys` crates, sorted.
pub fn system_packages(files: &RepoFiles) -> Vec<String> {
    let names = dependency_names(files);
    let mut packages: Vec<String> = SYSTEM_PACKAGES
        .iter()
        .filter(|(crate_name, _)| names.iter().any(|name| name == crate_name))
        .flat_map(|(_, packages)| packages.iter().map(ToString::to_string))
        .collect();
    packages.sort();
    packages.dedup();
    packages
}

/// The lints cap of the environment's `RUSTFLAGS` (see [`super::image::RUST_ENV`]),
/// which a test command that sets its own keeps first.
pub const CAPPED_LINTS: &str = "--cap-lints=warn";

/// Debian packages that a CI's `apt-get install` may add (the `-sys` crates' above,
/// and libraries Rust projects' CI installs that Debian ships under the same name).
const CI_PACKAGES: &[&str] = &[
    "libudev-dev",
    "libfontconfig1-dev",
    "libfreetype6-dev",
    "libpq-dev",
    "libzstd-dev",
    "liblzma-dev",
    "libbz2-dev",
    "libxml2-dev",
    "libsodium-dev",
    "libseccomp-dev",
    "libxkbcommon-dev",
    "libwayland-dev",
    "protobuf-compiler",
    "capnproto",
    "libgtk-3-dev",
];

/// The newest toolchain version the CI's test jobs set up, when every one they set up
/// is a version (see the module doc), with where.
fn ci_toolchain(evidence: &CiEvidence) -> Option<(u32, String)> {
    let versions = evidence.versions(Language::Rust, true);
    if versions.is_empty() || versions.iter().any(|(version, _)| minor_of(version).is_none()) {
        return None;
    }
    let newest = versions.iter().filter_map(|(version, _)| minor_of(version)).max()?;
    Some((newest, ci::versions_said(&versions)))
}

/// The feature flags of the CI's `cargo test` commands (see the module doc), with where.
fn ci_feature_flags(evidence: &CiEvidence) -> Option<(Vec<String>, String)> {
    let commands = evidence.runner_commands(ci::shell::Runner::Cargo);
    if let Some((_, step)) = commands.iter().find(|(words, _)| words.iter().any(|word| word == "--all-features")) {
        return Some((vec!["--all-features".to_string()], step.origin.to_string()));
    }
    for (words, step) in &commands {
        if words.iter().any(|word| word == "--no-default-features") {
            continue;
        }
        let mut features: Vec<String> = Vec::new();
        for (index, word) in words.iter().enumerate() {
            let named = match word.as_str() {
                "--features" | "-F" => words.get(index + 1).cloned(),
                other => other.strip_prefix("--features=").map(str::to_string),
            };
            features.extend(named.into_iter().flat_map(|list| {
                list.split([',', ' ']).filter(|name| !name.is_empty()).map(str::to_string).collect::<Vec<_>>()
            }));
        }
        // A name with an expression's leftovers (`$FEATURES`) is none.
        features.retain(|name| name.chars().all(|c| c.is_ascii_alphanumeric() || "-_/".contains(c)));
        if !features.is_empty() {
            return Some((vec!["--features".to_string(), features.join(",")], step.origin.to_string()));
        }
    }
    None
}

/// The `--cfg` flags of the first `RUSTFLAGS` of the CI's test jobs that has any (one
/// job's, not their union: tokio's jobs set `tokio_unstable`, `tokio_taskdump` and
/// `tokio_no_tuning_tests` apart, the last on a sanitizer's nightly), with where.
fn ci_cfg_flags(evidence: &CiEvidence) -> Option<(Vec<String>, String)> {
    evidence.env_values("RUSTFLAGS").find_map(|rustflags| {
        let words: Vec<&str> = rustflags.value.split_whitespace().collect();
        let mut flags = Vec::new();
        for (index, word) in words.iter().enumerate() {
            let name = match *word {
                "--cfg" => words.get(index + 1).copied(),
                other => other.strip_prefix("--cfg="),
            };
            let valid = |name: &&str| name.chars().all(|c| c.is_ascii_alphanumeric() || "_=\"".contains(c));
            if let Some(name) = name.filter(valid) {
                let flag = format!("--cfg {name}");
                if !flags.contains(&flag) {
                    flags.push(flag);
                }
            }
        }
        (!flags.is_empty()).then(|| (flags, rustflags.origin.to_string()))
    })
}

pub fn infer(files: &RepoFiles, date: DateTime<Utc>, runtimes: &[String]) -> Result<EnvironmentSpec, InferError> {
    if !files.contains_key("Cargo.toml") {
        return Err(InferError::NotRecognised { language: "Rust", expected: "Cargo.toml" });
    }
    let evidence = CiEvidence::read(files);
    let mut decisions = Vec::new();
    let mut wanted = wanted_minor(files, date);
    if let Some((newest, said)) = ci_toolchain(&evidence).filter(|_| toolchain_channel(files).is_none()) {
        let from_ci = newest.max(floor_minor(files));
        if from_ci != wanted {
            decisions.push(format!(
                "toolchain 1.{from_ci} wanted, not 1.{wanted} (the date's): CI's test jobs set up only versions, {said}"
            ));
            wanted = from_ci;
        }
    }
    let runtime = choose_runtime(wanted, runtimes)
        .ok_or_else(|| InferError::no_runtime("Rust", format!("1.{wanted}"), runtimes))?;
    let mut flags: Vec<String> = Vec::new();
    if let Some((features, said)) = ci_feature_flags(&evidence) {
        decisions.push(format!("`{}` from CI's `cargo test` ({said})", features.join(" ")));
        flags = features;
    }
    let flags = flags.iter().map(|flag| crate::sandbox::script::shell_quote(flag)).collect::<Vec<_>>().join(" ");
    let with_flags = |command: &str| {
        if flags.is_empty() { command.to_string() } else { command.replace("--offline", &format!("--offline {flags}")) }
    };
    let mut test_command = with_flags(TEST_COMMAND);
    let mut warm = with_flags(WARM_TARGET_DIR);
    if let Some((cfgs, said)) = ci_cfg_flags(&evidence) {
        let rustflags = format!("{CAPPED_LINTS} {}", cfgs.join(" "));
        let quoted = crate::sandbox::script::shell_quote(&format!("RUSTFLAGS={rustflags}"));
        test_command = format!("env {quoted} {test_command}");
        warm = format!("export {quoted}; {warm}");
        decisions.push(format!("`{}` in RUSTFLAGS, from the RUSTFLAGS of CI's test job ({said})", cfgs.join(" ")));
    }
    let mut packages = system_packages(files);
    let known = |name: &str| {
        CI_PACKAGES.contains(&name) || SYSTEM_PACKAGES.iter().any(|(_, packages)| packages.contains(&name))
    };
    let added: Vec<&ci::Package> =
        evidence.packages.iter().filter(|package| known(&package.name) && !packages.contains(&package.name)).collect();
    if !added.is_empty() {
        let names: Vec<&str> = added.iter().map(|package| package.name.as_str()).collect();
        decisions.push(format!("Debian packages {} from CI's apt-get install ({})", names.join(", "), added[0].origin));
        packages.extend(names.iter().map(|name| name.to_string()));
        packages.sort();
    }
    let install = vec![USE_IMAGE_LOCKFILE.into(), warm];
    let mut spec = EnvironmentSpec {
        system_packages: packages,
        ..EnvironmentSpec::inferred("rust", runtime, install, test_command)
    };
    evidence.record(&mut spec, decisions);
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn runtimes() -> Vec<String> {
        vec!["rust1.85".into(), "rust1.63".into(), "go1.24".into(), "3.11".into()]
    }

    fn date(year: i32, month: u32, day: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(year, month, day, 12, 0, 0).unwrap()
    }

    fn files(list: &[(&str, &str)]) -> RepoFiles {
        list.iter().map(|(path, text)| (path.to_string(), text.to_string())).collect()
    }

    #[test]
    fn the_stable_release_of_a_date_follows_the_six_week_train() {
        assert_eq!(stable_minor_at(date(2015, 5, 15)), 0);
        assert_eq!(stable_minor_at(date(2022, 8, 10)), 62, "1.63 came out on 2022-08-11");
        assert_eq!(stable_minor_at(date(2022, 8, 11)), 63);
        assert_eq!(stable_minor_at(date(2025, 2, 20)), 85);
        assert_eq!(stable_minor_at(date(2024, 8, 12)), 80);
        assert_eq!(stable_minor_at(date(2010, 1, 1)), 0);
    }

    #[test]
    fn versions_parse_from_rust_version_channels_and_runtime_keys() {
        assert_eq!(minor_of("1.56"), Some(56));
        assert_eq!(minor_of("1.70.0"), Some(70));
        assert_eq!(minor_of("rust1.85"), Some(85));
        assert_eq!(minor_of("stable"), None);
        assert_eq!(minor_of("nightly-2023-01-01"), None);
        assert_eq!(minor_of("2.0"), None);
    }

    #[test]
    fn the_oldest_image_at_least_the_wanted_version_wins_else_the_newest() {
        assert_eq!(choose_runtime(52, &runtimes()).as_deref(), Some("rust1.63"));
        assert_eq!(choose_runtime(63, &runtimes()).as_deref(), Some("rust1.63"));
        assert_eq!(choose_runtime(64, &runtimes()).as_deref(), Some("rust1.85"));
        assert_eq!(choose_runtime(90, &runtimes()).as_deref(), Some("rust1.85"));
        assert_eq!(choose_runtime(60, &["go1.24".to_string()]), None);
    }

    #[test]
    fn the_date_the_floor_and_a_pinned_toolchain_choose_the_runtime() {
        let plain = files(&[("Cargo.toml", "[package]\nname = \"x\"\nversion = \"0.1.0\"\nedition = \"2018\"\n")]);
        // Mid-2022 and earlier: 1.63; later: 1.85.
        assert_eq!(infer(&plain, date(2021, 5, 18), &runtimes()).unwrap().runtime, "rust1.63");
        assert_eq!(infer(&plain, date(2022, 10, 26), &runtimes()).unwrap().runtime, "rust1.85");
        // A declared rust-version (here in [workspace.package]) raises the floor.
        let msrv = files(&[
            ("Cargo.toml", "[workspace]\nmembers = [\"a\"]\n[workspace.package]\nrust-version = \"1.70\"\n"),
            ("a/Cargo.toml", "[package]\nname = \"a\"\nrust-version.workspace = true\n"),
        ]);
        assert_eq!(floor_minor(&msrv), 70);
        assert_eq!(infer(&msrv, date(2020, 1, 1), &runtimes()).unwrap().runtime, "rust1.85");
        // Edition 2021 needs 1.56, a v4 lockfile 1.78.
        let edition = files(&[("Cargo.toml", "[package]\nname = \"x\"\nedition = \"2021\"\n")]);
        assert_eq!(floor_minor(&edition), 56);
        let lock = files(&[("Cargo.toml", "[package]\nname = \"x\"\n"), ("Cargo.lock", "version = 4\n")]);
        assert_eq!(floor_minor(&lock), 78);
        // A pinned channel wins over the date, in either file format.
        let pinned = files(&[("Cargo.toml", "[package]\nname = \"x\"\n"), ("rust-toolchain", "1.60.0\n")]);
        assert_eq!(infer(&pinned, date(2024, 6, 1), &runtimes()).unwrap().runtime, "rust1.63");
        let toml_pin = files(&[
            ("Cargo.toml", "[package]\nname = \"x\"\n"),
            ("rust-toolchain.toml", "[toolchain]\nchannel = \"1.80\"\ncomponents = [\"clippy\"]\n"),
        ]);
        assert_eq!(toolchain_channel(&toml_pin).as_deref(), Some("1.80"));
        assert_eq!(infer(&toml_pin, date(2020, 6, 1), &runtimes()).unwrap().runtime, "rust1.85");
        let nightly = files(&[("Cargo.toml", "[package]\nname = \"x\"\n"), ("rust-toolchain", "nightly\n")]);
        assert_eq!(wanted_minor(&nightly, date(2021, 1, 1)), stable_minor_at(date(2021, 1, 1)));
    }

    #[test]
    fn sys_crates_bring_their_debian_packages() {
        let project = files(&[
            (
                "Cargo.toml",
                "[package]\nname = \"x\"\n[dependencies]\ntls = { package = \"native-tls\", version = \"0.2\" }\n\
                 [target.'cfg(unix)'.dev-dependencies]\nlibz-sys = \"1\"\n",
            ),
            ("Cargo.lock", "version = 3\n\n[[package]]\nname = \"libsqlite3-sys\"\nversion = \"0.26.0\"\n"),
        ]);
        assert_eq!(
            system_packages(&project),
            vec!["libsqlite3-dev", "libssl-dev", "pkg-config", "zlib1g-dev"]
                .into_iter()
                .map(String::from)
                .collect::<Vec<_>>()
        );
        let plain = files(&[("Cargo.toml", "[package]\nname = \"x\"\n[dependencies]\nserde = \"1\"\n")]);
        assert!(system_packages(&plain).is_empty());
    }

    /// CI evidence in Rust: a workflow whose test job runs only Rust 1.70 wants 1.70 (a
    /// date of 1.63's time would take 1.63); its `cargo test --all-features` and the
    /// `--cfg` of its RUSTFLAGS go into the test command and the warm-up; its apt
    /// packages that Debian ships join the system packages; the spec says so.
    #[test]
    fn ci_evidence_chooses_the_toolchain_the_features_and_the_cfgs() {
        let workflow = "env:\n  RUSTFLAGS: -Dwarnings\njobs:\n  plain:\n    steps:\n      - run: cargo test --doc\n  \
                        test:\n    env:\n      RUSTFLAGS: -Dwarnings --cfg tokio_unstable\n    steps:\n      \
                        - uses: dtolnay/rust-toolchain@1.70\n      \
                        - run: sudo apt-get install -y libudev-dev some-ubuntu-only-package\n      \
                        - run: cargo test --workspace --all-features\n  \
                        lint:\n    steps:\n      - uses: dtolnay/rust-toolchain@stable\n      - run: cargo clippy\n";
        let manifest = ("Cargo.toml", "[package]\nname = \"x\"\n");
        let plain = files(&[manifest]);
        let with_ci = files(&[manifest, (".github/workflows/ci.yml", workflow)]);
        let without = infer(&plain, date(2022, 1, 1), &runtimes()).unwrap();
        let spec = infer(&with_ci, date(2022, 1, 1), &runtimes()).unwrap();
        assert_eq!(without.runtime, "rust1.63");
        assert_eq!(spec.runtime, "rust1.85", "1.70 wanted: the oldest image at least that");
        assert_eq!(without.test_command, TEST_COMMAND);
        assert_eq!(
            spec.test_command,
            "env 'RUSTFLAGS=--cap-lints=warn --cfg tokio_unstable' cargo test --offline --all-features --no-fail-fast"
        );
        assert!(
            spec.install[1].starts_with(
                "export 'RUSTFLAGS=--cap-lints=warn --cfg tokio_unstable'; cargo build --offline --all-features"
            ),
            "{:?}",
            spec.install
        );
        assert!(spec.install[1].contains("cargo test --offline --all-features --no-run"), "{:?}", spec.install);
        assert_eq!(spec.system_packages, vec!["libudev-dev".to_string()]);
        assert_eq!(spec.ci.len(), 4, "{:?}", spec.ci);
        assert!(spec.ci[0].starts_with("toolchain 1.70 wanted, not 1.57 (the date's)"), "{:?}", spec.ci);
        assert!(spec.ci[1].contains("`--all-features` from CI's `cargo test`"), "{:?}", spec.ci);
        // The environment's own RUSTFLAGS are the ones a CI's join.
        assert!(super::super::image::RUST_ENV.contains(&format!("RUSTFLAGS={CAPPED_LINTS}")));
        // A toolchain file pins before CI; a test job on `stable` leaves the date's.
        let pinned = files(&[manifest, ("rust-toolchain", "1.60\n"), (".github/workflows/ci.yml", workflow)]);
        assert_eq!(infer(&pinned, date(2022, 1, 1), &runtimes()).unwrap().runtime, "rust1.63");
        let stable = workflow.replace("rust-toolchain@1.70", "rust-toolchain@stable");
        let stable = files(&[manifest, (".github/workflows/ci.yml", stable.as_str())]);
        assert_eq!(infer(&stable, date(2022, 1, 1), &runtimes()).unwrap().runtime, "rust1.63");
        // Features named: those; a minimal build's command gives none.
        let features = "jobs:\n  t:\n    steps:\n      - run: cargo test --no-default-features\n      \
                        - run: cargo test --features serde,rayon\n";
        let spec =
            infer(&files(&[manifest, (".github/workflows/t.yml", features)]), date(2024, 1, 1), &runtimes()).unwrap();
        assert_eq!(spec.test_command, "cargo test --offline --features serde,rayon --no-fail-fast");
    }

    #[test]
    fn inference_reads_manifests_near_the_root_the_lockfile_and_the_toolchain_file() {
        for path in ["Cargo.toml", "serde/Cargo.toml", "crates/a/Cargo.toml", "Cargo.lock", "rust-toolchain.toml"] {
            assert!(reads(path), "{path}");
        }
        for path in ["a/b/c/Cargo.toml", "sub/Cargo.lock", "src/lib.rs"] {
            assert!(!reads(path), "{path}");
        }
    }

    #[test]
    fn inference_needs_a_cargo_toml_and_a_rust_base_image() {
        let project = files(&[("Cargo.toml", "[package]\nname = \"x\"\n")]);
        let spec = infer(&project, date(2024, 1, 1), &runtimes()).unwrap();
        assert_eq!((spec.ecosystem.as_str(), spec.test_command.as_str()), ("rust", TEST_COMMAND));
        assert_eq!(spec.install, vec![USE_IMAGE_LOCKFILE.to_string(), WARM_TARGET_DIR.to_string()]);
        let Err(error) = infer(&project, date(2024, 1, 1), &["go1.24".to_string()]) else { panic!("no Rust image") };
        assert!(error.to_string().contains("Rust `1.75`"), "{error}");
        assert!(matches!(
            infer(&RepoFiles::new(), date(2024, 1, 1), &runtimes()),
            Err(InferError::NotRecognised { .. })
        ));
    }
}
