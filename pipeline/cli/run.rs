//! `run`: every stage for the given repositories, in order: crawl, mirror,
//! extract, validate, probe (unless `probe.enabled = false`), screen. Each stage is the same code as its own command, so `run` can be
//! killed and started again like any of them. A stage that ends with failed items
//! does not stop the run (the exit code says so at the end); a stage that cannot run
//! at all (no Docker engine, an unreachable clone URL) stops it with its error.

use super::args::{CrawlArgs, ExtractArgs, MirrorArgs, ProbeArgs, RepoSelection, RunArgs, ScreenArgs, ValidateArgs};
use super::{ExitStatus, GlobalSettings, crawl, extract, mirror, probe, screen, validate};

pub fn run(settings: &GlobalSettings, args: &RunArgs) -> anyhow::Result<ExitStatus> {
    let selection = || RepoSelection { repos: args.selection.repos.clone() };
    let mut status = ExitStatus::Success;
    let mut record = |stage: &str, outcome: ExitStatus| {
        if outcome == ExitStatus::Failure {
            tracing::warn!("{stage} finished with failures; going on with the next stage");
            status = ExitStatus::Failure;
        }
    };

    tracing::info!("run: crawl");
    record("crawl", crawl::crawl(settings, &CrawlArgs { selection: selection(), options: args.crawl.clone() })?);

    tracing::info!("run: mirror");
    record("mirror", mirror::mirror(settings, &MirrorArgs { selection: selection(), options: args.mirror.clone() })?);

    tracing::info!("run: extract");
    record(
        "extract",
        extract::extract(settings, &ExtractArgs { selection: selection(), options: args.extract.clone() })?,
    );

    tracing::info!("run: validate");
    let validate_args = ValidateArgs {
        repos: args.selection.repos.clone(),
        instances: Vec::new(),
        input: None,
        out: None,
        compare: false,
        write_config: false,
        plan: false,
        options: args.validate.clone(),
    };
    record("validate", validate::validate(settings, &validate_args)?);

    if settings.config.config.probe.enabled {
        tracing::info!("run: probe");
        let probe_args = ProbeArgs {
            repos: args.selection.repos.clone(),
            instances: Vec::new(),
            input: None,
            out: None,
            // The mutants run where validation ran, as many at once.
            workers: args.validate.workers,
            backend: args.validate.backend,
            options: args.probe.clone(),
        };
        record("probe", probe::probe(settings, &probe_args)?);
    } else {
        tracing::info!("run: probe is off (probe.enabled = false)");
    }

    tracing::info!("run: screen");
    let screen_args = ScreenArgs { repos: args.selection.repos.clone(), input: None, out: None, json: false };
    record("screen", screen::screen(settings, &screen_args)?);
    Ok(status)
}
