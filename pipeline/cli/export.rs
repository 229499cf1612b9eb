//! `export`: candidates, tasks or review decisions from the store to a JSONL or parquet file
//! (`swe_harvest::release::export`); says on stdout how many rows it wrote.

use std::io::Write;

use swe_harvest::release::export::{self, ExportFormat, ExportStage};

use super::args::{ExportArgs, ExportFormat as ExportFormatArg, ExportStage as ExportStageArg};
use super::{ExitStatus, GlobalSettings, WhenMissing};

pub fn export(global: &GlobalSettings, args: &ExportArgs) -> anyhow::Result<ExitStatus> {
    let stage = match args.stage {
        ExportStageArg::Candidates => ExportStage::Candidates,
        ExportStageArg::Tasks => ExportStage::Tasks,
        ExportStageArg::Reviews => ExportStage::Reviews,
    };
    let format = match args.format {
        ExportFormatArg::Jsonl => ExportFormat::Jsonl,
        ExportFormatArg::Parquet => ExportFormat::Parquet,
    };
    let store = global.open_store(WhenMissing::Refuse {
        hint: "run `swe-harvest extract --repo OWNER/NAME` first, or pass the right `--data-dir`",
    })?;
    let written = export::export(&store, stage, format, &args.out)?;
    let what = stage.noun();
    if written == 0 {
        writeln!(std::io::stderr().lock(), "note: the store holds no {what} yet; wrote an empty file")?;
    }
    writeln!(std::io::stdout().lock(), "wrote {written} {what} to {}", args.out.display())?;
    Ok(ExitStatus::Success)
}
