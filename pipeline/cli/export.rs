//! `export`: candidates or tasks from the store to a JSONL or parquet file, as rows
//! in the SWE-bench format with the release's extra columns
//! (`swe_harvest::release::EXTRA_COLUMNS`). A candidate is exported as a task with
//! empty FAIL_TO_PASS / PASS_TO_PASS and no validation runs.

use std::io::Write;

use anyhow::Context;

use swe_harvest::dataset::Dataset;
use swe_harvest::model::{Candidate, Task};
use swe_harvest::release::{EXTRA_COLUMNS, task_row};
use swe_harvest::store;

use super::args::{ExportArgs, ExportFormat, ExportStage};
use super::{ExitStatus, GlobalSettings, WhenMissing};

/// A candidate as an unvalidated task.
pub fn candidate_as_task(candidate: &Candidate) -> Task {
    Task {
        candidate: candidate.clone(),
        fail_to_pass: Vec::new(),
        pass_to_pass: Vec::new(),
        flaky_tests: Vec::new(),
        validation_runs: 0,
        image: None,
    }
}

pub fn export(global: &GlobalSettings, args: &ExportArgs) -> anyhow::Result<ExitStatus> {
    let store = global.open_store(WhenMissing::Refuse {
        hint: "run `swe-harvest extract --repo OWNER/NAME` first, or pass the right `--data-dir`",
    })?;
    let (tasks, what): (Vec<Task>, &str) = match args.stage {
        ExportStage::Candidates => (
            store::candidates::candidates(store.connection(), &[])?.iter().map(candidate_as_task).collect(),
            "candidates",
        ),
        ExportStage::Tasks => (store::candidates::tasks(store.connection(), &[])?, "tasks"),
    };
    if tasks.is_empty() {
        writeln!(std::io::stderr().lock(), "note: the store holds no {what} yet; writing an empty file")?;
    }
    let mut dataset = Dataset::with_extra_columns(&EXTRA_COLUMNS);
    for task in &tasks {
        let (row, extra) = task_row(task);
        dataset.push_task(&row, extra)?;
    }
    dataset.sort_by_first_column();
    match args.format {
        ExportFormat::Jsonl => dataset.write_jsonl(&args.out),
        ExportFormat::Parquet => dataset.write_parquet(&args.out),
    }
    .with_context(|| format!("failed to export {what}"))?;
    writeln!(std::io::stdout().lock(), "wrote {} {what} to {}", tasks.len(), args.out.display())?;
    Ok(ExitStatus::Success)
}
