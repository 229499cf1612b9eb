//! The environment ladder of Python projects: what to try when an inferred
//! environment fails to build, or builds but does not run the touched test files'
//! existing tests. Each rung gives up a little faithfulness to the task's date
//! ([`Rung`], in order):
//!
//! 1. relaxed packages: uv names each package it cannot have as of the date (a
//!    release deleted from PyPI, such as `atomicwrites` before 2022) and when the
//!    release that would do was published; that package alone gets that date
//!    (`--exclude-newer-package`), so it is taken at its oldest release that fits.
//!    Applied on any rung whose build fails that way, a few packages at a time;
//! 2. a neighbouring runtime: the nearest older runtime the project allows, else
//!    the nearest newer one (a dependency of the date without a wheel or a build for
//!    the first choice);
//! 3. runner pins: pytest and its own dependencies as of the runtime's first year
//!    (or the task's date, if later) and at least a release that runs on the
//!    runtime, on the first runtime: pytest 2 of a 2013 project does not run on 3.9.
//!
//! Pure functions over specs and the failed build's log; the stage builds and checks.

use chrono::{DateTime, Duration, Utc};

use super::infer::{
    PRE_INSTALL_TOOLS_PREFIX, allowed_runtimes, build_tools_cutoff, pre_install_tools, runtime_released,
};
use crate::ecosystem::{LadderContext, RungFailure};
use crate::model::{EnvironmentSpec, Rung};
use crate::sandbox::script::shell_quote;

/// At most this many packages are relaxed for one environment: beyond that, the date
/// is not what the environment is about any more.
const MAX_RELAXED: usize = 8;

/// The test runner's own packages, moved together on the runner-pins rung.
const RUNNER_FAMILY: &[&str] = &[
    "pytest",
    "pluggy",
    "py",
    "iniconfig",
    "packaging",
    "pyparsing",
    "attrs",
    "toml",
    "tomli",
    "exceptiongroup",
    "more-itertools",
    "atomicwrites",
    "colorama",
    "importlib-metadata",
    "zipp",
    "pytest-cov",
    "coverage",
    "pytest-xdist",
    "pytest-forked",
    "execnet",
    "pytest-timeout",
    "pytest-mock",
];

/// The oldest pytest that runs on each runtime.
const RUNNER_MINIMUM: &[(&str, &str)] = &[
    ("3.6", "3.0"),
    ("3.7", "3.6"),
    ("3.8", "4.6"),
    ("3.9", "6.2"),
    ("3.10", "6.2.5"),
    ("3.11", "7.2"),
    ("3.12", "7.4"),
    ("3.13", "8.2"),
    ("3.14", "8.4"),
];

/// Where the runner-pins rung writes its override file inside the image build.
const RUNNER_PINS_FILE: &str = "/tmp/swe-harvest-runner-pins.txt";

/// The next rung after the last of `tried` failed (see the module's text).
pub fn next_rung(
    tried: &[EnvironmentSpec],
    failure: &RungFailure<'_>,
    context: &LadderContext<'_>,
) -> Option<EnvironmentSpec> {
    let first = tried.first()?;
    let last = tried.last()?;
    if let RungFailure::BuildFailed { log } = failure {
        let relaxed = relaxed_packages(last);
        let new: Vec<(String, DateTime<Utc>)> = filtered_by_date(log)
            .into_iter()
            .chain(too_old_for_the_build_tools(log, context.date, &last.runtime))
            .filter(|(name, _)| !relaxed.contains(name))
            .collect();
        if !new.is_empty() && relaxed.len() + new.len() <= MAX_RELAXED {
            let flags: Vec<String> = new.iter().map(|(name, date)| exclude_newer_flag(name, *date)).collect();
            let mut next = with_install_flags(last, &flags.join(" "));
            next.rung = last.rung.max(Rung::RelaxedPackages);
            return Some(next);
        }
    }
    if !tried.iter().any(|spec| spec.rung >= Rung::NeighbourRuntime) {
        if let Some(runtime) = neighbour_runtime(&first.runtime, context) {
            // The build tools are dated by the runtime too (a setuptools that knows it).
            let pre_install = last
                .pre_install
                .iter()
                .map(|command| {
                    if command.starts_with(PRE_INSTALL_TOOLS_PREFIX) {
                        pre_install_tools(context.date, &runtime)
                    } else {
                        command.clone()
                    }
                })
                .collect();
            return Some(EnvironmentSpec { runtime, rung: Rung::NeighbourRuntime, pre_install, ..last.clone() });
        }
    }
    if !tried.iter().any(|spec| spec.rung == Rung::RunnerPins) {
        // The first runtime, with whatever its tries relaxed.
        let base = tried.iter().rev().find(|spec| spec.runtime == first.runtime && spec.rung < Rung::NeighbourRuntime);
        return Some(with_runner_pins(base.unwrap_or(first), context.date));
    }
    None
}

/// The packages that uv's hints say were filtered by the date, each with the time
/// the release that would do was published (plus a second, as a cutoff).
pub fn filtered_by_date(log: &str) -> Vec<(String, DateTime<Utc>)> {
    let hint = regex::Regex::new(
        r"`([A-Za-z0-9][A-Za-z0-9._-]*)`\s+was\s+filtered\s+by\s+`exclude-newer`[^\n]*?published\s+at\s+(\d{4}-\d\d-\d\dT[0-9:.]+Z)",
    )
    .expect("valid regex");
    let mut found: Vec<(String, DateTime<Utc>)> = Vec::new();
    for capture in hint.captures_iter(log) {
        let name = capture[1].to_lowercase();
        let Ok(published) = DateTime::parse_from_rfc3339(&capture[2]) else { continue };
        // Whole seconds after the publication, so that the release itself is in.
        let Some(cutoff) = DateTime::from_timestamp(published.timestamp() + 1, 0) else { continue };
        if !found.iter().any(|(known, _)| *known == name) {
            found.push((name, cutoff));
        }
    }
    found
}

/// Dependencies of the date that break the (newer) build tools the project is built
/// with: setuptools 64 and later fail with an `importlib-metadata` of 2019 in the same
/// environment (pytest 4.5 requires one on every runtime) and say so in the log. They
/// are taken as of the build tools' own date.
fn too_old_for_the_build_tools(log: &str, date: DateTime<Utc>, runtime: &str) -> Vec<(String, DateTime<Utc>)> {
    if !log.contains("`importlib-metadata` version is incompatible with `setuptools`") {
        return Vec::new();
    }
    let cutoff = build_tools_cutoff(date, runtime).and_time(chrono::NaiveTime::MIN).and_utc();
    vec![("importlib-metadata".to_string(), cutoff)]
}

/// The packages a spec already relaxes.
fn relaxed_packages(spec: &EnvironmentSpec) -> Vec<String> {
    let flag = regex::Regex::new(r"--exclude-newer-package\s+'?([A-Za-z0-9._-]+)=").expect("valid regex");
    let mut names: Vec<String> = Vec::new();
    for command in &spec.install {
        for capture in flag.captures_iter(command) {
            if !names.contains(&capture[1].to_string()) {
                names.push(capture[1].to_string());
            }
        }
    }
    names
}

fn exclude_newer_flag(name: &str, date: DateTime<Utc>) -> String {
    format!("--exclude-newer-package {}", shell_quote(&format!("{name}={}", date.format("%Y-%m-%dT%H:%M:%SZ"))))
}

/// `spec` with `flags` added to every `uv pip install` of its install commands.
fn with_install_flags(spec: &EnvironmentSpec, flags: &str) -> EnvironmentSpec {
    let install = spec
        .install
        .iter()
        .map(|command| command.replace("uv pip install ", &format!("uv pip install {flags} ")))
        .collect();
    EnvironmentSpec { install, ..spec.clone() }
}

/// The nearest older runtime the project allows, else the nearest newer one.
fn neighbour_runtime(runtime: &str, context: &LadderContext<'_>) -> Option<String> {
    let allowed = allowed_runtimes(context.files, context.runtimes);
    let position = allowed.iter().position(|candidate| candidate == runtime)?;
    let older = position.checked_sub(1).and_then(|index| allowed.get(index));
    older.or_else(|| allowed.get(position + 1)).cloned()
}

/// `spec` with the test runner pinned to what runs on its runtime.
fn with_runner_pins(spec: &EnvironmentSpec, date: DateTime<Utc>) -> EnvironmentSpec {
    let minimum =
        RUNNER_MINIMUM.iter().find(|(runtime, _)| *runtime == spec.runtime).map_or("7", |(_, version)| version);
    // The runtime's first year: releases of the runner made for it, not for its successors.
    let era = runtime_released(&spec.runtime)
        .and_then(|released| released.and_hms_opt(0, 0, 0))
        .map(|released| released.and_utc() + Duration::days(365));
    let cutoff = era.map_or(date, |era| era.max(date));
    let relaxed = relaxed_packages(spec);
    let mut flags = vec![format!("--overrides {RUNNER_PINS_FILE}")];
    flags.extend(
        RUNNER_FAMILY
            .iter()
            .filter(|name| !relaxed.iter().any(|known| known == *name))
            .map(|name| exclude_newer_flag(name, cutoff)),
    );
    let mut pinned = with_install_flags(spec, &flags.join(" "));
    pinned
        .install
        .insert(0, format!("printf '%s\\n' {} > {RUNNER_PINS_FILE}", shell_quote(&format!("pytest>={minimum}"))));
    pinned.rung = Rung::RunnerPins;
    pinned
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::ecosystem::RepoFiles;

    const UV_HINT: &str = "#9 12.3 error: No solution found when resolving dependencies
  cause: Because there are no versions of atomicwrites and pytest>=4.3.0 depends on atomicwrites>=1.0, we can conclude that pytest>=4.3.0 cannot be used.
         And because you require pytest==4.3.0, we can conclude that your requirements are unsatisfiable.

hint: `atomicwrites` was filtered by `exclude-newer` to only include packages uploaded before 2019-03-01T00:00:00Z. The latest version satisfying the requirement is v1.4.1, published at 2022-07-08T18:31:40.459Z. Consider using `exclude-newer-package` to override the cutoff for this package.
";

    fn spec(runtime: &str) -> EnvironmentSpec {
        EnvironmentSpec {
            ecosystem: "python".into(),
            runtime: runtime.into(),
            install: vec!["{ uv pip install --no-build-isolation -e . pytest; } || { uv pip install -e .; }".into()],
            test_command: "pytest -rA".into(),
            source: "inferred".into(),
            ..EnvironmentSpec::default()
        }
    }

    fn files() -> RepoFiles {
        [("setup.py".to_string(), "setup(name='x', python_requires='>=3.6')".to_string())].into()
    }

    fn runtimes() -> Vec<String> {
        vec!["3.9".into(), "3.11".into(), "3.13".into()]
    }

    fn context<'a>(files: &'a RepoFiles, runtimes: &'a [String]) -> LadderContext<'a> {
        LadderContext { files, date: Utc.with_ymd_and_hms(2019, 3, 1, 0, 0, 0).unwrap(), runtimes }
    }

    /// A build log as the engine streams it: stderr coloured in pieces that split the hint.
    const COLOURED_UV_HINT: &str = "\u{1b}[0m\u{1b}[91mhint\u{1b}[0m\u{1b}[91m:\u{1b}[0m\u{1b}[91m \u{1b}[0m\u{1b}[91m`\
        \u{1b}[0m\u{1b}[91matomicwrites\u{1b}[0m\u{1b}[91m` was filtered by `\u{1b}[0m\u{1b}[91mexclude-newer\u{1b}[0m\
        \u{1b}[91m` to only include packages uploaded before \u{1b}[0m\u{1b}[91m2020-05-08T18:02:14Z\u{1b}[0m\u{1b}[91m. \
        The latest version satisfying the requirement is \u{1b}[0m\u{1b}[91mv1.4.1\u{1b}[0m\u{1b}[91m, published at \
        \u{1b}[0m\u{1b}[91m2022-07-08T18:31:40.459Z\u{1b}[0m\u{1b}[91m.\n";

    #[test]
    fn a_coloured_build_log_gives_the_same_hints_once_plain() {
        let plain = crate::sandbox::script::strip_ansi(COLOURED_UV_HINT);
        let found = filtered_by_date(&plain);
        assert_eq!(found.len(), 1, "{plain}");
        assert_eq!(found[0].0, "atomicwrites");
        assert_eq!(found[0].1, Utc.with_ymd_and_hms(2022, 7, 8, 18, 31, 41).unwrap());
        assert!(filtered_by_date(COLOURED_UV_HINT).is_empty(), "the colours alone hide the hint");
    }

    #[test]
    fn uv_hints_name_the_packages_filtered_by_the_date_and_their_cutoff() {
        let found = filtered_by_date(UV_HINT);
        assert_eq!(found, vec![("atomicwrites".to_string(), Utc.with_ymd_and_hms(2022, 7, 8, 18, 31, 41).unwrap())]);
        assert!(filtered_by_date("error: the build backend failed").is_empty());
    }

    /// What setuptools 65 prints, building pytest 4.5 next to importlib-metadata 0.17.
    const OLD_IMPORTLIB_METADATA: &str = "Building pytest @ file:///testbed
/opt/venv/lib/python3.8/site-packages/setuptools/_importlib.py:23: UserWarning: `importlib-metadata` version is incompatible with `setuptools`.
This problem is likely to be solved by installing an updated version of `importlib-metadata`.
AttributeError: 'str' object has no attribute 'name'
";

    #[test]
    fn an_importlib_metadata_too_old_for_setuptools_is_taken_as_of_the_build_tools() {
        let (files, runtimes) = (files(), runtimes());
        let context = context(&files, &runtimes);
        let failure = RungFailure::BuildFailed { log: OLD_IMPORTLIB_METADATA };
        let next = next_rung(&[spec("3.9")], &failure, &context).expect("a next rung");
        assert_eq!(next.rung, Rung::RelaxedPackages);
        assert!(
            next.install[0].contains("--exclude-newer-package importlib-metadata=2022-09-01T00:00:00Z"),
            "the build tools' date (setuptools 64): {}",
            next.install[0]
        );
        // Once relaxed, the same log climbs on instead.
        let again = next_rung(&[spec("3.9"), next], &failure, &context).expect("a next rung");
        assert_eq!(again.rung, Rung::NeighbourRuntime);
    }

    #[test]
    fn a_resolution_failure_relaxes_the_named_packages_and_only_those() {
        let (files, runtimes) = (files(), runtimes());
        let first = spec("3.11");
        let next = next_rung(
            std::slice::from_ref(&first),
            &RungFailure::BuildFailed { log: UV_HINT },
            &context(&files, &runtimes),
        )
        .unwrap();
        assert_eq!(next.rung, Rung::RelaxedPackages);
        assert_eq!(next.runtime, "3.11");
        let flag = "uv pip install --exclude-newer-package atomicwrites=2022-07-08T18:31:41Z ";
        assert_eq!(next.install[0].matches(flag).count(), 2, "every uv install of the command: {}", next.install[0]);
        // The same hint again cannot relax anything new: the next rung is another runtime.
        let tried = vec![first, next];
        let after = next_rung(&tried, &RungFailure::BuildFailed { log: UV_HINT }, &context(&files, &runtimes)).unwrap();
        assert_eq!(after.rung, Rung::NeighbourRuntime);
        assert_eq!(after.runtime, "3.9", "the nearest older runtime first");
        assert!(after.install[0].contains("atomicwrites="), "keeps what was relaxed");
    }

    #[test]
    fn an_unusable_environment_climbs_to_a_neighbour_runtime_then_runner_pins_then_stops() {
        let (files, runtimes) = (files(), runtimes());
        let context = context(&files, &runtimes);
        let mut first = spec("3.9");
        first.pre_install = vec![pre_install_tools(context.date, "3.9")];
        assert!(first.pre_install[0].contains("setuptools=2022-09-01T"), "{:?}", first.pre_install);
        let mut tried = vec![first];
        let neighbour = next_rung(&tried, &RungFailure::Unusable, &context).unwrap();
        assert_eq!((neighbour.rung, neighbour.runtime.as_str()), (Rung::NeighbourRuntime, "3.11"), "no older: newer");
        assert_eq!(neighbour.pre_install, vec![pre_install_tools(context.date, "3.11")], "tools that know 3.11");
        assert!(neighbour.pre_install[0].contains("setuptools=2022-10-24T"), "{:?}", neighbour.pre_install);
        tried.push(neighbour);
        let pins = next_rung(&tried, &RungFailure::Unusable, &context).unwrap();
        assert_eq!(pins.rung, Rung::RunnerPins);
        assert_eq!(pins.runtime, "3.9", "pins go on the first runtime");
        assert_eq!(pins.install[0], "printf '%s\\n' 'pytest>=6.2' > /tmp/swe-harvest-runner-pins.txt");
        // 3.9's first year ends after the task's date (2019): the runner's cutoff is 2021-10-05.
        assert!(pins.install[1].contains("--overrides /tmp/swe-harvest-runner-pins.txt"), "{}", pins.install[1]);
        assert!(
            pins.install[1].contains("--exclude-newer-package pluggy=2021-10-05T00:00:00Z "),
            "{}",
            pins.install[1]
        );
        tried.push(pins);
        assert!(next_rung(&tried, &RungFailure::Unusable, &context).is_none(), "the ladder ends");
    }

    #[test]
    fn a_runtime_the_project_excludes_is_never_a_neighbour() {
        let files: RepoFiles = [("setup.py".to_string(), "setup(python_requires='>=3.11')".to_string())].into();
        let runtimes = runtimes();
        let next = next_rung(&[spec("3.11")], &RungFailure::Unusable, &context(&files, &runtimes)).unwrap();
        assert_eq!(next.runtime, "3.13", "3.9 is excluded by requires-python");
        let only: Vec<String> = vec!["3.11".into()];
        let next = next_rung(&[spec("3.11")], &RungFailure::Unusable, &context(&files, &only)).unwrap();
        assert_eq!(next.rung, Rung::RunnerPins, "no neighbour at all");
    }

    #[test]
    fn runner_pins_never_move_the_runner_before_the_tasks_date() {
        let files = files();
        let runtimes = runtimes();
        let late = LadderContext {
            files: &files,
            date: Utc.with_ymd_and_hms(2024, 5, 1, 0, 0, 0).unwrap(),
            runtimes: &runtimes,
        };
        let pins = with_runner_pins(&spec("3.9"), late.date);
        assert!(pins.install[1].contains("pytest=2024-05-01T00:00:00Z "), "{}", pins.install[1]);
    }
}
