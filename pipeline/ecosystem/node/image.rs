//! Node's environment images and the setup of every container script.
//!
//! The environment: the repository at the environment commit, its dependencies
//! installed by the spec's steps (npm, Yarn or pnpm, through the npm registry of
//! `validate.registries.npm_registry`, with
//! the extra CA bundle as `NODE_EXTRA_CA_CERTS` and npm's `cafile` in that step
//! only), then every file of `/testbed` removed except the `node_modules` folders
//! (the root's and a workspace package's), all owned by the unprivileged user. A
//! job's repository is copied over that `/testbed`, so the installed dependencies
//! are where Node looks for them, at no cost per run. Nothing is fetched while
//! tests run: no network, npm set offline.
//!
//! The runs go through one helper script (written to `/tmp` by every container
//! script, run by `bash`: `/tmp` is not executable there) that runs the touched
//! test files that exist with the runner and its structured reporter: Jest's
//! `--json --outputFile`, Vitest's `json` reporter, and for Mocha a reporter of ours
//! (JSON lines, one per test, with its file and titles; Mocha's own `json` reporter
//! writes to stdout among the tests' output before 9.2). Mocha, AVA, tap and
//! `node --test` run one file at a time, so that a file that fails to load costs
//! only its own tests (Mocha aborts the whole run on one); AVA, tap and
//! `node --test` print TAP, which [`super::results`] reads from the log after the
//! helper's `# swe-harvest file: PATH` line.

use crate::ecosystem::dockerfile::Dockerfile;
use crate::model::EnvironmentSpec;
use crate::sandbox::images::{CA_PATH, EnvironmentRequest, ImageSettings};
use crate::sandbox::script::shell_quote;

use super::infer::{INSTALL_ENV, YARN_BERRY_INSTALL};

/// Where every container script writes the helper, the Mocha reporter and the
/// harness's printer.
pub const NODE_TEST_HELPER: &str = "/tmp/swe-harvest-node-test";
pub const MOCHA_REPORTER: &str = "/tmp/swe-harvest-mocha-reporter.cjs";
pub const PRINTER: &str = "/tmp/swe-harvest-node-print.cjs";
pub const KARMA_CONFIG: &str = "/tmp/swe-harvest-karma.conf.cjs";
/// Where the harness's eval script has the runner write its report.
pub const HARNESS_REPORT: &str = "/tmp/swe-harvest-node-report.json";

/// The environment of every step, build and run: the user's home, the tools a
/// Yarn or pnpm install put under it, the project's own binaries, no prompts.
const NODE_ENV: &str = "HOME=/home/harvest CI=true npm_config_update_notifier=false npm_config_fund=false \
                        npm_config_audit=false";
const PATH_ENV: &str = "PATH=/home/harvest/.local/bin:/testbed/node_modules/.bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/// The variables of run time: npm never asks the registry.
const OFFLINE_ENV: &str = "npm_config_offline=true";

/// Removes every file of `/testbed` but the `node_modules` folders, then the folders
/// left empty.
const KEEP_ONLY_NODE_MODULES: &str = "find /testbed -mindepth 1 -name node_modules -prune -o ! -type d -print0 \
                                      | xargs -0 -r rm -f && find /testbed -mindepth 1 -depth -type d -empty \
                                      -not -path '*/node_modules/*' -delete";

/// The Dockerfile of an environment image on `base`.
pub fn environment_dockerfile(request: &EnvironmentRequest, base: &str, settings: &ImageSettings) -> String {
    let spec = &request.spec;
    let mut network_env = vec![INSTALL_ENV.to_string()];
    if settings.extra_ca.is_some() {
        network_env.push(format!("NODE_EXTRA_CA_CERTS={CA_PATH}"));
        network_env.push(format!("npm_config_cafile={CA_PATH}"));
        network_env.push(format!("GIT_SSL_CAINFO={CA_PATH}"));
    }
    // npm and pnpm are told another registry than npm's. Yarn is always told
    // (decision, 2026-11-28): its default is a host of its own, which builds do not
    // reach (babel-15649's Yarn 3 install was refused there); each Yarn in its own
    // variable, as Yarn 2+ refuses Yarn 1's `YARN_REGISTRY` as a legacy setting.
    let registry = &settings.registries.npm_registry;
    let installs = |command: &str| spec.install.iter().any(|step| step.contains(command));
    let berry = installs(YARN_BERRY_INSTALL);
    let names = [
        ("npm_config_registry", registry != crate::sandbox::Registries::NPM),
        ("YARN_REGISTRY", installs("yarn install") && !berry),
        ("YARN_NPM_REGISTRY_SERVER", berry),
    ];
    for (name, _) in names.iter().filter(|(_, told)| *told) {
        network_env.push(format!("{name}={}", shell_quote(registry)));
    }
    // The build proxy (set only in builds, see `sandbox::egress`): npm and pnpm read
    // `HTTPS_PROXY`; Yarn 1 reads npm's settings from the environment, Yarn 2 its own.
    let proxy_env = "if [ -n \"${HTTPS_PROXY:-}\" ]; then export npm_config_proxy=\"$HTTP_PROXY\" \
                     npm_config_https_proxy=\"$HTTPS_PROXY\" YARN_HTTP_PROXY=\"$HTTP_PROXY\" YARN_HTTPS_PROXY=\"$HTTPS_PROXY\"; fi; ";
    let network_env = format!("export {}; {proxy_env}", network_env.join(" "));
    let mut dockerfile = Dockerfile::new("a Node environment image (see pipeline/ecosystem/node/image.rs)", base);
    dockerfile.system_packages(spec, "");
    dockerfile.unprivileged_user("/home/harvest/.local /testbed /swe-harvest/out", "");
    dockerfile.extra_ca(settings);
    dockerfile.enter_testbed(&format!("{NODE_ENV} {PATH_ENV}"));
    dockerfile.install(
        spec,
        add_packages_step(spec).into_iter().collect(),
        &network_env,
        "; rm -rf /home/harvest/.npm/_cacache",
    );
    // The installed dependencies stay where Node looks for them.
    dockerfile.push(format!("RUN {KEEP_ONLY_NODE_MODULES}"));
    dockerfile.finish(request, "")
}

/// The step that installs the packages the task's patches add (`extra_packages`,
/// `name@range`) after the project's own install, with its package manager, so the
/// lockfile's other versions stay: npm without saving (within the install's
/// `--before` date when it has one), Yarn and pnpm by `add` (the manifest and lockfile
/// they change are thrown away with `/testbed`; `node_modules` stays). Again without
/// install scripts when that fails.
pub fn add_packages_step(spec: &EnvironmentSpec) -> Option<String> {
    if spec.extra_packages.is_empty() {
        return None;
    }
    let packages: Vec<String> = spec.extra_packages.iter().map(|package| shell_quote(package)).collect();
    let packages = packages.join(" ");
    let installs = |command: &str| spec.install.iter().any(|step| step.contains(command));
    let (command, without_scripts) = if installs(YARN_BERRY_INSTALL) {
        let add = format!("YARN_ENABLE_IMMUTABLE_INSTALLS=false yarn add --dev {packages}");
        (add.clone(), format!("YARN_ENABLE_SCRIPTS=0 {add}"))
    } else if installs("yarn install") {
        // `--ignore-workspace-root-check`: a workspace's root takes the package too.
        let add = format!("yarn add --dev --non-interactive --ignore-engines --ignore-workspace-root-check {packages}");
        (add.clone(), format!("{add} --ignore-scripts"))
    } else if installs("pnpm install") {
        let add = format!("pnpm add --save-dev {packages}");
        // A workspace's root takes it only with `--workspace-root`, which outside one fails.
        (format!("{add} || {add} --workspace-root"), format!("{add} --workspace-root --ignore-scripts"))
    } else {
        let before = spec
            .install
            .iter()
            .find_map(|step| step.split_whitespace().find(|word| word.starts_with("--before=")))
            .map_or(String::new(), |word| format!(" {word}"));
        let add = format!("npm install --no-save --no-audit --no-fund{before} {packages}");
        (add.clone(), format!("{add} --ignore-scripts"))
    };
    Some(format!("{command} || {without_scripts}"))
}

/// Mocha's reporter of ours: one JSON line per test (file, titles from the outer
/// `describe` in, state, duration, error) appended to `$SWE_HARVEST_REPORT`, and the
/// spec reporter's `✔ title` / `N) title` lines on stdout.
pub const MOCHA_REPORTER_SCRIPT: &str = r#"'use strict';
// Generated by swe-harvest (pipeline/ecosystem/node/image.rs): Mocha results as JSON lines.
const fs = require('fs');
function titles(runnable) {
  const out = [];
  for (let node = runnable; node; node = node.parent) {
    if (node.title) out.unshift(node.title);
  }
  return out;
}
function SweHarvestReporter(runner) {
  const report = process.env.SWE_HARVEST_REPORT;
  const file = process.env.SWE_HARVEST_TEST_FILE;
  let passes = 0, failures = 0;
  const write = (test, state, error) => {
    const record = { file, titles: titles(test), state, duration: test.duration || 0 };
    if (error) record.error = String((error && error.stack) || error).slice(0, 4000);
    if (report) fs.appendFileSync(report, JSON.stringify(record) + '\n');
  };
  runner.on('pass', (test) => { passes++; console.log('  ✔ ' + test.title); write(test, 'passed'); });
  runner.on('fail', (test, error) => {
    failures++;
    console.log('  ' + failures + ') ' + test.title);
    console.log(String((error && error.stack) || error).split('\n').map((line) => '      ' + line).join('\n'));
    write(test, 'failed', error);
  });
  runner.on('pending', (test) => { console.log('  - ' + test.title); write(test, 'pending'); });
  runner.on('end', () => { console.log('  ' + passes + ' passing, ' + failures + ' failing'); });
}
module.exports = SweHarvestReporter;
"#;

/// Karma's config of ours, which the helper gives Karma in place of the project's
/// (`SWE_HARVEST_KARMA_CONFIG`): the project's config applied, then its files
/// narrowed to the touched test files (`SWE_HARVEST_KARMA_FILES`; a glob that lists
/// one of them gives way to those it lists, a glob of other tests is left out, every
/// other entry stays), one run in Debian's Chromium, headless and without its sandbox
/// (a container has none to give it), when the project has Karma's Chrome launcher,
/// and a reporter of ours that appends one JSON line per test to
/// `$SWE_HARVEST_REPORT` in our Mocha reporter's shape. A browser knows no test's
/// file: the file is left empty and a test is named by its titles.
pub const KARMA_CONFIG_SCRIPT: &str = r#"'use strict';
// Generated by swe-harvest (pipeline/ecosystem/node/image.rs): the project's Karma config, narrowed.
const fs = require('fs');
const path = require('path');
const projectConfig = path.resolve(process.env.SWE_HARVEST_KARMA_CONFIG || 'karma.conf.js');
const touched = (process.env.SWE_HARVEST_KARMA_FILES || '').split('\n').filter(Boolean).map((file) => path.resolve(file));
const report = process.env.SWE_HARVEST_REPORT;
const from = [path.dirname(projectConfig), process.cwd()];
const resolves = (name) => { try { return require.resolve(name, { paths: from }); } catch (error) { return null; } };
function SweHarvestReporter(baseReporterDecorator) {
  baseReporterDecorator(this);
  this.adapters = [];
  this.onSpecComplete = (browser, result) => {
    const state = result.skipped || result.pending ? 'pending' : result.success ? 'passed' : 'failed';
    const record = { file: '', titles: [...(result.suite || []), result.description], state, duration: result.time || 0 };
    if (state === 'failed' && result.log) record.error = result.log.join('\n').slice(0, 4000);
    if (report) fs.appendFileSync(report, JSON.stringify(record) + '\n');
  };
}
SweHarvestReporter.$inject = ['baseReporterDecorator'];
function narrowed(files, basePath) {
  const karma = resolves('karma/package.json');
  const minimatchModule = karma && require(require.resolve('minimatch', { paths: [path.dirname(karma)] }));
  const match = typeof minimatchModule === 'function' ? minimatchModule : minimatchModule && minimatchModule.minimatch;
  if (!match || touched.length === 0) return files;
  let listed = 0;
  const out = [];
  for (const entry of files.map((item) => (typeof item === 'string' ? { pattern: item } : item))) {
    const included = entry.included !== false;
    const pattern = path.resolve(basePath, entry.pattern);
    if (!included || !/[*?{[]/.test(entry.pattern)) { out.push(entry); continue; }
    const hits = touched.filter((file) => match(file, pattern, { dot: true }));
    listed += hits.length;
    if (hits.length) out.push(...hits.map((file) => Object.assign({}, entry, { pattern: file })));
    else if (!/test|spec/i.test(entry.pattern)) out.push(entry);
  }
  if (listed === 0) return files;
  console.log('swe-harvest: Karma narrowed to ' + listed + ' touched test file(s)');
  return out;
}
module.exports = function (config) {
  const loaded = require(projectConfig);
  const project = typeof loaded === 'function' ? loaded : loaded && loaded.default;
  if (typeof project === 'function') project(config); else config.set(loaded || {});
  const basePath = path.resolve(path.dirname(projectConfig), config.basePath || '');
  const plugins = (config.plugins || ['karma-*']).concat([{ 'reporter:swe-harvest': ['type', SweHarvestReporter] }]);
  const settings = {
    basePath,
    files: narrowed(config.files || [], basePath),
    reporters: (config.reporters || ['progress']).filter((name) => !/coverage/.test(name)).concat(['swe-harvest']),
    singleRun: true,
    autoWatch: false,
  };
  const chrome = resolves('karma-chrome-launcher');
  if (chrome) {
    if (!plugins.some((plugin) => plugin === 'karma-*' || plugin === 'karma-chrome-launcher')) plugins.push(require(chrome));
    settings.customLaunchers = Object.assign({}, config.customLaunchers, {
      SweHarvestChromium: { base: 'ChromeHeadless', flags: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] },
    });
    settings.browsers = ['SweHarvestChromium'];
  }
  settings.plugins = plugins;
  config.set(settings);
};
"#;

/// The harness's printer: `[PASSED] id` / `[FAILED] id` per test of a report (the
/// lines SWE-bench's `parse_log_jest_json` reads), ids as [`super::results`] makes
/// them: the file relative to `/testbed`, the `describe` titles (empty ones left
/// out), the test's title, joined by ` > `; and, for a Jest or Vitest report, the
/// file's own id by [`super::results`]' rule (failed when its declaration threw).
pub const PRINTER_SCRIPT: &str = r#"'use strict';
// Generated by swe-harvest (pipeline/ecosystem/node/image.rs): test ids from a report.
const fs = require('fs');
const [runner, report] = process.argv.slice(2);
const relative = (name) => { const at = name.indexOf('/testbed/'); return at >= 0 ? name.slice(at + 9) : name; };
const print = (parts, status) => {
  const id = parts.filter((part) => part !== '').join(' > ');
  if (status === 'passed') console.log('[PASSED] ' + id);
  else if (status === 'failed') console.log('[FAILED] ' + id);
};
let text = '';
try { text = fs.readFileSync(report, 'utf8'); } catch (error) { process.exit(0); }
if (runner === 'mocha' || runner === 'karma') {
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const record = JSON.parse(line);
    print([record.file, ...record.titles], record.state);
  }
} else if (text.trim()) {
  const declarationException = 'encountered a declaration exception';
  for (const file of JSON.parse(text).testResults || []) {
    const tests = file.assertionResults || [];
    const threw = (file.status === 'failed' && tests.length === 0)
      || tests.some((test) => test.title === declarationException && test.status === 'failed');
    if (relative(file.name)) print([relative(file.name)], threw ? 'failed' : 'passed');
    for (const test of tests) {
      if (test.title !== declarationException) print([relative(file.name), ...test.ancestorTitles, test.title], test.status);
    }
  }
}
"#;

/// The helper: `[--print] RUNNER REPORT COMMAND... -- FILES...`. Runs the files that
/// exist (a test patch may delete one) with the runner's structured reporter into
/// REPORT; with `--print`, prints the harness's id lines from it afterwards.
pub const NODE_TEST_HELPER_SCRIPT: &str = r##"#!/bin/bash
print=0
[ "$1" = --print ] && { print=1; shift; }
runner="$1"; report="$2"; shift 2
command=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do command+=("$1"); shift; done
[ "$#" -gt 0 ] && shift
# A fixture (a file under a `fixtures/` or `__fixtures__/` folder, not itself named as a
# test: babel's test/fixtures/parentheses/unary-postfix/input.js) is read by the tests
# beside that folder: it stands for the test files of the nearest folder from there up
# that has any (babel's test/index.js). In a test folder every script is one; elsewhere
# those named `*.test.*` or `*.spec.*`.
tests_reading_fixture() { # file
    local dir here name found=()
    case "/$1" in */fixtures/*|*/__fixtures__/*) ;; *) return 1 ;; esac
    case "${1##*/}" in *.test.*|*.spec.*) return 1 ;; esac
    dir="/$1"; dir="${dir%%/fixtures/*}"; dir="${dir%%/__fixtures__/*}"; dir="${dir#/}"
    while [ -z "${found[*]}" ]; do
        here="${dir:-.}"
        for name in "$here"/*.{js,jsx,mjs,cjs,ts,tsx,mts,cts}; do
            [ -f "$name" ] || continue
            case "$name" in *.d.ts) continue ;; esac
            case "/$dir/" in
                */test/*|*/tests/*|*/__tests__/*|*/spec/*) found+=("${name#./}") ;;
                *) case "${name##*/}" in *.test.*|*.spec.*) found+=("${name#./}") ;; esac ;;
            esac
        done
        [ -n "$dir" ] || break
        case "$dir" in */*) dir="${dir%/*}" ;; *) dir="" ;; esac
    done
    [ -n "${found[*]}" ] || return 1
    printf '%s\n' "${found[@]}"
}
files=()
for file in "$@"; do
    if readers=$(tests_reading_fixture "$file"); then
        echo "swe-harvest: $file is a fixture; run the tests beside its folder:" $readers
        mapfile -t readers <<< "$readers"
    else
        readers=("$file")
    fi
    for reader in "${readers[@]}"; do
        [ -f "$reader" ] || continue
        case " ${files[*]} " in *" $reader "*) ;; *) files+=("$reader") ;; esac
    done
done
: > "$report"
if [ "${#files[@]}" -eq 0 ]; then
    echo "swe-harvest: none of the touched test files exists"
    exit 0
fi
# Steps before the runner (`npm run build && jest`: the test script builds what the
# tests import, from the patched sources), run in order; one that fails is said.
last=-1
for index in "${!command[@]}"; do [ "${command[$index]}" = "&&" ] && last=$index; done
if [ "$last" -ge 0 ]; then
    step=()
    for word in "${command[@]:0:last}" "&&"; do
        if [ "$word" != "&&" ]; then step+=("$word"); continue; fi
        [ "${#step[@]}" -eq 0 ] && continue
        echo "swe-harvest: before the tests: ${step[*]}"
        "${step[@]}" || echo "swe-harvest: ${step[*]} failed (exit $?)"
        step=()
    done
    command=("${command[@]:last+1}")
fi
echo "swe-harvest: $runner of ${files[*]}"
case "$report" in /*) ;; *) report="$PWD/$report" ;; esac
# The folder whose config of the runner serves FILE: the nearest one from the file's
# folder up that has one (a workspace package's jest.config.js), else the root's.
config_dir() {
    local dir
    dir=$(dirname "$1")
    while [ "$dir" != . ] && [ "$dir" != / ]; do
        case "$runner" in
            jest)
                if compgen -G "$dir/jest.config.*" > /dev/null || { [ -f "$dir/package.json" ] \
                    && node -e 'process.exit(require(require("path").resolve(process.argv[1])).jest ? 0 : 1)' \
                        "$dir/package.json" 2> /dev/null; }; then
                    echo "$dir"
                    return
                fi
                ;;
            vitest)
                if compgen -G "$dir/vitest.config.*" > /dev/null; then echo "$dir"; return; fi
                ;;
        esac
        dir=$(dirname "$dir")
    done
    echo .
}
# DIR OUT FILES...: the runner from DIR (its own binaries first) on FILES, which are
# relative to the root, its report into OUT.
run_from() {
    local dir="$1" out="$2" file
    shift 2
    local relative=()
    for file in "$@"; do relative+=("${file#"$dir"/}"); done
    (
        if [ "$dir" != . ]; then cd "$dir" || exit 1; PATH="$PWD/node_modules/.bin:$PATH"; fi
        if [ "$runner" = jest ]; then
            env "${command[@]}" --ci --verbose --watchAll=false --passWithNoTests --json --outputFile="$out" \
                --runTestsByPath "${relative[@]}"
        else
            env "${command[@]}" run --passWithNoTests --reporter=verbose --reporter=json --outputFile.json="$out" \
                "${relative[@]}"
        fi
    )
}
code=0
case "$runner" in
    jest|vitest)
        dirs=()
        declare -A members=()
        for file in "${files[@]}"; do
            dir=$(config_dir "$file")
            [ -n "${members[$dir]+set}" ] || dirs+=("$dir")
            members[$dir]+="$file"$'\n'
        done
        if [ "${#dirs[@]}" -eq 1 ] && [ "${dirs[0]}" = . ]; then
            run_from . "$report" "${files[@]}" || code=$?
        else
            # One run per folder, from it; their reports merged into one.
            parts=()
            for dir in "${dirs[@]}"; do
                mapfile -t group <<< "${members[$dir]%$'\n'}"
                parts+=("$report.part${#parts[@]}")
                echo "swe-harvest: $runner from $dir"
                run_from "$dir" "${parts[-1]}" "${group[@]}" || code=$?
            done
            node -e 'const fs = require("fs"); const merged = { testResults: [] };
for (const part of process.argv.slice(2)) {
  try { merged.testResults.push(...(JSON.parse(fs.readFileSync(part, "utf8")).testResults || [])); } catch (error) {}
}
fs.writeFileSync(process.argv[1], JSON.stringify(merged));' "$report" "${parts[@]}"
            rm -f "${parts[@]}"
        fi
        ;;
    mocha)
        # Mocha 4 and later wait, once the tests are done, for every handle a test left
        # open (a server, a socket): axios' 2022 tests, run by grunt-mocha-test, which
        # exits by itself, held a run until its timeout. Mocha 3 knows no `--exit`.
        case " ${command[*]} " in
            *" --exit "*|*" --no-exit "*) ;;
            *)
                mocha_major=$(node -p 'require(require.resolve("mocha/package.json", { paths: [process.cwd()] })).version.split(".")[0]' 2> /dev/null)
                [ "${mocha_major:-0}" -ge 4 ] 2> /dev/null && command+=(--exit)
                ;;
        esac
        for file in "${files[@]}"; do
            echo "# swe-harvest file: $file"
            SWE_HARVEST_REPORT="$report" SWE_HARVEST_TEST_FILE="$file" \
                env "${command[@]}" --reporter SWE_HARVEST_MOCHA_REPORTER "$file" || code=$?
        done
        ;;
    karma)
        # Karma runs what its config lists, in a browser: it is given our config in
        # place of the project's (the word after `start`, else the default file).
        at=-1
        for index in "${!command[@]}"; do [ "${command[$index]}" = start ] && { at=$index; break; }; done
        [ "$at" -ge 0 ] || { command+=(start); at=$(( ${#command[@]} - 1 )); }
        next=$((at + 1))
        config=""
        if [ "$next" -lt "${#command[@]}" ] && [ "${command[$next]#-}" = "${command[$next]}" ]; then
            config="${command[$next]}"
            command=("${command[@]:0:next}" SWE_HARVEST_KARMA_WRAPPER "${command[@]:next+1}")
        else
            for candidate in karma.conf.js karma.conf.cjs .config/karma.conf.js; do
                [ -f "$candidate" ] && { config="$candidate"; break; }
            done
            command=("${command[@]:0:next}" SWE_HARVEST_KARMA_WRAPPER "${command[@]:next}")
        fi
        [ -n "$config" ] || echo "swe-harvest: no Karma config (karma.conf.js) found"
        SWE_HARVEST_REPORT="$report" SWE_HARVEST_KARMA_CONFIG="$config" \
            SWE_HARVEST_KARMA_FILES="$(printf '%s\n' "${files[@]}")" CHROME_BIN="${CHROME_BIN:-/usr/bin/chromium}" \
            env "${command[@]}" --single-run || code=$?
        ;;
    ava)
        for file in "${files[@]}"; do echo "# swe-harvest file: $file"; env "${command[@]}" --tap "$file" || code=$?; done
        ;;
    tap)
        for file in "${files[@]}"; do echo "# swe-harvest file: $file"; env "${command[@]}" --reporter=tap "$file" || code=$?; done
        ;;
    *)
        for file in "${files[@]}"; do
            echo "# swe-harvest file: $file"
            env "${command[@]}" --test-reporter=tap "$file" || code=$?
        done
        ;;
esac
[ "$print" = 1 ] && node SWE_HARVEST_PRINTER "$runner" "$report"
exit $code
"##;

fn write_file(path: &str, content: &str) -> String {
    format!("cat > {path} <<'SWE_HARVEST_NODE_FILE'\n{content}SWE_HARVEST_NODE_FILE\n")
}

/// The helper, the Mocha reporter and the printer, written to `/tmp`.
fn helper_files() -> String {
    let helper = NODE_TEST_HELPER_SCRIPT
        .replace("SWE_HARVEST_MOCHA_REPORTER", MOCHA_REPORTER)
        .replace("SWE_HARVEST_PRINTER", PRINTER)
        .replace("SWE_HARVEST_KARMA_WRAPPER", KARMA_CONFIG);
    write_file(NODE_TEST_HELPER, &helper)
        + &write_file(MOCHA_REPORTER, MOCHA_REPORTER_SCRIPT)
        + &write_file(PRINTER, PRINTER_SCRIPT)
        + &write_file(KARMA_CONFIG, KARMA_CONFIG_SCRIPT)
}

/// Every container script's setup: the offline environment and the helper.
pub fn script_setup(_version: &str) -> String {
    format!(
        "export {NODE_ENV} {PATH_ENV} {OFFLINE_ENV}\n{}install_repository() {{ echo \"Node: nothing to install; node_modules is in the image\"; }}",
        helper_files()
    )
}

/// The lines SWE-bench's `eval_script` runs first.
pub fn harness_setup(_version: &str) -> Vec<String> {
    vec![format!("export {NODE_ENV} {PATH_ENV} {OFFLINE_ENV}"), helper_files().trim_end().to_string()]
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::ecosystem::node::infer::YARN_CLASSIC_INSTALL;
    use crate::sandbox::images::fixtures::{self, settings};

    /// The Dockerfile of the tests' one request, built with `settings`.
    fn dockerfile(settings: &ImageSettings) -> String {
        let request = fixtures::request_for("node", "node18", &["npm ci"], "jest");
        environment_dockerfile(&request, "swe-harvest/base:node18", settings)
    }

    #[test]
    fn the_packages_the_patches_add_are_installed_by_the_projects_package_manager() {
        let spec = |install: &str| EnvironmentSpec {
            install: vec![install.to_string()],
            extra_packages: vec!["formdata-node@^5.0.0".into()],
            ..Default::default()
        };
        assert_eq!(
            add_packages_step(&spec("npm install --no-audit --no-fund --before=2022-10-01T00:00:00Z")).unwrap(),
            "npm install --no-save --no-audit --no-fund --before=2022-10-01T00:00:00Z 'formdata-node@^5.0.0' || \
             npm install --no-save --no-audit --no-fund --before=2022-10-01T00:00:00Z 'formdata-node@^5.0.0' --ignore-scripts"
        );
        assert!(add_packages_step(&spec(YARN_CLASSIC_INSTALL)).unwrap().starts_with("yarn add --dev"));
        assert!(
            add_packages_step(&spec(YARN_BERRY_INSTALL))
                .unwrap()
                .contains("YARN_ENABLE_IMMUTABLE_INSTALLS=false yarn add")
        );
        assert!(add_packages_step(&spec("pnpm install --frozen-lockfile")).unwrap().starts_with("pnpm add --save-dev"));
        assert_eq!(add_packages_step(&EnvironmentSpec { install: vec!["npm ci".into()], ..Default::default() }), None);
        let mut request = fixtures::request_for("node", "node18", &["npm ci"], "jest");
        request.spec.extra_packages = vec!["left-pad@^1.3.0".into()];
        let text = environment_dockerfile(&request, "swe-harvest/base:node18", &settings(None));
        let install = fixtures::step_line(&text, "npm ci", &[]);
        assert!(install.contains("npm ci; npm install --no-save --no-audit --no-fund 'left-pad@^1.3.0'"), "{install}");
    }

    #[test]
    fn dependencies_are_installed_with_the_ca_in_that_step_only_and_node_modules_stays() {
        let text = dockerfile(&settings(Some(b"CA")));
        let install = fixtures::step_line(&text, "npm ci", &["NODE_EXTRA_CA_CERTS"]);
        assert!(install.contains("NODE_EXTRA_CA_CERTS=/etc/swe-harvest/ca.crt"), "{install}");
        assert!(install.contains("npm_config_cafile=/etc/swe-harvest/ca.crt"), "{install}");
        let keep = text.lines().position(|line| line.contains("-name node_modules -prune")).unwrap();
        assert!(keep > text.lines().position(|line| line.contains("npm ci")).unwrap(), "{text}");
        let without = dockerfile(&settings(None));
        assert!(!without.contains("ca.crt"), "{without}");
    }

    /// The helper run with `env` replaced: the command's words are printed, not run.
    fn helper_run(runner: &str, files_present: &[&str], files: &[&str]) -> String {
        helper_run_command(&["X=1", runner, "--exit"], runner, files_present, files)
    }

    /// [`helper_run`] with the test command's words.
    fn helper_run_command(command: &[&str], runner: &str, files_present: &[&str], files: &[&str]) -> String {
        let dir = tempfile::tempdir().unwrap();
        for file in files_present {
            let (file, content) = file.split_once('=').unwrap_or((file, ""));
            let path = dir.path().join(file);
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(path, content).unwrap();
        }
        let helper = dir.path().join("helper.sh");
        fs_err::write(&helper, NODE_TEST_HELPER_SCRIPT.replace("env \"${command[@]}\"", "echo \"${command[@]}\""))
            .unwrap();
        let output = std::process::Command::new("bash")
            .arg(&helper)
            .arg(runner)
            .arg(dir.path().join("report.json"))
            .args(command)
            .arg("--")
            .args(files)
            .current_dir(dir.path())
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Yarn's default registry is a host of its own: a Yarn install is told npm's, in
    /// the variable of its major (Yarn 2+ refuses Yarn 1's).
    #[test]
    fn a_yarn_install_is_told_the_npm_registry_even_by_default() {
        let npm = shell_quote(crate::sandbox::Registries::NPM);
        for (step, wanted, refused) in [
            (YARN_BERRY_INSTALL, "YARN_NPM_REGISTRY_SERVER", "YARN_REGISTRY"),
            (YARN_CLASSIC_INSTALL, "YARN_REGISTRY", "YARN_NPM_REGISTRY_SERVER"),
        ] {
            let request = fixtures::request_for("node", "node18", &[step], "jest");
            let text = environment_dockerfile(&request, "swe-harvest/base:node18", &settings(None));
            let install = fixtures::step_line(&text, "yarn install", &["REGISTRY"]);
            assert!(install.contains(&format!("{wanted}={npm}")), "{install}");
            assert!(!install.contains(&format!("{refused}=")), "{install}");
            assert!(!install.contains("npm_config_registry"), "npm's own default stays unnamed: {install}");
        }
    }

    #[test]
    fn another_npm_registry_is_named_to_the_install_step_only() {
        let text = dockerfile(&settings(None));
        assert!(!text.contains("registry"), "npm's own registry is not named: {text}");
        let mirrored = fixtures::mirrored(|registries| registries.npm_registry = "https://npm.example.com/".into());
        let text = dockerfile(&mirrored);
        let install = fixtures::step_line(&text, "npm ci", &["registry", "REGISTRY"]);
        assert!(install.contains("npm_config_registry=https://npm.example.com/"), "{install}");
    }

    #[test]
    fn the_helper_runs_the_existing_files_with_the_runners_reporter() {
        let jest = helper_run("jest", &["a.test.js", "b/c.test.js"], &["a.test.js", "gone.test.js", "b/c.test.js"]);
        assert!(jest.contains("X=1 jest --exit --ci --verbose"), "{jest}");
        assert!(
            jest.contains("--json --outputFile=") && jest.contains("--runTestsByPath a.test.js b/c.test.js\n"),
            "{jest}"
        );
        let mocha = helper_run("mocha", &["t/a.js", "t/b.js"], &["t/a.js", "t/b.js"]);
        assert_eq!(mocha.matches("--reporter SWE_HARVEST_MOCHA_REPORTER").count(), 2, "one run per file: {mocha}");
        assert!(mocha.contains("# swe-harvest file: t/b.js\nX=1 mocha --exit --reporter"), "{mocha}");
        let none = helper_run("jest", &[], &["gone.test.js"]);
        assert!(none.contains("none of the touched test files exists"), "{none}");
    }

    /// Mocha is given `--exit` when the command says neither `--exit` nor `--no-exit`
    /// and the installed Mocha knows it (4 and later).
    #[test]
    fn mocha_is_told_to_exit_once_its_tests_are_done_when_it_knows_how() {
        let with_mocha = |version: &str| format!("node_modules/mocha/package.json={{\"version\": \"{version}\"}}");
        for (command, installed, wanted) in [
            (&["mocha"][..], Some("10.2.0"), "mocha --exit --reporter"),
            (&["mocha"][..], Some("3.5.3"), "mocha --reporter"),
            (&["mocha"][..], None, "mocha --reporter"),
            (&["mocha", "--no-exit"][..], Some("10.2.0"), "mocha --no-exit --reporter"),
            (&["mocha", "--exit", "-t", "5000"][..], Some("10.2.0"), "mocha --exit -t 5000 --reporter"),
        ] {
            let manifest = installed.map(with_mocha);
            let mut present = vec!["t/a.js"];
            present.extend(manifest.as_deref());
            let text = helper_run_command(command, "mocha", &present, &["t/a.js"]);
            assert!(text.contains(&format!("\n{wanted} SWE_HARVEST_MOCHA_REPORTER t/a.js\n")), "{installed:?}: {text}");
        }
    }

    /// An `export` before the runner (the rung `legacy-openssl`) reaches the runner:
    /// the helper runs the steps before it in its own shell.
    #[test]
    fn an_export_before_the_runner_reaches_the_runner() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("a.test.js"), "").unwrap();
        let bin = dir.path().join("bin");
        fs_err::create_dir_all(&bin).unwrap();
        fs_err::write(bin.join("fake-runner"), "#!/bin/sh\necho \"runner sees NODE_OPTIONS=$NODE_OPTIONS\"\n").unwrap();
        std::process::Command::new("chmod").arg("+x").arg(bin.join("fake-runner")).status().unwrap();
        let helper = dir.path().join("helper.sh");
        fs_err::write(&helper, NODE_TEST_HELPER_SCRIPT).unwrap();
        let output = std::process::Command::new("bash")
            .arg(&helper)
            .args(["node", "report.json", "export", "NODE_OPTIONS=--openssl-legacy-provider", "&&", "fake-runner"])
            .args(["--", "a.test.js"])
            .current_dir(dir.path())
            .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()))
            .env_remove("NODE_OPTIONS")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(text.contains("runner sees NODE_OPTIONS=--openssl-legacy-provider\n"), "{text}");
    }

    /// babel-14532's test patch touched only fixtures, which `test/index.js` reads:
    /// they stand for the test files beside their folder (in a test folder every
    /// script, elsewhere those named as tests), the nearest from there up.
    #[test]
    fn a_touched_fixture_runs_the_tests_beside_its_folder() {
        let present = [
            "packages/gen/test/index.js",
            "packages/gen/test/helpers.d.ts",
            "packages/gen/test/fixtures/parens/unary/input.js",
            "packages/gen/test/fixtures/parens/unary/output.js",
            "src/__fixtures__/deep/case.js",
            "src/parse.test.ts",
            "src/parse.ts",
        ];
        let touched = [
            "packages/gen/test/fixtures/parens/unary/input.js",
            "packages/gen/test/fixtures/parens/unary/output.js",
            "src/__fixtures__/deep/case.js",
        ];
        let jest = helper_run("jest", &present, &touched);
        assert!(jest.contains("--runTestsByPath packages/gen/test/index.js src/parse.test.ts\n"), "{jest}");
        assert!(
            jest.contains(
                "src/__fixtures__/deep/case.js is a fixture; run the tests beside its folder: src/parse.test.ts"
            ),
            "{jest}"
        );
        // A fixture named as a test is run as itself; a fixture no test is beside, not at all.
        let named = helper_run("jest", &["test/fixtures/a.test.js"], &["test/fixtures/a.test.js"]);
        assert!(named.contains("--runTestsByPath test/fixtures/a.test.js\n"), "{named}");
        let alone = helper_run("mocha", &["fixtures/x/input.js"], &["fixtures/x/input.js"]);
        assert!(alone.contains("# swe-harvest file: fixtures/x/input.js"), "{alone}");
    }

    /// Karma is given our config in place of the project's, which it is told of,
    /// with the touched files; without a config word, the project's default file.
    #[test]
    fn the_helper_gives_karma_our_config_in_place_of_the_projects() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("a.test.js"), "").unwrap();
        fs_err::write(dir.path().join("karma.conf.js"), "").unwrap();
        let helper = dir.path().join("helper.sh");
        let script = NODE_TEST_HELPER_SCRIPT.replace("SWE_HARVEST_KARMA_WRAPPER", KARMA_CONFIG).replace(
            "env \"${command[@]}\"",
            "bash -c 'echo \"config=$SWE_HARVEST_KARMA_CONFIG files=$SWE_HARVEST_KARMA_FILES $*\"' _ \"${command[@]}\"",
        );
        fs_err::write(&helper, script).unwrap();
        let run = |words: &[&str]| {
            let output = std::process::Command::new("bash")
                .arg(&helper)
                .args(["karma", "report.json"])
                .args(words)
                .args(["--", "a.test.js", "gone.test.js"])
                .current_dir(dir.path())
                .output()
                .unwrap();
            String::from_utf8_lossy(&output.stdout).into_owned()
        };
        let named = run(&["X=1", "karma", "start", "conf/karma.js", "--port", "9876"]);
        assert!(
            named.contains(&format!(
                "config=conf/karma.js files=a.test.js X=1 karma start {KARMA_CONFIG} --port 9876 --single-run"
            )),
            "{named}"
        );
        let default = run(&["karma", "start"]);
        assert!(
            default.contains(&format!("config=karma.conf.js files=a.test.js karma start {KARMA_CONFIG} --single-run")),
            "{default}"
        );
    }

    /// A test command with build steps (`npm run build && jest`) runs them first, then
    /// the runner alone; a step that fails is said and the tests still run.
    #[test]
    fn the_helper_runs_the_steps_before_the_runner_first() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("a.test.js"), "").unwrap();
        let helper = dir.path().join("helper.sh");
        fs_err::write(
            &helper,
            NODE_TEST_HELPER_SCRIPT.replace("env \"${command[@]}\"", "echo RUNNER \"${command[@]}\""),
        )
        .unwrap();
        let output = std::process::Command::new("bash")
            .arg(&helper)
            .args(["jest", "report.json", "touch", "built", "&&", "false", "&&", "jest", "--", "a.test.js"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(dir.path().join("built").exists(), "{stdout}");
        assert!(stdout.contains("swe-harvest: before the tests: touch built\n"), "{stdout}");
        assert!(stdout.contains("swe-harvest: false failed (exit 1)"), "{stdout}");
        assert!(stdout.contains("RUNNER jest --ci"), "{stdout}");
        assert!(!stdout.contains("RUNNER touch"), "{stdout}");
    }

    /// A workspace package with its own Jest or Vitest config runs its files from its
    /// folder (Kong/insomnia's `packages/insomnia/jest.config.js`); the rest from the root.
    #[test]
    fn the_helper_runs_a_packages_files_from_the_folder_of_its_runner_config() {
        let present = ["root.test.js", "packages/app/jest.config.js", "packages/app/src/deep/a.test.js"];
        let jest = helper_run("jest", &present, &["root.test.js", "packages/app/src/deep/a.test.js"]);
        assert!(jest.contains("swe-harvest: jest from .\n"), "{jest}");
        assert!(jest.contains("--runTestsByPath root.test.js\n"), "{jest}");
        assert!(jest.contains("swe-harvest: jest from packages/app\n"), "{jest}");
        assert!(jest.contains("--runTestsByPath src/deep/a.test.js\n"), "{jest}");
        let present = ["packages/web/vitest.config.ts", "packages/web/test/b.spec.ts"];
        let vitest = helper_run("vitest", &present, &["packages/web/test/b.spec.ts"]);
        assert!(vitest.contains("swe-harvest: vitest from packages/web\n"), "{vitest}");
        assert!(vitest.contains(" test/b.spec.ts\n"), "{vitest}");
        // A Jest config means nothing to Vitest: that file runs from the root.
        let other = helper_run(
            "vitest",
            &["packages/app/jest.config.js", "packages/app/c.test.ts"],
            &["packages/app/c.test.ts"],
        );
        assert!(!other.contains(" from "), "{other}");
        assert!(other.contains(" packages/app/c.test.ts\n"), "{other}");
    }
}
