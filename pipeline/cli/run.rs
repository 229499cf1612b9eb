//! `run`: every stage for the given repositories, in order: crawl, mirror,
//! extract, validate. Each stage is the same code as its own command, so `run` can be
//! killed and started again like any of them. A stage that ends with failed items
//! does not stop the run (the exit code says so at the end); a stage that cannot run
//! at all (no Docker engine, an unreachable clone URL) stops it with its error.

use super::args::{CrawlArgs, MirrorArgs, RepoSelection, RunArgs, ValidateArgs};
use super::{ExitStatus, GlobalSettings, crawl, extract, mirror, validate};

pub fn run(settings: &GlobalSettings, args: &RunArgs) -> anyhow::Result<ExitStatus> {
    let repos = &args.selection.repos;
    let mut status = ExitStatus::Success;
    let mut record = |stage: &str, outcome: ExitStatus| {
        if outcome == ExitStatus::Failure {
            tracing::warn!("{stage} finished with failures; going on with the next stage");
            status = ExitStatus::Failure;
        }
    };

    tracing::info!("run: crawl");
    let crawl_args = CrawlArgs { selection: RepoSelection { repos: repos.clone() }, options: args.crawl.clone() };
    record("crawl", crawl::crawl(settings, &crawl_args)?);

    tracing::info!("run: mirror");
    let mirror_args = MirrorArgs { selection: RepoSelection { repos: repos.clone() }, options: args.mirror.clone() };
    record("mirror", mirror::mirror(settings, &mirror_args)?);

    tracing::info!("run: extract");
    let mut store = swe_harvest::store::Store::open_in(&settings.data_dir)?;
    record("extract", extract::run(settings, &mut store, repos, args.extract.compat)?);
    drop(store);

    tracing::info!("run: validate");
    let validate_args = ValidateArgs {
        repos: repos.clone(),
        instances: Vec::new(),
        input: None,
        out: None,
        compare: false,
        options: args.validate.clone(),
    };
    record("validate", validate::validate(settings, &validate_args)?);
    Ok(status)
}
