//! Datasets in SWE-bench's tabular shape, on disk as parquet and as JSONL.
//!
//! A [`Dataset`] is a table of string columns: SWE-bench's twelve columns first, in
//! SWE-bench's order, then extra columns. Every value is a string (lists JSON-encoded,
//! numbers in decimal) because that is the one shape every harness reads without a
//! schema of ours; `tasks.parquet` and `tasks.jsonl` written from one `Dataset` hold
//! the same rows. Files are written durably: a temporary file in the target folder,
//! `sync_all`, then a rename, so a crash never leaves a half-written file under the
//! final name.
//!
//! Reading accepts datasets from any source ([`read_records`]): JSONL or parquet,
//! string columns or (older SWE-bench encodings) list columns.

use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType, ZstdLevel};
use parquet::data_type::{ByteArray, ByteArrayType};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::record::Field;
use parquet::schema::types::Type;
use serde_json::{Map, Value};

use crate::model::{SWEBENCH_COLUMNS, TaskRow};

#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("failed to write the dataset file `{path}`")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to read the dataset file `{path}`")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the parquet file `{path}` could not be {action}: {message}")]
    Parquet { path: PathBuf, action: &'static str, message: String },
    #[error("line {line} of `{path}` is not a JSON object: {message}")]
    JsonLine { path: PathBuf, line: usize, message: String },
    #[error("`{path}` is neither JSONL (.jsonl, .json) nor parquet (.parquet); rename it or convert it")]
    UnknownFormat { path: PathBuf },
    #[error("row {row} of `{path}` is not a SWE-bench task row: {message}")]
    NotATaskRow { path: PathBuf, row: usize, message: String },
    #[error("row {row} has {found} values for {expected} columns")]
    RowWidth { row: usize, found: usize, expected: usize },
}

/// A table of string columns.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Dataset {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Dataset {
    /// An empty dataset with SWE-bench's twelve columns followed by `extra_columns`.
    pub fn with_extra_columns(extra_columns: &[&str]) -> Dataset {
        let columns = SWEBENCH_COLUMNS.iter().chain(extra_columns).map(|column| column.to_string()).collect();
        Dataset { columns, rows: Vec::new() }
    }

    /// Appends a task row with its extra values, in the order of the extra columns.
    pub fn push_task(&mut self, row: &TaskRow, extra_values: Vec<String>) -> Result<(), DatasetError> {
        let mut values = vec![
            row.instance_id.clone(),
            row.repo.clone(),
            row.base_commit.clone(),
            row.patch.clone(),
            row.test_patch.clone(),
            row.problem_statement.clone(),
            row.hints_text.clone(),
            row.created_at.clone(),
            row.version.clone(),
            row.fail_to_pass.clone(),
            row.pass_to_pass.clone(),
            row.environment_setup_commit.clone(),
        ];
        values.extend(extra_values);
        self.push(values)
    }

    pub fn push(&mut self, values: Vec<String>) -> Result<(), DatasetError> {
        if values.len() != self.columns.len() {
            return Err(DatasetError::RowWidth {
                row: self.rows.len(),
                found: values.len(),
                expected: self.columns.len(),
            });
        }
        self.rows.push(values);
        Ok(())
    }

    /// Sorts rows by the first column (`instance_id`), for stable releases.
    pub fn sort_by_first_column(&mut self) {
        self.rows.sort_by(|a, b| a[0].cmp(&b[0]));
    }

    /// Writes zstd-compressed parquet, every column a string column.
    ///
    /// The columns are nullable `BYTE_ARRAY` with the `STRING` logical type, as
    /// pyarrow writes SWE-bench's files: pyarrow and Hugging Face `datasets` read them
    /// as plain `string`. No Arrow schema is stored: there is nothing it would add.
    pub fn write_parquet(&self, path: &Path) -> Result<(), DatasetError> {
        let schema = self.parquet_schema().map_err(|error| DatasetError::Parquet {
            path: path.to_path_buf(),
            action: "written",
            message: error.to_string(),
        })?;
        let properties =
            Arc::new(WriterProperties::builder().set_compression(Compression::ZSTD(ZstdLevel::default())).build());
        write_durably(path, |file| {
            self.write_row_groups(file, schema, properties).map_err(|error| std::io::Error::other(error.to_string()))
        })
    }

    fn parquet_schema(&self) -> Result<Arc<Type>, ParquetError> {
        let fields = self
            .columns
            .iter()
            .map(|name| {
                Type::primitive_type_builder(name, PhysicalType::BYTE_ARRAY)
                    .with_repetition(Repetition::OPTIONAL)
                    .with_logical_type(Some(LogicalType::String))
                    .build()
                    .map(Arc::new)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Arc::new(Type::group_type_builder("schema").with_fields(fields).build()?))
    }

    /// Rows in groups of `ROWS_PER_GROUP`, so that a reader never holds more than one
    /// group of a large dataset's patches at a time.
    fn write_row_groups(
        &self,
        file: &mut fs_err::File,
        schema: Arc<Type>,
        properties: Arc<WriterProperties>,
    ) -> Result<(), ParquetError> {
        const ROWS_PER_GROUP: usize = 10_000;
        let mut writer = SerializedFileWriter::new(file, schema, properties)?;
        for rows in self.rows.chunks(ROWS_PER_GROUP) {
            let mut group = writer.next_row_group()?;
            // Every value is present: definition level 1 each.
            let present = vec![1i16; rows.len()];
            for index in 0..self.columns.len() {
                let mut column = group
                    .next_column()?
                    .ok_or_else(|| ParquetError::General(format!("no writer for column {index}")))?;
                let values: Vec<ByteArray> = rows.iter().map(|row| ByteArray::from(row[index].as_str())).collect();
                column.typed::<ByteArrayType>().write_batch(&values, Some(&present), None)?;
                column.close()?;
            }
            group.close()?;
        }
        writer.close()?;
        Ok(())
    }

    /// Writes one JSON object per line, keys in column order.
    pub fn write_jsonl(&self, path: &Path) -> Result<(), DatasetError> {
        write_durably(path, |file| {
            let mut out = BufWriter::new(file);
            for row in &self.rows {
                out.write_all(b"{")?;
                for (index, (column, value)) in self.columns.iter().zip(row).enumerate() {
                    if index > 0 {
                        out.write_all(b",")?;
                    }
                    serde_json::to_writer(&mut out, column)?;
                    out.write_all(b":")?;
                    serde_json::to_writer(&mut out, value)?;
                }
                out.write_all(b"}\n")?;
            }
            out.flush()
        })
    }
}

/// Writes through `write` into a temporary file beside `path`, syncs, and renames.
pub fn write_durably(
    path: &Path,
    write: impl FnOnce(&mut fs_err::File) -> std::io::Result<()>,
) -> Result<(), DatasetError> {
    let write_error = |source| DatasetError::Write { path: path.to_path_buf(), source };
    let folder = path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs_err::create_dir_all(folder).map_err(write_error)?;
    let file_name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = folder.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = fs_err::File::create(&temporary)?;
        write(&mut file)?;
        file.sync_all()?;
        fs_err::rename(&temporary, path)
    })();
    if result.is_err() {
        let _ = fs_err::remove_file(&temporary);
    }
    result.map_err(write_error)
}

/// Reads every row of a JSONL or parquet dataset as a JSON object.
pub fn read_records(path: &Path) -> Result<Vec<Map<String, Value>>, DatasetError> {
    match path.extension().and_then(|extension| extension.to_str()) {
        Some("jsonl") | Some("json") => read_jsonl(path),
        Some("parquet") => read_parquet(path),
        _ => Err(DatasetError::UnknownFormat { path: path.to_path_buf() }),
    }
}

/// Reads a dataset as SWE-bench task rows (either encoding of the test lists).
pub fn read_task_rows(path: &Path) -> Result<Vec<TaskRow>, DatasetError> {
    read_records(path)?
        .into_iter()
        .enumerate()
        .map(|(row, record)| {
            serde_json::from_value(Value::Object(record)).map_err(|error| DatasetError::NotATaskRow {
                path: path.to_path_buf(),
                row: row + 1,
                message: error.to_string(),
            })
        })
        .collect()
}

fn read_jsonl(path: &Path) -> Result<Vec<Map<String, Value>>, DatasetError> {
    let file = fs_err::File::open(path).map_err(|source| DatasetError::Read { path: path.to_path_buf(), source })?;
    let mut records = Vec::new();
    for (index, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|source| DatasetError::Read { path: path.to_path_buf(), source })?;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(&line) {
            Ok(Value::Object(record)) => records.push(record),
            Ok(_) => {
                return Err(DatasetError::JsonLine {
                    path: path.to_path_buf(),
                    line: index + 1,
                    message: "expected an object".into(),
                });
            }
            Err(error) => {
                return Err(DatasetError::JsonLine {
                    path: path.to_path_buf(),
                    line: index + 1,
                    message: error.to_string(),
                });
            }
        }
    }
    Ok(records)
}

fn read_parquet(path: &Path) -> Result<Vec<Map<String, Value>>, DatasetError> {
    let parquet_error = |error: ParquetError| DatasetError::Parquet {
        path: path.to_path_buf(),
        action: "read",
        message: error.to_string(),
    };
    let file = fs_err::File::open(path).map_err(|source| DatasetError::Read { path: path.to_path_buf(), source })?;
    // The reader reads a std `File`; the path is already named by our errors.
    let reader = SerializedFileReader::new(file.into_parts().0).map_err(parquet_error)?;
    let mut records = Vec::with_capacity(usize::try_from(reader.metadata().file_metadata().num_rows()).unwrap_or(0));
    for row in reader.get_row_iter(None).map_err(parquet_error)? {
        let row = row.map_err(parquet_error)?;
        records.push(row.get_column_iter().map(|(name, field)| (name.clone(), field_value(field))).collect());
    }
    Ok(records)
}

/// A value as JSON: strings stay strings, lists become JSON lists (of strings), and
/// anything else takes its string form, as every column of a [`Dataset`] is a string.
fn field_value(field: &Field) -> Value {
    match field {
        Field::Null => Value::Null,
        Field::Str(text) => Value::String(text.clone()),
        Field::ListInternal(list) => Value::Array(list.elements().iter().map(field_value).collect()),
        other => match other.to_json_value() {
            Value::String(text) => Value::String(text),
            value => Value::String(value.to_string()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Dataset {
        let mut dataset = Dataset::with_extra_columns(&["pull_number"]);
        for (id, patch) in [("b__c-2", "diff --git a/x b/x\n+\u{e9}\n"), ("a__b-1", "")] {
            let row = TaskRow {
                instance_id: id.into(),
                repo: "a/b".into(),
                base_commit: "0".repeat(40),
                patch: patch.into(),
                test_patch: "t".into(),
                problem_statement: "Title\nBody \"quoted\"\n".into(),
                hints_text: String::new(),
                created_at: "2024-01-02T03:04:05Z".into(),
                version: "1.2".into(),
                fail_to_pass: r#"["t.py::test_a"]"#.into(),
                pass_to_pass: "[]".into(),
                environment_setup_commit: "1".repeat(40),
            };
            dataset.push_task(&row, vec!["7".into()]).unwrap();
        }
        dataset.sort_by_first_column();
        dataset
    }

    #[test]
    fn parquet_and_jsonl_hold_the_same_rows_in_column_order() {
        let dir = tempfile::tempdir().unwrap();
        let dataset = sample();
        dataset.write_parquet(&dir.path().join("t.parquet")).unwrap();
        dataset.write_jsonl(&dir.path().join("t.jsonl")).unwrap();
        let from_parquet = read_records(&dir.path().join("t.parquet")).unwrap();
        let from_jsonl = read_records(&dir.path().join("t.jsonl")).unwrap();
        assert_eq!(from_parquet, from_jsonl);
        assert_eq!(from_jsonl[0]["instance_id"], "a__b-1");
        assert_eq!(from_jsonl[1]["patch"], "diff --git a/x b/x\n+\u{e9}\n");
        let text = fs_err::read_to_string(dir.path().join("t.jsonl")).unwrap();
        let first_line = text.lines().next().unwrap();
        assert!(first_line.starts_with(r#"{"instance_id":"a__b-1","repo":"a/b","base_commit""#), "{first_line}");
        assert!(
            first_line.ends_with(
                r#""environment_setup_commit":"1111111111111111111111111111111111111111","pull_number":"7"}"#
            )
        );
        let rows = read_task_rows(&dir.path().join("t.parquet")).unwrap();
        assert_eq!(rows[1].fail_to_pass_list().unwrap(), vec!["t.py::test_a".to_string()]);
        let leftovers: Vec<_> = fs_err::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(leftovers.len(), 2, "no temporary files are left: {leftovers:?}");
    }

    #[test]
    fn rows_of_the_wrong_width_are_refused() {
        let mut dataset = Dataset::with_extra_columns(&[]);
        let error = dataset.push(vec!["only one".into()]).unwrap_err();
        assert!(error.to_string().contains("1 values for 12 columns"), "{error}");
    }

    #[test]
    fn unknown_formats_and_bad_lines_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("rows.csv");
        fs_err::write(&csv, "a,b\n").unwrap();
        assert!(read_records(&csv).unwrap_err().to_string().contains("rows.csv"));
        let jsonl = dir.path().join("rows.jsonl");
        fs_err::write(&jsonl, "{\"a\": 1}\nnot json\n").unwrap();
        let error = read_records(&jsonl).unwrap_err().to_string();
        assert!(error.contains("line 2") && error.contains("rows.jsonl"), "{error}");
    }
}
