//! The packages that provide modules a task's runs could not import
//! (`No module named 'py'`). The environment is inferred at the environment commit,
//! which may no longer declare what an older base commit imports (pytest dropped
//! `py`; `importlib_metadata` left for the standard library), and a gold patch may
//! add a dependency (pylint's `appdirs`). Python's move of the loop that settles a
//! task's environment ([`packages_to_add`]): after the task's first runs, when a
//! missing module may have cost the task (it would be dropped, or the module is
//! missing only before the fix, where it may be what "fails"), the same rung with
//! these packages added, at the task's date like the rest.
//!
//! Decision: a top-level module is taken to be its distribution's name (that holds
//! for most of PyPI; uv normalises `importlib_metadata` to `importlib-metadata`), but
//! for the well-known exceptions below. A dotted name is a missing submodule of an
//! installed package (another version would be needed, which this cannot know), so it
//! is left alone unless it is a namespace package named below. The project's own
//! modules (a module the fix adds) and private ones are never installed.

use std::collections::BTreeSet;

use crate::ecosystem::RunsSeen;

/// Modules whose distribution has another name.
const DISTRIBUTIONS: &[(&str, &str)] = &[
    ("attr", "attrs"),
    ("backports.zoneinfo", "backports.zoneinfo"),
    ("bs4", "beautifulsoup4"),
    ("cv2", "opencv-python-headless"),
    ("Crypto", "pycryptodome"),
    ("dateutil", "python-dateutil"),
    ("distutils", "setuptools"),
    ("dns", "dnspython"),
    ("dotenv", "python-dotenv"),
    ("git", "GitPython"),
    ("google.protobuf", "protobuf"),
    ("jwt", "PyJWT"),
    ("magic", "python-magic"),
    ("OpenSSL", "pyOpenSSL"),
    ("PIL", "Pillow"),
    ("pkg_resources", "setuptools"),
    ("ruamel.yaml", "ruamel.yaml"),
    ("serial", "pyserial"),
    ("skimage", "scikit-image"),
    ("sklearn", "scikit-learn"),
    ("yaml", "PyYAML"),
    ("zmq", "pyzmq"),
    ("zope.interface", "zope.interface"),
];

/// Top-level names that are only namespaces of several distributions: which one is
/// meant is not known from the name alone.
const NAMESPACES: &[&str] = &["google", "backports", "zope", "ruamel", "azure", "jaraco"];

/// The packages to add after the task's runs `runs` (see the module's text): none
/// but after its first runs, when they are not labelled or a module was missing only
/// before the fix, and only packages its environment does not hold yet.
pub(crate) fn packages_to_add(runs: &RunsSeen<'_>) -> Vec<String> {
    let missing_only_before = runs.missing_before.difference(runs.missing_after).next().is_some();
    if !runs.first || (runs.labelled && !missing_only_before) {
        return Vec::new();
    }
    let missing: BTreeSet<String> = runs.missing_before.union(runs.missing_after).cloned().collect();
    packages_for(&missing, &module_names(runs.project_paths))
        .into_iter()
        .filter(|package| !runs.spec.extra_packages.contains(package))
        .collect()
}

/// The modules a run's output says it could not import (`No module named 'py'`).
pub(crate) fn modules_not_found(text: &str) -> Vec<String> {
    let pattern = regex::Regex::new(r"No module named '([A-Za-z0-9_.]+)'").expect("valid regex");
    pattern.captures_iter(text).map(|capture| capture[1].to_string()).collect()
}

/// The names a module of the project itself may have: every folder and every module
/// file's stem of its paths. A missing module of these names is the task's own
/// business (a module the fix adds), never a dependency to install.
fn module_names(paths: &[String]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for path in paths {
        let mut components: Vec<&str> = path.split('/').collect();
        let file = components.pop().unwrap_or_default();
        names.extend(components.iter().map(|component| component.to_string()));
        // Modules only: `py.typed` is no module `py` (pytest's own marker file)
        // (`name.cpython-311-x86_64-linux-gnu.so` is the module `name`).
        if let (Some((stem, _)), Some((_, "py" | "pyi" | "pyx" | "so" | "pyd"))) =
            (file.split_once('.'), file.rsplit_once('.'))
        {
            names.insert(stem.to_string());
        }
    }
    names
}

/// The distributions to install for `missing` modules, sorted and without repeats;
/// none for a module whose top-level name is one of `own`.
fn packages_for(missing: &BTreeSet<String>, own: &BTreeSet<String>) -> Vec<String> {
    let mut packages = BTreeSet::new();
    for module in missing {
        let top = module.split('.').next().unwrap_or_default();
        if top.is_empty() || top.starts_with('_') || own.contains(top) {
            continue;
        }
        if let Some((_, distribution)) = DISTRIBUTIONS.iter().find(|(name, _)| *name == module || *name == top) {
            packages.insert(distribution.to_string());
        } else if !module.contains('.') && !NAMESPACES.contains(&top) {
            packages.insert(module.replace('_', "-"));
        }
    }
    packages.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|name| name.to_string()).collect()
    }

    #[test]
    fn missing_modules_become_their_distributions_but_the_projects_own_and_submodules() {
        let missing = set(&["py", "importlib_metadata", "yaml", "pylint.checkers.new", "_pytest", "xarray", "pkg.sub"]);
        let own = set(&["pylint", "xarray", "tests"]);
        assert_eq!(packages_for(&missing, &own), vec!["PyYAML", "importlib-metadata", "py"]);
    }

    #[test]
    fn the_modules_a_run_could_not_import_are_read_from_its_output() {
        let log = "  File \"/testbed/src/_pytest/compat.py\", line 21, in <module>\n    import py\n\
                   ModuleNotFoundError: No module named 'py'\nE   ModuleNotFoundError: No module named 'appdirs.x'\n";
        assert_eq!(modules_not_found(log), ["py", "appdirs.x"]);
    }

    #[test]
    fn the_projects_own_module_names_are_its_folders_and_module_files_only() {
        let paths: Vec<String> =
            ["src/pytest/py.typed", "src/_pytest/compat.py", "ext/fast.cpython-311-x86_64-linux-gnu.so", "README.rst"]
                .iter()
                .map(|path| path.to_string())
                .collect();
        let names = module_names(&paths);
        assert_eq!(
            names.iter().map(String::as_str).collect::<Vec<_>>(),
            ["_pytest", "compat", "ext", "fast", "pytest", "src"]
        );
    }

    #[test]
    fn packages_are_added_after_the_first_runs_only_when_a_missing_module_may_have_cost_the_task() {
        let spec = crate::model::EnvironmentSpec { extra_packages: vec!["appdirs".into()], ..Default::default() };
        let (before, after) = (set(&["py", "appdirs", "calc"]), set(&[]));
        let paths = vec!["calc/__init__.py".to_string()];
        let runs = RunsSeen {
            spec: &spec,
            first: true,
            labelled: true,
            anything_ran: true,
            missing_before: &before,
            missing_after: &after,
            project_paths: &paths,
        };
        // Missing only before the fix: what "fails" may be the module; the project's
        // own `calc` and the package already there are left out.
        assert_eq!(packages_to_add(&runs), vec!["py"]);
        assert!(packages_to_add(&RunsSeen { first: false, ..runs }).is_empty(), "later runs keep what they have");
        let everywhere = set(&["py"]);
        let labelled = RunsSeen { missing_before: &everywhere, missing_after: &everywhere, ..runs };
        assert!(packages_to_add(&labelled).is_empty(), "a labelled task missing it before and after keeps its runs");
        assert_eq!(packages_to_add(&RunsSeen { labelled: false, ..labelled }), vec!["py"]);
    }

    #[test]
    fn namespace_packages_are_installed_by_their_distribution() {
        assert_eq!(packages_for(&set(&["google.protobuf", "google"]), &set(&[])), vec!["protobuf"]);
        assert_eq!(packages_for(&set(&["ruamel.yaml"]), &set(&[])), vec!["ruamel.yaml"]);
    }
}
