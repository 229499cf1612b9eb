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

/// Datasets from elsewhere come as pyarrow writes them: snappy (its default) or
/// another codec, list columns (SWE-bench's older encoding of the test lists), numbers,
/// nulls. Each is read as the JSON our readers expect; a codec we leave out (brotli)
/// is refused with the file's name.
#[test]
fn parquet_written_by_pyarrow_is_read_in_every_codec_with_lists_numbers_and_nulls() {
    let python = crate::support::python_venv("pyarrow", &["pyarrow"]);
    let dir = tempfile::tempdir().unwrap();
    let script = r#"
import sys
import pyarrow as pa, pyarrow.parquet as pq
table = pa.table({
    "instance_id": ["a__b-1", "a__b-2"],
    "FAIL_TO_PASS": [["t::x", "t::y"], []],
    "PASS_TO_PASS": pa.array([["t::z"], None], type=pa.list_(pa.large_string())),
    "pull_number": [7, 12],
    "hints_text": ["", None],
})
for codec in ["snappy", "zstd", "gzip", "lz4", "none", "brotli"]:
    pq.write_table(table, f"{sys.argv[1]}/{codec}.parquet", compression=codec)
"#;
    let output = std::process::Command::new(python).arg("-c").arg(script).arg(dir.path()).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));

    let expected = serde_json::json!([
        {"instance_id": "a__b-1", "FAIL_TO_PASS": ["t::x", "t::y"], "PASS_TO_PASS": ["t::z"],
         "pull_number": "7", "hints_text": ""},
        {"instance_id": "a__b-2", "FAIL_TO_PASS": [], "PASS_TO_PASS": null,
         "pull_number": "12", "hints_text": null},
    ]);
    for codec in ["snappy", "zstd", "gzip", "lz4", "none"] {
        let records = read_records(&dir.path().join(format!("{codec}.parquet"))).unwrap();
        assert_eq!(
            serde_json::Value::from(records.into_iter().map(serde_json::Value::Object).collect::<Vec<_>>()),
            expected,
            "{codec}"
        );
    }
    let refused = dir.path().join("brotli.parquet");
    let error = read_records(&refused).unwrap_err().to_string();
    assert!(error.contains(&refused.display().to_string()) && error.to_lowercase().contains("brotli"), "{error}");
}
