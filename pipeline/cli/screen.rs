//! `screen`: the quality screen of the store's validated tasks (or of SWE-bench rows
//! from `--input`, written to `--out`); prints the summary on stderr (`--json`: as
//! JSON on stdout). Rows that could not be screened make the exit code 1, after every
//! other row was screened and written.

use std::fmt::Write as _;
use std::io::Write;

use anyhow::Context;

use swe_harvest::model::drop_reason::format_counts;
use swe_harvest::screen::{self, ScreenFlags, ScreenSettings, Summary};

use super::args::ScreenArgs;
use super::logging::CliReporter;
use super::{ExitStatus, GlobalSettings, WhenMissing};

pub fn screen(global: &GlobalSettings, args: &ScreenArgs) -> anyhow::Result<ExitStatus> {
    let settings = ScreenSettings::resolve(
        global.data_dir.clone(),
        &global.config.config.screen,
        &ScreenFlags { repos: args.repos.clone() },
    );
    let summary = match (&args.input, &args.out) {
        (Some(input), Some(out)) => screen::rows::run(&settings, input, out)
            .with_context(|| format!("failed to screen the rows of `{}`", input.display()))?,
        _ => {
            let mut store = global.open_store(WhenMissing::Create)?;
            let reporter = CliReporter::new();
            screen::run(&settings, &mut store, &reporter).context("failed to screen the store's tasks")?
        }
    };
    if args.json {
        let text = serde_json::to_string_pretty(&summary)? + "\n";
        std::io::stdout().lock().write_all(text.as_bytes())?;
    } else {
        eprint!("{}", render_summary(&summary));
    }
    Ok(if summary.bad_rows.is_empty() { ExitStatus::Success } else { ExitStatus::Failure })
}

fn render_summary(summary: &Summary) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "screen: {} selected, {} unchanged since the last screen, {} screened: {} keep, {} uncertain, {} flag in {:.1}s",
        summary.selected,
        summary.skipped_unchanged,
        summary.screened,
        summary.kept,
        summary.uncertain,
        summary.flagged,
        summary.elapsed_secs
    );
    if !summary.flags.is_empty() {
        let _ = writeln!(text, "  flags: {}", format_counts(&summary.flags));
    }
    if summary.screened > 0 {
        let _ = writeln!(
            text,
            "  code before the fix read from the mirror for {} of {} (the rest from the patches alone)",
            summary.with_mirror, summary.screened
        );
    }
    for bad in &summary.bad_rows {
        let _ = writeln!(text, "  not screened: {bad}");
    }
    if !summary.bad_rows.is_empty() {
        let _ = writeln!(
            text,
            "  {} rows could not be screened (exit code 1); they are written back unchanged with `quality_error`",
            summary.bad_rows.len()
        );
    }
    text
}
