//! The rung `ci-packages` of every language's environment ladder: after an environment
//! did not build, did not run the touched test files' existing tests, or ran no test in
//! the task's runs, the same environment with the Debian packages that the project's
//! CI installs in its test jobs (`apt-get install`, Travis's `addons.apt`) and that the
//! environment lacks; once per task, before the language's own next rung
//! ([`crate::ecosystem::usual_next_move`]).
//!
//! Decision (2026-12-07, docs/languages/ci-evidence.md, "On the ladder"): Python, Go,
//! Node and Java take no CI packages in their first rung, which stays what the
//! project's own declarations say; once a build has failed, CI's packages are evidence
//! of what it lacked (a Python project's `lxml` built from source needs
//! `libxml2-dev`). Rust and C take them in their first rung already, so the rung adds
//! nothing for them unless their own filters left some out. Left out, as C's inference
//! leaves them ([`super::unwanted_package`]): compilers, build tools, and tools that
//! measure or document; and here also the runtimes the base images bring
//! ([`another_runtime`]). The image skips and names the packages Debian lacks
//! ([`crate::ecosystem::dockerfile::Dockerfile::system_packages`]).

use std::collections::BTreeSet;

use super::{CiEvidence, Package};
use crate::ecosystem::{RepoFiles, RungFailure};
use crate::model::{EnvironmentSpec, Rung};

/// The next spec after the last of `tried` failed as `failure` says: the same with
/// CI's packages that it lacks, recorded in its `ci`; `None` when this rung was tried
/// already or CI names no such package.
pub fn next_spec(tried: &[EnvironmentSpec], failure: &RungFailure<'_>, files: &RepoFiles) -> Option<EnvironmentSpec> {
    let last = tried.last()?;
    if tried.iter().any(|spec| spec.rung == Rung::CiPackages) {
        return None;
    }
    let evidence = CiEvidence::read(files);
    let added: Vec<&Package> = evidence
        .packages
        .iter()
        .filter(|package| !last.system_packages.contains(&package.name))
        .filter(|package| !super::unwanted_package(&package.name) && !another_runtime(&package.name))
        .collect();
    if added.is_empty() {
        return None;
    }
    let names: Vec<&str> = added.iter().map(|package| package.name.as_str()).collect();
    let origins: BTreeSet<String> = added.iter().map(|package| package.origin.to_string()).collect();
    let after = match failure {
        RungFailure::BuildFailed { .. } => "the image did not build",
        RungFailure::Unusable => "the image did not run the touched test files' existing tests",
        RungFailure::NothingRan => "no test ran to a verdict in the task's runs",
    };
    let mut next = last.clone();
    next.system_packages.extend(names.iter().map(|name| name.to_string()));
    next.rung = Rung::CiPackages;
    next.ci.push(format!(
        "Debian packages {} from CI's apt-get install ({}), on the ladder after {after} (those Debian lacks are skipped)",
        names.join(", "),
        origins.into_iter().collect::<Vec<_>>().join(", ")
    ));
    Some(next)
}

/// Whether a package is a language's runtime or build tool, which the base images
/// bring in the version inference chose: Debian's would sit beside it (a second JDK
/// that `update-alternatives` makes the default, another Node or Go).
fn another_runtime(name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "openjdk-",
        "default-jdk",
        "default-jre",
        "nodejs",
        "npm",
        "yarnpkg",
        "golang",
        "rustc",
        "cargo",
        "maven",
        "gradle",
    ];
    PREFIXES.iter().any(|prefix| name.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, TimeZone, Utc};

    use super::*;
    use crate::ecosystem::{Ecosystem, FailedRung, LadderContext, Move, RunsSeen, Setback, by_name};

    /// A workflow whose test job installs two libraries with apt, and a compiler and a
    /// JDK that the rung leaves out, before it runs `test`.
    fn workflow(test: &str) -> String {
        format!(
            "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      \
             - run: sudo apt-get update\n      - run: sudo apt-get install -y libxml2-dev libxslt1-dev\n      \
             - run: sudo apt-get install -y gcc valgrind openjdk-17-jdk\n      - run: {test}\n"
        )
    }

    fn files(pairs: &[(&str, &str)]) -> RepoFiles {
        pairs.iter().map(|(path, text)| (path.to_string(), text.to_string())).collect()
    }

    fn date() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2023, 3, 1, 0, 0, 0).unwrap()
    }

    fn runtimes() -> Vec<String> {
        ["3.9", "3.11", "3.13", "go1.19", "go1.24", "rust1.63", "rust1.85", "gcc12", "gcc14"].map(String::from).to_vec()
    }

    fn build_failed() -> Setback<'static> {
        Setback::BuildFailed { log: "fatal error: libxml/xmlversion.h: No such file or directory", refused: &[] }
    }

    /// The language's own next rung after the last of `tried` failed to build.
    fn usual_rung(ecosystem: &dyn Ecosystem, tried: &[EnvironmentSpec], context: &LadderContext<'_>) -> Move {
        let failure = RungFailure::BuildFailed { log: "fatal error: libxml/xmlversion.h: No such file or directory" };
        ecosystem.next_rung(&FailedRung { tried, failure, context }).map_or(Move::Stop, Move::Climb)
    }

    #[test]
    fn a_python_image_that_did_not_build_is_built_once_more_with_the_debian_packages_its_ci_installs() {
        let python = by_name("python").unwrap();
        let with_ci = files(&[
            ("setup.py", "setup(name='x', python_requires='>=3.9', install_requires=['lxml'])"),
            (".github/workflows/ci.yml", &workflow("pytest")),
        ]);
        let runtimes = runtimes();
        let context = LadderContext { files: &with_ci, date: date(), runtimes: &runtimes };
        let first = python.infer(&with_ci, date(), &runtimes).unwrap();
        assert!(first.system_packages.iter().all(|package| !package.starts_with("libx")), "{first:?}");

        let Move::Climb(next) = python.next_move(std::slice::from_ref(&first), &build_failed(), &context) else {
            panic!("no climb")
        };
        assert_eq!(next.rung, Rung::CiPackages);
        let added = &next.system_packages[first.system_packages.len()..];
        assert_eq!(added, ["libxml2-dev", "libxslt1-dev"], "not the compiler, the tool, nor another JDK");
        assert_eq!(
            (&next.runtime, &next.install, &next.test_command),
            (&first.runtime, &first.install, &first.test_command),
            "the same environment otherwise"
        );
        let said = next.ci.last().unwrap();
        assert_eq!(
            said,
            "Debian packages libxml2-dev, libxslt1-dev from CI's apt-get install (`.github/workflows/ci.yml` job \
             `test`), on the ladder after the image did not build (those Debian lacks are skipped)"
        );

        // Tried once: the language's own next rung, from the spec with the packages.
        let tried = [first.clone(), next.clone()];
        let after = python.next_move(&tried, &build_failed(), &context);
        assert_eq!(after, usual_rung(python, &tried, &context));
        let Move::Climb(after) = after else { panic!("Python's ladder goes on") };
        assert_eq!(after.rung, Rung::NeighbourRuntime);
        assert!(after.system_packages.ends_with(&["libxml2-dev".into(), "libxslt1-dev".into()]), "{after:?}");

        // A build the proxy refused a host: the usual move.
        let refused = ["github.com:443".to_string()];
        let setback = Setback::BuildFailed { log: "", refused: &refused };
        let first_only = std::slice::from_ref(&first);
        assert_eq!(python.next_move(first_only, &setback, &context), usual_rung(python, first_only, &context));

        // No CI file: the usual move.
        let without_ci = files(&[("setup.py", "setup(name='x', python_requires='>=3.9', install_requires=['lxml'])")]);
        let context = LadderContext { files: &without_ci, date: date(), runtimes: &runtimes };
        let first = python.infer(&without_ci, date(), &runtimes).unwrap();
        let first_only = std::slice::from_ref(&first);
        let usual = python.next_move(first_only, &build_failed(), &context);
        assert_eq!(usual, usual_rung(python, first_only, &context));
        assert!(matches!(usual, Move::Climb(ref spec) if spec.rung == Rung::NeighbourRuntime), "{usual:?}");
    }

    #[test]
    fn a_go_image_that_ran_no_test_or_did_not_pass_its_check_gets_its_cis_packages_once() {
        let go = by_name("go").unwrap();
        let with_ci = files(&[
            ("go.mod", "module example.com/x\n\ngo 1.19\n"),
            (".github/workflows/ci.yml", &workflow("go test ./...")),
        ]);
        let runtimes = runtimes();
        let context = LadderContext { files: &with_ci, date: date(), runtimes: &runtimes };
        let first = go.infer(&with_ci, date(), &runtimes).unwrap();
        let missing = Default::default();
        let seen = RunsSeen {
            spec: &first,
            first: true,
            labelled: false,
            anything_ran: false,
            missing_before: &missing,
            missing_after: &missing,
            project_paths: &[],
        };
        let Move::Climb(next) = go.next_move(std::slice::from_ref(&first), &Setback::Ran(&seen), &context) else {
            panic!("no climb")
        };
        assert_eq!(
            (next.rung, &next.system_packages[..]),
            (Rung::CiPackages, &["libxml2-dev".into(), "libxslt1-dev".into()][..])
        );
        assert!(
            next.ci
                .last()
                .unwrap()
                .ends_with("after no test ran to a verdict in the task's runs (those Debian lacks are skipped)")
        );
        let Move::Climb(unusable) =
            go.next_move(std::slice::from_ref(&first), &Setback::Unusable { log: "" }, &context)
        else {
            panic!("no climb")
        };
        assert_eq!(unusable.system_packages, next.system_packages);
        // Go has no rung of its own: after this one, the ladder ends.
        assert_eq!(go.next_move(&[first.clone(), next], &Setback::Unusable { log: "" }, &context), Move::Stop);
        // Runs that ran a test: their verdict stands.
        let ran = RunsSeen { anything_ran: true, ..seen };
        assert_eq!(go.next_move(std::slice::from_ref(&first), &Setback::Ran(&ran), &context), Move::Stop);
    }

    /// Node's own moves come first; the others, this rung among them, are the usual ones.
    #[test]
    fn a_node_project_reaches_the_rung_through_the_usual_move() {
        let node = by_name("node").unwrap();
        let project = files(&[
            (
                "package.json",
                "{\"name\": \"x\", \"scripts\": {\"test\": \"mocha\"}, \"devDependencies\": {\"mocha\": \"^10.0.0\"}}",
            ),
            (".github/workflows/ci.yml", &workflow("npm test")),
        ]);
        let runtimes = vec!["node18".to_string(), "node20".to_string()];
        let context = LadderContext { files: &project, date: date(), runtimes: &runtimes };
        let first = node.infer(&project, date(), &runtimes).unwrap();
        let Move::Climb(next) = node.next_move(std::slice::from_ref(&first), &build_failed(), &context) else {
            panic!("no climb")
        };
        assert_eq!(
            (next.rung, &next.system_packages[..]),
            (Rung::CiPackages, &["libxml2-dev".into(), "libxslt1-dev".into()][..])
        );
    }

    /// Rust and C take CI's packages in their first rung: the rung has nothing to add,
    /// and their ladders go on as before; a package Rust's own filter left out is
    /// the rung's.
    #[test]
    fn rust_and_c_whose_first_rung_has_cis_packages_go_on_as_usual() {
        let runtimes = runtimes();
        let rust = by_name("rust").unwrap();
        let cargo_workflow = workflow("cargo test").replace("libxslt1-dev", "libsodium-dev");
        let crate_files =
            files(&[("Cargo.toml", "[package]\nname = \"x\"\n"), (".github/workflows/ci.yml", &cargo_workflow)]);
        let context = LadderContext { files: &crate_files, date: date(), runtimes: &runtimes };
        let first = rust.infer(&crate_files, date(), &runtimes).unwrap();
        for package in ["libxml2-dev", "libsodium-dev"] {
            assert!(first.system_packages.contains(&package.to_string()), "{first:?}");
        }
        let first_only = std::slice::from_ref(&first);
        let next = rust.next_move(first_only, &build_failed(), &context);
        assert_eq!(next, usual_rung(rust, first_only, &context));
        assert!(matches!(next, Move::Climb(ref spec) if spec.rung == Rung::NeighbourRuntime), "{next:?}");
        // Rust's own filter leaves out a package it does not know (`libxslt1-dev`): its
        // ladder reaches this rung through the usual move, with that package alone.
        let crate_files = files(&[
            ("Cargo.toml", "[package]\nname = \"x\"\n"),
            (".github/workflows/ci.yml", &workflow("cargo test")),
        ]);
        let context = LadderContext { files: &crate_files, date: date(), runtimes: &runtimes };
        let first = rust.infer(&crate_files, date(), &runtimes).unwrap();
        let Move::Climb(next) = rust.next_move(std::slice::from_ref(&first), &build_failed(), &context) else {
            panic!("no climb")
        };
        assert_eq!(
            (next.rung, &next.system_packages[first.system_packages.len()..]),
            (Rung::CiPackages, &["libxslt1-dev".to_string()][..])
        );

        let c = by_name("c").unwrap();
        let project =
            files(&[("Makefile", "check:\n\t./run-tests\n"), (".github/workflows/ci.yml", &workflow("make check"))]);
        let context = LadderContext { files: &project, date: date(), runtimes: &runtimes };
        let first = c.infer(&project, date(), &runtimes).unwrap();
        for package in ["libxml2-dev", "libxslt1-dev"] {
            assert!(first.system_packages.contains(&package.to_string()), "{first:?}");
        }
        assert_eq!(c.next_move(std::slice::from_ref(&first), &build_failed(), &context), Move::Stop);
    }
}
