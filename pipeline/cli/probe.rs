//! `probe`: mutants of each validated task's gold patch run against its tests (the
//! store's tasks, or rows from `--input`). With `--input`, rows that carry their own
//! validation (a `validate --input` output) are probed in the environment it names;
//! the others are validated first, exactly as `validate --input` does (their fresh
//! labels and `diagnosis` are written back with the probe's fields). Prints the
//! summary on stderr; exit 1 when the machinery failed or it was interrupted.

use std::fmt::Write as _;

use anyhow::Context as _;
use serde_json::Value;

use swe_harvest::model::drop_reason::format_counts;
use swe_harvest::probe::{self, ProbeFlags, ProbeSettings, Summary, Target, Work};
use swe_harvest::task_rows::InputRow;
use swe_harvest::validate::{self, ValidateFlags, ValidateSettings};

use super::args::ProbeArgs;
use super::logging::CliReporter;
use super::validate::{backend_of, workers_on};
use super::{ExitStatus, GlobalSettings, WhenMissing, runtime};

pub fn probe(global: &GlobalSettings, args: &ProbeArgs) -> anyhow::Result<ExitStatus> {
    let validate_settings = ValidateSettings::resolve(
        global.data_dir.clone(),
        &global.config.config.validate,
        global.config.repos_dir.clone(),
        &ValidateFlags { workers: args.workers, runs: None, coverage: false },
    )?;
    let flags =
        ProbeFlags { repos: args.repos.clone(), instances: args.instances.clone(), mutants: args.options.mutants };
    let mut settings = ProbeSettings::resolve(
        global.data_dir.clone(),
        &global.config.config.probe,
        validate_settings.limits,
        validate_settings.workers,
        &flags,
    )
    .map_err(|invalid| swe_harvest::UsageError::new(invalid.to_string()).with_hint("`--mutants` takes 1 to 1000"))?;
    let rows: Option<Vec<InputRow>> = args.input.as_deref().map(swe_harvest::task_rows::read_rows).transpose()?;
    let store = global.open_store(WhenMissing::Create)?;
    let runtime = runtime()?;
    let reporter = CliReporter::new();
    let (summary, validated) = runtime.block_on(async {
        let (kind, options) = backend_of(global, args.backend);
        let backend = swe_harvest::sandbox::connect_with(kind, &options).await?;
        settings.workers = workers_on(backend.as_ref(), global, args.workers, settings.workers, settings.limits).await;
        let Some(rows) = &rows else {
            let summary = probe::run(&settings, backend, store, Work::Store, &reporter).await?;
            return anyhow::Ok((summary, None));
        };
        // Rows with their own validation are probed in its environment; the rest are
        // validated here first.
        let (own, others): (Vec<&InputRow>, Vec<&InputRow>) =
            rows.iter().partition(|row| probe::rows::validated_target(row).is_some());
        let mut targets: Vec<Target> = own.iter().filter_map(|row| probe::rows::validated_target(row)).collect();
        let validated = if others.is_empty() {
            None
        } else {
            let mut validate_settings = validate_settings.clone();
            validate_settings.workers = settings.workers;
            let work = validate::Work::Rows(others.iter().map(|row| row.candidate.clone()).collect());
            let summary = validate::run(
                &validate_settings,
                backend.clone(),
                global.open_store(WhenMissing::Create)?,
                work,
                &reporter,
            )
            .await?;
            for outcome in &summary.outcomes {
                let (Ok(labels), Some(row)) =
                    (&outcome.result, others.iter().find(|row| row.candidate.instance_id == outcome.instance_id))
                else {
                    continue;
                };
                targets.push(Target {
                    candidate: row.candidate.clone(),
                    fail_to_pass: labels.fail_to_pass.clone(),
                    pass_to_pass: labels.pass_to_pass.clone(),
                    image: outcome.image.clone(),
                    spec: outcome.spec.clone(),
                });
            }
            Some(summary)
        };
        let summary = probe::run(&settings, backend, store, Work::Targets(targets), &reporter).await?;
        anyhow::Ok((summary, validated))
    })?;
    if let (Some(rows), Some(out)) = (&rows, &args.out) {
        write_rows(out, rows, &summary, validated.as_ref())
            .with_context(|| format!("failed to write the probed rows to `{}`", out.display()))?;
    }
    eprint!("{}", render_summary(&summary, settings.config.mutants));
    Ok(if summary.failed() { ExitStatus::Failure } else { ExitStatus::Success })
}

/// Writes every row back in its order: validated here, with validate's fields first;
/// then probe's, and the `weak_tests` flag merged into `quality_flags`.
fn write_rows(
    out: &std::path::Path,
    rows: &[InputRow],
    summary: &Summary,
    validated: Option<&validate::Summary>,
) -> anyhow::Result<()> {
    // Only the rows validated here get validate's fields; the others keep their own.
    let fresh: Vec<serde_json::Map<String, Value>> = match validated {
        Some(validated) => validate::rows::fresh_rows(rows, validated)
            .into_iter()
            .zip(rows)
            .map(|(fresh, row)| {
                let here = validated.outcomes.iter().any(|outcome| outcome.instance_id == row.candidate.instance_id);
                if here { fresh } else { row.fields.clone() }
            })
            .collect(),
        None => rows.iter().map(|row| row.fields.clone()).collect(),
    };
    let mut text = String::new();
    for (row, mut fields) in rows.iter().zip(fresh) {
        let instance_id = &row.candidate.instance_id;
        let outcome = summary.outcomes.iter().find(|outcome| &outcome.instance_id == instance_id);
        let not_validated = validated.and_then(|validated| {
            validated.outcomes.iter().find(|outcome| &outcome.instance_id == instance_id).and_then(|outcome| {
                outcome
                    .result
                    .as_ref()
                    .err()
                    .map(|dropped| format!("dropped by validate ({}): {}", dropped.reason, dropped.detail))
            })
        });
        for (name, value) in probe::rows::probe_fields(outcome, not_validated.as_deref()) {
            fields.insert(name.into(), value);
        }
        if let Some(record) = outcome.and_then(|outcome| outcome.record.as_ref()) {
            swe_harvest::screen::rows::merge_weak_tests(&mut fields, record);
        }
        text.push_str(&serde_json::to_string(&fields)?);
        text.push('\n');
    }
    swe_harvest::dataset::write_durably(out, |file| std::io::Write::write_all(file, text.as_bytes()))?;
    Ok(())
}

fn render_summary(summary: &Summary, mutants: usize) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "probe: {} selected, {} unchanged since the last probe, {} probed (at most {mutants} mutants each): {} with every mutant killed, {} with survivors, in {:.1}s",
        summary.selected,
        summary.skipped_unchanged,
        summary.probed,
        summary.all_killed,
        summary.with_survivors,
        summary.elapsed_secs
    );
    if !summary.mutants.is_empty() {
        let _ = writeln!(text, "  mutants run: {}", format_counts(&summary.mutants));
    }
    if !summary.set_aside.is_empty() {
        let _ = writeln!(text, "  set aside: {}", format_counts(&summary.set_aside));
    }
    if !summary.task_secs.is_empty() {
        let total: f64 = summary.task_secs.iter().sum();
        let _ = writeln!(
            text,
            "  {:.1}s per task probed on average (logs: logs/probe/<instance>/)",
            total / summary.task_secs.len() as f64
        );
    }
    for outcome in &summary.outcomes {
        if let Some(set_aside) = &outcome.set_aside {
            let _ = writeln!(text, "  {}: {}: {}", outcome.instance_id, set_aside.reason, set_aside.detail);
        }
    }
    if summary.interrupted {
        let _ = writeln!(text, "  interrupted: run `probe` again to resume");
    }
    text
}
