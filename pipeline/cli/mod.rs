//! The command line: parses arguments, sets up logging and progress, resolves
//! settings (defaults < config file < environment < flags), runs one command, and
//! turns its outcome into an exit code. The only place that prints for humans.
//!
//! Exit codes: 0 done, 1 failed (something was reported as failed), 2 bad usage or
//! bad config.

mod args;
mod crawl;
mod discover;
mod evaluate;
mod export;
mod extract;
// The reporter and the settings' config are used by stage commands as they land.
#[allow(dead_code)]
mod logging;
mod mirror;
mod release;
mod run;
mod status;
mod validate;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use swe_harvest::UsageError;
use swe_harvest::config::{ConfigError, LoadedConfig};
use swe_harvest::model::RepoSlugError;
use swe_harvest::release::ReleaseError;

use args::{Cli, Command};

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Everything was done.
    Success,
    /// The command ran to its end, but some items failed; they were reported.
    #[allow(dead_code)]
    Failure,
}

/// What every command receives: the resolved global settings.
#[allow(dead_code)]
pub struct GlobalSettings {
    pub data_dir: std::path::PathBuf,
    pub config: LoadedConfig,
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // clap prints help and version to stdout with exit 0, usage errors with 2.
            let _ = error.print();
            return ExitCode::from(error.exit_code() as u8);
        }
    };
    logging::init(cli.verbose, cli.quiet);
    match run(cli) {
        Ok(ExitStatus::Success) => ExitCode::SUCCESS,
        Ok(ExitStatus::Failure) => ExitCode::from(1),
        Err(error) => {
            report_error(&error);
            ExitCode::from(exit_code_of(&error))
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitStatus> {
    let config = LoadedConfig::load(cli.config.as_deref())?;
    let settings = GlobalSettings { data_dir: cli.data_dir, config };
    let name = cli.command.name();
    match cli.command {
        Command::Status(args) => status::status(&settings, &args),
        Command::Discover(args) => discover::discover(&settings, &args),
        Command::Crawl(args) => crawl::crawl(&settings, &args),
        Command::Mirror(args) => mirror::mirror(&settings, &args),
        Command::Extract(args) => extract::extract(&settings, &args),
        Command::Validate(args) => validate::validate(&settings, &args),
        Command::Release(args) => release::release(&settings, &args),
        Command::Evaluate(args) => evaluate::evaluate(&settings, &args),
        Command::Run(args) => run::run(&settings, &args),
        Command::Export(args) => export::export(&settings, &args),
    }
    .with_context(|| format!("`{name}` did not finish"))
}

/// Bad input exits 2; everything else that stops a command exits 1.
fn exit_code_of(error: &anyhow::Error) -> u8 {
    let usage = error.chain().any(|cause| {
        cause.is::<ConfigError>()
            || cause.is::<RepoSlugError>()
            || cause.is::<UsageError>()
            || cause.downcast_ref::<ReleaseError>().is_some_and(|release| {
                matches!(release, ReleaseError::AlreadyExists { .. } | ReleaseError::BadName { .. })
            })
    });
    if usage { 2 } else { 1 }
}

/// `error:` with the chain of causes, then `hint:` lines (uv's manners).
fn report_error(error: &anyhow::Error) {
    let mut stderr = std::io::stderr().lock();
    let mut causes = error.chain();
    if let Some(top) = causes.next() {
        let _ = writeln!(stderr, "error: {top}");
    }
    for cause in causes {
        let _ = writeln!(stderr, "  Caused by: {cause}");
    }
    for cause in error.chain() {
        let hint = if let Some(config) = cause.downcast_ref::<ConfigError>() {
            Some(config.hint())
        } else if let Some(usage) = cause.downcast_ref::<UsageError>() {
            usage.hint.clone()
        } else if let Some(release) = cause.downcast_ref::<ReleaseError>() {
            release.hint()
        } else {
            None
        };
        if let Some(hint) = hint {
            let _ = writeln!(stderr, "\nhint: {hint}");
        }
    }
}
