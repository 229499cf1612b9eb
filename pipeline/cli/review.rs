//! `review`: starts the review page's server (`swe_harvest::review`) on 127.0.0.1
//! (or `--listen`, with a warning), prints its URL on stdout and serves until Ctrl-C.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr};

use anyhow::Context;

use swe_harvest::UsageError;
use swe_harvest::review::{self, ReviewSettings, ReviewSource};

use super::args::{ReviewArgs, ReviewStage};
use super::{ExitStatus, GlobalSettings, WhenMissing, command_line, runtime};

/// The longest reviewer name accepted.
const MAX_REVIEWER_CHARS: usize = 100;

pub fn review(global: &GlobalSettings, args: &ReviewArgs) -> anyhow::Result<ExitStatus> {
    let source = match (&args.release, args.stage) {
        (Some(release), _) => ReviewSource::release(release)?,
        (None, Some(ReviewStage::Validated) | None) => ReviewSource::Validated,
    };
    let reviewer = reviewer(args.reviewer.as_deref())?;
    let listen = args.listen.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    let store = global.open_store(WhenMissing::Refuse {
        hint: "run the pipeline first (`swe-harvest run --repo OWNER/NAME`), or pass the right `--data-dir`",
    })?;
    let settings = ReviewSettings {
        data_dir: global.data_dir.clone(),
        source: source.clone(),
        listen,
        port: args.port,
        reviewer: reviewer.clone(),
        command_line: command_line(),
    };
    let session = review::open(store, settings).with_context(|| format!("cannot review {}", source.describe()))?;

    let mut stderr = std::io::stderr().lock();
    if !listen.is_loopback() {
        writeln!(
            stderr,
            "warning: listening on {listen}, not only on this machine: there is no login, so anyone who can reach \
             this address reads the tasks and records decisions as {reviewer}"
        )?;
    }
    if let Some(reason) = session.read_only_reason() {
        writeln!(stderr, "warning: the page opens {reason}")?;
    }
    writeln!(
        stderr,
        "reviewing {} tasks of {} as {reviewer}; open the address below, Ctrl-C stops",
        session.task_count(),
        source.describe()
    )?;
    drop(stderr);
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", session.url())?;
    stdout.flush()?;
    drop(stdout);

    runtime()?
        .block_on(session.serve(async {
            let _ = tokio::signal::ctrl_c().await;
        }))
        .context("the review server stopped")?;
    Ok(ExitStatus::Success)
}

/// `--reviewer`, else the login name, else `reviewer`; printable and short.
fn reviewer(given: Option<&str>) -> Result<String, UsageError> {
    let name = given
        .map(str::to_string)
        .or_else(|| std::env::var(swe_harvest::env_vars::USER).ok())
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "reviewer".to_string());
    if name.chars().count() > MAX_REVIEWER_CHARS || name.chars().any(char::is_control) {
        return Err(UsageError::new(format!("`--reviewer` must be at most {MAX_REVIEWER_CHARS} printable characters"))
            .with_hint("for example `--reviewer ana`"));
    }
    Ok(name)
}
