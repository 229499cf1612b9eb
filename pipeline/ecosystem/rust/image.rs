//! Rust's environment images, the test helper, and the setup of every container
//! script.
//!
//! The image is built in two stages.
//!
//! 1. **Dependencies** ([`DEPENDENCY_SCRIPT`], `dependencies.sh`), on a Rust base image
//!    whose cargo reads crates.io's sparse index and resolves rust-version-aware
//!    (cargo >= 1.84: the runtime's own image when it is that new, else the newest
//!    Rust image of `validate.base_images`), with the extra CA bundle as
//!    `CARGO_HTTP_CAINFO`; the only step with the network. The repository's
//!    `Cargo.lock` when it has one (it is what the project tested with). Otherwise
//!    (decision, for libraries such as bytes, serde and rayon that commit none) one is
//!    made as of the task's date for the runtime: every package that declares no
//!    `rust-version`, or an older one, is given the runtime's (in this stage only:
//!    resolution goes by the workspace's lowest, and below every release's a crate
//!    falls back to its newest), `cargo generate-lockfile` runs with
//!    `CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS=fallback`,
//!    then every locked crate that was published after the date (the sparse index
//!    carries each release's `pubtime`) or needs a newer rustc than the runtime's is
//!    taken down with `cargo update --precise` to the newest release of its semver
//!    series that fits (a release yanked since only when every one that fits is:
//!    futures-util yanked each 0.3 release before 0.3.31 in 2024); when a crate up the
//!    chain requires the newer release (serde pins serde_derive exactly; trybuild
//!    requires a newer serde_json), that crate is taken down instead. What cannot go
//!    down (no release of the series by the date) stays and is named in the build log.
//!    Without this, a 2024 serde checkout met 2026's serde_json and trybuild, which do
//!    not compile against it, and old toolchains met crates of edition 2024. Then
//!    `cargo vendor`: the sources of every locked crate in a directory. Crates that the
//!    workspace never builds on this platform (`cargo tree --target <host>
//!    --all-features`, normal, build and dev edges: the `windows*` crates were 320 of
//!    bytes' 360 MB) keep their manifest and the names of their files, emptied:
//!    resolution still reads them, nothing compiles them. A lockfile of format 4 is
//!    written as format 3 for a cargo older than 1.78 (the same content for crates.io
//!    dependencies).
//! 2. **Environment**, on the runtime's base image: the vendored sources, the
//!    lockfile and a cargo config that replaces crates.io with them, owned by the
//!    unprivileged user; then the spec's install steps in `/testbed`: the image's
//!    lockfile where the repository has none, and `cargo build` and `cargo test
//!    --no-run --lib --bins` of the default workspace members, which compile the
//!    dependencies (and dev-dependencies) and the members' own libraries into
//!    `CARGO_TARGET_DIR=/home/harvest/target` outside `/testbed`, so every run starts
//!    from a warm target dir and compiles only what the patches change and the
//!    integration test it selects.
//!
//! Old cargo (the 1.65 of Debian's Rust 1.63) cannot read the sparse index, and the
//! git index is out of reach here: the vendored directory is what makes any
//! toolchain work offline. Nothing is fetched while tests run: `CARGO_NET_OFFLINE=true`,
//! `--offline`, and no network in the container. The first stage's image stays on the
//! engine untagged (the builder's cache: a rebuild of the same stage reuses it;
//! `docker image prune` removes it). The content key of the image covers
//! the Dockerfile (runtime, date, system packages, steps), not the dependency stage's
//! base image nor crates.io: a rebuild resolves again against today's index (the
//! date filter keeps the result the same unless releases were yanked since).
//!
//! The same environment ([`RUST_ENV`]) holds in the image build, every run and the
//! harness's eval script, so that the warm target dir stays valid. In it, lints are
//! capped at warnings (`RUSTFLAGS=--cap-lints=warn`): a project's `#![deny(warnings)]`
//! must not turn a newer compiler's new lints into failures of every test. And test
//! builds carry no debug info (`CARGO_PROFILE_{DEV,TEST}_DEBUG=0`, and `STRIP=debuginfo`,
//! which cargo only defaults to from 1.77 on, so that Debian's Rust 1.63 does not link
//! its standard library's debug info into every test binary; decision): bytes' warm
//! target dir was 260 MB with it, rayon's 586 MB on 1.63 without the strip; panics
//! still name their file and line, only backtraces lose line numbers.

use crate::ecosystem::dockerfile::{Dockerfile, owned_by_user};
use crate::ecosystem::rust::infer::minor_of;
use crate::sandbox::images::{CA_PATH, EnvironmentRequest, ImageSettings};
use crate::sandbox::script::shell_quote;

/// Where every container script writes the test helper (run with `bash`: `/tmp` is
/// not executable in containers).
pub const CARGO_TEST_HELPER: &str = "/tmp/swe-harvest-cargo-test";
/// The oldest cargo that resolves rust-version-aware (`incompatible-rust-versions`).
const FALLBACK_RESOLVER_MINOR: u32 = 84;
/// Where the dependency stage leaves its results.
const DEPENDENCIES: &str = "/swe-harvest-deps";

/// The environment of the image build, every run and the harness's eval script.
pub const RUST_ENV: &str = "HOME=/home/harvest CARGO_HOME=/home/harvest/.cargo CARGO_TARGET_DIR=/home/harvest/target \
                            CARGO_NET_OFFLINE=true CARGO_INCREMENTAL=0 CARGO_TERM_COLOR=never \
                            CARGO_PROFILE_DEV_DEBUG=0 CARGO_PROFILE_TEST_DEBUG=0 CARGO_PROFILE_DEV_STRIP=debuginfo \
                            CARGO_PROFILE_TEST_STRIP=debuginfo RUSTFLAGS=--cap-lints=warn";

/// The dependency stage, run by bash in `/testbed` as root; its arguments are the
/// runtime's version (`1.63`) and the task's date. See the module doc.
pub const DEPENDENCY_SCRIPT: &str = include_str!("dependencies.sh");
/// Its name in the build context ([`crate::ecosystem::Ecosystem::environment_context_files`]).
pub const DEPENDENCY_SCRIPT_NAME: &str = "swe-harvest-dependencies.sh";

/// The image the dependency stage runs on: the runtime's own when its cargo resolves
/// rust-version-aware, else the newest Rust image configured (which may still be
/// too old: then the stage resolves as that cargo can).
pub fn dependency_base(runtime: &str, base: &str, settings: &ImageSettings) -> String {
    if minor_of(runtime).is_some_and(|minor| minor >= FALLBACK_RESOLVER_MINOR) {
        return base.to_string();
    }
    settings
        .base_images
        .iter()
        .filter(|(key, _)| key.starts_with("rust"))
        .filter_map(|(key, image)| minor_of(key).map(|minor| (minor, image)))
        .max()
        .filter(|(minor, _)| minor_of(runtime).is_none_or(|own| *minor > own))
        .map_or_else(|| base.to_string(), |(_, image)| image.clone())
}

/// The Dockerfile of an environment image on `base`.
pub fn environment_dockerfile(request: &EnvironmentRequest, base: &str, settings: &ImageSettings) -> String {
    let spec = &request.spec;
    let toolchain = minor_of(&spec.runtime).map_or_else(|| "1.0".to_string(), |minor| format!("1.{minor}"));
    let mut resolve_env = vec![
        "CARGO_HOME=/tmp/swe-harvest-cargo-home".to_string(),
        "CARGO_TERM_COLOR=never".to_string(),
        "CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS=fallback".to_string(),
    ];
    if settings.extra_ca.is_some() {
        resolve_env.push(format!("CARGO_HTTP_CAINFO={CA_PATH}"));
    }
    let mut dockerfile = Dockerfile::default();
    dockerfile.push("# Generated by swe-harvest: a Rust environment image (see pipeline/ecosystem/rust/image.rs).");
    dockerfile.push("# Stage 1: resolve, fetch and vendor the dependencies (the only step with the network).");
    dockerfile.push(format!("FROM {} AS dependencies", dependency_base(&spec.runtime, base, settings)));
    dockerfile.push("USER root");
    dockerfile.extra_ca(settings);
    dockerfile.push(format!("COPY {DEPENDENCY_SCRIPT_NAME} /{DEPENDENCY_SCRIPT_NAME}"));
    dockerfile.push("COPY testbed/ /testbed/");
    dockerfile.push(format!("ENV {}", resolve_env.join(" ")));
    // Another crates index than crates.io's: a source that replaces crates.io, in this
    // stage's cargo home only.
    let index = &settings.registries.crates_index;
    if index != crate::sandbox::Registries::CRATES {
        let config = format!(
            "[source.crates-io]\nreplace-with = \"swe-harvest-index\"\n\n[source.swe-harvest-index]\nregistry = \"{index}\"\n"
        );
        dockerfile.push(format!(
            "RUN mkdir -p /tmp/swe-harvest-cargo-home && printf '%s' {} > /tmp/swe-harvest-cargo-home/config.toml",
            shell_quote(&config)
        ));
    }
    let cutoff = request.date.format("%Y-%m-%dT%H:%M:%SZ");
    // The crates the task's patches add (`extra_packages`, `name@version`) after them.
    let added: Vec<String> = spec.extra_packages.iter().map(|added| shell_quote(added)).collect();
    let added = if added.is_empty() { String::new() } else { format!(" {}", added.join(" ")) };
    dockerfile.push(format!("RUN bash /{DEPENDENCY_SCRIPT_NAME} {toolchain} {cutoff}{added}"));
    dockerfile.push("# Stage 2: the environment on the runtime's image, offline from here on.");
    dockerfile.push(format!("FROM {base}"));
    dockerfile.push("USER root");
    dockerfile.system_packages(spec, "");
    dockerfile.unprivileged_user("/home/harvest/.cargo /home/harvest/target /testbed /swe-harvest/out", "");
    let owner = owned_by_user();
    dockerfile.push(format!("COPY --from=dependencies {owner} {DEPENDENCIES}/vendor/ /home/harvest/vendor/"));
    dockerfile
        .push(format!("COPY --from=dependencies {owner} {DEPENDENCIES}/config.toml /home/harvest/.cargo/config.toml"));
    dockerfile.push(format!("COPY --from=dependencies {owner} {DEPENDENCIES}/Cargo.lock /home/harvest/Cargo.lock"));
    dockerfile.enter_testbed(RUST_ENV);
    dockerfile.install(spec, Vec::new(), "", "");
    dockerfile.empty_testbed();
    dockerfile.finish(request, "")
}

/// The helper that runs the Rust test targets of the given files: its arguments are
/// the test command's words, `--`, then the files (relative to the repository root).
///
/// Each file is attributed to the workspace member whose folder holds it most
/// closely (`cargo metadata --no-deps`), then to a test target of that member:
/// `tests/NAME.rs` and `tests/NAME/main.rs` are `--test NAME`; any other file under
/// `tests/` (a shared module, a trybuild fixture) is every test target of the member
/// (its library's unit tests and each integration test), filtered to the file's own
/// module when it holds tests (coreutils' `tests/by-util/test_cp.rs`: `-- test_cp::`;
/// whole when no filtered run ran a test); a file under `src/` is the
/// library's unit tests (`--lib`; `src/main.rs` and `src/bin/` the binaries'); a file
/// of `benches/` or `examples/` runs nothing; any other file of the member is every
/// test target. Files that do not exist (deleted by the patch) select no single
/// target.
///
/// Each target runs in its own `cargo test`, so that one that does not compile (a
/// new test calling what the fix adds) costs only its own tests. A `--test NAME` that
/// cargo does not know (a target declared under another name in `Cargo.toml`) is
/// replaced by every test target of the member. An integration test file whose own
/// `#![cfg(...)]` asks for features of its crate (tokio's `feature = "full"`) runs
/// with `--features` of them (without, when the member has no such feature; with
/// `--all-features` when they do not compile its tests), and for the project's own
/// cfg names (tokio's `tokio_unstable`) with `--cfg` of them in `RUSTFLAGS`: else its
/// tests are compiled out and it runs none. libtest's lines are written as
/// SWE-bench's `parse_log_cargo` reads them: `test NAME - should panic ... ok`
/// becomes `test NAME ... ok` and `ignored, REASON` becomes `ignored`.
pub const CARGO_TEST_HELPER_SCRIPT: &str = include_str!("cargo-test-helper.sh");

/// Shell text that writes the helper to [`CARGO_TEST_HELPER`].
fn write_helper() -> String {
    format!("cat > {CARGO_TEST_HELPER} <<'SWE_HARVEST_CARGO_TEST'\n{CARGO_TEST_HELPER_SCRIPT}SWE_HARVEST_CARGO_TEST")
}

/// Every container script's setup: the offline environment, the test helper, and
/// an install that gives a repository without a lockfile the image's and checks that
/// the workspace resolves from the vendored sources.
pub fn script_setup(_version: &str) -> String {
    format!(
        "export {RUST_ENV}\n{}\ninstall_repository() {{\n    {}\n    cargo metadata --offline --format-version 1 >/dev/null \
         && echo \"Rust: the workspace resolves offline from the image's vendored crates\"\n}}",
        write_helper(),
        super::infer::USE_IMAGE_LOCKFILE,
    )
}

/// The lines SWE-bench's `eval_script` runs first: the environment, then the helper.
pub fn harness_setup(_version: &str) -> Vec<String> {
    vec![format!("export {RUST_ENV}"), write_helper()]
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::model::EnvironmentSpec;
    use crate::sandbox::images::fixtures;

    fn request(runtime: &str) -> EnvironmentRequest {
        fixtures::request(EnvironmentSpec {
            ecosystem: "rust".into(),
            runtime: runtime.into(),
            system_packages: vec!["libssl-dev".into()],
            install: vec![super::super::infer::WARM_TARGET_DIR.into()],
            test_command: super::super::infer::TEST_COMMAND.into(),
            ..Default::default()
        })
    }

    /// Build settings that know the Rust base images.
    fn settings(ca: Option<&[u8]>) -> ImageSettings {
        ImageSettings {
            base_images: ["rust1.63", "rust1.85", "go1.24"]
                .iter()
                .map(|runtime| (runtime.to_string(), format!("swe-harvest/base:{runtime}")))
                .collect::<BTreeMap<_, _>>(),
            ..fixtures::settings(ca)
        }
    }

    #[test]
    fn an_old_toolchain_gets_its_dependencies_resolved_by_the_newest_cargo() {
        let text = environment_dockerfile(&request("rust1.63"), "swe-harvest/base:rust1.63", &settings(Some(b"CA")));
        let froms: Vec<&str> = text.lines().filter(|line| line.starts_with("FROM ")).collect();
        assert_eq!(froms, vec!["FROM swe-harvest/base:rust1.85 AS dependencies", "FROM swe-harvest/base:rust1.63"]);
        let resolve = text.lines().find(|line| line.contains("/swe-harvest-dependencies.sh ")).unwrap();
        assert_eq!(resolve, "RUN bash /swe-harvest-dependencies.sh 1.63 2023-05-04T03:02:01Z");
        assert!(text.contains("COPY swe-harvest-dependencies.sh /swe-harvest-dependencies.sh\n"), "{text}");
        let stage_one_env = text.lines().find(|line| line.starts_with("ENV CARGO_HOME=/tmp")).unwrap();
        assert!(stage_one_env.contains("CARGO_HTTP_CAINFO=/etc/swe-harvest/ca.crt"), "{stage_one_env}");
        assert!(stage_one_env.contains("CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS=fallback"), "{stage_one_env}");
        // The CA and the network settings stay in the first stage.
        let stage_two = text.split("FROM swe-harvest/base:rust1.63").nth(1).unwrap();
        assert!(!stage_two.contains("ca.crt") && !stage_two.contains("CAINFO"), "{stage_two}");
        assert!(stage_two.contains("CARGO_NET_OFFLINE=true"), "{stage_two}");
        assert!(stage_two.contains("for package in libssl-dev; do"), "{stage_two}");
        assert!(stage_two.contains("RUN set -e; cargo build --offline"), "{stage_two}");
        assert!(stage_two.contains("cargo test --offline --no-run --lib --bins"), "{stage_two}");
    }

    #[test]
    fn another_crates_index_replaces_crates_io_in_the_dependency_stage_only() {
        let text = environment_dockerfile(&request("rust1.85"), "registry/rust:1.85", &settings(None));
        assert!(!text.contains("replace-with = \"swe-harvest-index\""), "crates.io needs no source: {text}");
        let mirrored = fixtures::mirrored(|registries| {
            registries.crates_index = "sparse+https://crates.example.com/index/".into()
        });
        let text = environment_dockerfile(&request("rust1.63"), "registry/rust:1.63", &mirrored);
        let (stage_one, stage_two) = text.split_once("\nFROM registry/rust:1.63\n").unwrap();
        assert!(stage_one.contains("registry = \"sparse+https://crates.example.com/index/\""), "{stage_one}");
        assert!(stage_one.contains("> /tmp/swe-harvest-cargo-home/config.toml"), "{stage_one}");
        assert!(!stage_two.contains("crates.example.com"), "{stage_two}");
    }

    #[test]
    fn a_new_toolchain_resolves_on_its_own_image() {
        let text = environment_dockerfile(&request("rust1.85"), "registry/rust:1.85", &settings(None));
        assert!(text.contains("FROM registry/rust:1.85 AS dependencies\n"), "{text}");
        assert!(!text.contains("CAINFO"), "no CA configured: {text}");
        assert_eq!(
            dependency_base("rust1.63", "b", &ImageSettings { base_images: BTreeMap::new(), ..settings(None) }),
            "b"
        );
    }

    #[test]
    fn the_helper_runs_one_cargo_test_per_target_of_the_touched_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, text) in [
            ("Cargo.toml", "[workspace]\n"),
            ("src/lib.rs", ""),
            ("src/slice/test.rs", ""),
            ("tests/a.rs", ""),
            ("tests/b/main.rs", ""),
            ("tests/support/mod.rs", ""),
            ("suite/Cargo.toml", ""),
            ("suite/tests/gen.rs", ""),
            ("suite/tests/ui/x.stderr", ""),
            ("suite/tests/de.rs", ""),
            ("benches/speed.rs", ""),
        ] {
            fs_err::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            fs_err::write(root.join(path), text).unwrap();
        }
        // A fake `cargo`: metadata names the two members, `test` prints its arguments.
        let bin = root.join("bin");
        fs_err::create_dir_all(&bin).unwrap();
        let fake = format!(
            "#!/bin/sh\nif [ \"$1\" = metadata ]; then echo '{{\"packages\":[{{\"manifest_path\":\"{root}/Cargo.toml\"}},{{\"manifest_path\":\"{root}/suite/Cargo.toml\"}}]}}'; exit 0; fi\n\
             echo \"ran $*\"\n[ \"$5\" = --test=gone ] && {{ echo 'error: no test target named `gone`'; exit 101; }}\n\
             echo 'test x - should panic ... ok'\necho 'test y ... ignored, slow'\n",
            root = root.display()
        );
        fs_err::write(bin.join("cargo"), fake).unwrap();
        std::process::Command::new("chmod").arg("+x").arg(bin.join("cargo")).status().unwrap();
        let helper = root.join("helper.sh");
        fs_err::write(&helper, CARGO_TEST_HELPER_SCRIPT).unwrap();
        let run = |files: &[&str]| {
            let output = std::process::Command::new("bash")
                .arg(&helper)
                .args(["cargo", "test", "--offline", "--"])
                .args(files)
                .current_dir(root)
                .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()))
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&output.stdout).into_owned();
            let ran: Vec<String> =
                text.lines().filter_map(|line| line.strip_prefix("ran test --offline ")).map(String::from).collect();
            (ran, text, output.status.code())
        };
        let (ran, text, code) = run(&[
            "tests/a.rs",
            "tests/b/main.rs",
            "src/slice/test.rs",
            "suite/tests/gen.rs",
            "benches/speed.rs",
            "tests/deleted.rs",
        ]);
        assert_eq!(
            ran,
            vec![
                "--manifest-path ./Cargo.toml --test=a",
                "--manifest-path ./Cargo.toml --test=b",
                "--manifest-path ./Cargo.toml --lib",
                "--manifest-path suite/Cargo.toml --test=gen",
            ],
            "{text}"
        );
        assert_eq!(code, Some(0));
        assert!(text.contains("test x ... ok\n") && text.contains("test y ... ignored\n"), "{text}");
        // A fixture or a shared module: every test target of its member.
        let (ran, text, _) = run(&["suite/tests/ui/x.stderr", "tests/support/mod.rs"]);
        assert_eq!(
            ran,
            vec![
                "--manifest-path suite/Cargo.toml --test=de",
                "--manifest-path suite/Cargo.toml --test=gen",
                "--manifest-path ./Cargo.toml --lib",
                "--manifest-path ./Cargo.toml --test=a",
                "--manifest-path ./Cargo.toml --test=b",
            ],
            "{text}"
        );
        let (ran, _, code) = run(&["benches/speed.rs"]);
        assert!(ran.is_empty());
        assert_eq!(code, Some(0));
    }

    /// Runs the helper for the `touched` files in a project of the empty `files`, with
    /// the shell script `cargo` as cargo: the cargo commands it ran (after `test
    /// --offline`), its output and its exit code.
    fn helper_with_cargo(files: &[&str], cargo: &str, touched: &[&str]) -> (Vec<String>, String, Option<i32>) {
        let files: Vec<(&str, &str)> = files.iter().map(|path| (*path, "")).collect();
        helper_with_cargo_in(&files, cargo, touched)
    }

    /// [`helper_with_cargo`] in a project of the given files and their texts.
    fn helper_with_cargo_in(
        files: &[(&str, &str)],
        cargo: &str,
        touched: &[&str],
    ) -> (Vec<String>, String, Option<i32>) {
        helper_with_cargo_and_env(files, cargo, touched, &[])
    }

    /// [`helper_with_cargo_in`], with variables set for the helper.
    fn helper_with_cargo_and_env(
        files: &[(&str, &str)],
        cargo: &str,
        touched: &[&str],
        env: &[(&str, &str)],
    ) -> (Vec<String>, String, Option<i32>) {
        helper_with_command(&["cargo", "test", "--offline"], files, cargo, touched, env)
    }

    /// [`helper_with_cargo_and_env`], with the test command's words.
    fn helper_with_command(
        command: &[&str],
        files: &[(&str, &str)],
        cargo: &str,
        touched: &[&str],
        env: &[(&str, &str)],
    ) -> (Vec<String>, String, Option<i32>) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, text) in files {
            fs_err::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            fs_err::write(root.join(path), text).unwrap();
        }
        let bin = root.join("bin");
        fs_err::create_dir_all(&bin).unwrap();
        fs_err::write(bin.join("cargo"), cargo).unwrap();
        std::process::Command::new("chmod").arg("+x").arg(bin.join("cargo")).status().unwrap();
        let helper = root.join("helper.sh");
        fs_err::write(&helper, CARGO_TEST_HELPER_SCRIPT).unwrap();
        let output = std::process::Command::new("bash")
            .arg(&helper)
            .args(command)
            .arg("--")
            .args(touched)
            .current_dir(root)
            .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()))
            .envs(env.iter().copied())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let ran = text.lines().filter_map(|line| line.strip_prefix("ran test --offline ")).map(String::from).collect();
        (ran, text, output.status.code())
    }

    /// sharkdp/bat-2393: a test's child outlived the test binary with cargo's output
    /// open, and the run waited for it until the timeout.
    #[test]
    fn a_process_a_test_leaves_behind_does_not_hold_the_run() {
        let dir = tempfile::tempdir().unwrap();
        // Holds the output cargo gave it for 20 s, then says it is done.
        let done = dir.path().join("done");
        let cargo = format!(
            "#!/bin/bash\n[ \"$1\" = metadata ] && exit 1\n(sleep 20; touch {}) &\n\
             echo 'test a ... ok'\necho 'test b ... FAILED'\nexit 101\n",
            done.display()
        );
        let (ran, text, code) = helper_with_cargo(&["Cargo.toml", "tests/a.rs"], &cargo, &["tests/a.rs"]);
        assert!(!done.exists(), "the helper waited for the process cargo left: {text}");
        assert_eq!(code, Some(101), "cargo's status: {text}");
        assert!(text.contains("test a ... ok\ntest b ... FAILED"), "cargo's output, whole: {text}");
        assert!(ran.is_empty(), "{ran:?}");
    }

    #[test]
    fn a_target_cargo_does_not_know_falls_back_to_every_target_of_its_member() {
        let cargo = "#!/bin/sh\n[ \"$1\" = metadata ] && exit 1\necho \"ran $*\"\n\
                     [ \"$5\" = --test=gone ] && { echo 'error: no test target named `gone` in default-run packages'; exit 101; }\nexit 0\n";
        let (ran, text, code) =
            helper_with_cargo(&["Cargo.toml", "tests/gone.rs", "tests/other.rs"], cargo, &["tests/gone.rs"]);
        assert_eq!(
            ran,
            vec!["--manifest-path ./Cargo.toml --test=gone", "--manifest-path ./Cargo.toml --test=other"],
            "{text}"
        );
        assert_eq!(code, Some(101), "the failed run still counts");
    }

    /// coreutils' shape: test modules below `tests/` of one target (`tests`) beside
    /// another target (`util`). A touched module filters every target to its tests; a
    /// helper module without tests filters nothing; when no filtered run ran a test
    /// (the module is named otherwise), those targets run whole, once.
    #[test]
    fn a_touched_test_module_filters_its_targets_to_its_tests() {
        // Runs 2 tests when filtered to `test_cp::`, 0 for any other filter, 5 unfiltered.
        let cargo = "#!/bin/bash\n[ \"$1\" = metadata ] && exit 1\necho \"ran $*\"\n\
                     case \"$*\" in *'-- test_cp::'*) echo 'running 2 tests' ;; *' -- '*) echo 'running 0 tests' ;; \
                     *) echo 'running 5 tests' ;; esac\nexit 0\n";
        let files = [
            ("Cargo.toml", ""),
            ("tests/tests.rs", "#[path = \"by-util/test_cp.rs\"]\nmod test_cp;\n"),
            ("tests/util.rs", "#[test]\nfn u() {}\n"),
            ("tests/by-util/test_cp.rs", "#[test]\nfn copies() {}\n"),
            ("tests/by-util/test_mv.rs", "#[test]\nfn moves() {}\n"),
            ("tests/common/helpers.rs", "pub fn helper() {}\n"),
        ];
        let (ran, text, _) = helper_with_cargo_in(&files, cargo, &["tests/by-util/test_cp.rs"]);
        assert_eq!(
            ran,
            vec![
                "--manifest-path ./Cargo.toml --test=tests -- test_cp::",
                "--manifest-path ./Cargo.toml --test=util -- test_cp::"
            ],
            "{text}"
        );
        // Two modules: both filters in one run.
        let (ran, text, _) =
            helper_with_cargo_in(&files, cargo, &["tests/by-util/test_cp.rs", "tests/by-util/test_mv.rs"]);
        assert_eq!(ran[0], "--manifest-path ./Cargo.toml --test=tests -- test_cp:: test_mv::", "{text}");
        // A helper module of the tests beside it: every target whole.
        let (ran, text, _) =
            helper_with_cargo_in(&files, cargo, &["tests/by-util/test_cp.rs", "tests/common/helpers.rs"]);
        assert_eq!(
            ran,
            vec!["--manifest-path ./Cargo.toml --test=tests", "--manifest-path ./Cargo.toml --test=util"],
            "{text}"
        );
        // No filtered run ran a test: the targets again, whole.
        let (ran, text, _) = helper_with_cargo_in(&files, cargo, &["tests/by-util/test_mv.rs"]);
        assert_eq!(
            ran,
            vec![
                "--manifest-path ./Cargo.toml --test=tests -- test_mv::",
                "--manifest-path ./Cargo.toml --test=util -- test_mv::",
                "--manifest-path ./Cargo.toml --test=tests",
                "--manifest-path ./Cargo.toml --test=util",
            ],
            "{text}"
        );
        assert!(text.contains("no test of the touched modules ran"), "{text}");
    }

    /// tokio-7111: before the fix a test never returns. Its binary is stopped once the
    /// test has given no result for the limit (here 1 s), whether libtest runs one test
    /// at a time (`test NAME ... ` stays the last line: a container of one CPU) or
    /// several (libtest's 60 s warning names it); a test that gives its result is left
    /// alone, the results printed stay, and the target runs again without the stopped
    /// test for the results of the tests after it.
    #[test]
    fn a_test_that_never_returns_is_stopped_and_the_targets_results_stay() {
        // A test binary as cargo's child: `spins` never returns; cargo says how it ended.
        // Asked to skip `spins`, the binary runs the test after it, `later`.
        let cargo = |binary: &str| {
            format!(
                "#!/bin/bash\n[ \"$1\" = metadata ] && exit 1\necho \"ran $*\"\n\
                 case \"$*\" in *'--skip spins'*) echo 'test quick ... ok'; echo 'test later ... ok'; exit 0 ;; esac\n\
                 bash -c '{binary}; exec sleep 600' &\nwait $!\necho \"exit status $?\"\nexit 101\n"
            )
        };
        let one_at_a_time = "echo \"running 3 tests\"; echo \"test quick ... ok\"; printf \"test slow ... \"; \
                             sleep 3; echo ok; printf \"test spins ... \"";
        let in_parallel = "echo \"running 3 tests\"; echo \"test quick ... ok\"; \
                           echo \"test slow has been running for over 60 seconds\"; echo \"test slow ... ok\"; \
                           echo \"test spins has been running for over 60 seconds\"";
        let files = [("Cargo.toml", ""), ("tests/select.rs", "#[test]\nfn spins() {}\n")];
        for (binary, limit) in [(one_at_a_time, "4"), (in_parallel, "1")] {
            let (ran, text, _) = helper_with_cargo_and_env(
                &files,
                &cargo(binary),
                &["tests/select.rs"],
                &[("SWE_HARVEST_HANG_SECS", limit)],
            );
            assert_eq!(
                ran,
                vec![
                    "--manifest-path ./Cargo.toml --test=select",
                    "--manifest-path ./Cargo.toml --test=select -- --skip spins"
                ],
                "{text}"
            );
            assert!(text.contains("test later ... ok"), "the test after the stopped one gives its result: {text}");
            assert!(text.contains("test quick ... ok\ntest slow "), "{text}");
            assert!(
                text.contains(&format!("swe-harvest: stopped the test binary: spins gave no result in {limit} s")),
                "{text}"
            );
            assert!(!text.contains("stopped the test binary: slow"), "slow gave its result: {text}");
            assert!(text.contains("exit status 137"), "killed (128 + SIGKILL): {text}");
        }
    }

    /// A fake cargo that prints the arguments and the RUSTFLAGS of each run.
    const CARGO_SAYING_ITS_FLAGS: &str = "#!/bin/sh\n[ \"$1\" = metadata ] && exit 1\n\
                                          echo \"ran $* (RUSTFLAGS ${RUSTFLAGS-unset})\"\nexit 0\n";

    /// tokio's rt_metrics.rs: a `#![cfg]` over several lines asks for a feature and for
    /// the project's own `tokio_unstable`; what is under `not(...)` is not asked for.
    #[test]
    fn a_test_file_gated_on_the_projects_own_cfg_runs_with_it_in_rustflags() {
        let gated = "#![warn(rust_2018_idioms)]\n#![cfg(all(\n    feature = \"full\",\n    tokio_unstable,\n    \
                     not(target_os = \"wasi\"),\n    not(all(feature = \"nope\", not(tokio_wasi))),\n    \
                     target_has_atomic = \"64\"\n))]\n\nfn f() {}\n";
        // tokio's io_panic.rs: a comment after the attribute names no cfg.
        let commented = "#![cfg(not(target_os = \"wasi\"))] // Wasi does not support panic recovery\n";
        let files = [
            ("Cargo.toml", ""),
            ("tests/metrics.rs", gated),
            ("tests/plain.rs", "#![cfg(unix)]\n"),
            ("tests/io_panic.rs", commented),
        ];
        let (ran, text, code) = helper_with_cargo_in(
            &files,
            CARGO_SAYING_ITS_FLAGS,
            &["tests/metrics.rs", "tests/plain.rs", "tests/io_panic.rs"],
        );
        assert_eq!(
            ran,
            vec![
                "--manifest-path ./Cargo.toml --test=metrics --features full (RUSTFLAGS --cfg tokio_unstable)",
                "--manifest-path ./Cargo.toml --test=plain (RUSTFLAGS unset)",
                "--manifest-path ./Cargo.toml --test=io_panic (RUSTFLAGS unset)",
            ],
            "{text}"
        );
        assert_eq!(code, Some(0));
        assert!(
            text.contains("--features 'full' with RUSTFLAGS '--cfg tokio_unstable' (the file's #![cfg])"),
            "{text}"
        );
    }

    /// A test command that sets RUSTFLAGS itself (the cfgs of the project's CI, as
    /// inference writes it): a file's own cfg is added to that word, and one it has
    /// already is not asked twice.
    #[test]
    fn a_file_cfg_joins_the_rustflags_the_test_command_sets_from_ci() {
        let files = [
            ("Cargo.toml", ""),
            ("tests/metrics.rs", "#![cfg(all(tokio_unstable, tokio_taskdump))]\n"),
            ("tests/plain.rs", "#![cfg(tokio_unstable)]\n"),
        ];
        let command = ["env", "RUSTFLAGS=--cap-lints=warn --cfg tokio_unstable", "cargo", "test", "--offline"];
        let (ran, text, code) = helper_with_command(
            &command,
            &files,
            CARGO_SAYING_ITS_FLAGS,
            &["tests/metrics.rs", "tests/plain.rs"],
            &[("RUSTFLAGS", "--cap-lints=warn")],
        );
        assert_eq!(
            ran,
            vec![
                "--manifest-path ./Cargo.toml --test=metrics (RUSTFLAGS --cap-lints=warn --cfg tokio_unstable --cfg tokio_taskdump)",
                "--manifest-path ./Cargo.toml --test=plain (RUSTFLAGS --cap-lints=warn --cfg tokio_unstable)",
            ],
            "{text}"
        );
        assert_eq!(code, Some(0));
    }

    /// tokio's sync_mpsc.rs asks for `sync`, while its tests need `macros` and `rt` too:
    /// when the file's features do not compile it, every feature of the member.
    #[test]
    fn a_test_file_whose_features_are_too_few_to_compile_runs_with_all_features() {
        // Rust 1.85 warns of tokio's own cfgs, quoting lines that name a feature and `not`.
        let cargo = "#!/bin/sh\n[ \"$1\" = metadata ] && exit 1\necho \"ran $*\"\n\
                     [ \"$6\" = --features ] && { echo 'warning: unexpected `cfg` condition name: `tokio_unstable`'; \
                     echo '38 |     #[cfg(all(tokio_unstable, feature = \"rt-multi-thread\", not(target_os = \"wasi\")))]'; \
                     echo 'error[E0433]: failed to resolve: could not find `test` in `tokio`'; \
                     echo 'error: could not compile `tokio` (test \"sync_mpsc\") due to 1 previous error'; exit 101; }\n\
                     echo 'test send_recv ... ok'\nexit 0\n";
        let files = [("Cargo.toml", ""), ("tests/sync_mpsc.rs", "#![cfg(feature = \"sync\")]\n")];
        let (ran, text, code) = helper_with_cargo_in(&files, cargo, &["tests/sync_mpsc.rs"]);
        assert_eq!(
            ran,
            vec![
                "--manifest-path ./Cargo.toml --test=sync_mpsc --features sync",
                "--manifest-path ./Cargo.toml --test=sync_mpsc --all-features",
            ],
            "{text}"
        );
        assert_eq!(code, Some(0), "{text}");
        assert!(text.contains("test send_recv ... ok"), "{text}");

        // A member without the feature: cargo's own error, then the run without features.
        let cargo = "#!/bin/sh\n[ \"$1\" = metadata ] && exit 1\necho \"ran $*\"\n\
                     [ \"$6\" = --features ] && { echo 'error: none of the selected packages contains these features: sync'; exit 101; }\n\
                     echo 'test send_recv ... ok'\nexit 0\n";
        let (ran, text, code) = helper_with_cargo_in(&files, cargo, &["tests/sync_mpsc.rs"]);
        assert_eq!(
            ran,
            vec![
                "--manifest-path ./Cargo.toml --test=sync_mpsc --features sync",
                "--manifest-path ./Cargo.toml --test=sync_mpsc",
            ],
            "{text}"
        );
        assert_eq!(code, Some(0), "{text}");
    }

    /// ripgrep's shape: `tests/regression.rs` is a module of the one test target
    /// `integration` (`tests/tests.rs`), so the targets cargo lists are run instead.
    #[test]
    fn a_test_file_that_is_a_module_runs_the_targets_cargo_lists() {
        let cargo = "#!/bin/sh\n[ \"$1\" = metadata ] && exit 1\necho \"ran $*\"\n[ \"$5\" = --test=integration ] && exit 0\n\
                     printf 'error: no test target named `%s`.\\nAvailable test targets:\\n    integration\\n' \"${5#--test=}\"; exit 101\n";
        let (ran, text, _) = helper_with_cargo(
            &["Cargo.toml", "tests/tests.rs", "tests/regression.rs", "tests/util.rs"],
            cargo,
            &["tests/regression.rs", "tests/util.rs"],
        );
        assert_eq!(
            ran,
            vec![
                "--manifest-path ./Cargo.toml --test=regression",
                "--manifest-path ./Cargo.toml --test=util",
                "--manifest-path ./Cargo.toml --test=integration"
            ],
            "{text}"
        );
    }

    /// Runs `body` in bash after the dependency script's functions (`SWE_HARVEST_SOURCE_ONLY`).
    fn with_dependency_functions(body: &str, env: &[(&str, &str)]) -> (String, bool) {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("dependencies.sh");
        fs_err::write(&script, DEPENDENCY_SCRIPT).unwrap();
        let output = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("SWE_HARVEST_SOURCE_ONLY=1 source {} \"$@\"\n{body}", script.display()))
            .args(["test", "1.63", "2021-05-18T20:09:02Z"])
            .envs(env.iter().copied())
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        (text, output.status.success())
    }

    /// An index cache file as cargo writes it: a header, then per release its version
    /// and its JSON, each ended by NUL.
    fn index_cache(entries: &[&str]) -> Vec<u8> {
        let mut bytes = vec![3, 0, 0, 0, 0];
        bytes.extend_from_slice(b"etag\0");
        for entry in entries {
            let version = entry.split("\"vers\": \"").nth(1).unwrap().split('"').next().unwrap();
            bytes.extend_from_slice(version.as_bytes());
            bytes.push(0);
            bytes.extend_from_slice(entry.as_bytes());
            bytes.push(0);
        }
        bytes
    }

    #[test]
    fn the_newest_release_of_the_series_by_the_date_that_fits_the_runtime_is_chosen() {
        let home = tempfile::tempdir().unwrap();
        let cache = home.path().join("registry/index/index.crates.io-1949cf8c6b5b557f/.cache/se/rd");
        fs_err::create_dir_all(&cache).unwrap();
        let release = |version: &str, rust: Option<&str>, published: &str, yanked: bool| {
            let rust = rust.map(|rust| format!(", \"rust_version\": \"{rust}\"")).unwrap_or_default();
            format!(
                "{{\"name\": \"serde_json\", \"vers\": \"{version}\", \"deps\": [], \"cksum\": \"00\", \"features\": {{}}, \
                 \"yanked\": {yanked}{rust}, \"pubtime\": \"{published}\"}}"
            )
        };
        let entries = [
            release("1.0.60", None, "2020-12-01T00:00:00Z", false),
            release("1.0.64", Some("1.36"), "2021-03-01T00:00:00Z", false),
            release("1.0.65", Some("1.36"), "2021-04-01T00:00:00Z", true),
            release("1.0.66", Some("1.36"), "2021-06-01T00:00:00Z", false),
            release("1.0.140", Some("1.71"), "2026-01-01T00:00:00Z", false),
            release("2.0.0-alpha", None, "2021-01-01T00:00:00Z", false),
        ];
        let wasi = [
            "{\"name\": \"wasi\", \"vers\": \"0.10.0+wasi-snapshot-preview1\", \"yanked\": false, \"pubtime\": \"2020-06-01T00:00:00Z\"}",
            "{\"name\": \"wasi\", \"vers\": \"0.11.0+wasi-snapshot-preview1\", \"yanked\": false, \"pubtime\": \"2021-01-01T00:00:00Z\"}",
            "{\"name\": \"wasi\", \"vers\": \"0.11.1-rc.1\", \"yanked\": false, \"pubtime\": \"2021-02-01T00:00:00Z\"}",
        ];
        let wasi_dir = home.path().join("registry/index/index.crates.io-1949cf8c6b5b557f/.cache/wa/si");
        fs_err::create_dir_all(&wasi_dir).unwrap();
        fs_err::write(wasi_dir.join("wasi"), index_cache(&wasi)).unwrap();
        let refs: Vec<&str> = entries.iter().map(String::as_str).collect();
        fs_err::write(cache.join("serde_json"), index_cache(&refs)).unwrap();
        let home_path = home.path().to_str().unwrap();
        let (text, ok) = with_dependency_functions(
            "releases serde_json | tail -n 2; echo \"newest: $(newest_fitting serde_json 1.0.140)\"\n\
             fits 1.71 2020-01-01T00:00:00Z || echo 'a newer rustc does not fit'\n\
             fits 1.56 2021-05-19T00:00:00Z || echo 'after the date does not fit'\n\
             fits none 2021-05-18T20:09:02Z && echo 'the date itself fits'\n\
             echo \"other: [$(newest_fitting serde 1.0.1)]\"\n\
             echo \"wasi: $(newest_fitting wasi 0.11.1+wasi-snapshot-preview1)\"",
            &[("CARGO_HOME", home_path)],
        );
        assert!(ok, "{text}");
        assert!(
            text.contains("1.0.140 1.71 2026-01-01T00:00:00Z no\n2.0.0-alpha none 2021-01-01T00:00:00Z no\n"),
            "{text}"
        );
        assert!(text.contains("newest: 1.0.64\n"), "not 1.0.65 (yanked) nor 1.0.66 (after the date): {text}");
        for line in [
            "a newer rustc does not fit",
            "after the date does not fit",
            "the date itself fits",
            "other: []",
            "wasi: 0.11.0+wasi-snapshot-preview1\n",
        ] {
            assert!(text.contains(line), "{line}: {text}");
        }
    }

    /// futures-util yanked every 0.3 release before 0.3.31 in 2024: a task of 2022 goes
    /// back to the release of its date, yanked since, not to none.
    #[test]
    fn a_yanked_release_is_chosen_only_when_every_release_that_fits_is_yanked() {
        let home = tempfile::tempdir().unwrap();
        let index = home.path().join("registry/index/index.crates.io-1949cf8c6b5b557f/.cache/fu/tu");
        fs_err::create_dir_all(&index).unwrap();
        let release = |name: &str, version: &str, rust: &str, published: &str, yanked: bool| {
            format!(
                "{{\"name\": \"{name}\", \"vers\": \"{version}\", \"yanked\": {yanked}, \"rust_version\": \"{rust}\", \"pubtime\": \"{published}\"}}"
            )
        };
        let util = [
            release("futures-util", "0.3.12", "1.36", "2021-01-01T00:00:00Z", true),
            release("futures-util", "0.3.15", "1.45", "2021-05-11T00:00:00Z", true),
            release("futures-util", "0.3.16", "1.45", "2021-07-23T00:00:00Z", true),
            release("futures-util", "0.3.31", "1.56", "2024-10-05T00:00:00Z", false),
            release("futures-util", "0.3.34", "1.71", "2026-08-11T00:00:00Z", false),
        ];
        let refs: Vec<&str> = util.iter().map(String::as_str).collect();
        fs_err::write(index.join("futures-util"), index_cache(&refs)).unwrap();
        let unyanked = [
            release("futures-task", "0.3.14", "1.36", "2021-04-01T00:00:00Z", false),
            release("futures-task", "0.3.15", "1.45", "2021-05-11T00:00:00Z", true),
            release("futures-task", "0.3.34", "1.71", "2026-08-11T00:00:00Z", false),
        ];
        let refs: Vec<&str> = unyanked.iter().map(String::as_str).collect();
        fs_err::write(index.join("futures-task"), index_cache(&refs)).unwrap();
        let (text, ok) = with_dependency_functions(
            "echo \"util: $(newest_fitting futures-util 0.3.34)\"\n\
             echo \"task: $(newest_fitting futures-task 0.3.34)\"\n\
             yanked_since futures-util 0.3.15 > /dev/null && echo 'util 0.3.15 is yanked'\n\
             yanked_since futures-util 0.3.31 || echo 'util 0.3.31 is not'",
            &[("CARGO_HOME", home.path().to_str().unwrap())],
        );
        assert!(ok, "{text}");
        assert!(text.contains("util: 0.3.15\n"), "every release by the date is yanked: the newest of them: {text}");
        assert!(text.contains("task: 0.3.14\n"), "an unyanked release by the date comes first: {text}");
        assert!(text.contains("util 0.3.15 is yanked\nutil 0.3.31 is not\n"), "{text}");
    }

    /// tracing of 2022 declares rust-version 1.42; resolved for that, its lockfile held
    /// futures-util 0.3.34 (Rust 1.71), and its dated rung (Rust 1.63) could not build it.
    #[test]
    fn every_package_resolves_for_the_runtimes_rustc_when_it_declares_an_older_one_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let manifests = [
            (
                "Cargo.toml",
                "[workspace]\nmembers = [\"a\", \"b\", \"c\", \"d\"]\n\n[workspace.package]\nrust-version = \"1.42\"\n",
            ),
            ("a/Cargo.toml", "[package]\nname = \"a\"\nrust-version = \"1.42.0\"\n"),
            ("b/Cargo.toml", "[package]\nname = \"b\"\nrust-version = \"1.70\"\n"),
            ("c/Cargo.toml", "[package]\nname = \"c\"\n"),
            ("d/Cargo.toml", "[package]\nname = \"d\"\nrust-version.workspace = true\n"),
            ("e/Cargo.toml", "[package]\nname = \"e\"\nrust-version = \"1.4200\"\n"),
            ("target/package/f/Cargo.toml", "[package]\nname = \"f\"\nrust-version = \"1.42\"\n"),
        ];
        for (path, text) in manifests {
            let path = dir.path().join(path);
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(path, text).unwrap();
        }
        let (text, ok) =
            with_dependency_functions(&format!("cd {} && resolve_for_the_runtime", dir.path().display()), &[]);
        assert!(ok, "{text}");
        let read = |path: &str| fs_err::read_to_string(dir.path().join(path)).unwrap();
        assert!(
            read("Cargo.toml").ends_with("[workspace.package]\nrust-version = \"1.63\"\n"),
            "{}",
            read("Cargo.toml")
        );
        assert_eq!(
            read("a/Cargo.toml"),
            "[package]\nname = \"a\"\nrust-version = \"1.63\"\n",
            "an older one is raised"
        );
        assert_eq!(read("b/Cargo.toml"), manifests[2].1, "a newer one stays");
        assert_eq!(read("c/Cargo.toml"), "[package]\nrust-version = \"1.63\"\nname = \"c\"\n", "none: the runtime's");
        assert_eq!(read("d/Cargo.toml"), manifests[4].1, "the workspace's, raised there");
        assert_eq!(read("e/Cargo.toml"), manifests[5].1, "1.4200 is newer, whatever its first digits");
        assert_eq!(read("target/package/f/Cargo.toml"), manifests[6].1, "build output is not the project");
    }

    /// The first crate of a long lockfile (awk is still writing when grep has found it).
    #[test]
    fn a_crate_early_in_a_long_lockfile_is_seen_as_locked() {
        let dir = tempfile::tempdir().unwrap();
        let mut lock = String::new();
        for index in 0..20_000 {
            lock.push_str(&format!(
                "[[package]]\nname = \"crate-{index}\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n"
            ));
        }
        fs_err::write(dir.path().join("Cargo.lock"), lock).unwrap();
        let (text, ok) = with_dependency_functions(
            &format!(
                "cd {} && for try in 1 2 3 4 5; do is_locked crate-0 1.0.0 && echo seen || echo unseen; done\n\
                 is_locked crate-0 2.0.0 || echo 'not at 2.0.0'\n\
                 all_locked crate-1@1.0.0 crate-19999@1.0.0 && echo 'both seen'\n\
                 all_locked crate-1@1.0.0 crate-7@2.0.0 || echo 'not both'",
                dir.path().display()
            ),
            &[],
        );
        assert!(ok, "{text}");
        assert_eq!(text, "seen\nseen\nseen\nseen\nseen\nnot at 2.0.0\nboth seen\nnot both\n");
    }

    /// The travel step with a fake `cargo update --precise` that refuses a move while a
    /// requirer is locked at a version, and logs every call. p waits for q (which can
    /// go down), x for y (which cannot), s for h (whose only release, 1.10.0, is the
    /// number s would go down to: lockstep names h's own version), t for k (whose
    /// release of t's number, 1.3.0, is newer than k's and does not fit). w, which the
    /// fake `cargo tree` leaves out (a Windows-only crate), is never moved.
    #[test]
    fn a_refused_move_is_tried_again_only_once_a_crate_that_refused_it_has_moved() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("cargo-home");
        let release = |name: &str, version: &str, published: &str| {
            format!(
                "{{\"name\": \"{name}\", \"vers\": \"{version}\", \"yanked\": false, \"pubtime\": \"{published}\"}}"
            )
        };
        let (old, new) = ("2020-01-01T00:00:00Z", "2026-01-01T00:00:00Z");
        for (name, releases) in [
            ("p", vec![("1.4.0", old), ("1.5.0", new)]),
            ("q", vec![("1.4.0", old), ("1.5.0", new)]),
            ("x", vec![("1.4.0", old), ("1.5.0", new)]),
            ("y", vec![("1.5.0", new)]),
            ("s", vec![("1.10.0", old), ("1.16.6", new)]),
            ("h", vec![("1.10.0", new)]),
            ("t", vec![("1.3.0", old), ("1.5.0", new)]),
            ("k", vec![("1.2.0", new), ("1.3.0", new)]),
            ("w", vec![("1.4.0", old), ("1.5.0", new)]),
        ] {
            let folder = home.join("registry/index/index.crates.io-1949cf8c6b5b557f/.cache/1");
            fs_err::create_dir_all(&folder).unwrap();
            let entries: Vec<String> =
                releases.iter().map(|(version, published)| release(name, version, published)).collect();
            let refs: Vec<&str> = entries.iter().map(String::as_str).collect();
            fs_err::write(folder.join(name), index_cache(&refs)).unwrap();
        }
        let project = dir.path().join("project");
        fs_err::create_dir_all(&project).unwrap();
        let lock: String = [("p", "1.5.0"), ("q", "1.5.0"), ("x", "1.5.0"), ("y", "1.5.0")]
            .into_iter()
            .chain([("s", "1.16.6"), ("h", "1.10.0"), ("t", "1.5.0"), ("k", "1.2.0"), ("w", "1.5.0")])
            .map(|(name, version)| {
                format!(
                    "[[package]]\nname = \"{name}\"\nversion = \"{version}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n"
                )
            })
            .collect();
        fs_err::write(project.join("Cargo.lock"), &lock).unwrap();
        let older_toolchain = dir.path().join("project-1.63");
        fs_err::create_dir_all(&older_toolchain).unwrap();
        fs_err::write(older_toolchain.join("Cargo.lock"), &lock).unwrap();
        // `cargo update --quiet -p NAME@VERSION --precise TARGET`: refused while the
        // crate's requirer is locked where the table says.
        let bin = dir.path().join("bin");
        fs_err::create_dir_all(&bin).unwrap();
        fs_err::write(
            bin.join("cargo"),
            r#"#!/bin/bash
if [ "$1" = tree ]; then printf '%s\n' "p v1.5.0" "q v1.5.0" "x v1.5.0" "y v1.5.0" "s v1.16.6" "h v1.10.0" "t v1.5.0" "k v1.2.0"; exit; fi
spec=$4 target=$6 name=${4%@*} version=${4#*@}
echo "$spec -> $target" >> calls.txt
case $name in p) requirer="q 1.5.0" ;; x) requirer="y 1.5.0" ;; s) requirer="h 1.10.0" ;; t) requirer="k 1.2.0" ;; *) requirer= ;; esac
if [ -n "$requirer" ] && grep -qxF "version = \"${requirer#* }\"" <(grep -A1 -xF "name = \"${requirer% *}\"" Cargo.lock); then
    echo "error: failed to select a version for the requirement \`$name = \"^$version\"\`"
    echo "required by package \`${requirer% *} v${requirer#* }\`"
    exit 101
fi
sed -i "/^name = \"$name\"$/{n;s/^version = .*/version = \"$target\"/}" Cargo.lock
"#,
        )
        .unwrap();
        std::process::Command::new("chmod").arg("+x").arg(bin.join("cargo")).status().unwrap();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        let (text, ok) = with_dependency_functions(
            &format!("cd {} && wanted=85 && travel", project.display()),
            &[("PATH", path.as_str()), ("CARGO_HOME", home.to_str().unwrap())],
        );
        assert!(ok, "{text}");
        let calls = fs_err::read_to_string(project.join("calls.txt")).unwrap();
        let count = |call: &str| calls.lines().filter(|line| *line == call).count();
        assert_eq!(count("p@1.5.0 -> 1.4.0"), 2, "refused, then tried again once q moved: {calls}");
        assert_eq!(count("q@1.5.0 -> 1.4.0"), 1, "{calls}");
        assert_eq!(count("x@1.5.0 -> 1.4.0"), 1, "y never moves, so x is not tried again: {calls}");
        assert_eq!(count("s@1.16.6 -> 1.10.0"), 1, "{calls}");
        assert_eq!(count("h@1.10.0 -> 1.10.0"), 0, "not a move: {calls}");
        assert_eq!(count("t@1.5.0 -> 1.3.0"), 1, "{calls}");
        assert_eq!(count("k@1.2.0 -> 1.3.0"), 0, "up, and to a release that does not fit: {calls}");
        assert_eq!(count("w@1.5.0 -> 1.4.0"), 0, "never built here (not in cargo tree): {calls}");
        assert_eq!(calls.lines().count(), 6, "{calls}");
        assert!(text.contains("swe-harvest: 1 locked crates are never built on this platform"), "{text}");
        assert!(!text.contains("kept w"), "{text}");
        assert!(text.contains("swe-harvest: 2 crates moved back"), "{text}");
        for kept in ["kept x 1.5.0", "kept y 1.5.0", "kept s 1.16.6", "kept h 1.10.0", "kept t 1.5.0", "kept k 1.2.0"] {
            assert!(text.contains(kept), "{kept}: {text}");
        }
        // For an older toolchain every crate travels: its cargo reads the manifests of
        // those never built too (tracing of 2022 on Rust 1.63).
        let (text, ok) = with_dependency_functions(
            &format!("cd {} && travel", older_toolchain.display()),
            &[("PATH", path.as_str()), ("CARGO_HOME", home.to_str().unwrap())],
        );
        assert!(ok, "{text}");
        let calls = fs_err::read_to_string(older_toolchain.join("calls.txt")).unwrap();
        assert_eq!(calls.lines().filter(|line| *line == "w@1.5.0 -> 1.4.0").count(), 1, "{calls}");
        assert!(text.contains("every locked crate travels"), "{text}");
    }

    /// A release that a newer rustc no longer builds (`time` before 0.3.35 on Rust 1.80
    /// and later, as rustc's own note says) moves up to the first that it builds, past
    /// the date; other series and older toolchains keep theirs.
    #[test]
    fn a_release_a_newer_rustc_cannot_build_moves_up_to_the_first_it_can() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        fs_err::create_dir_all(&bin).unwrap();
        fs_err::write(
            bin.join("cargo"),
            "#!/bin/bash\necho \"$4 -> $6\" >> calls.txt\nname=${4%@*} version=${4#*@}\n\
             sed -i \"/^name = \\\"$name\\\"$/{n;s/^version = \\\"$version\\\"$/version = \\\"$6\\\"/}\" Cargo.lock\n",
        )
        .unwrap();
        std::process::Command::new("chmod").arg("+x").arg(bin.join("cargo")).status().unwrap();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        let lock = |time: &str| -> String {
            [("time", time), ("time", "0.2.27"), ("time-core", "0.1.0")]
                .map(|(name, version)| {
                    format!("[[package]]\nname = \"{name}\"\nversion = \"{version}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n")
                })
                .concat()
        };
        for (wanted, time, moved) in
            [(85, "0.3.20", true), (80, "0.3.34", true), (79, "0.3.20", false), (85, "0.3.36", false)]
        {
            let project = dir.path().join(format!("project-{wanted}-{time}"));
            fs_err::create_dir_all(&project).unwrap();
            fs_err::write(project.join("Cargo.lock"), lock(time)).unwrap();
            let (text, ok) = with_dependency_functions(
                &format!(
                    "cd {} && wanted={wanted} cutoff=2023-01-01T00:00:00Z && past_newer_rustc_breaks",
                    project.display()
                ),
                &[("PATH", path.as_str())],
            );
            assert!(ok, "{text}");
            let calls = fs_err::read_to_string(project.join("calls.txt")).unwrap_or_default();
            let after = fs_err::read_to_string(project.join("Cargo.lock")).unwrap();
            if moved {
                assert_eq!(calls, format!("time@{time} -> 0.3.35\n"), "Rust 1.{wanted}");
                assert!(after.contains("version = \"0.3.35\""), "{after}");
                assert!(text.contains(&format!("swe-harvest: time {time} -> 0.3.35 (Rust 1.80 and later")), "{text}");
            } else {
                assert_eq!(calls, "", "Rust 1.{wanted}, time {time}");
                assert_eq!(after, lock(time));
            }
            assert!(after.contains("version = \"0.2.27\""), "another series stays: {after}");
        }
    }

    /// The stub step on a fake vendor folder (bash, GNU sed, awk), with a fake `cargo
    /// tree` that says only serde is built here.
    #[test]
    fn the_stub_step_keeps_the_crates_the_platform_builds_and_empties_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let vendor = dir.path().join("vendor");
        for (name, version, edition) in [("serde", "1.0.0", "2018"), ("winapi", "0.3.9", "2024")] {
            let crate_dir = vendor.join(format!("{name}-{version}"));
            fs_err::create_dir_all(crate_dir.join("src/sub")).unwrap();
            fs_err::write(
                crate_dir.join("Cargo.toml"),
                format!(
                    "[package]\nname = \"{name}\"\nversion = \"{version}\"\nedition = \"{edition}\"\nlinks = \"x\"\n"
                ),
            )
            .unwrap();
            for file in ["src/lib.rs", "src/sub/big.rs", "build.rs"] {
                fs_err::write(crate_dir.join(file), "x".repeat(1000)).unwrap();
            }
            fs_err::write(crate_dir.join("lib.a"), "x".repeat(1000)).unwrap();
            fs_err::write(
                crate_dir.join(".cargo-checksum.json"),
                r#"{"files":{"src/lib.rs":"00"},"package":"abc123"}"#,
            )
            .unwrap();
        }
        let bin = dir.path().join("bin");
        fs_err::create_dir_all(&bin).unwrap();
        fs_err::write(
            bin.join("cargo"),
            "#!/bin/sh\n[ \"$1\" = tree ] && printf 'calc v0.1.0 (/testbed)\\nserde v1.0.0\\nserde v1.0.0 (*)\\n'\n",
        )
        .unwrap();
        fs_err::write(bin.join("rustc"), "#!/bin/sh\necho 'host: x86_64-unknown-linux-gnu'\n").unwrap();
        std::process::Command::new("chmod").arg("+x").arg(bin.join("cargo")).arg(bin.join("rustc")).status().unwrap();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        let (text, ok) = with_dependency_functions(
            &format!("out={}\nstub_unused", dir.path().display()),
            &[("PATH", path.as_str())],
        );
        assert!(ok, "{text}");
        assert!(text.contains("1 vendored crates are never built on x86_64-unknown-linux-gnu"), "{text}");
        let winapi = vendor.join("winapi-0.3.9");
        for emptied in ["src/lib.rs", "src/sub/big.rs", "build.rs"] {
            assert_eq!(fs_err::read_to_string(winapi.join(emptied)).unwrap(), "", "{emptied}");
        }
        assert!(!winapi.join("lib.a").exists());
        assert_eq!(
            fs_err::read_to_string(winapi.join(".cargo-checksum.json")).unwrap(),
            r#"{"files":{},"package":"abc123"}"#
        );
        let manifest = fs_err::read_to_string(winapi.join("Cargo.toml")).unwrap();
        assert!(manifest.contains("edition = \"2021\""), "cargo 1.65 reads every manifest: {manifest}");
        assert_eq!(fs_err::read_to_string(vendor.join("serde-1.0.0/src/sub/big.rs")).unwrap().len(), 1000);
        assert!(vendor.join("serde-1.0.0/lib.a").exists(), "a crate the platform builds stays whole");
    }
}
