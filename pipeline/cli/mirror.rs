//! `mirror`: clone or fetch one bare mirror per repository, with PR heads.

use std::io::Write;

use swe_harvest::mirror::{self, MirrorSettings};
use swe_harvest::store::Store;

use super::args::MirrorArgs;
use super::logging::CliReporter;
use super::{ExitStatus, GlobalSettings};

/// `--clone-url` > `SWE_HARVEST_MIRROR__CLONE_URL` > config file > default.
pub fn settings(global: &GlobalSettings, clone_url: Option<&str>) -> MirrorSettings {
    MirrorSettings {
        data_dir: global.data_dir.clone(),
        clone_url: clone_url.map(String::from).unwrap_or_else(|| global.config.config.mirror.clone_url.clone()),
    }
}

pub fn mirror(global: &GlobalSettings, args: &MirrorArgs) -> anyhow::Result<ExitStatus> {
    let settings = settings(global, args.options.clone_url.as_deref());
    let mut store = Store::open_in(&global.data_dir)?;
    run(&mut store, &args.selection.repos, &settings)
}

/// Mirrors the repositories and prints one line per repository; used by `run` too.
pub fn run(
    store: &mut Store,
    repos: &[swe_harvest::model::RepoSlug],
    settings: &MirrorSettings,
) -> anyhow::Result<ExitStatus> {
    let reporter = CliReporter::new();
    let outcomes = mirror::run(store, repos, settings, &reporter)?;
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    let mut failed = false;
    for outcome in &outcomes {
        match &outcome.error {
            None => writeln!(
                stdout,
                "{}: {} {} ({} PR heads, {} objects received, {:.1}s)",
                outcome.repo,
                if outcome.cloned { "cloned into" } else { "fetched into" },
                outcome.path.display(),
                outcome.pull_heads,
                outcome.received_objects,
                outcome.seconds
            )?,
            Some(error) => {
                failed = true;
                writeln!(stderr, "error: failed to mirror `{}`: {error}", outcome.repo)?;
                writeln!(
                    stderr,
                    "\nhint: pass a reachable URL or a local path with `--clone-url` (`{{owner}}` and `{{name}}` are replaced), or set `mirror.clone_url`"
                )?;
            }
        }
    }
    Ok(if failed { ExitStatus::Failure } else { ExitStatus::Success })
}
