//! `mirror`: clone or fetch one bare mirror per repository, with PR heads.

use std::io::Write;

use swe_harvest::mirror::{self, MirrorSettings};

use super::args::MirrorArgs;
use super::logging::CliReporter;
use super::{ExitStatus, GlobalSettings, WhenMissing};

pub fn mirror(global: &GlobalSettings, args: &MirrorArgs) -> anyhow::Result<ExitStatus> {
    let settings = MirrorSettings::resolve(
        global.data_dir.clone(),
        &global.config.config.mirror,
        args.options.clone_url.as_deref(),
    );
    let mut store = global.open_store(WhenMissing::Create)?;
    let reporter = CliReporter::new();
    let outcomes = mirror::run(&mut store, &args.selection.repos, &settings, &reporter)?;
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
