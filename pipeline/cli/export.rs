//! `export`: candidates or tasks from the store to a JSONL or parquet file, as rows
//! in the SWE-bench format (see `swe_harvest::dataset`).

use std::io::Write;

use anyhow::Context;

use swe_harvest::dataset::{self, DatasetRow};
use swe_harvest::store::{self, STORE_FILE, Store};

use super::args::{ExportArgs, ExportFormat, ExportStage};
use super::{ExitStatus, GlobalSettings};

pub fn export(global: &GlobalSettings, args: &ExportArgs) -> anyhow::Result<ExitStatus> {
    let store_path = global.data_dir.join(STORE_FILE);
    if !store_path.exists() {
        return Err(swe_harvest::UsageError::new(format!("there is no state store at `{}`", store_path.display()))
            .with_hint("run `swe-harvest extract --repo OWNER/NAME` first, or pass the right `--data-dir`")
            .into());
    }
    let store = Store::open(&store_path)?;
    let (rows, what): (Vec<DatasetRow>, &str) = match args.stage {
        ExportStage::Candidates => (
            store::candidates::candidates(store.connection(), &[])?.iter().map(DatasetRow::from_candidate).collect(),
            "candidates",
        ),
        ExportStage::Tasks => {
            (store::candidates::tasks(store.connection(), &[])?.iter().map(DatasetRow::from_task).collect(), "tasks")
        }
    };
    if rows.is_empty() {
        writeln!(std::io::stderr().lock(), "note: the store holds no {what} yet; writing an empty file")?;
    }
    match args.format {
        ExportFormat::Jsonl => dataset::write_jsonl(&args.out, &rows),
        ExportFormat::Parquet => dataset::write_parquet(&args.out, &rows),
    }
    .with_context(|| format!("failed to export {what}"))?;
    writeln!(std::io::stdout().lock(), "wrote {} {what} to {}", rows.len(), args.out.display())?;
    Ok(ExitStatus::Success)
}
