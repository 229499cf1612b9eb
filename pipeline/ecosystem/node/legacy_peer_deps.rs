//! The rung `legacy-peer-deps`: npm's install with `--legacy-peer-deps`, when npm
//! refused the tree because peer dependencies conflict (`ERESOLVE`). npm 6 and older
//! installed such a tree with a warning, and projects kept using npm 6 long after npm 7
//! came out (2020-10-13; Node's LTS releases shipped npm 6 until Node 16): inference
//! gives the flag to tasks dated before npm 7, this rung to those after (decision,
//! 2026-11-29, from held-out dayjs-1161 and 1319, of October 2020 and January 2021:
//! `rollup-plugin-babel` asks for a newer `rollup` than the project pins, and both rows
//! were dropped `environment_build_failed`).

use std::sync::LazyLock;

use regex::Regex;

use super::infer::LEGACY_PEER_DEPS;
use crate::model::{EnvironmentSpec, Rung};

/// Whether a build log says npm refused conflicting peer dependencies.
fn refused_peers(log: &str) -> bool {
    log.contains("ERESOLVE") || log.contains("Fix the upstream dependency conflict")
}

/// An install step with `--legacy-peer-deps` on each project install of npm (`npm ci`,
/// `npm install` of the project, as inference writes them; not the global install of
/// npm itself). A step that has the flag already is kept as it is.
fn with_legacy_peers(step: &str) -> String {
    if step.contains(LEGACY_PEER_DEPS) {
        return step.to_string();
    }
    static INSTALL: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\bnpm (ci|install) --no-audit --no-fund").expect("valid regex"));
    INSTALL.replace_all(step, format!("$0 {LEGACY_PEER_DEPS}")).into_owned()
}

/// The next environment after `last`'s image failed to build with `log`: the same
/// with `--legacy-peer-deps`, when npm refused conflicting peer dependencies and the
/// install does not have the flag already.
pub fn next_spec(last: &EnvironmentSpec, log: &str) -> Option<EnvironmentSpec> {
    if !refused_peers(log) {
        return None;
    }
    let install: Vec<String> = last.install.iter().map(|step| with_legacy_peers(step)).collect();
    if install == last.install {
        return None;
    }
    tracing::info!("npm refused conflicting peer dependencies; installing as npm 6 did (--legacy-peer-deps)");
    Some(EnvironmentSpec { install, rung: Rung::LegacyPeerDeps, ..last.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecosystem::node::infer::{PackageManager, install_steps};

    #[test]
    fn npm_refusing_conflicting_peers_gets_legacy_peer_deps_once() {
        let date = "2020-10-21T03:52:23Z".parse().unwrap();
        let install = install_steps(&PackageManager::Npm { lockfile: false }, date);
        assert!(!install.iter().any(|step| step.contains("--legacy-peer-deps")), "after npm 7: {install:?}");
        let dated = EnvironmentSpec { install, ..Default::default() };
        let log = "npm error code ERESOLVE\nnpm error ERESOLVE unable to resolve dependency tree\n\
                   npm error Fix the upstream dependency conflict, or retry\n";
        let next = next_spec(&dated, log).expect("a rung");
        assert_eq!(next.rung, Rung::LegacyPeerDeps);
        let npm_self = &next.install[0];
        assert!(npm_self.starts_with("npm install --global") && !npm_self.contains("legacy"), "{npm_self}");
        let project = &next.install[1];
        assert_eq!(
            project
                .matches("npm install --no-audit --no-fund --legacy-peer-deps --before=2020-10-21T03:52:23Z")
                .count(),
            2,
            "{project}"
        );
        assert_eq!(next_spec(&next, log), None, "once: every install has the flag");
        assert_eq!(next_spec(&dated, "npm error code ENOVERSIONS\n"), None, "another failure");
        // A task before npm 7 has the flag from inference: nothing to add.
        let old = install_steps(&PackageManager::Npm { lockfile: true }, "2019-06-01T00:00:00Z".parse().unwrap());
        assert_eq!(next_spec(&EnvironmentSpec { install: old, ..Default::default() }, log), None);
    }
}
