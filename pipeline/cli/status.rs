//! `status`: the funnel per repository and stage, as a table or as JSON, and the
//! environments that failed to build with their diagnosis (the failing step's last
//! lines; `validate --input` rows included, which leave no funnel row).

use std::fmt::Write as _;
use std::io::Write;

use anyhow::Context;

use swe_harvest::store::validation::FailedEnvironment;
use swe_harvest::store::{FunnelReport, StageFunnel};

use super::args::StatusArgs;
use super::{ExitStatus, GlobalSettings, WhenMissing};

pub fn status(settings: &GlobalSettings, args: &StatusArgs) -> anyhow::Result<ExitStatus> {
    let store = settings.open_store(WhenMissing::Refuse {
        hint: "start with `swe-harvest crawl --repo OWNER/NAME`, or pass the right `--data-dir`",
    })?;
    let report = store.funnel(&args.repos).context("failed to read the funnel")?;
    let failed_environments = swe_harvest::store::validation::failed_environments(store.connection(), &args.repos)
        .context("failed to read the environments")?;
    if let Some(path) = &args.report {
        let generated_at = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
        let html = swe_harvest::report::render_html(&report, &generated_at);
        fs_err::write(path, html)?;
        tracing::info!(path = %path.display(), "wrote the funnel report");
    }
    let text = if args.json {
        let status = StatusJson { funnel: &report, failed_environments: &failed_environments };
        serde_json::to_string_pretty(&status)? + "\n"
    } else {
        render_table(&report) + &render_failed_environments(&failed_environments)
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitStatus::Success)
}

/// `status --json`: the funnel's counts, and the environments that failed.
#[derive(serde::Serialize)]
struct StatusJson<'a> {
    #[serde(flatten)]
    funnel: &'a FunnelReport,
    failed_environments: &'a [FailedEnvironment],
}

/// The environments that failed and were not built since, each with its diagnosis
/// (also those of `validate --input` rows, which leave no funnel row).
fn render_failed_environments(failed: &[FailedEnvironment]) -> String {
    if failed.is_empty() {
        return String::new();
    }
    let mut out = format!("\nEnvironments that failed to build ({}), latest first:\n", failed.len());
    for environment in failed.iter().rev() {
        let commit = &environment.environment_setup_commit;
        let _ = writeln!(
            out,
            "  {} @ {}: {}",
            environment.repo,
            &commit[..commit.len().min(12)],
            environment.detail.replace('\n', " | ")
        );
    }
    out
}

/// The funnel as an aligned text table; drop reasons most frequent first.
pub fn render_table(report: &FunnelReport) -> String {
    if report.repositories.is_empty() {
        return "The store holds no stage results yet.\n".to_string();
    }
    let mut rows: Vec<[String; 6]> =
        vec![["REPOSITORY", "STAGE", "ENTERED", "PASSED", "DROPPED", "DROP REASONS"].map(String::from)];
    let mut push = |name: &str, stages: &[StageFunnel]| {
        for (index, stage) in stages.iter().enumerate() {
            rows.push([
                if index == 0 { name.to_string() } else { String::new() },
                stage.stage.to_string(),
                stage.entered.to_string(),
                stage.passed.to_string(),
                stage.dropped.to_string(),
                reasons(stage),
            ]);
        }
    };
    for repository in &report.repositories {
        push(&repository.repo, &repository.stages);
    }
    if report.repositories.len() > 1 {
        push("(all)", &report.total);
    }
    let widths: Vec<usize> = (0..6).map(|column| rows.iter().map(|row| row[column].len()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for row in &rows {
        let line = format!(
            "{:<w0$}  {:<w1$}  {:>w2$}  {:>w3$}  {:>w4$}  {}",
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            row[5],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3],
            w4 = widths[4],
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

fn reasons(stage: &StageFunnel) -> String {
    stage.reasons_and_flags()
}
