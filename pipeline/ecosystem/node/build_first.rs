//! The rung `build-first`: the project's own `build` script before the tests of every
//! run, when a run's output says a test could not load what the build makes. Many
//! projects test their built output (a monorepo's `packages/*/lib`, which babel's tests
//! import through its workspace links) while their test script does not build (babel's
//! `make test`, which inference does not follow, expects a `make build` before it).
//! The build runs in each run, after the patches, so that it builds the patched
//! sources (decision, 2026-11-29, from babel-15445: before, the task was dropped as
//! `environment_unusable` with `Cannot find module
//! '/testbed/node_modules/@babel/parser/lib/index.js'`).

use serde_json::Value;

use crate::ecosystem::RepoFiles;
use crate::model::{EnvironmentSpec, Rung};

/// Folders that builds write into, as a missing module's path names them.
const BUILD_FOLDERS: &[&str] = &["lib", "dist", "build", "es", "esm", "cjs", "out"];

/// The modules of the repository that a run's output says could not be loaded and
/// that a build makes: the path Node names (`Cannot find module 'PATH'`, CommonJS or
/// ESM) is inside the repository (absolute under `/testbed/`, or relative) and passes
/// through a build folder (`lib`, `dist`, ...). A bare package name is an install's
/// concern, not a build's.
pub fn missing_build_outputs(log: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for line in log.lines() {
        let Some((_, rest)) = line.split_once("Cannot find module '") else { continue };
        let Some((module, _)) = rest.split_once('\'') else { continue };
        let inside = module.starts_with("/testbed/") || module.starts_with("./") || module.starts_with("../");
        let built = module.split('/').any(|component| BUILD_FOLDERS.contains(&component));
        if inside && built && !found.iter().any(|seen| seen == module) {
            found.push(module.to_string());
        }
    }
    found
}

/// The next environment after `last` failed with `log`: the same with `npm run build
/// && ` before its test command, when the log names a missing build output, the
/// project's `package.json` has a `build` script, and no environment tried builds
/// first already.
pub fn next_spec(tried: &[EnvironmentSpec], log: &str, files: &RepoFiles) -> Option<EnvironmentSpec> {
    let last = tried.last()?;
    if tried.iter().any(|spec| spec.rung == Rung::BuildFirst) || last.test_command.contains("npm run build &&") {
        return None;
    }
    let package: Value = serde_json::from_str(files.get("package.json")?).ok()?;
    package.get("scripts")?.get("build")?.as_str()?;
    let missing = missing_build_outputs(log);
    let first = missing.first()?;
    tracing::info!(module = %first, "a test could not load a build output; building before the tests");
    Some(EnvironmentSpec {
        test_command: format!("npm run build && {}", last.test_command),
        rung: Rung::BuildFirst,
        ..last.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_module_is_a_build_output_when_it_is_the_repositorys_and_under_a_build_folder() {
        let log = "FAIL packages/babel-generator/test/index.js\n  ● Test suite failed to run\n\
                   Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/testbed/node_modules/@babel/parser/lib/index.js' \
                   imported from /testbed/packages/babel-generator/test/index.js\n\
                   Error: Cannot find module '../dist/calc'\nRequire stack:\n\
                   Error: Cannot find module 'left-pad'\n\
                   Error: Cannot find module '/usr/lib/node_modules/npm/x.js'\n\
                   Error: Cannot find module './helpers/setup'\n\
                   Error: Cannot find module '../dist/calc'\n";
        assert_eq!(
            missing_build_outputs(log),
            vec!["/testbed/node_modules/@babel/parser/lib/index.js".to_string(), "../dist/calc".to_string()]
        );
    }

    #[test]
    fn the_build_runs_first_once_when_the_project_has_a_build_script() {
        let log = "Error: Cannot find module '/testbed/packages/calc/lib/index.js'. Please verify that the \
                   package.json has a valid \"main\" entry\n";
        let dated = EnvironmentSpec { test_command: "mocha --exit".into(), ..Default::default() };
        let files = |scripts: &str| -> RepoFiles {
            [("package.json".to_string(), format!("{{\"name\": \"calc\", \"scripts\": {scripts}}}"))]
                .into_iter()
                .collect()
        };
        let with_build = files(r#"{"build": "node build.js", "test": "make test"}"#);
        let next = next_spec(std::slice::from_ref(&dated), log, &with_build).unwrap();
        assert_eq!(next.test_command, "npm run build && mocha --exit");
        assert_eq!(next.rung, Rung::BuildFirst);
        assert_eq!(next_spec(&[dated.clone(), next], log, &with_build), None, "once");
        assert_eq!(next_spec(std::slice::from_ref(&dated), log, &files(r#"{"test": "mocha"}"#)), None, "no build");
        let unrelated = "Error: Cannot find module 'left-pad'\n";
        assert_eq!(next_spec(std::slice::from_ref(&dated), unrelated, &with_build), None);
    }
}
