//! A C or C++ project's environment from its build files at the environment commit.
//!
//! The build system, first match wins: **autotools** (`configure.ac` or
//! `configure.in`: `autoreconf -fi` with the image's own autotools, so that the
//! rebuild rules a patched `Makefile.am` triggers find the same versions, then
//! `./configure`, `make`, and the test programs without running them:
//! `make check TESTS=`); **CMake** (a `CMakeLists.txt` that calls `enable_testing`,
//! `add_test` or includes `CTest`: configured into `.swe-harvest-build/` with
//! `BUILD_TESTING=ON`, built, tests run by `ctest`); a plain **Makefile** with a
//! `check` or `test` target (`make`, then that target). A project with none of these
//! is not inferred.
//!
//! The project's CI (decision, 2026-12-07; [`crate::ecosystem::ci`]): for a plain
//! Makefile, the first test target its `make` commands name (`make test`, `make
//! unittest`; not one run in another folder, `make -C dir`) that the Makefile has is
//! the test target, before `check`; for CMake, the `-D` options of its `cmake`
//! configure commands (not `CMAKE_*` ones, nor sanitizers, coverage, fuzzing,
//! benchmarks or warnings as errors) join the configure step, and the label and
//! exclusion options of its `ctest` commands (`-L unit`, `-LE slow`, `-E regex`) the
//! test command; the Debian packages of its `apt-get install` join the system
//! packages (the image skips and names those Debian lacks), but for compilers, build
//! tools and those that only measure or format (`valgrind` among them: a test suite
//! that finds it runs under it). Its `CFLAGS` are not taken: CI's add sanitizers and
//! `-Werror`.
//!
//! The compiler (decision): the newest GCC among the base images (`gcc12` from
//! bookworm, `gcc14` from trixie) released by the task's date, else the oldest
//! (old C meets the compiler of its time: GCC 14 turned implicit declarations into
//! errors). The project's CI (decision, 2026-12-07, issue 64) narrows it: where its
//! jobs name GCC versions (a `gcc`/`compiler` matrix axis, the `gcc:10` image,
//! `CC=gcc-10`, `apt-get install g++-10`; see [`crate::ecosystem::ci`]), the GCC
//! among the base images that CI tests nearest the date's ([`ci_compiler`]), said in
//! the spec's `ci` record; the harness path likewise. A task dated before every GCC here that is lost to its environment is
//! dropped naming the GCC of its date ([`runtime_needed`]).
//!
//! Libraries (decision): each library the build looks for becomes a candidate Debian
//! package `lib<name>-dev`, installed when Debian has one (the image build skips and
//! names the others): `AC_CHECK_LIB` / `AC_SEARCH_LIBS` / `PKG_CHECK_MODULES` in
//! `configure.ac`, `find_package` / `pkg_check_modules` in `CMakeLists.txt`; the C
//! library's own (`m`, `pthread`, `dl`, `rt`) are left out. Git submodules are not
//! in a mirror (a checkout has their folders empty): a bundled library that the build
//! falls back to when the system has none (jq's `modules/oniguruma`, which its
//! `configure` uses only when `AC_CHECK_LIB([onig], ...)` fails) is thus replaced by
//! Debian's build of it (`libonig-dev`); the submodules' folders are made, empty, as a
//! checkout without `--recursive` leaves them ([`SUBMODULE_FOLDERS`]). No configure option is passed: a project
//! whose build needs the submodule whatever the system has fails its image build,
//! which says so. The submodule's own tests (oniguruma's, which Multi-SWE-bench runs
//! through jq's recursive `make check`) are not run.

use std::sync::LazyLock;

use chrono::{DateTime, Datelike, Utc};
use regex::Regex;

use crate::ecosystem::ci::{self, CiEvidence};
use crate::ecosystem::{InferError, RepoFiles, RuntimeNeed};
use crate::model::EnvironmentSpec;

/// Where CMake builds (out of the source tree, inside `/testbed`, so that the warm
/// tree's absolute paths hold in every container).
pub const CMAKE_BUILD_DIR: &str = ".swe-harvest-build";

/// The build systems, in the order inference tries them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildSystem {
    Autotools,
    CMake,
    Make,
}

/// The names make reads a Makefile by.
pub const MAKEFILE_NAMES: [&str; 3] = ["Makefile", "GNUmakefile", "makefile"];

/// The files inference reads: the build files at the root, and the `CMakeLists.txt`
/// or Makefile of a folder at the root (`test/CMakeLists.txt`, where a project fetches
/// its test framework; `tests/Makefile`, whose recipes run its test harness).
pub fn reads(path: &str) -> bool {
    const IN_A_FOLDER: &[&str] = &["/CMakeLists.txt", "/Makefile", "/GNUmakefile", "/makefile"];
    matches!(
        path,
        "configure.ac" | "configure.in" | "CMakeLists.txt" | "Makefile" | "GNUmakefile" | "makefile" | ".gitmodules"
    ) || HARNESS_SCRIPTS.contains(&path)
        || super::harness::reads(path)
        || IN_A_FOLDER.iter().any(|name| path.strip_suffix(name).is_some_and(|folder| !folder.contains('/')))
}

/// The interpreters that the recipes of the read Makefiles run (decision, 2026-11-27:
/// zstd's `tests/Makefile` runs its harness `./cli-tests/run.py`, a Python 3 script,
/// which the C image lacks): `python3` for a recipe that runs `python`/`python3` or a
/// `.py` script, `perl` for `perl` or a `.pl` script.
pub fn recipe_interpreters(files: &RepoFiles) -> Vec<&'static str> {
    static PYTHON: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?m)^\t.*(\bpython3?\b|[\w./-]+\.py\b)").expect("valid regex"));
    static PERL: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?m)^\t.*(\bperl\b|[\w./-]+\.pl\b)").expect("valid regex"));
    let makefiles: Vec<&String> = files
        .iter()
        .filter(|(path, _)| {
            // At the root or one folder down (a harness reads Makefiles further down).
            path.matches('/').count() <= 1 && MAKEFILE_NAMES.contains(&path.rsplit('/').next().unwrap_or_default())
        })
        .map(|(_, text)| text)
        .collect();
    let mut found = Vec::new();
    for (pattern, package) in [(&*PYTHON, "python3"), (&*PERL, "perl")] {
        if makefiles.iter().any(|text| pattern.is_match(text)) {
            found.push(package);
        }
    }
    found
}

/// Dependencies that a CMake build downloads with `FetchContent` and Debian ships as
/// source: a word of the declaration's location, the package, and where the package
/// puts the source tree.
const FETCHED_FROM_DEBIAN: &[(&str, &str, &str)] = &[("googletest", "googletest", "/usr/src/googletest")];

/// The `FetchContent_Declare`s of the read `CMakeLists.txt` files that Debian ships
/// as source (decision, 2026-11-27: yhirose/cpp-httplib's tests fetch GoogleTest from
/// GitHub, which no build reaches): for each, the package and the CMake setting that
/// points FetchContent at its tree instead (`FETCHCONTENT_SOURCE_DIR_<NAME>`). A
/// fetched dependency Debian has no source of still fails the build, which names the
/// refused address.
pub fn fetched_from_debian(files: &RepoFiles) -> Vec<(&'static str, String)> {
    let declare = Regex::new(r"(?is)FetchContent_Declare\(\s*([A-Za-z0-9_.+-]+)([^)]*)\)").expect("valid regex");
    let mut found: Vec<(&'static str, String)> = Vec::new();
    for text in files.iter().filter(|(path, _)| path.ends_with("CMakeLists.txt")).map(|(_, text)| text) {
        for captures in declare.captures_iter(text) {
            let (name, location) = (&captures[1], captures[2].to_ascii_lowercase());
            if let Some((_, package, source)) = FETCHED_FROM_DEBIAN.iter().find(|(word, _, _)| location.contains(word))
            {
                let setting = format!("-DFETCHCONTENT_SOURCE_DIR_{}={source}", name.to_ascii_uppercase());
                if !found.iter().any(|(_, known)| *known == setting) {
                    found.push((*package, setting));
                }
            }
        }
    }
    found
}

/// Whether a CMake project registers tests with CTest.
fn cmake_has_tests(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    ["enable_testing(", "add_test(", "include(ctest)"].iter().any(|call| text.replace(' ', "").contains(call))
}

/// The project's own CMake options that turn its tests on, beside `BUILD_TESTING`
/// (decision: an `option()` whose name says tests or a developer build, such as
/// `JSON_BuildTests`, `FMT_TEST`, `CATCH_DEVELOPMENT_BUILD`, `<PROJECT>_BUILD_TESTS`;
/// never one that turns something off or adds fuzzing, benchmarks, sanitizers,
/// coverage or valgrind to the run, nor one that takes the test framework from the
/// system instead of the checkout, as `YAML_USE_SYSTEM_GTEST`). Many projects
/// register their tests only then, and CTest says "No tests were found" without them.
/// `cmake_dependent_option()` counts too (yaml-cpp's `YAML_CPP_BUILD_TESTS`).
pub fn test_options(cmake_lists: &str) -> Vec<String> {
    options_named(cmake_lists, |upper| {
        let turns_on =
            upper.contains("TEST") || upper.contains("DEVELOPMENT_BUILD") || upper.contains("DEVELOPER_MODE");
        let unwanted = [
            "DISABLE", "SKIP", "NO_", "WITHOUT", "FUZZ", "BENCH", "SANITIZ", "COVERAGE", "VALGRIND", "INSTALL",
            "SYSTEM",
        ]
        .iter()
        .any(|word| upper.contains(word));
        turns_on && !unwanted && upper != "BUILD_TESTING"
    })
}

/// The project's own CMake options that make warnings errors (`CATCH_ENABLE_WERROR`,
/// `<PROJECT>_WARNINGS_AS_ERRORS`), which configure turns off (decision, 2026-12-07):
/// a compiler newer than the code's adds warnings (GCC 9's `-Wredundant-move` in
/// Catch2's 2018 sources, held-out Catch2-1422), and the developers' own guard
/// against new warnings is no part of what the tests check.
pub fn warnings_as_errors_options(cmake_lists: &str) -> Vec<String> {
    options_named(cmake_lists, |upper| {
        upper.contains("WERROR") || upper.contains("WARNINGS_AS_ERRORS") || upper.contains("FATAL_WARNINGS")
    })
}

/// The names of the `option()`s and `cmake_dependent_option()`s of a `CMakeLists.txt`
/// that `wanted` keeps (it is given the name in upper case), sorted, each once.
fn options_named(cmake_lists: &str, wanted: impl Fn(&str) -> bool) -> Vec<String> {
    static OPTION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?i)\b(?:cmake_dependent_)?option\s*\(\s*([A-Za-z0-9_]+)"#).expect("valid regex")
    });
    let mut options: Vec<String> = OPTION
        .captures_iter(cmake_lists)
        .map(|capture| capture[1].to_string())
        .filter(|name| wanted(&name.to_ascii_uppercase()))
        .collect();
    options.sort();
    options.dedup();
    options
}

/// Whether a Makefile has a rule for `target`.
pub fn has_target(text: &str, target: &str) -> bool {
    text.lines().any(|line| {
        !line.starts_with('\t')
            && line.split_once(':').is_some_and(|(targets, rest)| {
                !rest.starts_with('=') && targets.split_whitespace().any(|name| name == target)
            })
    })
}

/// The test target of a plain Makefile: `check`, else `test`.
pub fn make_test_target(text: &str) -> Option<&'static str> {
    let has = |target: &str| has_target(text, target);
    if has("check") {
        Some("check")
    } else if has("test") {
        Some("test")
    } else {
        None
    }
}

/// The folder to which a Makefile hands every target it has no rule for: its
/// `.DEFAULT` rule's `cd DIR && $(MAKE) $@` or `$(MAKE) -C DIR $@` (Redis's and
/// Valkey's top Makefile, "the real stuff is at src/Makefile").
pub fn default_rule_folder(text: &str) -> Option<String> {
    static DELEGATION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?m)^\.DEFAULT:.*\n\t\s*(?:cd\s+([\w./-]+)\s*&&\s*\$[({]MAKE[)}]|\$[({]MAKE[)}]\s+-C\s+([\w./-]+))\s+\$@",
        )
        .expect("valid regex")
    });
    let captures = DELEGATION.captures(text)?;
    let folder = captures.get(1).or_else(|| captures.get(2))?.as_str().trim_end_matches('/');
    (!folder.is_empty() && !folder.contains("..")).then(|| folder.to_string())
}

/// The build system of the files at a commit, and for a plain Makefile its test target
/// (its own, or that of the folder its `.DEFAULT` rule hands targets to, where
/// `make TARGET` at the top reaches it).
pub fn build_system(files: &RepoFiles) -> Option<(BuildSystem, &'static str)> {
    if files.contains_key("configure.ac") || files.contains_key("configure.in") {
        return Some((BuildSystem::Autotools, "check"));
    }
    if files.get("CMakeLists.txt").is_some_and(|text| cmake_has_tests(text)) {
        return Some((BuildSystem::CMake, "test"));
    }
    ["Makefile", "GNUmakefile", "makefile"]
        .iter()
        .find_map(|name| {
            let text = files.get(*name)?;
            make_test_target(text).or_else(|| {
                let folder = default_rule_folder(text)?;
                ["Makefile", "GNUmakefile", "makefile"]
                    .iter()
                    .find_map(|inner| files.get(&format!("{folder}/{inner}")).and_then(|text| make_test_target(text)))
            })
        })
        .map(|target| (BuildSystem::Make, target))
}

/// Debian's packages for a project's own test harness script at the root: `tcl` for
/// one run by `tclsh` (Redis's `runtest`: "You need tcl 8.5 or newer").
pub fn harness_interpreters(files: &RepoFiles) -> Vec<&'static str> {
    let runs_tclsh = |path: &str| files.get(path).is_some_and(|text| text.contains("tclsh"));
    if HARNESS_SCRIPTS.iter().any(|path| runs_tclsh(path)) { vec!["tcl"] } else { Vec::new() }
}

/// The root scripts that run a project's own test harness and that inference reads.
const HARNESS_SCRIPTS: &[&str] = &["runtest"];

/// Libraries of the C library itself and of the compiler: never a package of their own.
const LIBC: &[&str] = &["c", "m", "pthread", "dl", "rt", "util", "resolv", "gcc", "stdc++", "atomic"];

/// Debian's `-dev` package name for a library name (`onig` -> `libonig-dev`, `libxml-2.0`
/// -> `libxml2-dev`, `ZLIB` -> `libz-dev`), `None` for the C library's own.
fn dev_package(name: &str) -> Option<String> {
    let name = name.trim().to_ascii_lowercase();
    let name = name.split(['>', '<', '=', ' ']).next().unwrap_or_default().trim().to_string();
    let name = name.strip_prefix("lib").unwrap_or(&name).replace("-2.0", "2").replace('_', "-");
    let name = match name.as_str() {
        "zlib" => "z".to_string(),
        other => other.to_string(),
    };
    if name.is_empty()
        || LIBC.contains(&name.as_str())
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-+.".contains(c))
    {
        return None;
    }
    Some(format!("lib{name}-dev"))
}

/// The candidate `-dev` packages of the libraries a build file looks for (see the
/// module doc), and the packages of the interpreters it looks for, in the order
/// found, without repeats.
pub fn library_packages(files: &RepoFiles) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let unquote = |text: &str| text.trim().trim_matches(['[', ']', '"', ' ']).to_string();
    if let Some(configure) = files.get("configure.ac").or_else(|| files.get("configure.in")) {
        let check_lib = Regex::new(r"AC_CHECK_LIB\(\s*\[?([A-Za-z0-9_+.-]+)\]?").unwrap();
        names.extend(check_lib.captures_iter(configure).map(|captures| captures[1].to_string()));
        let search_libs = Regex::new(r"AC_SEARCH_LIBS\(\s*\[?[A-Za-z0-9_]+\]?\s*,\s*\[?([^\],)]*)").unwrap();
        for captures in search_libs.captures_iter(configure) {
            names.extend(unquote(&captures[1]).split_whitespace().map(str::to_string));
        }
        let pkg = Regex::new(r"PKG_CHECK_MODULES\(\s*\[?[A-Za-z0-9_]+\]?\s*,\s*\[?([^\],)]*)").unwrap();
        for captures in pkg.captures_iter(configure) {
            names.extend(
                unquote(&captures[1])
                    .split_whitespace()
                    .filter(|word| word.chars().next().is_some_and(|c| c.is_ascii_alphabetic()))
                    .map(str::to_string),
            );
        }
    }
    if let Some(cmake) = files.get("CMakeLists.txt") {
        let find_package = Regex::new(r"(?i)find_package\(\s*([A-Za-z0-9_+.-]+)").unwrap();
        names.extend(find_package.captures_iter(cmake).map(|captures| captures[1].to_string()));
        let pkg = Regex::new(r"(?i)pkg_check_modules\(\s*[A-Za-z0-9_]+((?:\s+[^\s)]+)*)\s*\)").unwrap();
        for captures in pkg.captures_iter(cmake) {
            names.extend(
                captures[1]
                    .split_whitespace()
                    .filter(|word| {
                        !matches!(*word, "REQUIRED" | "QUIET" | "IMPORTED_TARGET" | "GLOBAL" | "NO_CMAKE_PATH")
                    })
                    .map(str::to_string),
            );
        }
    }
    let mut packages: Vec<String> = Vec::new();
    for name in names {
        let package = match name.to_ascii_lowercase().as_str() {
            // CMake's modules of tools: the interpreters a build runs (Catch2 finds
            // `PythonInterp 3` to generate and check its tests), else nothing to add.
            "pythoninterp" | "python" | "python3" => Some("python3".to_string()),
            "perl" => Some("perl".to_string()),
            // A header-only test framework whose Debian package has no `lib` prefix.
            "doctest" => Some("doctest-dev".to_string()),
            "pkgconfig" | "threads" | "git" | "doxygen" => None,
            _ => dev_package(&name),
        };
        if let Some(package) = package.filter(|package| !packages.contains(package)) {
            packages.push(package);
        }
    }
    packages
}

/// The GCC version of a runtime (`gcc12` -> 12).
pub fn gcc_of(runtime: &str) -> Option<u32> {
    runtime.strip_prefix("gcc")?.parse().ok()
}

/// The compiler CI's tested GCCs narrow `usual` (the date's, [`choose_runtime`]) to,
/// among the GCCs of `runtimes` ([`ci::narrow`]); a decision says so when it differs.
pub fn ci_compiler(usual: String, runtimes: &[String], evidence: &CiEvidence, decisions: &mut Vec<String>) -> String {
    let versions = evidence.tested_versions(ci::Language::Gcc);
    let named: Vec<u32> = versions.iter().filter_map(|(version, _)| version.parse().ok()).collect();
    let available: Vec<u32> = runtimes.iter().filter_map(|runtime| gcc_of(runtime)).collect();
    let Some(usual_gcc) = gcc_of(&usual) else { return usual };
    let chosen = ci::narrow(usual_gcc, &named, &available, |a, b| u64::from(a.abs_diff(b)));
    if chosen == usual_gcc {
        return usual;
    }
    let jobs = if versions.iter().all(|(_, runtime)| runtime.test_job) { "test jobs" } else { "jobs" };
    decisions.push(format!(
        "compiler gcc{chosen}, not {usual} (the date's): CI's {jobs} use GCC {}",
        ci::versions_said(&versions)
    ));
    format!("gcc{chosen}")
}

/// The compiler for a date among `runtimes` (`gccN`, others ignored): the newest
/// released by then, else the oldest.
pub fn choose_runtime(date: DateTime<Utc>, runtimes: &[String]) -> Option<String> {
    let mut known: Vec<(u32, &String)> =
        runtimes.iter().filter_map(|runtime| gcc_of(runtime).map(|gcc| (gcc, runtime))).collect();
    known.sort();
    let at = (date.year(), date.month());
    known.iter().rev().find(|(gcc, _)| released(*gcc) <= at).or(known.first()).map(|(_, runtime)| (*runtime).clone())
}

/// Makes the folders of the git submodules that `.gitmodules` names, empty, as a
/// checkout without `--recursive` has them (the mirror's tree lacks them: automake
/// refuses a `SUBDIRS` folder that does not exist, even in a conditional it leaves out).
pub const SUBMODULE_FOLDERS: &str = "if [ -f .gitmodules ]; then git config -f .gitmodules --get-regexp '^submodule\\..*\\.path$' \
                                     | while read -r _ path; do mkdir -p \"$path\"; done; fi";

/// The GCC a task's date wants when no base image here was released by then: the
/// newest of the catalogue's GCCs ([`super::runtimes::RUNTIMES`]) released by the
/// date, else its oldest. The task is tried on the oldest GCC there is first; only a
/// task lost to its environment is then dropped naming this (`runtime_unavailable`,
/// with how to make the image): old code and a newer glibc part ways (glibc 2.34
/// made `SIGSTKSZ` no constant, which the doctest and Catch2 bundled by projects of
/// 2020-2021 size an array with: nlohmann/json-2225 and 2273, Catch2-1616, 2026-12-07).
pub fn runtime_needed(date: DateTime<Utc>, runtimes: &[String]) -> Option<RuntimeNeed> {
    let at = (date.year(), date.month());
    let available: Vec<u32> = runtimes.iter().filter_map(|runtime| gcc_of(runtime)).collect();
    if available.is_empty() || available.iter().any(|gcc| released(*gcc) <= at) {
        return None;
    }
    let mut catalogue: Vec<u32> =
        super::runtimes::RUNTIMES.images.iter().filter_map(|image| image.version.parse().ok()).collect();
    catalogue.sort();
    let wanted = catalogue.iter().rev().find(|gcc| released(**gcc) <= at).or(catalogue.first()).copied()?;
    // Where the oldest GCC here is the one wanted, or older, nothing older would help.
    if available.iter().any(|gcc| *gcc <= wanted) {
        return None;
    }
    let (year, month) = released(available.iter().copied().min()?);
    Some(RuntimeNeed {
        runtime: format!("gcc{wanted}"),
        why: format!(
            "the task's date, {}-{:02}, is older than every GCC here (the oldest came out in {year}-{month:02}): \
             code of its time may not build with a newer compiler and glibc",
            date.year(),
            date.month()
        ),
    })
}

/// When GCC N.1 came out: the spring of 2010 + N (GCC 12.1: May 2022).
fn released(gcc: u32) -> (i32, u32) {
    (2010 + gcc as i32, 5)
}

/// The install steps and test command of a build system.
pub fn steps(system: BuildSystem, target: &str) -> (Vec<String>, String) {
    let (mut install, test_command) = build_steps(system, target);
    install.insert(0, SUBMODULE_FOLDERS.to_string());
    (install, test_command)
}

fn build_steps(system: BuildSystem, target: &str) -> (Vec<String>, String) {
    match system {
        BuildSystem::Autotools => (
            vec![
                "if [ -f configure.ac ] || [ -f configure.in ]; then autoreconf -fi; fi".into(),
                "./configure".into(),
                "make -j\"$(nproc)\"".into(),
                // The test programs and data, no test run; a test that does not build at
                // the environment commit is no reason to fail the image.
                "make -j\"$(nproc)\" -k check TESTS= || true".into(),
            ],
            format!("make {target}"),
        ),
        BuildSystem::CMake => (
            vec![
                format!("cmake -S . -B {CMAKE_BUILD_DIR} -DCMAKE_BUILD_TYPE=Debug -DBUILD_TESTING=ON"),
                // As autotools' test programs above: a target that does not build at
                // the environment commit (a test of 2017 that GCC 10's library rejects,
                // nlohmann/json-807) is no reason to fail the image; make keeps going,
                // and each run builds the targets of the touched files again.
                format!(
                    "cmake --build {CMAKE_BUILD_DIR} -j\"$(nproc)\" -- -k || echo 'swe-harvest: some targets did not build at the environment commit; the runs build those of the touched files'"
                ),
            ],
            format!("ctest --test-dir {CMAKE_BUILD_DIR} --output-on-failure --timeout 600"),
        ),
        BuildSystem::Make => (
            // The default target may need what the image lacks; the test target builds
            // what it needs.
            vec!["make -j\"$(nproc)\" || true".into()],
            format!("make {target}"),
        ),
    }
}

pub fn infer(files: &RepoFiles, date: DateTime<Utc>, runtimes: &[String]) -> Result<EnvironmentSpec, InferError> {
    // No build file at the root: a harness over a build in a folder (micropython).
    if build_system(files).is_none() {
        if let Some(spec) = super::harness::infer_harness(files, date, runtimes) {
            return spec;
        }
    }
    let (system, target) = build_system(files).ok_or(InferError::NotRecognised {
        language: "C",
        expected: "configure.ac, a CMakeLists.txt with tests, or a Makefile with a check or test target",
    })?;
    let runtime = choose_runtime(date, runtimes)
        .ok_or_else(|| InferError::no_runtime("C", "a GCC base image".to_string(), runtimes))?;
    let (mut install, test_command) = steps(system, target);
    let mut system_packages = library_packages(files);
    let mut add_package = |package: &str| {
        if !system_packages.iter().any(|known| known == package) {
            system_packages.push(package.to_string());
        }
    };
    if system == BuildSystem::Make {
        recipe_interpreters(files).into_iter().for_each(&mut add_package);
        harness_interpreters(files).into_iter().for_each(&mut add_package);
    }
    if system == BuildSystem::CMake {
        let lists = files.get("CMakeLists.txt").map(String::as_str).unwrap_or_default();
        let (options, no_werror) = (test_options(lists), warnings_as_errors_options(lists));
        let fetched = fetched_from_debian(files);
        for step in install.iter_mut().filter(|step| step.starts_with("cmake -S ")) {
            for option in &options {
                step.push_str(&format!(" -D{option}=ON"));
            }
            for option in &no_werror {
                step.push_str(&format!(" -D{option}=OFF"));
            }
            for (_, setting) in &fetched {
                step.push_str(&format!(" {setting}"));
            }
        }
        for (package, _) in fetched {
            add_package(package);
        }
    }
    let evidence = CiEvidence::read(files);
    let mut decisions = Vec::new();
    let runtime = ci_compiler(runtime, runtimes, &evidence, &mut decisions);
    let mut test_command = test_command;
    if system == BuildSystem::Make {
        if let Some((target, origin)) =
            ci_make_target(files, &evidence).filter(|(target, _)| target != target_of(&test_command))
        {
            decisions.push(format!("`make {target}` from CI's test command ({origin}), not `{test_command}`"));
            test_command = format!("make {target}");
        }
    }
    if system == BuildSystem::CMake {
        let (options, said) = ci_cmake_options(&evidence);
        let configure = install.iter_mut().find(|step| step.starts_with("cmake -S "));
        if let Some(configure) = configure {
            let new: Vec<&String> = options
                .iter()
                .filter(|option| {
                    let name = option.split('=').next().unwrap_or(option);
                    !configure.split_whitespace().any(|word| word.split('=').next() == Some(name))
                })
                .collect();
            for option in &new {
                configure.push(' ');
                configure.push_str(&crate::sandbox::script::shell_quote(option));
            }
            if !new.is_empty() {
                let named: Vec<&str> = new.iter().map(|option| option.as_str()).collect();
                decisions.push(format!("CMake options `{}` from CI's configure command ({said})", named.join(" ")));
            }
        }
        if let Some((arguments, said)) = ci_ctest_arguments(&evidence) {
            test_command.push(' ');
            test_command.push_str(
                &arguments.iter().map(|word| crate::sandbox::script::shell_quote(word)).collect::<Vec<_>>().join(" "),
            );
            decisions.push(format!("`ctest {}` from CI's test command ({said})", arguments.join(" ")));
        }
    }
    let added: Vec<&ci::Package> = evidence
        .packages
        .iter()
        .filter(|package| !system_packages.contains(&package.name) && !ci::unwanted_package(&package.name))
        .collect();
    if !added.is_empty() {
        let names: Vec<String> = added.iter().map(|package| package.name.clone()).collect();
        decisions.push(format!(
            "Debian packages {} from CI's apt-get install ({}; those Debian lacks are skipped)",
            names.join(", "),
            added[0].origin
        ));
        system_packages.extend(names);
    }
    let mut spec =
        EnvironmentSpec { system_packages, ..EnvironmentSpec::inferred(super::NAME, runtime, install, test_command) };
    evidence.record(&mut spec, decisions);
    Ok(spec)
}

/// The target of a `make TARGET` test command.
fn target_of(test_command: &str) -> &str {
    test_command.strip_prefix("make ").unwrap_or(test_command)
}

/// The first test target of CI's `make` commands that the Makefile (or the folder its
/// `.DEFAULT` rule hands targets to) has, with where.
fn ci_make_target(files: &RepoFiles, evidence: &CiEvidence) -> Option<(String, String)> {
    let makefiles: Vec<&String> = ["Makefile", "GNUmakefile", "makefile"]
        .iter()
        .filter_map(|name| files.get(*name))
        .flat_map(|text| {
            let folder = default_rule_folder(text);
            std::iter::once(text).chain(folder.into_iter().flat_map(|folder| {
                ["Makefile", "GNUmakefile", "makefile"]
                    .iter()
                    .filter_map(move |inner| files.get(&format!("{folder}/{inner}")))
            }))
        })
        .collect();
    for (words, step) in evidence.runner_commands(ci::shell::Runner::Make) {
        if words[0] != "make"
            || words.iter().any(|word| matches!(word.as_str(), "-C" | "-f" | "--directory" | "--file"))
        {
            continue;
        }
        let target = words[1..].iter().find(|word| {
            let lower = word.to_ascii_lowercase();
            !word.starts_with('-')
                && !ci::shell::is_assignment(word)
                && (lower.contains("test") || lower.contains("check"))
        });
        if let Some(target) = target.filter(|target| makefiles.iter().any(|text| has_target(text, target))) {
            return Some((target.clone(), step.origin.to_string()));
        }
    }
    None
}

/// Words of CMake options that are not taken from CI (see the module doc).
const UNWANTED_CMAKE_OPTIONS: &[&str] = &[
    "SANITIZ", "ASAN", "UBSAN", "TSAN", "COVERAGE", "FUZZ", "BENCH", "WERROR", "VALGRIND", "INSTALL", "DOC", "CCACHE",
];

/// The `-DNAME=VALUE` options of CI's `cmake` configure commands (see the module doc),
/// each name once (the first value), with where.
fn ci_cmake_options(evidence: &CiEvidence) -> (Vec<String>, String) {
    let mut options: Vec<String> = Vec::new();
    let mut origins: Vec<String> = Vec::new();
    // The configure commands of the test jobs, whichever of their steps runs them.
    for (line, origin) in &evidence.test_job_lines {
        let origin = origin.to_string();
        for words in ci::shell::segments(line) {
            let (_, words) = ci::shell::program(&words);
            if words.first().map(String::as_str) != Some("cmake") || words.iter().any(|word| word == "--build") {
                continue;
            }
            for word in words {
                let Some(option) = word.strip_prefix("-D") else { continue };
                let Some((name, value)) = option.split_once('=') else { continue };
                let name = name.split(':').next().unwrap_or(name);
                let upper = name.to_ascii_uppercase();
                let wanted = !upper.starts_with("CMAKE_")
                    && !UNWANTED_CMAKE_OPTIONS.iter().any(|unwanted| upper.contains(unwanted))
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !value.contains('$')
                    && !value.is_empty();
                if wanted && !options.iter().any(|known| known.split('=').next() == Some(&format!("-D{name}"))) {
                    options.push(format!("-D{name}={value}"));
                    if !origins.contains(&origin) {
                        origins.push(origin.clone());
                    }
                }
            }
        }
    }
    (options, origins.join(", "))
}

/// The label and exclusion options of CI's `ctest` commands, from the first that has
/// any, with where.
fn ci_ctest_arguments(evidence: &CiEvidence) -> Option<(Vec<String>, String)> {
    for (words, step) in evidence.runner_commands(ci::shell::Runner::CTest) {
        let mut arguments: Vec<String> = Vec::new();
        let mut index = 1;
        while index < words.len() {
            let word = words[index].as_str();
            index += 1;
            let takes = matches!(word, "-L" | "-LE" | "-E" | "--label-regex" | "--label-exclude" | "--exclude-regex");
            if takes && index < words.len() && !words[index].contains('$') {
                arguments.push(word.to_string());
                arguments.push(words[index].clone());
                index += 1;
            }
        }
        if !arguments.is_empty() {
            return Some((arguments, step.origin.to_string()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn files(list: &[(&str, &str)]) -> RepoFiles {
        list.iter().map(|(path, text)| (path.to_string(), text.to_string())).collect()
    }

    fn date(year: i32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(year, 8, 1, 0, 0, 0).unwrap()
    }

    #[test]
    fn googletest_that_the_tests_fetch_comes_from_debians_source_package() {
        // yhirose/cpp-httplib's test/CMakeLists.txt (shortened), at a held-out row's base.
        let test_lists = "include(FetchContent)\nFetchContent_Declare(\n    gtest\n    URL https://github.com/google/googletest/archive/main.tar.gz\n)\n\
                          FetchContent_MakeAvailable(gtest)\nadd_executable(httplib-test test.cc)\n";
        let repo = files(&[
            (
                "CMakeLists.txt",
                "project(httplib)\noption(HTTPLIB_TEST \"Enables testing\" OFF)\nenable_testing()\nadd_subdirectory(test)\n",
            ),
            ("test/CMakeLists.txt", test_lists),
        ]);
        assert!(reads("test/CMakeLists.txt") && !reads("test/fuzzing/CMakeLists.txt"));
        let spec = infer(&repo, date(2024), &["gcc12".into()]).unwrap();
        assert!(spec.system_packages.contains(&"googletest".to_string()), "{spec:?}");
        let configure = spec.install.iter().find(|step| step.starts_with("cmake -S ")).unwrap();
        assert!(
            configure.ends_with(" -DHTTPLIB_TEST=ON -DFETCHCONTENT_SOURCE_DIR_GTEST=/usr/src/googletest"),
            "{configure}"
        );
        // A dependency Debian has no source of is left to the build (which names it).
        let other = files(&[(
            "CMakeLists.txt",
            "FetchContent_Declare(fmt GIT_REPOSITORY https://github.com/fmtlib/fmt)\nenable_testing()\n",
        )]);
        assert!(fetched_from_debian(&other).is_empty());
    }

    /// CI evidence in C: a Makefile with `check` and `test` is tested with the `make
    /// test` CI runs; a CMake project gets CI's configure options (not its build type
    /// nor its sanitizer), its `ctest -L unit`, and its apt packages but the compiler
    /// and valgrind; the spec says so.
    #[test]
    fn ci_evidence_chooses_the_make_target_cmake_options_ctest_labels_and_packages() {
        let makefile = "all:\n\tcc -o x x.c\ncheck: all\n\t./lint.sh\ntest: all\n\t./run-tests.sh\n";
        let travis = "language: c\nscript:\n  - make\n  - make -j2 test V=1\n";
        let plain = files(&[("Makefile", makefile)]);
        let with_ci = files(&[("Makefile", makefile), (".travis.yml", travis)]);
        assert_eq!(infer(&plain, date(2024), &["gcc12".into()]).unwrap().test_command, "make check");
        let spec = infer(&with_ci, date(2024), &["gcc12".into()]).unwrap();
        assert_eq!(spec.test_command, "make test");
        assert_eq!(spec.ci, vec!["`make test` from CI's test command (`.travis.yml` job `travis`), not `make check`"]);
        // A target the Makefile lacks, or one run in another folder, is not taken.
        let elsewhere = "script:\n  - make -C tests test\n  - make unittest\n";
        let spec = infer(&files(&[("Makefile", makefile), (".travis.yml", elsewhere)]), date(2024), &["gcc12".into()]);
        assert_eq!(spec.unwrap().test_command, "make check");

        let lists = "project(x)\noption(X_TESTS \"tests\" ON)\nenable_testing()\n";
        let workflow = "jobs:\n  linux:\n    steps:\n      \
                        - run: sudo apt-get install -y libonig-dev valgrind gcc-12\n      \
                        - run: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DX_WITH_ZLIB=ON -DX_ENABLE_ASAN=ON -DX_TESTS=OFF\n      \
                        - run: cmake --build build\n      - run: cd build && ctest -L unit --output-on-failure\n";
        let cmake = files(&[("CMakeLists.txt", lists), (".github/workflows/ci.yml", workflow)]);
        let spec = infer(&cmake, date(2024), &["gcc12".into()]).unwrap();
        let configure = spec.install.iter().find(|step| step.starts_with("cmake -S ")).unwrap();
        assert!(configure.ends_with("-DBUILD_TESTING=ON -DX_TESTS=ON -DX_WITH_ZLIB=ON"), "{configure}");
        assert!(spec.test_command.ends_with("--timeout 600 -L unit"), "{}", spec.test_command);
        assert_eq!(spec.system_packages, vec!["libonig-dev".to_string()]);
        assert_eq!(spec.ci.len(), 3, "{:?}", spec.ci);
    }

    #[test]
    fn a_cmake_projects_own_test_options_are_turned_on_and_others_left_alone() {
        let lists = "project(json)\noption(JSON_BuildTests \"Build the unit tests\" ${INIT})\n\
                     option(JSON_Install \"Install CMake targets\" ON)\n\
                     OPTION (CATCH_DEVELOPMENT_BUILD \"Build tests, enable warnings\" OFF)\n\
                     option(FMT_TEST \"Generate the test target.\" OFF)\noption(FMT_FUZZ \"fuzzing\" OFF)\n\
                     option(CALC_DISABLE_TESTS \"no tests\" OFF)\noption(BUILD_TESTING \"\" ON)\n\
                     option(CALC_TESTS_WITH_VALGRIND \"\" OFF)\n";
        assert_eq!(test_options(lists), ["CATCH_DEVELOPMENT_BUILD", "FMT_TEST", "JSON_BuildTests"]);
        // yaml-cpp: a dependent option turns the tests on; the system's googletest stays off.
        let yaml = "option(YAML_USE_SYSTEM_GTEST \"Use system googletest if found\" OFF)\n\
                    cmake_dependent_option(YAML_CPP_BUILD_TESTS\n  \"Enable yaml-cpp tests\" OFF\n  \"BUILD_TESTING\" OFF)\n";
        assert_eq!(test_options(yaml), ["YAML_CPP_BUILD_TESTS"]);
        let project = files(&[(
            "CMakeLists.txt",
            "project(x)\noption(X_BUILD_TESTS \"tests\" OFF)\nif(X_BUILD_TESTS)\nenable_testing()\nendif()\n",
        )]);
        let spec = infer(&project, Utc.with_ymd_and_hms(2024, 1, 1, 0, 0, 0).unwrap(), &["gcc12".to_string()]).unwrap();
        assert!(
            spec.install
                .iter()
                .any(|step| step.starts_with("cmake -S ") && step.ends_with("-DBUILD_TESTING=ON -DX_BUILD_TESTS=ON")),
            "{:?}",
            spec.install
        );
    }

    #[test]
    fn autotools_wins_then_cmake_with_tests_then_a_makefile_with_a_test_target() {
        let both = files(&[("configure.ac", "AC_INIT"), ("CMakeLists.txt", "enable_testing()")]);
        assert_eq!(build_system(&both), Some((BuildSystem::Autotools, "check")));
        let cmake = files(&[("CMakeLists.txt", "project(x)\nadd_test (NAME a COMMAND a)\n"), ("Makefile", "check:\n")]);
        assert_eq!(build_system(&cmake), Some((BuildSystem::CMake, "test")));
        let untested = files(&[("CMakeLists.txt", "project(x)\n"), ("Makefile", "all:\n\tcc x.c\ntest: all\n\t./t\n")]);
        assert_eq!(build_system(&untested), Some((BuildSystem::Make, "test")));
        assert_eq!(build_system(&files(&[("Makefile", "CHECK:=1\nall:\n")])), None);
        assert_eq!(make_test_target("all check: x\n"), Some("check"));
        assert_eq!(make_test_target("check := yes\n"), None, "a variable, not a target");
    }

    /// Redis's top Makefile hands every target to `src/`; its `runtest` needs tclsh.
    #[test]
    fn a_makefile_that_hands_its_targets_to_a_folder_has_that_folders_test_target() {
        let top = "default: all\n\n.DEFAULT:\n\tcd src && $(MAKE) $@\n\ninstall:\n\tcd src && $(MAKE) $@\n";
        let inner = "all: redis-server\n\ntest: redis-server\n\t@(cd ..; ./runtest)\n";
        let runtest = "#!/bin/sh\nfor VERSION in 8.5 8.6; do TCL=`which tclsh$VERSION` && TCLSH=$TCL; done\n$TCLSH tests/test_helper.tcl \"${@}\"\n";
        let redis = files(&[("Makefile", top), ("src/Makefile", inner), ("runtest", runtest)]);
        assert!(reads("runtest") && reads("src/Makefile"));
        assert_eq!(default_rule_folder(top).as_deref(), Some("src"));
        assert_eq!(default_rule_folder(".DEFAULT:\n\t$(MAKE) -C lib/ $@\n").as_deref(), Some("lib"));
        assert_eq!(default_rule_folder(".DEFAULT:\n\t@echo no rule for $@\n"), None);
        assert_eq!(build_system(&redis), Some((BuildSystem::Make, "test")));
        let spec = infer(&redis, date(2024), &["gcc12".to_string()]).unwrap();
        assert!(spec.system_packages.contains(&"tcl".to_string()), "{spec:?}");
        assert_eq!(spec.test_command, "make test");
        // Handed to a folder without a test target: no project inferred.
        let untested = files(&[("Makefile", top), ("src/Makefile", "all:\n\tcc x.c\n")]);
        assert_eq!(build_system(&untested), None);
        assert!(harness_interpreters(&files(&[("runtest", "#!/bin/sh\n./run.py\n")])).is_empty());
    }

    #[test]
    fn libraries_the_build_looks_for_become_dev_packages() {
        // jq's configure.ac (2019-2024): oniguruma through AC_CHECK_LIB, the math library.
        let jq = files(&[(
            "configure.ac",
            "AC_CHECK_HEADER(\"oniguruma.h\",\n   AC_CHECK_LIB([onig],[onig_version]))\nAC_CHECK_LIB(m, sqrt)\n\
             AC_SEARCH_LIBS([clock_gettime], [rt posix4])\nPKG_CHECK_MODULES([XML], [libxml-2.0 >= 2.9 zlib])\n",
        )]);
        assert_eq!(library_packages(&jq), vec!["libonig-dev", "libposix4-dev", "libxml2-dev", "libz-dev"]);
        let cmake = files(&[(
            "CMakeLists.txt",
            "find_package(Threads REQUIRED)\nfind_package(ZLIB)\npkg_check_modules(CURL REQUIRED IMPORTED_TARGET libcurl)\n\
             find_package(PythonInterp 3 REQUIRED)\nfind_package(doctest REQUIRED)\n",
        )]);
        assert_eq!(library_packages(&cmake), vec!["libz-dev", "python3", "doctest-dev", "libcurl-dev"]);
    }

    #[test]
    fn the_newest_gcc_released_by_the_date_wins_else_the_oldest() {
        let runtimes = vec!["gcc14".to_string(), "gcc12".to_string(), "3.11".to_string()];
        assert_eq!(choose_runtime(date(2019), &runtimes).as_deref(), Some("gcc12"));
        assert_eq!(choose_runtime(date(2023), &runtimes).as_deref(), Some("gcc12"));
        assert_eq!(choose_runtime(date(2024), &runtimes).as_deref(), Some("gcc14"));
        assert_eq!(choose_runtime(date(2024), &["3.11".to_string()]), None);
    }

    /// CI's tested GCCs narrow the date's compiler among the GCCs here: a 2024 task
    /// (GCC 14's) whose CI tests GCC 9 and 10 gets gcc10, and the spec says so; one
    /// whose CI names no GCC (clang, a bare `gcc`) keeps the date's.
    #[test]
    fn ci_tested_gcc_narrows_the_dates_compiler() {
        let runtimes: Vec<String> = ["gcc10", "gcc12", "gcc14"].iter().map(|runtime| runtime.to_string()).collect();
        let lists = "project(x)\nenable_testing()\nadd_test(NAME t COMMAND t)\n";
        let workflow = "on: [push]\njobs:\n  linux:\n    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n        \
                        gcc: [9, 10]\n    steps:\n      - run: sudo apt-get install -y g++-${{ matrix.gcc }}\n      \
                        - run: ctest --output-on-failure\n";
        let plain = files(&[("CMakeLists.txt", lists)]);
        let without = infer(&plain, date(2024), &runtimes).unwrap();
        assert_eq!(without.runtime, "gcc14");
        assert!(without.ci.is_empty(), "{:?}", without.ci);

        let with_ci = files(&[("CMakeLists.txt", lists), (".github/workflows/ci.yml", workflow)]);
        let spec = infer(&with_ci, date(2024), &runtimes).unwrap();
        assert_eq!(spec.runtime, "gcc10");
        assert!(
            spec.ci.contains(
                &"compiler gcc10, not gcc14 (the date's): CI's test jobs use GCC 9, 10 (`.github/workflows/ci.yml` job \
                  `linux`)"
                    .to_string()
            ),
            "{:?}",
            spec.ci
        );

        let other =
            workflow.replace("gcc: [9, 10]", "compiler: [clang-12, gcc]").replace("g++-${{ matrix.gcc }}", "clang");
        let clang = files(&[("CMakeLists.txt", lists), (".github/workflows/ci.yml", &other)]);
        assert_eq!(infer(&clang, date(2024), &runtimes).unwrap().runtime, "gcc14");
    }

    #[test]
    fn a_projects_warnings_as_errors_options_are_turned_off_at_configure() {
        let lists = "option(CATCH_ENABLE_WERROR \"Enable all warnings as errors\" ON)\n\
                     option(CATCH_BUILD_TESTING \"Build SelfTest project\" ON)\n\
                     option(FOO_WARNINGS_AS_ERRORS \"x\" ON)\noption(FOO_WARNINGS \"more warnings\" ON)\n";
        assert_eq!(warnings_as_errors_options(lists), vec!["CATCH_ENABLE_WERROR", "FOO_WARNINGS_AS_ERRORS"]);
        let project = files(&[("CMakeLists.txt", &format!("enable_testing()\n{lists}"))]);
        let spec = infer(&project, date(2019), &["gcc12".into()]).unwrap();
        let configure = spec.install.iter().find(|step| step.starts_with("cmake -S ")).unwrap();
        assert!(configure.contains("-DCATCH_ENABLE_WERROR=OFF -DFOO_WARNINGS_AS_ERRORS=OFF"), "{configure}");
        assert!(configure.contains("-DCATCH_BUILD_TESTING=ON"), "{configure}");
        assert!(!configure.contains("FOO_WARNINGS="), "{configure}");
        // The build keeps going past a target that does not compile.
        assert!(spec.install.iter().any(|step| step.starts_with("cmake --build ") && step.contains(" -- -k ||")));
    }

    #[test]
    fn a_task_older_than_every_gcc_here_needs_the_catalogues_gcc_of_its_time() {
        let only_12 = vec!["gcc12".to_string()];
        let needed = runtime_needed(date(2020), &only_12).expect("a 2020 task with only GCC 12 here");
        assert_eq!(needed.runtime, "gcc10");
        assert!(needed.why.contains("2020-") && needed.why.contains("2022-05"), "{}", needed.why);
        // Older than the catalogue's oldest GCC: that one.
        assert_eq!(runtime_needed(date(2017), &only_12).map(|need| need.runtime).as_deref(), Some("gcc10"));
        // A GCC of the date is here, or one as old as the wanted: nothing needed.
        assert_eq!(runtime_needed(date(2023), &only_12), None);
        assert_eq!(runtime_needed(date(2020), &["gcc10".to_string(), "gcc12".to_string()]), None);
        assert_eq!(runtime_needed(date(2017), &["gcc10".to_string()]), None);
        // No GCC at all is inference's own error, not this.
        assert_eq!(runtime_needed(date(2020), &["3.11".to_string()]), None);
    }

    #[test]
    fn a_plain_makefile_whose_recipes_run_a_python_or_perl_script_gets_the_interpreter() {
        let files: RepoFiles = [
            ("Makefile".to_string(), "check:\n\t$(MAKE) -C tests check\n# python3 is not needed here\n".to_string()),
            (
                "tests/Makefile".to_string(),
                "test-cli-tests: zstd\n\tfile $(ZSTD)\n\t./cli-tests/run.py --zstd=\"$(ZSTD)\"\ncheck: test-cli-tests\n".to_string(),
            ),
        ]
        .into();
        assert!(reads("tests/Makefile") && !reads("tests/sub/deeper/Makefile"));
        // A Makefile two folders down is read (a harness over a build in a folder), but
        // its recipes install nothing: they are no test target of this build.
        let mut deeper = files.clone();
        deeper.insert(
            "ports/unix/Makefile".to_string(),
            "test:
	perl run.pl
"
            .to_string(),
        );
        assert_eq!(recipe_interpreters(&deeper), vec!["python3"]);
        assert_eq!(recipe_interpreters(&files), vec!["python3"]);
        let spec = infer(&files, Utc.with_ymd_and_hms(2022, 8, 1, 0, 0, 0).unwrap(), &["gcc12".to_string()]).unwrap();
        assert!(spec.system_packages.contains(&"python3".to_string()), "{:?}", spec.system_packages);
        let perl: RepoFiles = [("Makefile".to_string(), "test:\n\tperl t/run.pl\n".to_string())].into();
        assert_eq!(recipe_interpreters(&perl), vec!["perl"]);
        let neither: RepoFiles = [("Makefile".to_string(), "# run.py\ntest:\n\t./run_tests.sh\n".to_string())].into();
        assert!(recipe_interpreters(&neither).is_empty());
    }

    #[test]
    fn inference_names_the_build_system_steps_and_says_what_it_needs() {
        let spec =
            infer(&files(&[("configure.ac", "AC_CHECK_LIB([onig], [x])")]), date(2023), &["gcc12".into()]).unwrap();
        assert_eq!((spec.ecosystem.as_str(), spec.runtime.as_str()), ("c", "gcc12"));
        assert_eq!(spec.test_command, "make check");
        assert_eq!(spec.system_packages, vec!["libonig-dev"]);
        assert!(spec.install.iter().any(|step| step.contains("autoreconf -fi")), "{:?}", spec.install);
        let Err(error) = infer(&files(&[("README", "")]), date(2023), &["gcc12".into()]) else {
            panic!("nothing to build")
        };
        assert!(error.to_string().contains("configure.ac"), "{error}");
        let Err(error) = infer(&files(&[("configure.ac", "")]), date(2023), &["3.11".into()]) else { panic!("no GCC") };
        assert!(error.to_string().contains("GCC"), "{error}");
    }
}
