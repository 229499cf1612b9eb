//! Datasets: published SWE-bench rows round-trip through our model and writers.

use swe_harvest::dataset::{Dataset, read_records, read_task_rows};
use swe_harvest::model::SWEBENCH_COLUMNS;

use crate::support::shared_groundtruth;

/// The ground truth's row files; `None` (skipped) without `../shared/groundtruth`.
fn groundtruth_files() -> Option<Vec<std::path::PathBuf>> {
    let folder = shared_groundtruth("")?;
    let mut files: Vec<_> = fs_err::read_dir(&folder)
        .unwrap_or_else(|error| panic!("the ground truth folder `{}` is missing: {error}", folder.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    Some(files)
}

#[test]
fn groundtruth_rows_round_trip_unchanged_through_parquet_and_jsonl() {
    let Some(files) = groundtruth_files() else { return };
    let dir = tempfile::tempdir().unwrap();
    for file in files {
        let original = read_records(&file).unwrap();
        let rows = read_task_rows(&file).unwrap();
        assert_eq!(rows.len(), original.len());
        let mut dataset = Dataset::with_extra_columns(&[]);
        for row in &rows {
            dataset.push_task(row, Vec::new()).unwrap();
        }
        let parquet = dir.path().join("rows.parquet");
        let jsonl = dir.path().join("rows.jsonl");
        dataset.write_parquet(&parquet).unwrap();
        dataset.write_jsonl(&jsonl).unwrap();
        assert_eq!(read_records(&parquet).unwrap(), read_records(&jsonl).unwrap());
        for (written, source) in read_records(&jsonl).unwrap().iter().zip(&original) {
            assert_eq!(written.len(), SWEBENCH_COLUMNS.len(), "exactly the twelve columns");
            for column in SWEBENCH_COLUMNS {
                let value = written[column].as_str().expect("every written value is a string");
                match &source[column] {
                    // The older encoding: a JSON list; we write it as a string holding that list.
                    serde_json::Value::Array(list) => {
                        let decoded: Vec<String> = serde_json::from_str(value).unwrap();
                        let expected: Vec<String> =
                            list.iter().map(|item| item.as_str().unwrap().to_string()).collect();
                        assert_eq!(decoded, expected, "{column} of {}", written["instance_id"]);
                    }
                    other => assert_eq!(value, other.as_str().unwrap(), "{column} of {}", written["instance_id"]),
                }
            }
        }
    }
}
