//! `validate --plan`: per task, the environment validate would start from, one JSON
//! line each (into `--out` with `--input`, else on stdout), and a line per task with a
//! summary on stderr (`validate::plan`). No engine is asked, no image built, nothing
//! written to the store.

use std::fmt::Write as _;
use std::io::Write as _;

use anyhow::Context as _;
use futures::StreamExt as _;

use swe_harvest::validate::plan::{self, TaskPlan};
use swe_harvest::validate::rows;
use swe_harvest::validate::{self, ValidateFlags, ValidateSettings};

use super::args::ValidateArgs;
use super::{ExitStatus, GlobalSettings, WhenMissing, runtime};

pub fn plan(global: &GlobalSettings, args: &ValidateArgs) -> anyhow::Result<ExitStatus> {
    let flags = ValidateFlags { workers: args.options.workers, runs: None, coverage: false };
    let settings = ValidateSettings::resolve(
        global.data_dir.clone(),
        &global.config.config.validate,
        global.config.repos_dir.clone(),
        &flags,
    )?;
    // Store tasks carry whether a real validate would skip them as finished.
    let (candidates, finished) = match args.input.as_deref() {
        Some(input) => (rows::read_rows(input)?.into_iter().map(|row| row.candidate).collect(), None),
        None => {
            let store = global.open_store(WhenMissing::Refuse {
                hint: "run `swe-harvest extract --repo OWNER/NAME` first, pass the right `--data-dir`, or plan rows with `--input ROWS.jsonl --out PLAN.jsonl`",
            })?;
            let selected = validate::store_selection(&store, &args.repos, &args.instances)?;
            let finished = swe_harvest::store::validation::finished_instances(store.connection())?;
            (selected, Some(finished))
        }
    };
    // Several tasks' mirrors are read at once; the plans keep the tasks' order.
    let plans: Vec<TaskPlan> = runtime()?.block_on(
        futures::stream::iter(&candidates)
            .map(|candidate| plan::plan(&settings, candidate))
            .buffered(settings.workers.max(1))
            .collect(),
    );
    let plans: Vec<TaskPlan> = plans
        .into_iter()
        .map(|mut plan| {
            plan.finished = finished.as_ref().map(|finished| finished.contains(&plan.instance_id));
            plan
        })
        .collect();

    let mut lines = String::new();
    for plan in &plans {
        lines.push_str(&serde_json::to_string(plan).context("failed to encode a plan")?);
        lines.push('\n');
    }
    match &args.out {
        Some(out) => rows::write_whole(out, &lines)
            .with_context(|| format!("failed to write the plans into `{}`", out.display()))?,
        None => std::io::stdout().lock().write_all(lines.as_bytes())?,
    }
    eprint!("{}", render(&plans));
    Ok(ExitStatus::Success)
}

/// A line per task and one for all: what each would start from, or why it would be
/// dropped before any build.
fn render(plans: &[TaskPlan]) -> String {
    let mut text = String::new();
    let failing = plans.iter().filter(|plan| plan.error.is_some()).count();
    let _ = writeln!(
        text,
        "validate --plan: {} tasks planned, {} would be dropped before any build; no image built, no container started",
        plans.len(),
        failing
    );
    for plan in plans {
        let mut parts = Vec::new();
        if let (Some(ecosystem), Some(runtime), Some(command)) = (&plan.ecosystem, &plan.runtime, &plan.test_command) {
            let ci = match plan.ci.len() {
                0 => String::new(),
                notes => format!(", {notes} CI note{}", if notes == 1 { "" } else { "s" }),
            };
            parts.push(format!(
                "{ecosystem} runtime {runtime} ({}{ci}), test `{command}` on {} file{}",
                plan.source.as_deref().unwrap_or_default(),
                plan.test_files.len(),
                if plan.test_files.len() == 1 { "" } else { "s" }
            ));
        }
        if plan.finished == Some(true) {
            parts.push("finished (validate skips it unless named with --instance)".to_string());
        }
        if let Some(error) = &plan.error {
            let first = error.detail.lines().next().unwrap_or_default();
            parts.push(format!("would be dropped as {}: {first}", error.reason));
        }
        let _ = write!(text, "  {}: {}", plan.instance_id, parts.join("; "));
        text.push('\n');
    }
    text
}
