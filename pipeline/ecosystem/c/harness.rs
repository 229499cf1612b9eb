//! A project tested by its own harness over a build in a folder (decision,
//! 2026-12-07; micropython's shape): no build file at the root, a Makefile in a folder
//! (`ports/unix/Makefile`) that builds a program, and a rule of it (`test:`) whose
//! recipe runs a harness script of the repository over that program (`cd
//! $(TOP)/tests && MICROPY_MICROPYTHON=$(ABS_PROG) ./run-tests.py`), which prints a
//! result per test. zstd's `tests/cli-tests/run.py` is the same kind of harness,
//! reached through its Makefiles' targets (see `test-helper.sh`).
//!
//! Recognised from the repository's files ([`harness_from_files`]) or from the
//! commands of the project's CI ([`harness_from_ci_commands`]: `make -C ports/unix
//! VARIANT=minimal test`, or `tools/ci.sh unix_minimal_run_tests` and `source
//! tools/ci.sh && ci_unix_minimal_run_tests`, resolved through the script's shell
//! functions). The spec builds the folder (`make -C DIR VARS`) and its test command is
//! the rule (`make -C DIR VARS test`); the helper builds, asks make for the recipe's
//! harness line (`make -n`), and runs that line with the touched tests of the harness's
//! folder appended (all of them when none is touched). Each test's line is a result,
//! the test's path as the harness prints it the id (`pass  basics/foo.py` ->
//! `PASS: basics/foo.py`; zstd's `PASS: basic/help.sh` as printed).
//!
//! Offline builds (decision): git submodules are not in a mirror and builds have no
//! network, so the make variables that turn on a feature built from a submodule are
//! turned off ([`offline_variables`]): a `ifeq ($(X),1)` (or `ifneq ($(X),)`) block
//! of the build's Makefiles that adds to `GIT_SUBMODULES` or names a submodule's path
//! (`.gitmodules`) gives `X=0` (or `X=`), the outermost such guard of the block
//! (micropython: `MICROPY_PY_BTREE=0`, `MICROPY_PY_SSL=0`, `MICROPY_PY_FFI=0`,
//! `FROZEN_MANIFEST=`). A build that still fails says which submodule folders are
//! empty.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use super::infer::{MAKEFILE_NAMES, SUBMODULE_FOLDERS, choose_runtime, ci_compiler};
use crate::ecosystem::ci::CiEvidence;
use crate::ecosystem::{InferError, RepoFiles};
use crate::git::diff::files_changed_by;
use crate::model::EnvironmentSpec;

/// The harness scripts whose per-test output the helper reads (test-helper.sh's
/// `HARNESS_SCRIPTS` matches this list): micropython's `run-tests.py` (`pass  ID`,
/// `FAIL  ID`, `skip  ID`, `lrge  ID`) and zstd's `cli-tests/run.py` (`PASS: ID`,
/// `FAIL: ID`).
pub const HARNESS_SCRIPTS: &[&str] = &["run-tests.py", "cli-tests/run.py"];

/// A harness run over a build in a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Harness {
    /// The folder whose Makefile builds the program and runs the harness (`ports/unix`).
    pub folder: String,
    /// The rule that runs the harness (`test`).
    pub target: String,
    /// Make variables of the build (CI's `VARIANT=minimal`, then [`offline_variables`]).
    pub variables: Vec<String>,
    /// The harness script the rule runs, as the recipe names it (`run-tests.py`).
    pub script: String,
    /// Where it was recognised: the Makefile, or CI's command.
    pub evidence: String,
}

impl Harness {
    /// The test command: the rule, with the build's variables.
    pub fn test_command(&self) -> String {
        let mut words = vec!["make".to_string(), "-C".to_string(), self.folder.clone()];
        words.extend(self.variables.iter().cloned());
        words.push(self.target.clone());
        words.join(" ")
    }
}

/// Whether a test command runs a harness over a build in a folder (`make -C DIR ...`).
pub fn is_harness_command(test_command: &str) -> bool {
    test_command.starts_with("make -C ")
}

/// The files inference reads for a harness: the Makefiles two folders down
/// (`ports/unix/Makefile`), the `.mk` files up to two folders down outside `lib/`
/// (`py/mkrules.mk`, `extmod/extmod.mk`), and the shell scripts of a `tools/` or `ci/`
/// folder that CI runs (`tools/ci.sh`).
pub fn reads(path: &str) -> bool {
    let depth = path.matches('/').count();
    let name = path.rsplit('/').next().unwrap_or_default();
    (depth == 2 && is_makefile(name))
        || (name.ends_with(".mk") && depth <= 2 && !path.starts_with("lib/"))
        || (depth == 1 && name.ends_with(".sh") && (path.starts_with("tools/") || path.starts_with("ci/")))
}

fn is_makefile(name: &str) -> bool {
    MAKEFILE_NAMES.contains(&name)
}

/// The recipe lines of `target` in a Makefile's text (tab-indented lines after a rule
/// line that names it).
fn recipe(text: &str, target: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if let Some(command) = line.strip_prefix('\t') {
            if inside {
                lines.push(command.trim().to_string());
            }
            continue;
        }
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        inside = line.split_once(':').is_some_and(|(targets, rest)| {
            !rest.starts_with('=') && !targets.contains('=') && targets.split_whitespace().any(|name| name == target)
        });
    }
    lines
}

/// The known harness script a recipe line runs, as it names it.
fn script_run_by(line: &str) -> Option<&'static str> {
    HARNESS_SCRIPTS.iter().copied().find(|script| {
        line.split_whitespace().any(|word| {
            let word = word.trim_matches(['"', '\'', ';']);
            word == *script || word.ends_with(&format!("/{script}"))
        })
    })
}

/// The harness that `target` of the Makefile of `folder` runs, if it runs one.
fn harness_of_rule(files: &RepoFiles, folder: &str, target: &str) -> Option<&'static str> {
    let text = MAKEFILE_NAMES.iter().find_map(|name| files.get(&format!("{folder}/{name}")))?;
    recipe(text, target).iter().find_map(|line| script_run_by(line))
}

/// The harness from the repository's files alone: a Makefile two folders down whose
/// `test` (or `check`) rule runs a known harness script; the folder named `unix` first
/// (the port a Linux container runs), then the first in order.
pub fn harness_from_files(files: &RepoFiles) -> Option<Harness> {
    let mut found: Vec<(String, &'static str, &'static str)> = Vec::new();
    for path in files.keys().filter(|path| path.matches('/').count() == 2) {
        let Some((folder, name)) = path.rsplit_once('/') else { continue };
        if !is_makefile(name) {
            continue;
        }
        for target in ["test", "check"] {
            if let Some(script) = harness_of_rule(files, folder, target) {
                found.push((folder.to_string(), target, script));
                break;
            }
        }
    }
    found.sort_by_key(|(folder, _, _)| !folder.ends_with("/unix"));
    let (folder, target, script) = found.into_iter().next()?;
    Some(Harness {
        variables: offline_variables(files, &folder),
        evidence: format!("`{folder}/Makefile`'s `{target}` rule runs `{script}`"),
        folder,
        target: target.to_string(),
        script: script.to_string(),
    })
}

/// Whether a project that another language claims by its root files (micropython's
/// `pyproject.toml`, which configures its linters) is tested by a harness over a build
/// in a folder: no C build file at the root, and a Makefile two folders down whose
/// `test` rule runs a known harness script (read through `read`).
pub fn claims(paths: &[String], read: &mut dyn FnMut(&str) -> Option<String>) -> bool {
    const ROOT_BUILD_FILES: &[&str] =
        &["configure.ac", "configure.in", "CMakeLists.txt", "Makefile", "GNUmakefile", "makefile"];
    if paths.iter().any(|path| ROOT_BUILD_FILES.contains(&path.as_str()))
        || !paths.iter().any(|path| HARNESS_SCRIPTS.iter().any(|script| path.ends_with(&format!("/{script}"))))
    {
        return false;
    }
    let mut files = RepoFiles::new();
    for path in paths.iter().filter(|path| path.matches('/').count() == 2 && path.ends_with("/Makefile")) {
        if let Some(text) = read(path) {
            files.insert(path.clone(), text);
        }
    }
    harness_from_files(&files).is_some()
}

/// The make variables that keep a build in `folder` off the git submodules (see the
/// module doc), sorted. Read from the folder's own Makefiles and `.mk` files, and those
/// outside the folder's top folder (`py/`, `extmod/`; not the other ports').
pub fn offline_variables(files: &RepoFiles, folder: &str) -> Vec<String> {
    let submodules = submodule_paths(files);
    let mut variables = BTreeSet::new();
    for (_, text) in build_files(files, folder) {
        // The guards of the open conditionals: `Some(X=value)` for one that turns a
        // feature on, `None` for any other.
        let mut guards: Vec<Option<String>> = Vec::new();
        for line in text.lines() {
            let line = line.trim();
            if let Some(condition) = line.strip_prefix("else") {
                if let Some(top) = guards.last_mut() {
                    *top = feature_guard(condition.trim());
                }
            } else if line.starts_with("ifeq")
                || line.starts_with("ifneq")
                || line.starts_with("ifdef")
                || line.starts_with("ifndef")
            {
                guards.push(feature_guard(line));
            } else if line.starts_with("endif") {
                guards.pop();
            } else if !line.starts_with('#')
                && (line.starts_with("GIT_SUBMODULES") || submodules.iter().any(|path| names_path(line, path)))
            {
                if let Some(Some(variable)) = guards.iter().find(|guard| guard.is_some()) {
                    variables.insert(variable.clone());
                }
            }
        }
    }
    variables.into_iter().collect()
}

/// The paths of the git submodules `.gitmodules` declares.
fn submodule_paths(files: &RepoFiles) -> Vec<String> {
    files
        .get(".gitmodules")
        .map(|text| {
            text.lines()
                .filter_map(|line| line.trim().strip_prefix("path"))
                .filter_map(|rest| rest.trim().strip_prefix('='))
                .map(|path| path.trim().to_string())
                .filter(|path| !path.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The Makefiles and `.mk` files of a build in `folder`: its own, and those outside its
/// top folder (`py/`, `extmod/`; not another port's).
fn build_files<'a>(files: &'a RepoFiles, folder: &'a str) -> impl Iterator<Item = (&'a String, &'a String)> {
    let top = folder.split('/').next().unwrap_or_default();
    files.iter().filter(move |(path, _)| {
        let name = path.rsplit('/').next().unwrap_or_default();
        let in_folder = path.rsplit_once('/').is_some_and(|(parent, _)| parent == folder);
        (is_makefile(name) || name.ends_with(".mk"))
            && (in_folder || path.split('/').next() != Some(top) || !path.contains('/'))
    })
}

/// Whether a make line names a path (as a word, or a word's part: `$(TOP)/lib/x/y.c`).
fn names_path(line: &str, path: &str) -> bool {
    line.match_indices(path).any(|(at, _)| {
        let before = line[..at].chars().last();
        let after = line[at + path.len()..].chars().next();
        before.is_none_or(|c| c.is_whitespace() || c == '/' || c == '=' || c == '(')
            && after.is_none_or(|c| c.is_whitespace() || c == '/' || c == ')')
    })
}

/// The variable setting that turns a conditional's feature off: `ifeq ($(X),1)` ->
/// `X=0`, `ifneq ($(X),)` -> `X=`; `None` for any other condition.
fn feature_guard(line: &str) -> Option<String> {
    let (keyword, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    let (left, right) = inner.split_once(',')?;
    let variable = left.trim().strip_prefix("$(")?.strip_suffix(')')?;
    if variable.is_empty() || !variable.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    match (keyword, right.trim()) {
        ("ifeq", "1") => Some(format!("{variable}=0")),
        ("ifneq", "") => Some(format!("{variable}=")),
        _ => None,
    }
}

/// The harness that CI's commands run (`make -C ports/unix VARIANT=minimal test`, or a
/// function of a CI script that runs it), with CI's make variables, then
/// [`offline_variables`]. When several commands run it, the one whose variables keep
/// the Makefiles' defaults (micropython's `VARIANT=standard`, not `minimal`) and whose
/// rule is `test` wins, else the first.
pub fn harness_from_ci_commands(commands: &[&str], files: &RepoFiles) -> Option<Harness> {
    let mut candidates: Vec<((usize, bool), Harness)> = Vec::new();
    for command in commands {
        for words in resolved_commands(command, files, 0) {
            let Some((folder, variables, target)) = make_in_folder(&words) else {
                // The harness run by itself (`cd tests && ./run-tests.py`): the rule
                // of a folder's Makefile that runs it over its build.
                let runs = script_run_by(&words.join(" "));
                if let Some(harness) = harness_from_files(files).filter(|harness| Some(harness.script.as_str()) == runs)
                {
                    let evidence =
                        format!("CI's `{}` runs `{}`, which {}", command.trim(), harness.script, harness.evidence);
                    candidates.push(((usize::MAX, true), Harness { evidence, ..harness }));
                }
                continue;
            };
            let Some(script) = harness_of_rule(files, &folder, &target) else { continue };
            let changed = variables.iter().filter(|setting| !is_default(files, &folder, setting)).count();
            let mut all = variables.clone();
            for setting in offline_variables(files, &folder) {
                let name = setting.split('=').next().unwrap_or_default();
                if !all.iter().any(|known| known.split('=').next() == Some(name)) {
                    all.push(setting);
                }
            }
            candidates.push((
                (changed, target != "test"),
                Harness {
                    evidence: format!(
                        "CI's `{}` runs `{folder}/Makefile`'s `{target}`, which runs `{script}`",
                        command.trim()
                    ),
                    folder,
                    target,
                    variables: all,
                    script: script.to_string(),
                },
            ));
        }
    }
    candidates.into_iter().min_by_key(|(score, _)| *score).map(|(_, harness)| harness)
}

/// Whether `NAME=value` is the default a Makefile of `folder` gives (`VARIANT ?= standard`).
fn is_default(files: &RepoFiles, folder: &str, setting: &str) -> bool {
    let Some((name, value)) = setting.split_once('=') else { return false };
    let Some(text) = files.get(&format!("{folder}/Makefile")) else { return false };
    text.lines().any(|line| {
        let line = line.trim();
        ["?=", ":=", "="].iter().any(|operator| {
            line.split_once(operator).is_some_and(|(left, right)| left.trim() == name && right.trim() == value)
        })
    })
}

/// A `make` command's folder (`-C DIR`, `--directory=DIR`), its variables and its last
/// target.
fn make_in_folder(words: &[String]) -> Option<(String, Vec<String>, String)> {
    let start = words.iter().position(|word| word == "make" || word.ends_with("/make"))?;
    let (mut folder, mut variables, mut target) = (None, Vec::new(), None);
    let mut rest = words[start + 1..].iter();
    while let Some(word) = rest.next() {
        if word == "-C" {
            folder = rest.next().cloned();
        } else if let Some(dir) =
            word.strip_prefix("--directory=").or_else(|| word.strip_prefix("-C").filter(|d| !d.is_empty()))
        {
            folder = Some(dir.to_string());
        } else if word.starts_with('-') {
        } else if word.contains('=') {
            if !is_toolchain_setting(word) {
                variables.push(word.clone());
            }
        } else {
            target = Some(word.clone());
        }
    }
    let folder = folder?.trim_end_matches('/').trim_start_matches("./").to_string();
    Some((folder, variables, target?))
}

/// Whether a make variable of CI picks the toolchain or its flags (`CC=clang`,
/// `CFLAGS_EXTRA=...`): not taken, as C's other CI evidence (the image has GCC, and
/// CI's flags add sanitizers and `-Werror`).
fn is_toolchain_setting(setting: &str) -> bool {
    let name = setting.split('=').next().unwrap_or_default().to_ascii_uppercase();
    matches!(name.as_str(), "CC" | "CXX" | "CPP" | "LD" | "AR" | "AS" | "STRIP" | "CROSS_COMPILE" | "COPT" | "MAKEOPTS")
        || name.contains("FLAGS")
}

/// The commands a CI command line runs, each as words, with the shell functions of a
/// read CI script resolved (`tools/ci.sh NAME` runs its function `ci_NAME` or `NAME`;
/// `source tools/ci.sh && ci_NAME`), their arguments put for `"$@"` and `$1`..`$9`.
fn resolved_commands(command: &str, files: &RepoFiles, depth: usize) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    if depth > 4 {
        return found;
    }
    // The folder a `cd DIR` segment went to, for the `make` after it.
    let mut folder: Option<String> = None;
    for segment in command.split("&&").flat_map(|part| part.split(';')).flat_map(|part| part.split("||")) {
        let mut words: Vec<String> =
            segment.split_whitespace().map(|word| word.trim_matches(['"', '\'']).to_string()).collect();
        let Some(first) = words.first().cloned() else { continue };
        if first == "cd" {
            folder = words.get(1).cloned();
            continue;
        }
        if let Some(folder) =
            folder.as_ref().filter(|_| first == "make" && !words.iter().any(|word| word.starts_with("-C")))
        {
            words.splice(1..1, ["-C".to_string(), folder.clone()]);
        }
        let first = &first;
        // `tools/ci.sh NAME ARGS`, `bash tools/ci.sh NAME`.
        let (script_at, named) = match first.as_str() {
            "bash" | "sh" => (1, words.get(1)),
            _ => (0, Some(first)),
        };
        if let Some(script) =
            named.map(|word| word.trim_start_matches("./")).filter(|script| files.contains_key(*script))
        {
            if let Some(name) = words.get(script_at + 1) {
                let arguments = &words[script_at + 2..];
                for function in [format!("ci_{name}"), name.clone()] {
                    if let Some(body) = function_body(&files[script], &function) {
                        found.extend(body_commands(&body, arguments, files, depth));
                        break;
                    }
                }
            }
            continue;
        }
        if matches!(first.as_str(), "source" | ".") {
            continue;
        }
        // A function of any read script (`ci_unix_minimal_run_tests` after `source`).
        let body =
            files.iter().filter(|(path, _)| path.ends_with(".sh")).find_map(|(_, text)| function_body(text, first));
        match body {
            Some(body) => found.extend(body_commands(&body, &words[1..], files, depth)),
            None => found.push(words),
        }
    }
    found
}

/// The commands of a function's body, its arguments put in.
fn body_commands(body: &[String], arguments: &[String], files: &RepoFiles, depth: usize) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut locals: Vec<(String, String)> = Vec::new();
    for line in body {
        let mut line = line.replace("\"$@\"", &arguments.join(" ")).replace("$@", &arguments.join(" "));
        for (index, argument) in arguments.iter().enumerate().take(9) {
            line = line.replace(&format!("${}", index + 1), argument);
        }
        for (name, value) in &locals {
            line = line.replace(&format!("${{{name}}}"), value).replace(&format!("${name}"), value);
        }
        // `variant=$1`: a local the next lines use.
        if let Some((name, value)) = line.trim().split_once('=') {
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !value.contains(' ') {
                locals.push((name.to_string(), value.to_string()));
                continue;
            }
        }
        found.extend(resolved_commands(&line, files, depth + 1));
    }
    found
}

/// The lines of a shell function (`function NAME {` or `NAME() {`, to the `}` that
/// starts a line).
fn function_body(text: &str, name: &str) -> Option<Vec<String>> {
    let mut lines = text.lines();
    lines.find(|line| {
        let line = line.trim();
        let rest = line.strip_prefix("function ").unwrap_or(line);
        rest.strip_prefix(name).is_some_and(|after| {
            let after = after.trim();
            after == "{" || after == "() {" || after == "(){" || after == "()" || after == "() {}"
        })
    })?;
    let mut body = Vec::new();
    for line in lines {
        if line.starts_with('}') {
            return Some(body);
        }
        let line = line.trim();
        if !line.is_empty() && !line.starts_with('#') {
            body.push(line.to_string());
        }
    }
    Some(body)
}

/// The test files of a test patch for a harness: every file it changes under a folder
/// named `tests` (`tests/basics/foo.py`, its expected output `tests/basics/foo.py.exp`):
/// the helper maps them to the harness's tests.
pub fn test_files(test_patch: &str) -> Vec<String> {
    files_changed_by(test_patch)
        .into_iter()
        .filter(|path| path.split('/').rev().skip(1).any(|folder| folder == "tests"))
        .collect()
}

/// The submodules a build in `folder` names (in its own Makefiles and `.mk` files, and
/// those outside its top folder): what a failed build says is missing.
pub fn named_submodules(files: &RepoFiles, folder: &str) -> Vec<String> {
    let submodules = submodule_paths(files);
    let mut named: Vec<String> = submodules
        .into_iter()
        .filter(|path| build_files(files, folder).any(|(_, text)| text.lines().any(|line| names_path(line, path))))
        .collect();
    named.sort();
    named
}

/// The spec of a project that a harness over a build in a folder tests: the harness
/// that CI's commands run (said in the spec's `ci` record), else the one the files
/// show; `None` when neither names one.
pub fn infer_harness(
    files: &RepoFiles,
    date: DateTime<Utc>,
    runtimes: &[String],
) -> Option<Result<EnvironmentSpec, InferError>> {
    let evidence = CiEvidence::read(files);
    let commands: Vec<&str> =
        evidence.test_commands().chain(evidence.test_job_lines.iter().map(|(line, _)| line.as_str())).collect();
    let from_ci = harness_from_ci_commands(&commands, files);
    let harness = from_ci.clone().or_else(|| harness_from_files(files))?;
    Some(infer(&harness, files, date, runtimes).map(|mut spec| {
        let mut decisions: Vec<String> = from_ci
            .map(|harness| format!("`{}` from CI: {}", harness.test_command(), harness.evidence))
            .into_iter()
            .collect();
        spec.runtime = ci_compiler(std::mem::take(&mut spec.runtime), runtimes, &evidence, &mut decisions);
        evidence.record(&mut spec, decisions);
        spec
    }))
}

/// The environment of a harness: the compiler as for any C project, Python 3 (the
/// harnesses are Python scripts, and micropython's compares with CPython's output), the
/// folder built with the harness's variables; a build that fails names the submodules
/// its Makefiles name, which a mirror lacks.
pub fn infer(
    harness: &Harness,
    files: &RepoFiles,
    date: DateTime<Utc>,
    runtimes: &[String],
) -> Result<EnvironmentSpec, InferError> {
    let runtime = choose_runtime(date, runtimes)
        .ok_or_else(|| InferError::no_runtime("C", "a GCC base image".to_string(), runtimes))?;
    let mut build = vec!["make".to_string(), "-j\"$(nproc)\"".to_string(), "-C".to_string(), harness.folder.clone()];
    build.extend(harness.variables.iter().cloned());
    let submodules = named_submodules(files, &harness.folder);
    let missing = if submodules.is_empty() {
        String::new()
    } else {
        format!(
            "; it may need git submodules, which a mirror does not hold and no build can fetch offline: {}",
            submodules.join(", ")
        )
    };
    let said = format!("swe-harvest: the build of {} failed{missing}", harness.folder);
    let build = format!("{} || {{ echo {}; exit 1; }}", build.join(" "), crate::sandbox::script::shell_quote(&said));
    let install = vec![SUBMODULE_FOLDERS.to_string(), build];
    Ok(EnvironmentSpec {
        system_packages: vec!["python3".to_string()],
        ..EnvironmentSpec::inferred(super::NAME, runtime, install, harness.test_command())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecosystem::fixtures::diff_of;

    fn files(list: &[(&str, &str)]) -> RepoFiles {
        list.iter().map(|(path, text)| (path.to_string(), text.to_string())).collect()
    }

    /// micropython's shape, written here: the unix port's Makefile (its `test` rule as
    /// the real one has it), the port's feature settings, extmod's blocks that build
    /// submodules, mkrules' frozen manifest, and a CI script of functions.
    const PORT_MAKEFILE: &str = "VARIANT ?= standard\nVARIANT_DIR ?= variants/$(VARIANT)\nBUILD ?= build-$(VARIANT)\n\
        include ../../py/mkenv.mk\n-include mpconfigport.mk\nFROZEN_MANIFEST ?= variants/manifest.py\n\
        GIT_SUBMODULES += lib/berkeley-db-1.xx\n\
        ifeq ($(MICROPY_PY_FFI),1)\nifeq ($(MICROPY_STANDALONE),1)\nGIT_SUBMODULES += lib/libffi\nelse\n\
        LIBFFI_CFLAGS := $(shell pkg-config --cflags libffi)\nendif\nendif\n\
        .PHONY: test\n\
        test: $(BUILD)/$(PROG) $(TOP)/tests/run-tests.py\n\
        \tcd $(TOP)/tests && MICROPY_MICROPYTHON=$(ABS_PROG) ./run-tests.py\n\
        test_full: test\n\tcd $(TOP)/tests && MICROPY_MICROPYTHON=$(ABS_PROG) ./run-tests.py --emit native\n";
    const EXTMOD_MK: &str = "ifeq ($(MICROPY_VFS_FAT),1)\nSRC_THIRDPARTY_C += lib/oofatfs/ff.c\nendif\n\
        ifeq ($(MICROPY_PY_SSL),1)\nifeq ($(MICROPY_SSL_AXTLS),1)\nAXTLS_DIR = lib/axtls\nGIT_SUBMODULES += $(AXTLS_DIR)\n\
        else ifeq ($(MICROPY_SSL_MBEDTLS),1)\nMBEDTLS_DIR = lib/mbedtls\nGIT_SUBMODULES += $(MBEDTLS_DIR)\nendif\nendif\n\
        ifeq ($(MICROPY_PY_BTREE),1)\nBTREE_DIR = lib/berkeley-db-1.xx\nINC += -I$(TOP)/$(BTREE_DIR)/include\nendif\n";
    const MKRULES_MK: &str = "ifneq ($(FROZEN_MANIFEST),)\nifeq ($(MPY_LIB_DIR),$(MPY_LIB_SUBMODULE_DIR))\n\
        GIT_SUBMODULES += lib/micropython-lib\nendif\nendif\n";
    const GITMODULES: &str = "[submodule \"lib/axtls\"]\n\tpath = lib/axtls\n[submodule \"lib/libffi\"]\n\tpath = lib/libffi\n\
        [submodule \"lib/berkeley-db-1.xx\"]\n\tpath = lib/berkeley-db-1.xx\n[submodule \"lib/mbedtls\"]\n\tpath = lib/mbedtls\n\
        [submodule \"lib/micropython-lib\"]\n\tpath = lib/micropython-lib\n";
    const CI_SH: &str = "#!/bin/bash\nfunction ci_unix_build_helper {\n    make ${MAKEOPTS} -C mpy-cross\n    \
        make ${MAKEOPTS} -C ports/unix \"$@\" submodules\n    make ${MAKEOPTS} -C ports/unix \"$@\"\n}\n\
        function ci_unix_run_tests_helper {\n    make -C ports/unix \"$@\" test\n}\n\
        function ci_unix_minimal_run_tests {\n    make -C ports/unix VARIANT=minimal test\n}\n\
        function ci_unix_standard_run_tests {\n    ci_unix_run_tests_helper VARIANT=standard\n}\n\
        function ci_other_run_tests {\n    variant=$1\n    make -C ports/unix VARIANT=$variant test_full\n}\n";

    fn micropython() -> RepoFiles {
        files(&[
            ("pyproject.toml", "[tool.ruff]\nline-length = 99\n"),
            (".gitmodules", GITMODULES),
            ("ports/unix/Makefile", PORT_MAKEFILE),
            ("ports/stm32/Makefile", "ifeq ($(MICROPY_PY_NETWORK),1)\nGIT_SUBMODULES += lib/axtls\nendif\nall:\n"),
            ("ports/unix/mpconfigport.mk", "MICROPY_PY_BTREE = 1\nMICROPY_PY_SSL = 1\nMICROPY_SSL_MBEDTLS = 1\n"),
            ("extmod/extmod.mk", EXTMOD_MK),
            ("py/mkrules.mk", MKRULES_MK),
            ("tools/ci.sh", CI_SH),
            ("tests/run-tests.py", "#! /usr/bin/env python3\n"),
        ])
    }

    #[test]
    fn a_makefile_in_a_folder_whose_test_rule_runs_the_harness_is_recognised_from_the_files() {
        let repo = micropython();
        for path in
            ["ports/unix/Makefile", "extmod/extmod.mk", "py/mkrules.mk", "tools/ci.sh", "ports/unix/mpconfigport.mk"]
        {
            assert!(reads(path), "{path}");
        }
        assert!(!reads("lib/x/y.mk") && !reads("ports/unix/variants/standard/mpconfigvariant.mk"));
        let harness = harness_from_files(&repo).expect("recognised");
        assert_eq!(
            (harness.folder.as_str(), harness.target.as_str(), harness.script.as_str()),
            ("ports/unix", "test", "run-tests.py")
        );
        assert_eq!(
            harness.variables,
            ["FROZEN_MANIFEST=", "MICROPY_PY_BTREE=0", "MICROPY_PY_FFI=0", "MICROPY_PY_SSL=0"],
            "the outermost guard of each block that builds a submodule; another port's blocks are not this build's"
        );
        assert_eq!(
            harness.test_command(),
            "make -C ports/unix FROZEN_MANIFEST= MICROPY_PY_BTREE=0 MICROPY_PY_FFI=0 MICROPY_PY_SSL=0 test"
        );
        assert!(is_harness_command(&harness.test_command()));
        // Python claims the root by its pyproject.toml; the harness claims it back.
        let paths: Vec<String> = repo.keys().cloned().collect();
        assert!(claims(&paths, &mut |path| repo.get(path).cloned()));
        let without_script: Vec<String> = paths.iter().filter(|path| !path.starts_with("tests/")).cloned().collect();
        assert!(!claims(&without_script, &mut |path| repo.get(path).cloned()), "no harness script in the tree");
        // A root build file is C's own; a folder Makefile without a harness is nothing.
        let mut rooted = paths.clone();
        rooted.push("Makefile".into());
        assert!(!claims(&rooted, &mut |path| repo.get(path).cloned()));
        let plain = files(&[("ports/unix/Makefile", "test:\n\t./run_my_tests\n")]);
        assert_eq!(harness_from_files(&plain), None);
        let spec = infer(&harness, &repo, Utc::now(), &["gcc12".to_string()]).unwrap();
        assert_eq!(spec.test_command, harness.test_command());
        assert!(spec.system_packages.contains(&"python3".to_string()));
        assert!(
            spec.install[1].starts_with("make -j\"$(nproc)\" -C ports/unix FROZEN_MANIFEST= "),
            "{:?}",
            spec.install
        );
        assert!(
            spec.install[1].contains("no build can fetch offline: lib/axtls, lib/berkeley-db-1.xx, lib/libffi, lib/mbedtls, lib/micropython-lib'"),
            "{:?}",
            spec.install
        );
    }

    #[test]
    fn ci_commands_name_the_harness_directly_or_through_their_scripts_functions() {
        let repo = micropython();
        let direct = harness_from_ci_commands(&["make -C ports/unix VARIANT=minimal test"], &repo).unwrap();
        assert_eq!(direct.variables[0], "VARIANT=minimal", "CI's variables first: {direct:?}");
        assert!(direct.variables.contains(&"MICROPY_PY_SSL=0".to_string()));
        assert!(direct.evidence.starts_with("CI's `make -C ports/unix VARIANT=minimal test`"), "{}", direct.evidence);
        // Today's workflow, and 2023's (`source tools/ci.sh && ci_...`).
        let script = harness_from_ci_commands(&["tools/ci.sh unix_minimal_run_tests"], &repo).unwrap();
        assert_eq!((script.folder.as_str(), script.target.as_str()), ("ports/unix", "test"));
        assert_eq!(script.variables[0], "VARIANT=minimal");
        let sourced = harness_from_ci_commands(&["source tools/ci.sh && ci_unix_minimal_run_tests"], &repo).unwrap();
        assert_eq!(sourced.variables[0], "VARIANT=minimal");
        // Through a helper with "$@", and a local from $1.
        let helper = harness_from_ci_commands(&["source tools/ci.sh && ci_unix_standard_run_tests"], &repo).unwrap();
        assert_eq!(helper.variables[0], "VARIANT=standard");
        let local = harness_from_ci_commands(&["tools/ci.sh other_run_tests coverage"], &repo).unwrap();
        assert_eq!((local.variables[0].as_str(), local.target.as_str()), ("VARIANT=coverage", "test_full"));
        // CI's compiler and flags are not taken (2023's `ci_unix_stackless_clang_run_tests`).
        let clang = harness_from_ci_commands(&["make -C ports/unix CC=clang CFLAGS_EXTRA=-DX=1 test"], &repo).unwrap();
        assert!(
            !clang.variables.iter().any(|setting| setting.starts_with("CC") || setting.contains("FLAGS")),
            "{clang:?}"
        );
        // The default build wins over a reduced one, whatever the order.
        let both = harness_from_ci_commands(
            &["tools/ci.sh unix_minimal_run_tests", "tools/ci.sh unix_standard_run_tests"],
            &repo,
        )
        .unwrap();
        assert_eq!(both.variables[0], "VARIANT=standard");
        // `cd DIR && make TARGET`, and the harness run by itself.
        let cd = harness_from_ci_commands(&["cd ports/unix && make VARIANT=standard test"], &repo).unwrap();
        assert_eq!((cd.folder.as_str(), cd.variables[0].as_str()), ("ports/unix", "VARIANT=standard"));
        let itself =
            harness_from_ci_commands(&["cd tests && MICROPY_CPYTHON3=python3 ./run-tests.py -j1"], &repo).unwrap();
        assert_eq!(itself.test_command(), harness_from_files(&repo).unwrap().test_command());
        assert!(
            itself.evidence.starts_with(
                "CI's `cd tests && MICROPY_CPYTHON3=python3 ./run-tests.py -j1` runs `run-tests.py`, which"
            )
        );
        // Commands that run no harness: the build, another tool, a rule without one.
        assert_eq!(
            harness_from_ci_commands(
                &["tools/ci.sh unix_build_helper", "make -C ports/unix submodules", "pytest"],
                &repo
            ),
            None
        );
    }

    /// The project's workflow (as micropython's: each job runs a function of its CI
    /// script) chooses the harness's build, and the spec says so in its `ci` record.
    #[test]
    fn inference_takes_the_harness_ci_runs_and_says_so() {
        let mut repo = micropython();
        let date = Utc::now();
        let from_files = infer_harness(&repo, date, &["gcc12".to_string()]).unwrap().unwrap();
        assert!(from_files.ci.is_empty() && !from_files.test_command.contains("VARIANT="), "{from_files:?}");
        repo.insert(
            ".github/workflows/ports_unix.yml".into(),
            "name: unix port\non: [push]\njobs:\n  minimal:\n    runs-on: ubuntu-latest\n    steps:\n    \
             - uses: actions/checkout@v4\n    - name: Build\n      run: tools/ci.sh unix_minimal_build\n    \
             - name: Run main test suite\n      run: tools/ci.sh unix_minimal_run_tests\n"
                .into(),
        );
        let spec = infer_harness(&repo, date, &["gcc12".to_string()]).unwrap().unwrap();
        assert!(spec.test_command.starts_with("make -C ports/unix VARIANT=minimal "), "{}", spec.test_command);
        assert!(
            spec.ci.iter().any(|line| line
                .contains("from CI: CI's `tools/ci.sh unix_minimal_run_tests` runs `ports/unix/Makefile`'s `test`")),
            "{:?}",
            spec.ci
        );
        // The C ecosystem's own inference takes this path when the root has no build file.
        let inferred = super::super::infer::infer(&repo, date, &["gcc12".to_string()]).unwrap();
        assert_eq!(inferred.test_command, spec.test_command);
        assert_eq!(
            infer_harness(&files(&[("README", "")]), date, &["gcc12".to_string()]).map(|spec| spec.is_ok()),
            None
        );
    }

    /// The harness's compiler is narrowed by CI's tested GCC as any C project's.
    #[test]
    fn the_harness_compiler_is_the_gcc_ci_tests() {
        let mut repo = micropython();
        let runtimes: Vec<String> = ["gcc10", "gcc12", "gcc14"].iter().map(|runtime| runtime.to_string()).collect();
        let date = chrono::TimeZone::with_ymd_and_hms(&Utc, 2024, 8, 1, 0, 0, 0).unwrap();
        assert_eq!(infer_harness(&repo, date, &runtimes).unwrap().unwrap().runtime, "gcc14");
        repo.insert(
            ".github/workflows/ports_unix.yml".into(),
            "on: [push]\njobs:\n  standard:\n    runs-on: ubuntu-latest\n    container: gcc:12\n    steps:\n    \
             - run: tools/ci.sh unix_standard_run_tests\n"
                .into(),
        );
        let spec = infer_harness(&repo, date, &runtimes).unwrap().unwrap();
        assert_eq!(spec.runtime, "gcc12");
        assert!(spec.ci.iter().any(|line| line.starts_with("compiler gcc12, not gcc14 (the date's)")), "{:?}", spec.ci);
    }

    #[test]
    fn zstds_cli_tests_are_a_harness_that_ci_names_through_the_tests_makefile() {
        // zstd's tests/Makefile rule (shortened), as CI runs it.
        let zstd = files(&[
            ("Makefile", "check:\n\t$(MAKE) -C tests $@\n"),
            (
                "tests/Makefile",
                "test-cli-tests: ZSTD = $(PRGDIR)/zstd\ntest-cli-tests: zstd datagen\n\tfile $(ZSTD)\n\
                 \t./cli-tests/run.py --exec-prefix=\"$(QEMU_SYS)\" --zstd=\"$(ZSTD)\" --datagen=./datagen\n",
            ),
        ]);
        let harness = harness_from_ci_commands(&["make -C tests test-cli-tests"], &zstd).unwrap();
        assert_eq!(
            (harness.folder.as_str(), harness.target.as_str(), harness.script.as_str()),
            ("tests", "test-cli-tests", "cli-tests/run.py")
        );
        assert_eq!(harness.test_command(), "make -C tests test-cli-tests");
        assert_eq!(
            harness_from_ci_commands(&["make -C tests test-zstd"], &zstd),
            None,
            "playTests.sh prints no per-test result"
        );
    }

    #[test]
    fn the_touched_files_under_a_tests_folder_are_the_harness_tests() {
        let diff = diff_of(&["tests/basics/int_big.py", "tests/basics/int_big.py.exp", "py/objint.c", "docs/x.rst"]);
        assert_eq!(test_files(&diff), ["tests/basics/int_big.py", "tests/basics/int_big.py.exp"]);
    }

    /// Runs the C test helper in a temporary folder holding `tree`, with the test
    /// command `command` and the touched files `touched`; its output.
    fn helper_run(tree: &[(&str, &str)], command: &[&str], touched: &[&str]) -> String {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in tree {
            let path = dir.path().join(path);
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(path, text).unwrap();
        }
        let helper = dir.path().join("helper.sh");
        fs_err::write(&helper, super::super::image::C_TEST_HELPER_SCRIPT).unwrap();
        let output = std::process::Command::new("bash")
            .arg(&helper)
            .arg(dir.path().join("report"))
            .args(command)
            .arg("--")
            .args(touched)
            .current_dir(dir.path())
            .env("SWE_HARVEST_SOURCES_STAMP", dir.path().join("stamp"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
    }

    /// The helper's result lines.
    fn results(output: &str) -> Vec<&str> {
        output.lines().skip_while(|line| *line != "swe-harvest results:").skip(1).collect()
    }

    /// A port's Makefile whose `test` rule runs a harness script that prints canned
    /// lines of micropython's run-tests.py (its format: the word, two spaces, the test
    /// as given, a trailing space; `lrge` for a test too large for the target; the
    /// summary), and the tests it was given.
    #[test]
    fn the_helper_reads_micropythons_per_test_lines_and_runs_the_touched_tests_alone() {
        let makefile = "PROG = build/prog\nall: $(PROG)\n$(PROG):\n\tmkdir -p build && touch $(PROG)\n\
                        test: $(PROG)\n\tcd ../../tests && MICROPY_MICROPYTHON=$(abspath $(PROG)) sh ./run-tests.py\n";
        let harness = "echo 'platform=linux arch=x64'\necho \"given: $*\"\n\
                       printf 'pass  basics/int_big.py \\nFAIL  basics/int_neg.py \\nskip  extmod/ssl_basic.py\\n'\n\
                       printf 'lrge  stress/recursion.py\\npass  basics/int_big.py (unittest: 3 ran)\\n'\n\
                       printf '5 tests performed (120 individual testcases)\\n3 tests passed\\n1 tests failed: basics/int_neg.py\\n'\n\
                       exit 1\n";
        let tree = [
            ("ports/unix/Makefile", makefile),
            ("tests/run-tests.py", harness),
            ("tests/basics/int_big.py", "print(1)\n"),
            ("tests/basics/int_neg.py", "print(-1)\n"),
            ("tests/basics/int_neg.py.exp", "-1\n"),
        ];
        let output = helper_run(
            &tree,
            &["make", "-C", "ports/unix", "FEATURE=0", "test"],
            &["tests/basics/int_neg.py.exp", "tests/basics/int_big.py", "tests/run-tests.py", "py/obj.c"],
        );
        assert!(
            output.contains("harness tests selected by the touched files: basics/int_neg.py basics/int_big.py\n"),
            "a touched .exp is its test's; the harness itself and a source are no tests: {output}"
        );
        assert!(output.contains("given: basics/int_neg.py basics/int_big.py\n"), "{output}");
        assert_eq!(
            results(&output),
            [
                "PASS: basics/int_big.py",
                "FAIL: basics/int_neg.py",
                "SKIP: extmod/ssl_basic.py",
                "SKIP: stress/recursion.py"
            ],
            "{output}"
        );
        let whole = helper_run(&tree, &["make", "-C", "ports/unix", "test"], &["py/obj.c"]);
        assert!(whole.contains("no touched file is a test of the harness; running all of it"), "{whole}");
        assert!(whole.contains("given: \n"), "{whole}");
        // A rule that runs no known harness: its exit code, as a plain Makefile's target.
        let other = helper_run(
            &[("ports/unix/Makefile", "all:\n\ttrue\ntest:\n\t./selftest.sh\n")],
            &["make", "-C", "ports/unix", "test"],
            &[],
        );
        // (Through the plain Makefile's runner, whose results file is a fixed path in
        // /tmp: another test's run on this host may add its own lines.)
        assert!(results(&other).contains(&"FAIL: ports/unix/make-test"), "{other}");
        let unnamed = helper_run(&tree, &["make", "-C", "ports/unix"], &[]);
        assert!(unnamed.contains("names no folder and rule to run (make -C DIR [VAR=VALUE...] RULE)"), "{unnamed}");
    }

    /// zstd's cli-tests harness (its run.py's lines: `PASS: NAME` per test, `FAIL: NAME`
    /// again in its summary), run by a rule of `tests/Makefile` from that folder.
    #[test]
    fn the_helper_reads_zstds_cli_tests_lines_and_gives_it_the_touched_tests() {
        let makefile = "default: fullbench\nfullbench:\n\tfalse\ndatagen:\n\ttouch datagen\ntest-cli-tests: datagen\n\tsh ./cli-tests/run.py --exec-prefix=\"\" --zstd=../programs/zstd\n";
        let harness = "echo \"given: $*\"\nprintf 'PASS: basic/help.sh\\nFAIL: compression/levels.sh\\n----\\n'\n\
                       printf 'FAIL: compression/levels.sh\\nFAILED 1 / 2 tests!\\n'\nexit 1\n";
        let tree = [
            ("tests/Makefile", makefile),
            ("tests/cli-tests/run.py", harness),
            ("tests/cli-tests/basic/help.sh", "zstd -h\n"),
            ("tests/cli-tests/compression/levels.sh", "zstd -1\n"),
            ("tests/cli-tests/compression/levels.sh.stderr.exact", "x\n"),
        ];
        let output = helper_run(
            &tree,
            &["make", "-C", "tests", "test-cli-tests"],
            &["tests/cli-tests/compression/levels.sh.stderr.exact"],
        );
        assert!(
            output.contains("given: --exec-prefix= --zstd=../programs/zstd cli-tests/compression/levels.sh\n"),
            "{output}"
        );
        assert!(
            !output.contains("the build of tests failed"),
            "the rule's prerequisites are built, not the default goal: {output}"
        );
        assert_eq!(results(&output), ["PASS: basic/help.sh", "FAIL: compression/levels.sh"], "{output}");
    }
}
