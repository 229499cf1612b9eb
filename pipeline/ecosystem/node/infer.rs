//! A Node project's environment from its `package.json` (and lockfile, `.nvmrc`) at
//! the environment commit:
//!
//! - **Runtime**: `node18` / `node20` (Debian's, `swe-harvest/base:nodeN`). A numeric
//!   `.nvmrc` / `.node-version` (what the developers ran) picks the oldest image at
//!   least that major, else the newest; otherwise `engines.node` picks the oldest
//!   image whose major the range allows; otherwise the Node LTS line current at the
//!   task's date (the oldest image at least that line).
//! - **Install** (while the image is built, never at test time), by lockfile:
//!   `package-lock.json` / `npm-shrinkwrap.json` -> `npm ci`; `yarn.lock` -> Yarn
//!   (the `packageManager` version, else 1.x, installed from the npm registry)
//!   `yarn install --frozen-lockfile`; `pnpm-lock.yaml` -> pnpm (the `packageManager`
//!   version, else the major its `lockfileVersion` implies) `pnpm install
//!   --frozen-lockfile`; no lockfile -> `npm install --before=<task date>`, npm's own
//!   time travel. Lifecycle scripts run (a `prepare` that builds the project is what
//!   its tests expect); when the install fails with them, it is tried once more with
//!   `--ignore-scripts` (a `postinstall` that downloads a browser cannot work offline
//!   anyway; with npm, each package's own install scripts then run one at a time, so
//!   that one failing script costs no other package its scripts), and an npm lockfile
//!   out of step with `package.json` falls back to `npm install --before`.
//! - **Test command**: the runner the `test` script runs (following `npm run X`,
//!   `yarn X`, `pnpm X` into other scripts; wrappers such as `cross-env`, `nyc`, `c8`
//!   or `node bin/x.js` dropped, environment assignments kept), with the script's
//!   options but not its file globs, watch, coverage or reporter options (the
//!   helper adds the touched files and its own reporter); without such a script, the
//!   runner among the dev dependencies; without one, `node --test`.
//! - **The project's CI** (decision, 2026-12-07; [`crate::ecosystem::ci`]): the Node
//!   majors its test jobs set up narrow the runtime (`.nvmrc` pins before it; within
//!   `engines.node`; [`ci::narrow`]); the `package.json` scripts its test commands run
//!   (`npm run test:unit`, end-to-end and browser scripts last) are tried before
//!   `test`; its test jobs' `NODE_OPTIONS` is set for the runner.

use chrono::{DateTime, TimeZone, Utc};
use serde_json::Value;

use crate::ecosystem::ci::{self, CiEvidence, Language};
use crate::ecosystem::{InferError, RepoFiles};
use crate::model::EnvironmentSpec;

crate::spelled::spelled_enum! {
    /// The test runners this ecosystem knows.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Runner {
        Jest => "jest",
        Mocha => "mocha",
        Vitest => "vitest",
        Ava => "ava",
        Tap => "tap",
        /// Karma: the tests run in a browser (Chromium, from Debian), every file its
        /// config lists narrowed to the touched ones.
        Karma => "karma",
        /// Node's own `node --test`.
        NodeTest => "node-test",
    }
}

impl Runner {
    /// The runner a program word names (`jest`, `./node_modules/.bin/mocha`,
    /// `node_modules/jest/bin/jest.js`).
    fn of_program(word: &str) -> Option<Runner> {
        let base = word.rsplit('/').next().unwrap_or(word);
        let base = base.strip_suffix(".js").or_else(|| base.strip_suffix(".mjs")).unwrap_or(base);
        match base {
            "jest" => Some(Runner::Jest),
            "mocha" | "_mocha" => Some(Runner::Mocha),
            "vitest" => Some(Runner::Vitest),
            "ava" => Some(Runner::Ava),
            "tap" => Some(Runner::Tap),
            "karma" => Some(Runner::Karma),
            _ => None,
        }
    }

    /// The runner of a test command (its first program word that names one;
    /// `node --test` for Node's own).
    pub fn of_command(command: &str) -> Runner {
        let words: Vec<&str> = command.split_whitespace().collect();
        if let Some(runner) = words.iter().find_map(|word| Runner::of_program(word)) {
            return runner;
        }
        Runner::NodeTest
    }

    /// Options of the runner that take a value as the next word (so that the value
    /// is not mistaken for a file glob and dropped).
    fn takes_value(self, option: &str) -> bool {
        let common = ["--config", "-c", "--require", "-r", "--timeout", "-t", "--testTimeout", "--rootDir"];
        let specific: &[&str] = match self {
            Runner::Jest => &[
                "--maxWorkers",
                "-w",
                "--testEnvironment",
                "--env",
                "--roots",
                "--selectProjects",
                "--testNamePattern",
                "--setupFiles",
                "--setupFilesAfterEnv",
                "--testPathIgnorePatterns",
                "--projects",
                "--shard",
            ],
            Runner::Mocha => &[
                "--ui",
                "-u",
                "--file",
                "--extension",
                "--ignore",
                "--exclude",
                "--slow",
                "-s",
                "--retries",
                "--node-option",
                "-n",
                "--loader",
                "--package",
                "--opts",
                "--grep",
                "-g",
                "--fgrep",
                "-f",
            ],
            Runner::Vitest => &["--root", "--dir", "--environment", "--pool", "--project", "--mode", "--segfaultRetry"],
            Runner::Ava | Runner::Tap | Runner::NodeTest => &["--node-arg", "--match", "-m"],
            Runner::Karma => &["--port", "--log-level", "--format-error"],
        };
        common.contains(&option) || specific.contains(&option)
    }

    /// Options the helper replaces or that would spoil a run: watch modes, coverage,
    /// reporters and their outputs, bail-outs, test selection by related files.
    fn drops(self, option: &str) -> bool {
        let name = option.split('=').next().unwrap_or(option);
        let dropped = [
            "--watch",
            "--watchAll",
            "--coverage",
            "--collectCoverage",
            "--reporter",
            "--reporters",
            "--reporter-option",
            "--reporter-options",
            "--outputFile",
            "--json",
            "--bail",
            "--findRelatedTests",
            "--onlyChanged",
            "--changedSince",
            "--parallel",
            "--ui",
            "--tap",
        ];
        let own: &[&str] = match self {
            Runner::Mocha => &["-w", "-R", "-O", "-b", "-p"],
            Runner::Jest => &["-o", "-b"],
            // The helper's config sets the browser and a single run; `--grep` is a
            // file glob in preact's config (the helper lists the touched files).
            Runner::Karma => {
                &["--browsers", "--single-run", "--no-single-run", "--auto-watch", "--no-auto-watch", "--grep"]
            }
            _ => &[],
        };
        // Mocha's `--ui` selects the interface (bdd, tdd): it stays.
        (dropped.contains(&name) && !(self == Runner::Mocha && name == "--ui")) || own.contains(&name)
    }

    /// Whether a dropped option's value is the next word.
    fn dropped_takes_value(self, option: &str) -> bool {
        matches!(option, "--reporter" | "--reporters" | "--reporter-option" | "--reporter-options" | "--outputFile")
            || (self == Runner::Mocha && matches!(option, "-R" | "-O"))
            || (option == "--changedSince")
            || (self == Runner::Karma && matches!(option, "--browsers" | "--grep"))
    }
}

/// The package managers, by lockfile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackageManager {
    Npm { lockfile: bool },
    Yarn { version: String },
    Pnpm { version: String },
}

/// `engines.node` and friends -> what the project says about the Node major.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Declared {
    /// `.nvmrc` / `.node-version`: the major the developers ran.
    Exact(u32),
    /// `engines.node`: a range.
    Range(String),
    Nothing,
}

/// The major of a runtime key (`node18` -> 18).
fn runtime_major(runtime: &str) -> Option<u32> {
    runtime.strip_prefix("node")?.parse().ok()
}

/// The leading major of a version word (`v18.12.0`, `16`, `>=14.17`).
fn major_of(text: &str) -> Option<u32> {
    let digits: String =
        text.trim_start_matches(|c: char| !c.is_ascii_digit()).chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Whether a Node major satisfies a semver range at the precision of majors: each
/// `||` alternative is a set of comparators (`>=14`, `^16.13.0`, `~18`, `18.x`,
/// `<21`, `*`); a major satisfies an alternative when some release of that major
/// could satisfy every comparator.
pub fn major_allowed(range: &str, major: u32) -> bool {
    range.split("||").any(|alternative| {
        let alternative = alternative.replace(">= ", ">=").replace("> ", ">").replace("<= ", "<=").replace("< ", "<");
        let words: Vec<&str> = alternative.split_whitespace().collect();
        if words.len() == 3 && words[1] == "-" {
            // A hyphen range `14 - 18`.
            return major_of(words[0]).is_none_or(|low| major >= low)
                && major_of(words[2]).is_none_or(|high| major <= high);
        }
        words.iter().all(|comparator| {
            let Some(bound) = major_of(comparator) else { return true };
            let exact_zero = |text: &str| text.split('.').skip(1).all(|part| part.trim_matches('0').is_empty());
            if let Some(rest) = comparator.strip_prefix(">=") {
                major >= major_of(rest).unwrap_or(bound)
            } else if comparator.starts_with('>') {
                major >= bound
            } else if let Some(rest) = comparator.strip_prefix("<=") {
                major <= major_of(rest).unwrap_or(bound)
            } else if let Some(rest) = comparator.strip_prefix('<') {
                // `<18` and `<18.0.0` exclude 18; `<18.3` allows 18.0.
                if exact_zero(rest) { major < bound } else { major <= bound }
            } else {
                // `^16`, `~16.1`, `16`, `16.x`, `=16`, `v16`.
                major == bound
            }
        })
    })
}

/// The Node LTS lines and when each became LTS: the line current at a date.
const LTS_SINCE: &[(u32, (i32, u32, u32))] = &[
    (12, (2019, 10, 21)),
    (14, (2020, 10, 27)),
    (16, (2021, 10, 26)),
    (18, (2022, 10, 25)),
    (20, (2023, 10, 24)),
    (22, (2024, 10, 29)),
    (24, (2025, 10, 28)),
];

fn lts_at(date: DateTime<Utc>) -> u32 {
    LTS_SINCE
        .iter()
        .rev()
        .find(|(_, (year, month, day))| Utc.with_ymd_and_hms(*year, *month, *day, 0, 0, 0).unwrap() <= date)
        .map_or(10, |(major, _)| *major)
}

/// The runtime among `runtimes` (`nodeN`, others ignored) for what the project
/// declares, at `date`.
fn choose_runtime(declared: &Declared, date: DateTime<Utc>, runtimes: &[String]) -> Option<String> {
    let mut known: Vec<(u32, &String)> =
        runtimes.iter().filter_map(|runtime| runtime_major(runtime).map(|major| (major, runtime))).collect();
    known.sort();
    let at_least = |wanted: u32| known.iter().find(|(major, _)| *major >= wanted).or(known.last());
    let chosen = match declared {
        Declared::Exact(major) => at_least(*major),
        Declared::Range(range) => known.iter().find(|(major, _)| major_allowed(range, *major)).or_else(|| {
            // Nothing fits: the nearest side (a range that asks for a newer Node than
            // any image gets the newest).
            let lowest = range.split("||").filter_map(major_of).min().unwrap_or(0);
            at_least(lowest)
        }),
        Declared::Nothing => at_least(lts_at(date)),
    };
    chosen.map(|(_, runtime)| (*runtime).clone())
}

fn declared_node(package: &Value, files: &RepoFiles) -> Declared {
    for name in [".nvmrc", ".node-version"] {
        if let Some(major) = files.get(name).and_then(|text| text.lines().next()).and_then(|line| {
            let line = line.trim();
            // `lts/*`, `node`, `stable` say nothing about a major.
            if line.starts_with(|c: char| c.is_ascii_digit() || c == 'v') { major_of(line) } else { None }
        }) {
            return Declared::Exact(major);
        }
    }
    match package.pointer("/engines/node").and_then(Value::as_str) {
        Some(range) if !range.trim().is_empty() => Declared::Range(range.trim().to_string()),
        _ => Declared::Nothing,
    }
}

/// The `name@version` of `packageManager` (`yarn@3.6.1+sha512...` -> 3.6.1).
fn package_manager_version(package: &Value, name: &str) -> Option<String> {
    let field = package.get("packageManager")?.as_str()?;
    let (manager, version) = field.split_once('@')?;
    (manager == name).then(|| version.split('+').next().unwrap_or(version).to_string())
}

pub fn package_manager(package: &Value, files: &RepoFiles, paths_lockfiles: &[&str]) -> PackageManager {
    let has = |name: &str| files.contains_key(name) || paths_lockfiles.contains(&name);
    if has("pnpm-lock.yaml") {
        let version = package_manager_version(package, "pnpm").unwrap_or_else(|| {
            // pnpm 7 writes lockfileVersion 5.4, pnpm 8 6.0, pnpm 9 9.0.
            let lockfile = files.get("pnpm-lock.yaml").map(String::as_str).unwrap_or_default();
            let version = lockfile
                .lines()
                .find_map(|line| line.strip_prefix("lockfileVersion:"))
                .map(|v| v.trim().trim_matches(|c| c == '\'' || c == '"').to_string());
            match version.as_deref().and_then(major_of) {
                Some(9) => "9",
                Some(6) => "8",
                _ => "7",
            }
            .to_string()
        });
        return PackageManager::Pnpm { version };
    }
    if has("yarn.lock") && !has("package-lock.json") {
        return PackageManager::Yarn {
            version: package_manager_version(package, "yarn").unwrap_or_else(|| "1".into()),
        };
    }
    PackageManager::Npm { lockfile: has("package-lock.json") || has("npm-shrinkwrap.json") }
}

/// Environment variables of every install: no browser downloads (tests run offline),
/// no git hooks (the image has no `.git`), no prompts.
pub const INSTALL_ENV: &str = "CI=true HUSKY=0 HUSKY_SKIP_INSTALL=1 PUPPETEER_SKIP_DOWNLOAD=1 \
                               PUPPETEER_SKIP_CHROMIUM_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
                               ELECTRON_SKIP_BINARY_DOWNLOAD=1 CYPRESS_INSTALL_BINARY=0";

/// The npm that installs npm projects, from the npm registry into the image's
/// `~/.local` (first on `PATH`), as Yarn and pnpm are. Why not Debian's npm 9
/// (decision, 2026-11-27): through a proxy (every build has one) its agent,
/// `https-proxy-agent` 5, neither pools nor limits connections: `npm ci` of axios's
/// lockfile opened 2,049 tunnels within a second and was killed at the build's 2 GiB.
/// npm 10's agent keeps `maxsockets` (15) per registry and reuses them. 10.9 runs on
/// Node 18.17 and later, which every Node image has.
pub const NPM_VERSION: &str = "10.9.2";

/// npm 7's release (2020-10-13): from it on, npm refuses a tree whose peer dependencies
/// conflict (`ERESOLVE`); npm 6 and older installed it with a warning.
const NPM_7_RELEASED: &str = "2020-10-13T00:00:00Z";

/// npm's flag for installing as npm 6 did, peer conflicts and all.
pub const LEGACY_PEER_DEPS: &str = "--legacy-peer-deps";

/// Yarn 1's install, and that of Yarn 2 and later: the image tells each the registry
/// in its own variable.
pub const YARN_CLASSIC_INSTALL: &str = "yarn install --frozen-lockfile --non-interactive --ignore-engines";
pub const YARN_BERRY_INSTALL: &str = "yarn install --immutable";

/// What follows an npm install without lifecycle scripts: each installed package's
/// own install scripts (npm's hidden lockfile marks them `hasInstallScript`), one
/// package at a time, a package whose scripts fail left without them and named. One
/// failing script otherwise costs every package its scripts (preactjs/preact-3010:
/// `iltorb`, a native addon whose build fetches Node's headers from a host that builds
/// do not reach, left esbuild without its binary, and no test could start).
pub const NPM_INSTALL_SCRIPTS_ONE_BY_ONE: &str = "node -e 'const lock = require(\"./node_modules/.package-lock.json\"); \
     for (const [path, entry] of Object.entries(lock.packages || {})) if (path.includes(\"node_modules/\") && \
     entry.hasInstallScript) console.log(path.slice(path.lastIndexOf(\"node_modules/\") + 13))' 2>/dev/null | sort -u \
     | while IFS= read -r name; do if npm rebuild \"$name\" >/tmp/swe-harvest-rebuild.log 2>&1; \
     then echo \"swe-harvest: ran the install scripts of $name\"; \
     else echo \"swe-harvest: the install scripts of $name failed; it stays without them:\"; \
     tail -n 5 /tmp/swe-harvest-rebuild.log; fi; done; rm -f /tmp/swe-harvest-rebuild.log";

/// An npm install without lifecycle scripts, then each package's install scripts alone.
fn npm_without_scripts(install: &str) -> String {
    format!("{{ {install} --ignore-scripts && {{ {NPM_INSTALL_SCRIPTS_ONE_BY_ONE}; }}; }}")
}

/// The rungs of an npm install, each tried when the one before failed. They end in
/// `|| false`: a last rung without scripts whose install failed (in an `&&` list)
/// does not stop a `set -e` shell, and the step would succeed with nothing installed.
fn npm_rungs(rungs: &[String]) -> String {
    format!("{} || false", rungs.join(" || "))
}

/// The install steps for a package manager, as of `date` where there is no lockfile.
/// A task dated before npm 7 installs with `--legacy-peer-deps`, as its npm did
/// (dayjs of 2019: `rollup-plugin-babel` asks for a newer `rollup` than the project
/// pins).
pub fn install_steps(manager: &PackageManager, date: DateTime<Utc>) -> Vec<String> {
    let before = date.format("%Y-%m-%dT%H:%M:%SZ");
    let npm_7: DateTime<Utc> = NPM_7_RELEASED.parse().expect("a valid date");
    let peers = if date < npm_7 { format!(" {LEGACY_PEER_DEPS}") } else { String::new() };
    let npm_install = format!("npm install --no-audit --no-fund{peers} --before={before}");
    // `hash -r`: the shell found `npm` in /usr/bin for this command and would keep it.
    let npm =
        format!("npm install --global --prefix /home/harvest/.local --no-audit --no-fund npm@{NPM_VERSION} && hash -r");
    match manager {
        PackageManager::Npm { lockfile: true } => {
            let ci = format!("npm ci --no-audit --no-fund{peers}");
            let rungs = [ci.clone(), npm_without_scripts(&ci), npm_install.clone(), npm_without_scripts(&npm_install)];
            vec![npm, npm_rungs(&rungs)]
        }
        PackageManager::Npm { lockfile: false } => {
            vec![npm, npm_rungs(&[npm_install.clone(), npm_without_scripts(&npm_install)])]
        }
        PackageManager::Yarn { version } => {
            let major = major_of(version).unwrap_or(1);
            // Yarn 2 and later have no `--ignore-scripts`; their setting `enableScripts`
            // is read from the environment (babel-15649's retry failed with "Unsupported
            // option name").
            let (tool, install, without_scripts) = if major >= 2 {
                let install = YARN_BERRY_INSTALL;
                (format!("@yarnpkg/cli-dist@{version}"), install, format!("YARN_ENABLE_SCRIPTS=0 {install}"))
            } else {
                let install = YARN_CLASSIC_INSTALL;
                (format!("yarn@{version}"), install, format!("{install} --ignore-scripts"))
            };
            vec![
                format!("npm install --global --prefix /home/harvest/.local --no-audit --no-fund {tool}"),
                format!("{install} || {without_scripts}"),
            ]
        }
        PackageManager::Pnpm { version } => vec![
            format!("npm install --global --prefix /home/harvest/.local --no-audit --no-fund pnpm@{version}"),
            "pnpm install --frozen-lockfile || pnpm install --frozen-lockfile --ignore-scripts".to_string(),
        ],
    }
}

/// Whether a date-bounded install's output says npm found no version before the
/// install's `--before` date: none in the range (`npm ERR! notarget No matching
/// version found for after@0.8.2 with a date before 3/20/2024`), or none at all
/// (`npm ERR! code ENOVERSIONS`, "No versions available for mocha": every version
/// the registry lists is dated later).
pub fn refused_by_date(log: &str) -> bool {
    log.contains("--before=")
        && log.lines().any(|line| {
            (line.contains("No matching version found for") && line.contains("with a date before"))
                || line.contains("No versions available for")
        })
}

/// An install step without its `--before=<date>` bound.
pub fn without_date_bound(step: &str) -> String {
    let pattern = regex::Regex::new(r" --before=\S+").expect("valid regex");
    pattern.replace_all(step, "").into_owned()
}

/// The names of the scripts that other scripts' commands run (`npm run X`,
/// `npm test`, `yarn X`, `yarn run X`, `pnpm X`, `pnpm run X`).
fn script_reference(words: &[&str]) -> Option<String> {
    let (tool, rest) = words.split_first()?;
    let rest: Vec<&str> = rest.iter().copied().filter(|word| !word.starts_with('-')).collect();
    match (*tool, rest.as_slice()) {
        ("npm" | "yarn" | "pnpm", ["run" | "run-script", name, ..]) => Some((*name).to_string()),
        ("npm" | "yarn" | "pnpm", ["test" | "t", ..]) => Some("test".to_string()),
        ("yarn" | "pnpm", [name, ..]) if !matches!(*name, "install" | "add" | "exec" | "dlx") => {
            Some((*name).to_string())
        }
        _ => None,
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.starts_with('-')
    })
}

/// The test command of one shell segment that runs a runner: assignments, the
/// runner (with `node` and its flags when the runner is a script path run by node),
/// its options without file globs and the options the helper replaces.
fn command_of_segment(words: &[&str]) -> Option<String> {
    let position = words.iter().position(|word| Runner::of_program(word).is_some());
    let node_test = words.windows(2).position(|pair| pair[0] == "node" && pair[1] == "--test");
    let (runner, start) = match (position, node_test) {
        (Some(position), _) => (Runner::of_program(words[position])?, position),
        (None, Some(position)) => (Runner::NodeTest, position),
        (None, None) => return None,
    };
    let mut command: Vec<String> =
        words[..start].iter().filter(|word| is_assignment(word)).map(|w| w.to_string()).collect();
    let program = words[start];
    if runner == Runner::NodeTest {
        command.push("node".into());
        command.push("--test".into());
    } else if program.contains('/') && start > 0 && words[..start].contains(&"node") {
        // `node --experimental-vm-modules node_modules/jest/bin/jest.js`: node's flags matter.
        let node_at = words[..start].iter().rposition(|word| *word == "node").unwrap_or(0);
        command.push("node".into());
        command.extend(words[node_at + 1..start].iter().filter(|word| word.starts_with('-')).map(|w| w.to_string()));
        command.push(program.to_string());
    } else {
        command.push(runner.as_str().to_string());
    }
    let args = &words[start + if runner == Runner::NodeTest { 2 } else { 1 }..];
    let mut index = 0;
    while index < args.len() {
        let word = args[index];
        index += 1;
        if runner == Runner::Vitest && matches!(word, "run" | "watch" | "dev" | "related") && command.len() < 3 {
            continue;
        }
        if !word.starts_with('-') {
            // Karma's words are its subcommand and its config file.
            if runner == Runner::Karma {
                command.push(word.to_string());
            }
            continue; // a file, directory or glob: the helper gives the touched files
        }
        if runner.drops(word) {
            if !word.contains('=') && runner.dropped_takes_value(word) {
                index += 1;
            }
            continue;
        }
        command.push(word.to_string());
        if !word.contains('=') && runner.takes_value(word) && index < args.len() {
            command.push(args[index].to_string());
            index += 1;
        }
    }
    Some(command.join(" "))
}

/// The script names that `npm-run-all` / `run-s` runs one after the other
/// (`run-s format lint build unit-test`; `build:*` is every script of that prefix);
/// `None` for any other command. Parallel runs (`run-p`, `--parallel`) are not read.
fn run_all_names(words: &[&str], scripts: &serde_json::Map<String, Value>) -> Option<Vec<String>> {
    let (tool, rest) = words.split_first()?;
    let tool = tool.rsplit('/').next().unwrap_or(tool);
    if !(tool == "run-s" || tool == "npm-run-all" && !rest.iter().any(|w| matches!(*w, "-p" | "--parallel"))) {
        return None;
    }
    let mut names = Vec::new();
    for word in rest.iter().filter(|word| !word.starts_with('-')) {
        match word.strip_suffix('*') {
            Some(prefix) => names.extend(scripts.keys().filter(|name| name.starts_with(prefix)).cloned()),
            None => names.push(word.to_string()),
        }
    }
    Some(names)
}

/// Whether a script the test script runs before its runner builds what the tests
/// import (`build`, `build:dist`), rather than checking (`lint`, `format`).
fn is_build_script(name: &str) -> bool {
    name == "build" || name.starts_with("build:") || name == "pretest"
}

/// A segment that runs a build tool itself (`tsc -p .`, `rollup -c`, `vite build`),
/// as the step the helper runs (`None` for anything else, and for a type check,
/// `tsc --noEmit`, which builds nothing).
fn build_tool_step(words: &[&str]) -> Option<String> {
    const TOOLS: &[&str] = &["tsc", "babel", "rollup", "webpack", "esbuild", "tsup", "microbundle", "swc"];
    let start = words.iter().position(|word| !is_assignment(word) && *word != "cross-env")?;
    let tool = words[start].rsplit('/').next().unwrap_or(words[start]);
    let builds = TOOLS.contains(&tool) || (tool == "vite" && words.get(start + 1) == Some(&"build"));
    (builds && !words.contains(&"--noEmit")).then(|| words[start..].join(" "))
}

/// The test command from the package's scripts: the first of `test`, then the other
/// `test*` scripts, that leads (through other scripts, `npm run X`, `yarn X`,
/// `run-s X Y`) to a runner; preceded by `npm run NAME && ` for each build script
/// that leads there first (immutable-js's `run-s format lint type-check build
/// unit-test`: its tests import `dist/`, which `build` makes from the patched
/// sources), and by a build tool the test script or `pretest` runs itself
/// (`"pretest": "tsc"`), so that each run builds before it tests (decision,
/// 2026-11-28).
pub fn test_command(package: &Value) -> Option<String> {
    test_command_from(package, &[])
}

/// [`test_command`], trying the scripts `first` (those the project's CI runs) before
/// `test`.
pub fn test_command_from(package: &Value, first: &[String]) -> Option<String> {
    let scripts = package.get("scripts")?.as_object()?;
    /// Follows script `name` to a runner; `builds` gathers the steps before it.
    fn follow(
        scripts: &serde_json::Map<String, Value>,
        name: &str,
        depth: u32,
        builds: &mut Vec<String>,
    ) -> Option<String> {
        if depth > 5 {
            return None;
        }
        let text = scripts.get(name)?.as_str()?;
        let text = text.replace("&&", ";").replace("||", ";").replace('|', ";");
        for segment in text.split(';') {
            let words: Vec<&str> = segment
                .split_whitespace()
                .map(|word| word.trim_matches(|c| c == '"' || c == '\''))
                .filter(|word| !word.is_empty())
                .collect();
            if let Some(command) = command_of_segment(&words) {
                return Some(command);
            }
            if let Some(step) = build_tool_step(&words) {
                builds.push(step);
                continue;
            }
            let references = match script_reference(&words) {
                Some(reference) => vec![reference],
                None => run_all_names(&words, scripts).unwrap_or_default(),
            };
            for reference in references {
                let before = builds.len();
                if let Some(command) = follow(scripts, &reference, depth + 1, builds) {
                    return Some(command);
                }
                // A build script runs whole: not the builds inside it too (nor those
                // of a check).
                builds.truncate(before);
                if is_build_script(&reference) && scripts.contains_key(&reference) {
                    builds.push(format!("npm run {reference}"));
                }
            }
        }
        None
    }
    let mut names: Vec<&String> = scripts.keys().filter(|name| name.starts_with("test") && *name != "test").collect();
    names.sort();
    let first = first.iter().map(String::as_str).filter(|name| scripts.contains_key(*name));
    first.chain(std::iter::once("test")).chain(names.iter().map(|name| name.as_str())).find_map(|name| {
        let mut builds = Vec::new();
        let command = follow(scripts, name, 0, &mut builds)?;
        if name == "test" && scripts.contains_key("pretest") && !builds.iter().any(|build| build == "npm run pretest") {
            // npm runs `pretest` before `test`.
            let mut before = Vec::new();
            if follow(scripts, "pretest", 1, &mut before).is_none() && !before.is_empty() {
                builds.splice(0..0, before);
            }
        }
        builds.dedup();
        Some(builds.iter().map(|build| format!("{build} && ")).chain(std::iter::once(command)).collect())
    })
}

/// The runner among the dependencies, for a project without a test script.
fn runner_of_dependencies(package: &Value) -> Option<Runner> {
    let has = |name: &str| {
        ["devDependencies", "dependencies"]
            .iter()
            .any(|key| package.get(*key).and_then(|deps| deps.get(name)).is_some())
    };
    [
        ("jest", Runner::Jest),
        ("vitest", Runner::Vitest),
        ("mocha", Runner::Mocha),
        ("ava", Runner::Ava),
        ("tap", Runner::Tap),
    ]
    .into_iter()
    .find(|(name, _)| has(name))
    .map(|(_, runner)| runner)
}

/// The files inference reads.
pub fn reads(path: &str) -> bool {
    matches!(
        path,
        "package.json"
            | ".nvmrc"
            | ".node-version"
            | "pnpm-lock.yaml"
            | "package-lock.json"
            | "npm-shrinkwrap.json"
            | "yarn.lock"
    )
}

/// The Node majors the CI's test jobs set up (all jobs' when no test job names one),
/// with where.
fn ci_majors(evidence: &CiEvidence) -> (Vec<u32>, String) {
    let mut versions = evidence.tested_versions(Language::Node);
    versions.retain(|(version, _)| version.starts_with(|c: char| c.is_ascii_digit() || c == 'v'));
    let majors = versions.iter().filter_map(|(version, _)| major_of(version)).collect();
    (majors, ci::versions_said(&versions))
}

/// The scripts of `package.json` that the CI's test commands run (`npm run test:unit`,
/// `yarn test`), in CI's order, those of end-to-end and browser runs last, with where.
fn ci_scripts(evidence: &CiEvidence) -> Vec<(String, String)> {
    let mut scripts: Vec<(String, String)> = Vec::new();
    for (words, step) in evidence.runner_commands(ci::shell::Runner::Node) {
        if let Some(name) =
            ci::shell::node_script(&words).filter(|name| !scripts.iter().any(|(known, _)| known == name))
        {
            scripts.push((name, step.origin.to_string()));
        }
    }
    let later = |name: &str| {
        ["e2e", "browser", "integration", "cypress", "playwright", "sauce"].iter().any(|word| name.contains(word))
    };
    scripts.sort_by_key(|(name, _)| later(name));
    scripts
}

/// `NODE_OPTIONS` of the CI's test jobs, as an assignment before the runner of
/// `test_command` (after its build steps), with where.
fn with_ci_node_options(test_command: &str, evidence: &CiEvidence) -> Option<(String, String)> {
    let options = evidence.env_var("NODE_OPTIONS").filter(|var| !var.value.trim().is_empty())?;
    let assignment = crate::sandbox::script::shell_quote(&format!("NODE_OPTIONS={}", options.value.trim()));
    let command = match test_command.rsplit_once(" && ") {
        Some((builds, runner)) => format!("{builds} && {assignment} {runner}"),
        None => format!("{assignment} {test_command}"),
    };
    Some((command, format!("NODE_OPTIONS `{}` from CI's test job ({})", options.value.trim(), options.origin)))
}

pub fn infer(files: &RepoFiles, date: DateTime<Utc>, runtimes: &[String]) -> Result<EnvironmentSpec, InferError> {
    let not_recognised = InferError::NotRecognised { language: "JavaScript", expected: "package.json" };
    let text = files.get("package.json").ok_or(not_recognised.clone())?;
    let package: Value = serde_json::from_str(text).map_err(|_| not_recognised)?;
    let declared = declared_node(&package, files);
    let evidence = CiEvidence::read(files);
    let mut decisions = Vec::new();
    let runtime = choose_runtime(&declared, date, runtimes).map(|usual| {
        // CI's tested majors narrow any choice but `.nvmrc`'s, within `engines.node`.
        let (majors, said) = ci_majors(&evidence);
        let Some(usual_major) = runtime_major(&usual).filter(|_| !matches!(declared, Declared::Exact(_))) else {
            return usual;
        };
        let allowed: Vec<u32> = runtimes
            .iter()
            .filter_map(|runtime| runtime_major(runtime))
            .filter(|major| match &declared {
                Declared::Range(range) => major_allowed(range, *major),
                _ => true,
            })
            .collect();
        let chosen = ci::narrow(usual_major, &majors, &allowed, |a, b| u64::from(a.abs_diff(b)));
        if chosen == usual_major {
            return usual;
        }
        decisions.push(format!("runtime node{chosen}, not {usual}: CI tests Node {said}"));
        format!("node{chosen}")
    });
    let runtime = runtime.ok_or_else(|| {
        let requires = match &declared {
            Declared::Exact(major) => format!("node {major} (.nvmrc)"),
            Declared::Range(range) => format!("node {range}"),
            Declared::Nothing => "any".into(),
        };
        InferError::no_runtime("Node", requires, runtimes)
    })?;
    let manager = package_manager(&package, files, &[]);
    let scripts = ci_scripts(&evidence);
    let names: Vec<String> = scripts.iter().map(|(name, _)| name.clone()).collect();
    let usual = test_command(&package);
    let from_ci = test_command_from(&package, &names);
    if from_ci != usual {
        // The script CI runs, when it leads to another command than `test` does.
        let chosen =
            scripts.iter().find(|(name, _)| test_command_from(&package, std::slice::from_ref(name)) == from_ci);
        if let Some((name, origin)) = chosen {
            decisions.push(format!("the script `{name}` that CI's test command runs ({origin}), before `test`"));
        }
    }
    let mut test_command = from_ci
        .or_else(|| runner_of_dependencies(&package).map(|runner| runner.as_str().to_string()))
        .unwrap_or_else(|| "node --test".to_string());
    if let Some((command, said)) = with_ci_node_options(&test_command, &evidence) {
        test_command = command;
        decisions.push(said);
    }
    let mut spec = EnvironmentSpec::inferred(super::NAME, runtime, install_steps(&manager, date), test_command);
    if Runner::of_command(&spec.test_command) == Runner::Karma {
        // Karma launches a browser: Debian's Chromium, run headless by the helper.
        spec.system_packages.push(CHROMIUM_PACKAGE.to_string());
    }
    evidence.record(&mut spec, decisions);
    Ok(spec)
}

/// The Debian package of the browser Karma's tests run in.
pub const CHROMIUM_PACKAGE: &str = "chromium";

#[cfg(test)]
mod tests {
    use super::*;

    fn runtimes() -> Vec<String> {
        vec!["node20".into(), "node18".into(), "3.11".into(), "go1.24".into()]
    }

    fn date(year: i32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(year, 6, 1, 0, 0, 0).unwrap()
    }

    fn package(json: &str) -> Value {
        serde_json::from_str(json).unwrap()
    }

    /// CI evidence in Node: the majors CI's test job sets up narrow the runtime (2023's
    /// LTS is 18, CI tests 20 and 22: 20), the script its test command runs comes
    /// before `test` (Karma in a browser, where CI runs Mocha), and its NODE_OPTIONS is
    /// set for the runner after the build; the spec says so.
    #[test]
    fn ci_evidence_chooses_the_runtime_the_script_and_node_options() {
        let package =
            r#"{"scripts": {"build": "tsc", "test": "karma start", "test:node": "npm run build && mocha test/node"}}"#;
        let workflow = "jobs:\n  node:\n    strategy:\n      matrix:\n        node: [20, 22]\n    env:\n      \
                        NODE_OPTIONS: --max-old-space-size=4096 --experimental-vm-modules\n    steps:\n      \
                        - uses: actions/setup-node@v4\n        with:\n          node-version: ${{ matrix.node }}\n      \
                        - run: npm ci\n      - run: npm run test:node -- --forbid-only\n";
        let plain: RepoFiles = [("package.json".to_string(), package.to_string())].into();
        let mut with_ci = plain.clone();
        with_ci.insert(".github/workflows/ci.yml".into(), workflow.into());
        let without = infer(&plain, date(2023), &runtimes()).unwrap();
        let spec = infer(&with_ci, date(2023), &runtimes()).unwrap();
        assert_eq!((without.runtime.as_str(), without.test_command.as_str()), ("node18", "karma start"));
        assert_eq!(spec.runtime, "node20");
        assert_eq!(
            spec.test_command,
            "npm run build && 'NODE_OPTIONS=--max-old-space-size=4096 --experimental-vm-modules' mocha"
        );
        assert_eq!(Runner::of_command(&spec.test_command), Runner::Mocha);
        assert!(spec.system_packages.is_empty(), "no browser for Mocha");
        assert_eq!(spec.ci.len(), 3, "{:?}", spec.ci);
        assert!(spec.ci[0].starts_with("runtime node20, not node18: CI tests Node 20, 22"), "{:?}", spec.ci);
        assert!(spec.ci[1].contains("the script `test:node`"), "{:?}", spec.ci);
        // `.nvmrc` pins before CI.
        let mut pinned = with_ci.clone();
        pinned.insert(".nvmrc".into(), "18\n".into());
        assert_eq!(infer(&pinned, date(2023), &runtimes()).unwrap().runtime, "node18");
    }

    #[test]
    fn ranges_allow_majors_as_semver_would() {
        assert!(major_allowed(">=14.17.0", 18));
        assert!(!major_allowed("^16.13.0", 18));
        assert!(major_allowed("^16.13.0 || >=18", 18));
        assert!(major_allowed("18.x", 18) && !major_allowed("18.x", 20));
        assert!(major_allowed(">= 12 <21", 20) && !major_allowed(">=12 <20", 20));
        assert!(major_allowed("<20.3", 20));
        assert!(major_allowed("14 - 18", 18) && !major_allowed("14 - 18", 20));
        assert!(major_allowed("*", 20));
    }

    #[test]
    fn the_runtime_follows_nvmrc_then_engines_then_the_date() {
        let with = |pairs: &[(&str, &str)]| -> RepoFiles {
            pairs.iter().map(|(path, text)| (path.to_string(), text.to_string())).collect()
        };
        let infer_runtime = |files: RepoFiles, year| infer(&files, date(year), &runtimes()).unwrap().runtime;
        let plain = r#"{"scripts": {"test": "jest"}}"#;
        assert_eq!(infer_runtime(with(&[("package.json", plain), (".nvmrc", "v20.1.0\n")]), 2021), "node20");
        assert_eq!(infer_runtime(with(&[("package.json", plain), (".nvmrc", "16\n")]), 2025), "node18");
        assert_eq!(infer_runtime(with(&[("package.json", plain), (".nvmrc", "lts/*\n")]), 2025), "node20");
        let engines = r#"{"engines": {"node": "^16 || ^20"}}"#;
        assert_eq!(infer_runtime(with(&[("package.json", engines)]), 2021), "node20");
        let newer = r#"{"engines": {"node": ">=22"}}"#;
        assert_eq!(infer_runtime(with(&[("package.json", newer)]), 2021), "node20");
        assert_eq!(infer_runtime(with(&[("package.json", plain)]), 2021), "node18", "LTS 14 then: the oldest image");
        assert_eq!(infer_runtime(with(&[("package.json", plain)]), 2024), "node20", "LTS 20 by mid-2024");
        let Err(error) = infer(&with(&[("package.json", plain)]), date(2024), &["3.11".into()]) else {
            panic!("no Node image")
        };
        assert!(error.to_string().contains("Node"), "{error}");
        assert!(matches!(infer(&RepoFiles::new(), date(2024), &runtimes()), Err(InferError::NotRecognised { .. })));
    }

    #[test]
    fn the_test_command_is_the_runner_the_scripts_lead_to_without_globs_watch_or_reporters() {
        // axios: `test` runs eslint first, then `test:mocha` through a wrapper script.
        let axios = package(
            r#"{"scripts": {"test": "npm run test:eslint && npm run test:mocha && npm run test:karma",
                "test:eslint": "node bin/ssl_hotfix.js eslint lib/**/*.js",
                "test:mocha": "node bin/ssl_hotfix.js mocha test/unit/**/*.js --timeout 30000 --exit"}}"#,
        );
        assert_eq!(test_command(&axios).as_deref(), Some("mocha --timeout 30000 --exit"));
        let darkreader = package(r#"{"scripts": {"test": "jest --config=tests/jest.config.js --coverage"}}"#);
        assert_eq!(test_command(&darkreader).as_deref(), Some("jest --config=tests/jest.config.js"));
        let env = package(
            r#"{"scripts": {"test": "cross-env NODE_ENV=test nyc mocha -r ts-node/register 'test/**/*.ts' -R spec -w"}}"#,
        );
        assert_eq!(test_command(&env).as_deref(), Some("NODE_ENV=test mocha -r ts-node/register"));
        let vitest = package(r#"{"scripts": {"test": "vitest run --reporter verbose src"}}"#);
        assert_eq!(test_command(&vitest).as_deref(), Some("vitest"));
        let esm = package(
            r#"{"scripts": {"test": "node --experimental-vm-modules node_modules/jest/bin/jest.js -c jest.config.mjs"}}"#,
        );
        assert_eq!(
            test_command(&esm).as_deref(),
            Some("node --experimental-vm-modules node_modules/jest/bin/jest.js -c jest.config.mjs")
        );
        let yarn =
            package(r#"{"scripts": {"test": "yarn lint && yarn unit", "lint": "eslint .", "unit": "ava --verbose"}}"#);
        assert_eq!(test_command(&yarn).as_deref(), Some("ava --verbose"));
        let node = package(r#"{"scripts": {"test": "node --test test/"}}"#);
        assert_eq!(test_command(&node).as_deref(), Some("node --test"));
        assert_eq!(test_command(&package(r#"{"scripts": {"test": "echo no tests"}}"#)), None);
        // immutable-js: the tests import `dist/`, which `build` makes; checks are left out.
        let immutable = package(
            r#"{"scripts": {"test": "run-s format lint type-check build unit-test", "format": "prettier --write .",
                "lint": "run-s lint:*", "lint:js": "eslint src", "type-check": "tsc", "build": "run-s build:*",
                "build:dist": "rollup -c", "build:copy": "cpy a dist", "unit-test": "jest"}}"#,
        );
        assert_eq!(test_command(&immutable).as_deref(), Some("npm run build && jest"));
        let pretest = package(
            r#"{"scripts": {"pretest": "npm run build:lib", "build:lib": "tsc -p .", "test": "npm run lint && mocha"}}"#,
        );
        assert_eq!(test_command(&pretest).as_deref(), Some("npm run build:lib && mocha"));
        // A build tool the test script or `pretest` runs itself is a step too; a type
        // check and a check script's tools are not.
        let direct = package(r#"{"scripts": {"pretest": "eslint . && tsc -p .", "test": "tsc --noEmit && mocha"}}"#);
        assert_eq!(test_command(&direct).as_deref(), Some("tsc -p . && mocha"));
        let checked = package(r#"{"scripts": {"test": "npm run lint && jest", "lint": "tsc && eslint ."}}"#);
        assert_eq!(test_command(&checked).as_deref(), Some("jest"));
        let parallel = package(r#"{"scripts": {"test": "run-p build unit", "build": "tsc", "unit": "ava"}}"#);
        assert_eq!(test_command(&parallel), None, "run-p is not followed");
        assert_eq!(Runner::of_command("NODE_ENV=test mocha --exit"), Runner::Mocha);
        assert_eq!(Runner::of_command("node --test"), Runner::NodeTest);
        // preact: `test` runs its runners in parallel (not followed); the first other
        // test script leads to Karma, whose subcommand and config stay.
        let karma = package(
            r#"{"scripts": {"test": "npm-run-all build test:unit", "test:unit": "run-p test:mocha test:karma",
                "test:karma": "cross-env COVERAGE=true karma start karma.conf.js --single-run --browsers Firefox",
                "test:karma:hooks": "karma start karma.conf.js --grep=hooks/test/**.js --no-single-run",
                "test:mocha": "mocha test/node"}}"#,
        );
        assert_eq!(test_command(&karma).as_deref(), Some("COVERAGE=true karma start karma.conf.js"));
        assert_eq!(Runner::of_command("karma start"), Runner::Karma);
    }

    #[test]
    fn a_karma_project_gets_debians_chromium_and_others_no_browser() {
        let project = |scripts: &str| {
            let files: RepoFiles = [("package.json".to_string(), format!(r#"{{"scripts": {scripts}}}"#))].into();
            infer(&files, Utc.with_ymd_and_hms(2024, 1, 1, 0, 0, 0).unwrap(), &runtimes()).unwrap()
        };
        let karma = project(r#"{"test": "karma start --single-run"}"#);
        assert_eq!(karma.system_packages, vec![CHROMIUM_PACKAGE.to_string()]);
        assert_eq!(karma.test_command, "karma start");
        assert!(project(r#"{"test": "jest"}"#).system_packages.is_empty());
    }

    /// The npm rungs run by `sh` with `set -e`, as the image's step runs them, with a
    /// fake `npm` (and `node` listing the packages with install scripts): the output,
    /// and whether the step went on after them.
    fn npm_rungs_with(fake_npm: &str, lockfile: bool) -> (String, bool) {
        let steps = install_steps(&PackageManager::Npm { lockfile }, date(2022));
        let script = format!(
            "set -e; npm() {{ {fake_npm}; }}; node() {{ printf 'bad-addon\\nneeds-setup\\n'; }}; {}; echo went on",
            steps[1]
        );
        let output = std::process::Command::new("sh").arg("-c").arg(script).output().unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        (text.clone(), output.status.success() && text.contains("went on"))
    }

    #[test]
    fn a_failing_install_script_costs_only_its_package_and_a_failed_install_fails_the_step() {
        // Every install with scripts fails (one package's script does), without them it
        // works; then each package's scripts run alone, and only the failing one fails.
        let fake = "case \"$*\" in *--ignore-scripts*) return 0 ;; 'rebuild bad-addon') return 1 ;; \
                    rebuild*) return 0 ;; *) return 1 ;; esac";
        for lockfile in [true, false] {
            let (text, went_on) = npm_rungs_with(fake, lockfile);
            assert!(went_on, "{text}");
            assert!(text.contains("swe-harvest: the install scripts of bad-addon failed"), "{text}");
            assert!(text.contains("swe-harvest: ran the install scripts of needs-setup"), "{text}");
        }
        // An install that fails on every rung fails the step, with or without a lockfile.
        for lockfile in [true, false] {
            let (text, went_on) = npm_rungs_with("return 1", lockfile);
            assert!(!went_on, "the step went on with nothing installed: {text}");
        }
    }

    #[test]
    fn lockfiles_choose_the_install_and_no_lockfile_travels_to_the_date() {
        let plain = package("{}");
        let files =
            |names: &[&str]| -> RepoFiles { names.iter().map(|name| (name.to_string(), String::new())).collect() };
        let install = |manager| install_steps(&manager, date(2022)).join("\n");
        let npm_itself = format!(
            "npm install --global --prefix /home/harvest/.local --no-audit --no-fund npm@{NPM_VERSION} && hash -r\n"
        );
        let npm = install(package_manager(&plain, &files(&["package-lock.json"]), &[]));
        assert!(npm.starts_with(&format!("{npm_itself}npm ci --no-audit --no-fund ||")), "{npm}");
        let bare = install(package_manager(&plain, &files(&[]), &[]));
        let bare = bare.strip_prefix(&npm_itself).unwrap_or_else(|| panic!("npm itself first: {bare}"));
        assert!(bare.starts_with("npm install --no-audit --no-fund --before=2022-06-01T00:00:00Z"), "{bare}");
        let unbounded = without_date_bound(bare);
        assert_eq!(
            unbounded,
            format!(
                "npm install --no-audit --no-fund || {{ npm install --no-audit --no-fund --ignore-scripts && \
                 {{ {NPM_INSTALL_SCRIPTS_ONE_BY_ONE}; }}; }} || false"
            )
        );
        // Before npm 7, conflicting peer dependencies installed: so they do for a task of then.
        let old = install_steps(&package_manager(&plain, &files(&["package-lock.json"]), &[]), date(2019)).join("\n");
        assert!(old.contains("\nnpm ci --no-audit --no-fund --legacy-peer-deps ||"), "{old}");
        let old = install_steps(&package_manager(&plain, &files(&[]), &[]), date(2019)).join("\n");
        assert!(old.contains("npm install --no-audit --no-fund --legacy-peer-deps --before=2019-"), "{old}");
        assert!(!npm.contains("legacy-peer-deps") && !bare.contains("legacy-peer-deps"), "{npm}\n{bare}");
        let step = "RUN npm install --no-audit --no-fund --before=2024-03-20T00:00:00Z\n";
        assert!(refused_by_date(&format!(
            "{step}npm ERR! code ETARGET\nnpm ERR! notarget No matching version found for after@0.8.2 with a date before 3/20/2024.\n"
        )));
        assert!(refused_by_date(&format!(
            "{step}npm ERR! code ENOVERSIONS\nnpm ERR! No versions available for mocha\n"
        )));
        assert!(!refused_by_date(&format!("{step}npm ERR! notarget No matching version found for after@9.9.9.\n")));
        assert!(!refused_by_date("npm ERR! No versions available for mocha\n"), "no date bound, no date refusal");
        let berry = package(r#"{"packageManager": "yarn@3.6.1+sha224.abc"}"#);
        let yarn = install(package_manager(&berry, &files(&["yarn.lock"]), &[]));
        assert!(yarn.contains("@yarnpkg/cli-dist@3.6.1") && yarn.contains("yarn install --immutable"), "{yarn}");
        // Yarn 2 and later refuse `--ignore-scripts`: their retry turns scripts off by setting.
        assert!(yarn.ends_with("|| YARN_ENABLE_SCRIPTS=0 yarn install --immutable"), "{yarn}");
        assert!(!yarn.contains("--ignore-scripts"), "{yarn}");
        let classic = install(package_manager(&plain, &files(&["yarn.lock"]), &[]));
        assert!(classic.contains("--no-fund yarn@1\n") && classic.contains("--frozen-lockfile"), "{classic}");
        let mut pnpm_files = files(&["pnpm-lock.yaml"]);
        pnpm_files.insert("pnpm-lock.yaml".into(), "lockfileVersion: '6.0'\n".into());
        let pnpm = install(package_manager(&plain, &pnpm_files, &[]));
        assert!(pnpm.contains("pnpm@8") && pnpm.contains("pnpm install --frozen-lockfile"), "{pnpm}");
    }
}
