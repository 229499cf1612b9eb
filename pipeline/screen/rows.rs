//! `screen --input ROWS.jsonl --out OUT.jsonl`: SWE-bench rows (or Multi-SWE-bench's,
//! read as `validate --input` reads them) screened without the store. What a row
//! carries is read: `flaky_tests`, `issue_numbers`, `golden_change_coverage` (from
//! `validate --input --coverage`), `mutation_score` and `surviving_mutants` (from
//! `probe --input`), and the run logs that `validate --input` left in the data dir. Each row is
//! written back in its order exactly as it was read, plus `quality_flags` (the flags
//! with their reasons and evidence), `quality_score`, `quality_verdict` and
//! `difficulty`. A row that cannot be screened (a missing or mistyped field) is
//! written back unchanged with a `quality_error` that names the line, the row and the
//! field, and every other row is screened as usual. The output file is written whole
//! or not at all (temp file, sync, rename); a rerun screens the rows again, which
//! takes milliseconds a row.

use std::path::Path;
use std::time::Instant;

use serde_json::{Map, Value};

use super::{FlagCode, MirrorFiles, QualityRecord, ScreenError, ScreenSettings, Summary, record};
use crate::model::probe::{ProbeOutcome, ProbeRecord, SurvivingMutant};
use crate::task_rows::{InputRow, read_each_row};

/// The fields a screen adds to a row, in order.
pub const QUALITY_FIELDS: [&str; 4] = ["quality_flags", "quality_score", "quality_verdict", "difficulty"];

/// The field that says why a row was not screened.
pub const ERROR_FIELD: &str = "quality_error";

/// A test list of a row: a JSON-encoded string (SWE-bench's) or a JSON list.
fn list_field(fields: &Map<String, Value>, key: &str) -> Vec<String> {
    match fields.get(key) {
        Some(Value::String(encoded)) => serde_json::from_str(encoded).unwrap_or_default(),
        Some(Value::Array(items)) => items.iter().filter_map(|item| item.as_str().map(String::from)).collect(),
        _ => Vec::new(),
    }
}

/// The issues a row resolves: our releases' `issue_numbers` (a JSON-encoded list of
/// numbers as strings), a list of numbers, or Multi-SWE-bench's `resolved_issues`.
fn issue_numbers(fields: &Map<String, Value>) -> Vec<u64> {
    let number = |value: &Value| value.as_u64().or_else(|| value.as_str().and_then(|text| text.parse().ok()));
    match fields.get("issue_numbers") {
        Some(Value::String(encoded)) => serde_json::from_str::<Vec<Value>>(encoded)
            .map(|values| values.iter().filter_map(number).collect())
            .unwrap_or_default(),
        Some(Value::Array(values)) => values.iter().filter_map(number).collect(),
        _ => fields
            .get("resolved_issues")
            .and_then(Value::as_array)
            .map(|issues| issues.iter().filter_map(|issue| issue.get("number").and_then(number)).collect())
            .unwrap_or_default(),
    }
}

/// Probe's fields of a row (`mutation_score`, `surviving_mutants`), when it has them.
fn probe_outcome(fields: &Map<String, Value>) -> Option<ProbeOutcome> {
    let score = fields.get("mutation_score")?;
    let surviving_mutants: Vec<SurvivingMutant> = match fields.get("surviving_mutants") {
        Some(Value::String(encoded)) => serde_json::from_str(encoded).ok()?,
        Some(value) => serde_json::from_value(value.clone()).ok()?,
        None => Vec::new(),
    };
    Some(ProbeOutcome { mutation_score: score.as_f64(), viable: 0, surviving_mutants })
}

/// Adds `weak_tests` (or replaces it) in a row's `quality_flags` when probe kept a
/// survivor; leaves the row as it is otherwise. Used by `probe --input`.
pub fn merge_weak_tests(fields: &mut Map<String, Value>, record: &ProbeRecord) {
    let outcome = ProbeOutcome::from(record);
    let mut task = super::signals::TaskText::of_texts("", "", "", "", &[]);
    task.probe = Some(&outcome);
    let Some(flag) = super::signals::probe::weak_tests(&super::signals::Reading::new(task, Vec::new())) else { return };
    let mut flags: Vec<Value> = match fields.get("quality_flags") {
        Some(Value::Array(flags)) => flags.clone(),
        _ => Vec::new(),
    };
    flags.retain(|existing| existing.get("code").and_then(Value::as_str) != Some(FlagCode::WeakTests.as_str()));
    flags.push(serde_json::to_value(&flag).expect("flags serialize"));
    fields.insert("quality_flags".into(), Value::Array(flags));
}

/// Screens one row.
pub fn screen_row(row: &InputRow, mirrors: &mut MirrorFiles, settings: &ScreenSettings) -> QualityRecord {
    let candidate = &row.candidate;
    let fail_to_pass = list_field(&row.fields, "FAIL_TO_PASS");
    let flaky_tests = list_field(&row.fields, "flaky_tests");
    let numbers = issue_numbers(&row.fields);
    let repo = candidate.repo.to_string();
    let probe = probe_outcome(&row.fields);
    // What `validate --input` left: the change coverage column, and the run logs in the
    // data dir when this screen runs with the same `--data-dir`.
    let change_coverage = match row.fields.get("golden_change_coverage") {
        Some(Value::String(text)) => text.parse::<f64>().ok(),
        Some(value) => value.as_f64(),
        None => None,
    };
    let runs = super::run_evidence(&settings.data_dir, &candidate.instance_id, change_coverage);
    let mut text = super::signals::TaskText::of_candidate(candidate, &repo, &fail_to_pass, &flaky_tests, &numbers);
    text.probe = probe.as_ref();
    text.runs = runs.as_ref();
    let files = mirrors.files_before(&candidate.repo, &candidate.base_commit, &candidate.patch, &candidate.test_patch);
    record::assess(&candidate.instance_id, text, files, &settings.config)
}

/// The four fields as a row carries them: the flags as a list of objects, the score
/// as a number, the verdict and the bucket as strings.
pub fn quality_fields(record: &QualityRecord) -> [(&'static str, Value); 4] {
    [
        ("quality_flags", serde_json::to_value(&record.quality_flags).expect("flags serialize")),
        ("quality_score", record.quality_score.into()),
        ("quality_verdict", record.quality_verdict.as_str().into()),
        ("difficulty", record.difficulty.as_str().into()),
    ]
}

/// Screens every row of `input` and writes them to `out`.
pub fn run(settings: &ScreenSettings, input: &Path, out: &Path) -> Result<Summary, ScreenError> {
    let started = Instant::now();
    let rows = read_each_row(input)?;
    let mut mirrors = MirrorFiles::new(&settings.data_dir, settings.mirrors_dir.as_deref());
    let mut summary = Summary { selected: rows.len(), ..Summary::default() };
    let mut text = String::new();
    for read in rows {
        let mut object = read.raw.clone().unwrap_or_default();
        match &read.row {
            Ok(row) => {
                let record = screen_row(row, &mut mirrors, settings);
                for (name, value) in quality_fields(&record) {
                    object.insert(name.to_string(), value);
                }
                summary.count(&record);
            }
            Err(error) => {
                let message = error.to_string();
                tracing::warn!("{message}");
                object.insert(ERROR_FIELD.to_string(), message.clone().into());
                summary.bad_rows.push(message);
                if read.raw.is_none() {
                    // Not a JSON object: nothing of it can be written back as a row.
                    continue;
                }
            }
        }
        text.push_str(&serde_json::to_string(&object).expect("JSON values serialize"));
        text.push('\n');
    }
    crate::dataset::write_durably(out, |file| std::io::Write::write_all(file, text.as_bytes()))
        .map_err(|source| ScreenError::Write { path: out.to_path_buf(), source })?;
    summary.elapsed_secs = started.elapsed().as_secs_f64();
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_issue_numbers_are_read_in_every_encoding() {
        let fields: Map<String, Value> = serde_json::from_value(serde_json::json!({
            "FAIL_TO_PASS": "[\"a\", \"b\"]",
            "flaky_tests": ["c"],
            "issue_numbers": "[\"3\", \"5\"]",
        }))
        .unwrap();
        assert_eq!(list_field(&fields, "FAIL_TO_PASS"), ["a", "b"]);
        assert_eq!(list_field(&fields, "flaky_tests"), ["c"]);
        assert_eq!(list_field(&fields, "PASS_TO_PASS"), Vec::<String>::new());
        assert_eq!(issue_numbers(&fields), [3, 5]);
        let multi: Map<String, Value> =
            serde_json::from_value(serde_json::json!({"resolved_issues": [{"number": 7}, {"number": 9}]})).unwrap();
        assert_eq!(issue_numbers(&multi), [7, 9]);
    }
}
