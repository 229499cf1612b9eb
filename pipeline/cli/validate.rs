//! `validate`: candidates from the store (or SWE-bench rows from `--input`) through
//! containers to labels. Resolves the settings (flags > environment > config), runs
//! the stage, prints the summary on stderr; with `--input`, writes the rows back with
//! fresh labels and a diagnosis, and with `--compare` prints per row on stdout how
//! the fresh labels differ from the row's own.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::path::Path;

use anyhow::Context;
use chrono::{DateTime, Utc};

use swe_harvest::UsageError;
use swe_harvest::env_vars;
use swe_harvest::model::drop_reason::most_frequent_first;
use swe_harvest::model::{Candidate, RepoSlug, TaskRow, encode_test_list};
use swe_harvest::store::Store;
use swe_harvest::validate::{self, Summary, TaskOutcome, ValidateSettings, Work};

use super::args::ValidateArgs;
use super::logging::CliReporter;
use super::{ExitStatus, GlobalSettings};

pub fn validate(settings: &GlobalSettings, args: &ValidateArgs) -> anyhow::Result<ExitStatus> {
    let mirrors_dir = std::env::var_os(env_vars::SWE_HARVEST_MIRRORS).map(Into::into);
    let mut validate_settings = ValidateSettings::resolve(
        settings.data_dir.clone(),
        settings.config.clone(),
        args.options.workers,
        args.options.runs,
        mirrors_dir,
    )?;
    validate_settings.coverage = args.options.coverage;
    let rows = match &args.input {
        Some(path) => Some(read_rows(path)?),
        None => None,
    };
    let work = match &rows {
        Some(rows) => Work::Rows(rows.iter().map(|(_, candidate)| candidate.clone()).collect()),
        None => Work::Store { repos: args.repos.clone(), instances: args.instances.clone() },
    };
    let store = Store::open_in(&settings.data_dir).context("failed to open the state store")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")?;
    let reporter = CliReporter::new();
    let summary = runtime.block_on(async {
        let docker = validate::connect_docker().await?;
        validate::run(&validate_settings, docker, store, work, &reporter).await
    })?;

    if let (Some(rows), Some(out)) = (&rows, &args.out) {
        write_rows(out, rows, &summary)?;
        if args.compare {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(compare(rows, &summary).as_bytes())?;
        }
    }
    eprint!("{}", render_summary(&summary, validate_settings.workers, validate_settings.runs));
    // Drops that mean the machinery failed, not the task, make the exit code 1.
    let failed = summary.failed() || summary.dropped.keys().any(|reason| reason.is_failure());
    Ok(if failed { ExitStatus::Failure } else { ExitStatus::Success })
}

/// Rows of a SWE-bench JSONL file, each with the candidate it describes.
fn read_rows(path: &Path) -> anyhow::Result<Vec<(serde_json::Map<String, serde_json::Value>, Candidate)>> {
    let file = fs_err::File::open(path)?;
    let mut rows = Vec::new();
    for (index, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("failed to read `{}`", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |message: String| {
            UsageError::new(format!("line {} of `{}` is not a SWE-bench row: {message}", index + 1, path.display()))
                .with_hint("each line must be a JSON object with the twelve SWE-bench fields")
        };
        let object: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&line).map_err(|error| bad(error.to_string()))?;
        let row: TaskRow = serde_json::from_value(serde_json::Value::Object(object.clone()))
            .map_err(|error| bad(error.to_string()))?;
        let repo: RepoSlug =
            row.repo.parse().map_err(|error: swe_harvest::model::RepoSlugError| bad(error.to_string()))?;
        let created_at: DateTime<Utc> = DateTime::parse_from_rfc3339(&row.created_at)
            .map_err(|error| bad(format!("created_at `{}`: {error}", row.created_at)))?
            .with_timezone(&Utc);
        let pull_number = row.instance_id.rsplit('-').next().and_then(|number| number.parse().ok()).unwrap_or(0);
        let candidate = Candidate {
            instance_id: row.instance_id.clone(),
            repo,
            pull_number,
            issue_numbers: Vec::new(),
            base_commit: row.base_commit.clone(),
            head_commit: String::new(),
            patch: row.patch.clone(),
            test_patch: row.test_patch.clone(),
            problem_statement: row.problem_statement.clone(),
            hints_text: row.hints_text.clone(),
            created_at,
            merged_at: None,
            version: row.version.clone(),
            environment_setup_commit: row.environment_setup_commit.clone(),
            test_files: validate::source::files_changed_by(&row.test_patch),
        };
        rows.push((object, candidate));
    }
    Ok(rows)
}

fn outcome_of<'a>(summary: &'a Summary, instance_id: &str) -> Option<&'a TaskOutcome> {
    summary.outcomes.iter().find(|outcome| outcome.instance_id == instance_id)
}

/// Writes the rows back, in their order, with fresh labels and a diagnosis
/// (temp file, sync, rename).
fn write_rows(
    out: &Path,
    rows: &[(serde_json::Map<String, serde_json::Value>, Candidate)],
    summary: &Summary,
) -> anyhow::Result<()> {
    let mut text = String::new();
    for (object, candidate) in rows {
        let mut object = object.clone();
        let outcome = outcome_of(summary, &candidate.instance_id);
        let (fail_to_pass, pass_to_pass, flaky, diagnosis) = match outcome.map(|outcome| &outcome.result) {
            Some(Ok(labels)) => (
                labels.fail_to_pass.clone(),
                labels.pass_to_pass.clone(),
                labels.flaky.clone(),
                serde_json::json!({"status": "labelled", "pass_to_fail": labels.pass_to_fail}),
            ),
            Some(Err(dropped)) => (
                Vec::new(),
                Vec::new(),
                Vec::new(),
                serde_json::json!({"status": "dropped", "reason": dropped.reason, "detail": dropped.detail}),
            ),
            None => (
                Vec::new(),
                Vec::new(),
                Vec::new(),
                serde_json::json!({"status": "not_validated", "reason": "interrupted"}),
            ),
        };
        object.insert("FAIL_TO_PASS".into(), encode_test_list(&fail_to_pass).into());
        object.insert("PASS_TO_PASS".into(), encode_test_list(&pass_to_pass).into());
        object.insert("flaky_tests".into(), encode_test_list(&flaky).into());
        object.insert("validation_runs".into(), outcome.map_or(0, |outcome| outcome.runs).into());
        if let Some(coverage) = outcome.and_then(|outcome| outcome.coverage.as_ref()) {
            let values = swe_harvest::swt::coverage_columns(Some(coverage));
            for (name, value) in swe_harvest::swt::COVERAGE_COLUMNS.iter().zip(values) {
                object.insert((*name).into(), value.into());
            }
        }
        let mut diagnosis = diagnosis;
        if let Some(outcome) = outcome {
            diagnosis["image"] = outcome.image.clone().into();
            diagnosis["environment"] = outcome.spec.as_ref().map(|spec| spec.source.clone()).into();
            diagnosis["runtime"] = outcome.spec.as_ref().map(|spec| spec.runtime.clone()).into();
        }
        object.insert("diagnosis".into(), diagnosis);
        text.push_str(&serde_json::to_string(&object)?);
        text.push('\n');
    }
    let parent = out.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs_err::create_dir_all(parent)?;
    let temporary = parent.join(format!(".{}.tmp", out.file_name().and_then(|name| name.to_str()).unwrap_or("out")));
    let mut file = fs_err::File::create(&temporary)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    fs_err::rename(&temporary, out)?;
    Ok(())
}

/// Per row: FAIL_TO_PASS same / missing / extra, PASS_TO_PASS recall.
fn compare(rows: &[(serde_json::Map<String, serde_json::Value>, Candidate)], summary: &Summary) -> String {
    let mut text = String::new();
    let list = |object: &serde_json::Map<String, serde_json::Value>, key: &str| -> BTreeSet<String> {
        match object.get(key) {
            Some(serde_json::Value::String(encoded)) => {
                serde_json::from_str::<Vec<String>>(encoded).unwrap_or_default()
            }
            Some(value) => serde_json::from_value::<Vec<String>>(value.clone()).unwrap_or_default(),
            None => Vec::new(),
        }
        .into_iter()
        .map(|id| normalize_id(&id))
        .collect()
    };
    let (mut exact, mut total) = (0, 0);
    for (object, candidate) in rows {
        total += 1;
        let published_f2p = list(object, "FAIL_TO_PASS");
        let published_p2p = list(object, "PASS_TO_PASS");
        let Some(outcome) = outcome_of(summary, &candidate.instance_id) else {
            let _ = writeln!(text, "{}\tnot validated", candidate.instance_id);
            continue;
        };
        let labels = match &outcome.result {
            Ok(labels) => labels,
            Err(dropped) => {
                let _ = writeln!(text, "{}\tdropped: {}", candidate.instance_id, dropped.reason);
                continue;
            }
        };
        let fresh_f2p: BTreeSet<String> = labels.fail_to_pass.iter().map(|id| normalize_id(id)).collect();
        let fresh_p2p: BTreeSet<String> = labels.pass_to_pass.iter().map(|id| normalize_id(id)).collect();
        let missing: Vec<&String> = published_f2p.difference(&fresh_f2p).collect();
        let extra: Vec<&String> = fresh_f2p.difference(&published_f2p).collect();
        let f2p = if missing.is_empty() && extra.is_empty() {
            exact += 1;
            "FAIL_TO_PASS same".to_string()
        } else {
            format!("FAIL_TO_PASS missing {missing:?} extra {extra:?}")
        };
        let found = published_p2p.intersection(&fresh_p2p).count();
        let p2p_missing: Vec<&String> = published_p2p.difference(&fresh_p2p).collect();
        let p2p_extra = fresh_p2p.difference(&published_p2p).count();
        let _ = writeln!(
            text,
            "{}\t{f2p}\tPASS_TO_PASS recall {found}/{} extra {p2p_extra}{}",
            candidate.instance_id,
            published_p2p.len(),
            if p2p_missing.is_empty() { String::new() } else { format!(" missing {p2p_missing:?}") }
        );
    }
    let _ = writeln!(text, "FAIL_TO_PASS exactly the published list: {exact} of {total} rows");
    text
}

/// Test ids as compared: pytest escapes control characters of parametrised ids
/// (`\n` as a backslash and an `n`), while published rows sometimes hold them raw.
fn normalize_id(id: &str) -> String {
    id.replace("\\n", "\n").replace("\\t", "\t")
}

fn render_summary(summary: &Summary, workers: usize, runs: u32) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "validate: {} selected, {} already finished, {} labelled, {} dropped in {:.1}s ({workers} workers, {runs} runs each)",
        summary.selected,
        summary.skipped_finished,
        summary.labelled,
        summary.dropped.values().sum::<usize>(),
        summary.elapsed_secs
    );
    for (reason, count) in most_frequent_first(&summary.dropped) {
        let _ = writeln!(text, "  dropped {reason}: {count}");
    }
    let _ = writeln!(
        text,
        "  environment images: {} built{}, {} reused",
        summary.images_built,
        if summary.image_build_secs.is_empty() {
            String::new()
        } else {
            let times: Vec<String> = summary.image_build_secs.iter().map(|secs| format!("{secs:.0}s")).collect();
            format!(" ({})", times.join(", "))
        },
        summary.images_reused
    );
    for outcome in &summary.outcomes {
        if outcome.test_secs > 0.0 || outcome.coverage_secs > 0.0 {
            let coverage = if outcome.coverage_secs > 0.0 {
                format!(", {:.1}s in the coverage run", outcome.coverage_secs)
            } else {
                String::new()
            };
            let _ = writeln!(
                text,
                "  {}: {:.1}s in containers' tests{coverage}, {:.1}s in total",
                outcome.instance_id, outcome.test_secs, outcome.total_secs
            );
        }
    }
    if summary.coverage_measured + summary.coverage_failed > 0 {
        let _ = writeln!(
            text,
            "  coverage: {} measured, {} failed (logs: logs/validate/<instance>/coverage.log)",
            summary.coverage_measured, summary.coverage_failed
        );
    }
    if summary.interrupted {
        let _ = writeln!(text, "  interrupted: run `validate` again to resume");
    }
    text
}
