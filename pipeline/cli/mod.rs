//! The command line: parses arguments, sets up logging and progress, maps each
//! command's arguments to the stage's plain flags, resolves them through the stage's
//! one `resolve` (defaults < config file < environment < flags), runs the stage, and
//! turns its outcome into an exit code. The only place that prints for humans.
//!
//! Shared by every command: [`GlobalSettings::open_store`] and [`runtime`].
//!
//! Every command that writes takes the data dir's lock first ([`swe_harvest::lock`]);
//! `status` and `export` only read and never take it; `review` takes it for each
//! decision it writes.
//!
//! Exit codes: 0 done, 1 failed (something was reported as failed), 2 bad usage or
//! bad config, or refused because another process owns the data dir (nothing was
//! done; run it again when that one has finished).

mod args;
mod crawl;
mod discover;
mod evaluate;
mod export;
mod extract;
mod gc;
mod images;
// The reporter and the settings' config are used by stage commands as they land.
#[allow(dead_code)]
mod logging;
mod mirror;
mod probe;
mod release;
mod review;
mod run;
mod screen;
mod status;
mod validate;
mod validate_plan;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use swe_harvest::UsageError;
use swe_harvest::config::LoadedConfig;
use swe_harvest::ecosystem::runtimes::PlanError;
use swe_harvest::evaluate::EvaluateSettingsError;
use swe_harvest::lock::{DataDirLock, LockError};
use swe_harvest::model::RepoSlugError;
use swe_harvest::release::ReleaseError;
use swe_harvest::review::ReviewError;
use swe_harvest::settings::ConfigError;
use swe_harvest::store::{STORE_FILE, Store};
use swe_harvest::task_rows::RowsError;

use args::{Cli, Command};

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Everything was done.
    Success,
    /// The command ran to its end, but some items failed; they were reported.
    Failure,
}

/// What every command receives: the resolved global settings.
pub struct GlobalSettings {
    pub data_dir: std::path::PathBuf,
    pub config: LoadedConfig,
}

/// What [`GlobalSettings::open_store`] does when the data dir has no store yet.
#[derive(Debug, Clone, Copy)]
pub enum WhenMissing {
    /// Create it (the stages that write).
    Create,
    /// Bad usage, with this hint (the commands that only read).
    Refuse { hint: &'static str },
}

impl GlobalSettings {
    /// The state store of the data dir: the one way every command opens it.
    pub fn open_store(&self, when_missing: WhenMissing) -> anyhow::Result<Store> {
        let path = self.data_dir.join(STORE_FILE);
        if let WhenMissing::Refuse { hint } = when_missing {
            if !path.exists() {
                return Err(UsageError::new(format!("there is no state store at `{}`", path.display()))
                    .with_hint(hint)
                    .into());
            }
        }
        Store::open_in(&self.data_dir)
            .with_context(|| format!("failed to open the store in `{}`", self.data_dir.display()))
    }

    /// Takes the data dir's lock for this process (the commands that write), or
    /// refuses with who holds it.
    fn lock_data_dir(&self) -> Result<DataDirLock, LockError> {
        DataDirLock::acquire(&self.data_dir, &command_line())
    }
}

/// This process's command line, quoted where an argument has spaces: what the lock
/// file says about its holder.
pub fn command_line() -> String {
    let arguments: Vec<String> = std::env::args_os()
        .map(|argument| {
            let argument = argument.to_string_lossy().into_owned();
            if argument.is_empty() || argument.contains(char::is_whitespace) {
                format!("'{argument}'")
            } else {
                argument
            }
        })
        .collect();
    arguments.join(" ")
}

/// The async runtime of the commands that talk to GitHub or Docker.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().context("failed to start the async runtime")
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
    // The catalogue needs no config: scripts/setup.sh reads the plan wherever it runs.
    if let Command::Images(command) = &cli.command {
        return images::images(command).context("`images` did not finish");
    }
    let config = LoadedConfig::load(cli.config.as_deref())?;
    let settings = GlobalSettings { data_dir: cli.data_dir, config };
    let name = cli.command.name();
    // Held until the command returns: one writing process per data dir.
    let _lock = if cli.command.writes() { Some(settings.lock_data_dir()?) } else { None };
    match cli.command {
        Command::Status(args) => status::status(&settings, &args),
        Command::Discover(args) => discover::discover(&settings, &args),
        Command::Crawl(args) => crawl::crawl(&settings, &args),
        Command::Mirror(args) => mirror::mirror(&settings, &args),
        Command::Extract(args) => extract::extract(&settings, &args),
        Command::Validate(args) => validate::validate(&settings, &args),
        Command::Probe(args) => probe::probe(&settings, &args),
        Command::Screen(args) => screen::screen(&settings, &args),
        Command::Release(args) => release::release(&settings, &args),
        Command::Evaluate(args) => evaluate::evaluate(&settings, &args),
        Command::Run(args) => run::run(&settings, &args),
        Command::Export(args) => export::export(&settings, &args),
        Command::Review(args) => review::review(&settings, &args),
        Command::Images(command) => images::images(&command),
        Command::Gc(args) => gc::gc(&settings, &args),
    }
    .with_context(|| format!("`{name}` did not finish"))
}

/// Bad input exits 2; everything else that stops a command exits 1.
fn exit_code_of(error: &anyhow::Error) -> u8 {
    let usage = error.chain().any(|cause| {
        cause.is::<ConfigError>()
            || cause.is::<RepoSlugError>()
            || usage_error(cause).is_some()
            || cause.downcast_ref::<ReleaseError>().is_some_and(ReleaseError::is_usage)
            || cause.downcast_ref::<RowsError>().is_some_and(RowsError::is_usage)
            || cause.downcast_ref::<ReviewError>().is_some_and(ReviewError::is_usage)
            || cause.is::<PlanError>()
            // Refused before doing anything, like bad usage; a scheduler can retry later.
            || matches!(cause.downcast_ref::<LockError>(), Some(LockError::Held { .. }))
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
        } else if let Some(usage) = usage_error(cause) {
            usage.hint.clone()
        } else if let Some(release) = cause.downcast_ref::<ReleaseError>() {
            release.hint()
        } else if let Some(rows) = cause.downcast_ref::<RowsError>() {
            rows.hint()
        } else if let Some(lock) = cause.downcast_ref::<LockError>() {
            lock.hint()
        } else if let Some(review) = cause.downcast_ref::<ReviewError>() {
            review.hint()
        } else {
            None
        };
        if let Some(hint) = hint {
            let _ = writeln!(stderr, "\nhint: {hint}");
        }
    }
}

/// The usage error in `cause`, also where a library error wraps one transparently.
fn usage_error<'a>(cause: &'a (dyn std::error::Error + 'static)) -> Option<&'a UsageError> {
    cause.downcast_ref::<UsageError>().or_else(|| match cause.downcast_ref::<EvaluateSettingsError>() {
        Some(EvaluateSettingsError::Usage(usage)) => Some(usage),
        _ => None,
    })
}
