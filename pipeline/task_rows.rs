//! Task rows read from JSONL: SWE-bench's format, or Multi-SWE-bench's turned into
//! SWE-bench's fields ([`from_multi_swe_bench`]); each row becomes the candidate it
//! describes. Shared ground of the stages that take `--input` rows (validate, screen).

use std::io::BufRead;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::model::{Candidate, RepoSlug, RepoSlugError, TaskRow, encode_test_list};

/// One input row: its fields as read (written back with the fresh ones), and the
/// candidate it describes.
#[derive(Debug, Clone)]
pub struct InputRow {
    pub fields: Map<String, Value>,
    pub candidate: Candidate,
}

#[derive(Debug, thiserror::Error)]
pub enum RowsError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("failed to read `{path}`")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("line {line} of `{path}` is not a SWE-bench row: {message}")]
    BadRow { path: PathBuf, line: usize, message: String },
    #[error("failed to encode the row `{instance_id}` as JSON")]
    Encode {
        instance_id: String,
        #[source]
        source: serde_json::Error,
    },
}

impl RowsError {
    /// Whether the input itself is wrong (exit code 2).
    pub fn is_usage(&self) -> bool {
        matches!(self, RowsError::BadRow { .. })
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            RowsError::BadRow { .. } => {
                Some("each line must be a JSON object with the twelve SWE-bench fields".to_string())
            }
            _ => None,
        }
    }
}

/// Rows of a SWE-bench JSONL file, each with the candidate it describes; blank lines
/// are skipped. The first bad row is the error.
pub fn read_rows(path: &Path) -> Result<Vec<InputRow>, RowsError> {
    read_each_row(path)?.into_iter().map(|read| read.row).collect()
}

/// One line of a rows file: the row it holds, or what is wrong with it.
#[derive(Debug)]
pub struct ReadRow {
    /// The line's number, from 1.
    pub line: usize,
    /// The line's JSON object as written, when it is one (so that a bad row can be
    /// written back unchanged).
    pub raw: Option<Map<String, Value>>,
    /// The row, or a [`RowsError::BadRow`] naming the line, the row and the field.
    pub row: Result<InputRow, RowsError>,
}

/// Every non-blank line of a rows file, in order, each read on its own: a bad row
/// (missing or mistyped fields) does not hide the others. Only failing to read the
/// file at all is an error.
pub fn read_each_row(path: &Path) -> Result<Vec<ReadRow>, RowsError> {
    let file = fs_err::File::open(path)?;
    let mut rows = Vec::new();
    // Lines as bytes, so that one that is not UTF-8 is named by its number.
    for (index, line) in std::io::BufReader::new(file).split(b'\n').enumerate() {
        let line = line.map_err(|source| RowsError::Read { path: path.to_path_buf(), source })?;
        let bad = |message: String| RowsError::BadRow { path: path.to_path_buf(), line: index + 1, message };
        let line = match String::from_utf8(line) {
            Ok(line) => line,
            Err(error) => {
                let message = format!("it is not UTF-8 text (at byte {})", error.utf8_error().valid_up_to());
                rows.push(ReadRow { line: index + 1, raw: None, row: Err(bad(message)) });
                continue;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let raw = serde_json::from_str::<Map<String, Value>>(&line).ok();
        rows.push(ReadRow { line: index + 1, raw, row: parse_row(&line).map_err(bad) });
    }
    Ok(rows)
}

/// Whether a row is in Multi-SWE-bench's shape (`org`, `repo`, `number`, `base`,
/// `fix_patch`, ...) rather than SWE-bench's.
fn is_multi_swe_bench(fields: &Map<String, Value>) -> bool {
    fields.contains_key("org") && fields.contains_key("fix_patch") && !fields.contains_key("patch")
}

/// The names of a Multi-SWE-bench test map (`{"name": {"run": ..., ...}}`).
fn test_names(fields: &Map<String, Value>, key: &str) -> Vec<String> {
    fields.get(key).and_then(Value::as_object).map(|map| map.keys().cloned().collect()).unwrap_or_default()
}

/// A Multi-SWE-bench row in SWE-bench's fields, added to its own: `repo` =
/// `org/repo`, `base_commit` = `base.sha` (also the environment commit: the rows
/// name no other), `patch` = `fix_patch`, `problem_statement` from
/// `resolved_issues`, the published FAIL_TO_PASS = `f2p_tests` + `n2p_tests` (a test
/// absent before the fix, because its package or crate did not compile, and passing
/// after it fails before in SWE-bench's sense) + `s2p_tests`, PASS_TO_PASS =
/// `p2p_tests`. The rows carry no creation date nor version: `created_at` is the
/// Unix epoch (validation reads dates from the commits), `version` is `0.0`.
fn from_multi_swe_bench(mut fields: Map<String, Value>) -> Result<Map<String, Value>, String> {
    let text = |value: Option<&Value>, name: &str| -> Result<String, String> {
        value.and_then(Value::as_str).map(str::to_string).ok_or_else(|| format!("{name}: missing or not a string"))
    };
    let org = text(fields.get("org"), "org")?;
    let name = text(fields.get("repo"), "repo")?;
    let number = fields.get("number").and_then(Value::as_u64).ok_or("number: missing or not a number")?;
    let base = text(fields.get("base").and_then(|base| base.get("sha")), "base.sha")?;
    let patch = text(fields.get("fix_patch"), "fix_patch")?;
    let test_patch = text(fields.get("test_patch"), "test_patch")?;
    let problem: String = fields
        .get("resolved_issues")
        .and_then(Value::as_array)
        .map(|issues| {
            issues
                .iter()
                .map(|issue| {
                    let field = |key: &str| issue.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
                    format!("{}\n{}\n", field("title"), field("body"))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut fail_to_pass = test_names(&fields, "f2p_tests");
    fail_to_pass.extend(test_names(&fields, "n2p_tests"));
    fail_to_pass.extend(test_names(&fields, "s2p_tests"));
    fail_to_pass.sort();
    fail_to_pass.dedup();
    let pass_to_pass = test_names(&fields, "p2p_tests");
    let instance_id = match fields.get("instance_id").and_then(Value::as_str) {
        Some(id) => id.to_string(),
        None => format!("{org}__{name}-{number}"),
    };
    let mut row = Map::new();
    row.insert("instance_id".into(), instance_id.into());
    row.insert("repo".into(), format!("{org}/{name}").into());
    row.insert("base_commit".into(), base.clone().into());
    row.insert("patch".into(), patch.into());
    row.insert("test_patch".into(), test_patch.into());
    row.insert("problem_statement".into(), problem.into());
    row.insert("hints_text".into(), "".into());
    row.insert("created_at".into(), "1970-01-01T00:00:00Z".into());
    row.insert("version".into(), "0.0".into());
    row.insert("FAIL_TO_PASS".into(), encode_test_list(&fail_to_pass).into());
    row.insert("PASS_TO_PASS".into(), encode_test_list(&pass_to_pass).into());
    row.insert("environment_setup_commit".into(), base.into());
    for (key, value) in std::mem::take(&mut fields) {
        if !row.contains_key(&key) {
            row.insert(key, value);
        }
    }
    Ok(row)
}

/// A row's `created_at`: RFC 3339 (SWE-bench's `2023-01-18T22:01:13Z`), or the
/// same instant without its zone as a data frame writes it (`2023-01-18 22:01:13`,
/// SWE-bench Multilingual's rows read from its parquet), taken as UTC.
fn created_at(text: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(text).map(|date| date.with_timezone(&Utc)).or_else(|error| {
        ["%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S"]
            .iter()
            .find_map(|format| chrono::NaiveDateTime::parse_from_str(text, format).ok())
            .map(|date| date.and_utc())
            .ok_or_else(|| format!("created_at `{text}`: {error} (give RFC 3339, as 2023-01-18T22:01:13Z)"))
    })
}

/// One JSONL line as a row; the error is what is wrong with it.
fn parse_row(line: &str) -> Result<InputRow, String> {
    let mut fields: Map<String, Value> = serde_json::from_str(line).map_err(|error| error.to_string())?;
    if is_multi_swe_bench(&fields) {
        fields = from_multi_swe_bench(fields)?;
    }
    // SWE-bench Multilingual's rows name no environment commit: each task's
    // environment is its base commit's, as Multi-SWE-bench's.
    if !fields.contains_key("environment_setup_commit")
        && let Some(base) = fields.get("base_commit").filter(|base| base.is_string()).cloned()
    {
        fields.insert("environment_setup_commit".into(), base);
    }
    // The error names the row and the field that is missing or has the wrong type
    // (`row `a__b-1`: base_commit: invalid type: ...`).
    let named = match fields.get("instance_id").and_then(Value::as_str) {
        Some(id) => format!("row `{id}`: "),
        None => String::new(),
    };
    let row: TaskRow = serde_path_to_error::deserialize(Value::Object(fields.clone())).map_err(|error| {
        let path = error.path().to_string();
        if path == "." { format!("{named}{}", error.inner()) } else { format!("{named}{path}: {}", error.inner()) }
    })?;
    // The id names the row's log folder: it must stay one path component.
    crate::model::ids::check_id("instance_id", &row.instance_id).map_err(|error| error.to_string())?;
    let repo: RepoSlug = row.repo.parse().map_err(|error: RepoSlugError| error.to_string())?;
    let created_at = created_at(&row.created_at)?;
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
        test_files: crate::git::diff::files_changed_by(&row.test_patch),
    };
    Ok(InputRow { fields, candidate })
}

#[cfg(test)]
pub(crate) mod test_rows {
    use std::path::PathBuf;

    pub(crate) const PATCH: &str = "diff --git a/tests/test_x.py b/tests/test_x.py\n--- a/tests/test_x.py\n+++ b/tests/test_x.py\n@@ -1 +1 @@\n-a\n+b\n";

    pub(crate) fn row_line(instance_id: &str, fail_to_pass: &[&str], pass_to_pass: &[&str]) -> String {
        serde_json::json!({
            "instance_id": instance_id,
            "repo": "acme/calc",
            "base_commit": "a".repeat(40),
            "patch": "",
            "test_patch": PATCH,
            "problem_statement": "it breaks\n",
            "hints_text": "",
            "created_at": "2024-05-01T10:00:00Z",
            "version": "1.0",
            "FAIL_TO_PASS": serde_json::to_string(fail_to_pass).unwrap(),
            "PASS_TO_PASS": serde_json::to_string(pass_to_pass).unwrap(),
            "environment_setup_commit": "b".repeat(40),
            "extra_column": 7,
        })
        .to_string()
    }

    pub(crate) fn rows_file(lines: &[String]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.jsonl");
        fs_err::write(&path, lines.join("\n\n") + "\n").unwrap();
        (dir, path)
    }
}

#[cfg(test)]
mod tests {
    use super::test_rows::*;
    use super::*;

    #[test]
    fn rows_become_candidates_and_keep_their_fields() {
        let (_dir, path) = rows_file(&[row_line("acme__calc-12", &["t::a"], &[])]);
        let rows = read_rows(&path).unwrap();
        assert_eq!(rows.len(), 1, "blank lines are skipped");
        let candidate = &rows[0].candidate;
        assert_eq!((candidate.repo.to_string(), candidate.pull_number), ("acme/calc".to_string(), 12));
        assert_eq!(candidate.test_files, vec!["tests/test_x.py".to_string()]);
        assert_eq!(rows[0].fields["extra_column"], 7);
    }

    #[test]
    fn a_swe_bench_multilingual_row_without_an_environment_commit_and_with_a_data_frame_date_is_read() {
        let mut row: Map<String, Value> = serde_json::from_str(&row_line("acme__calc-12", &["t::a"], &[])).unwrap();
        row.remove("environment_setup_commit");
        row.insert("created_at".into(), "2024-01-18 22:01:13".into());
        row.insert("FAIL_TO_PASS".into(), serde_json::json!(["t::a"]));
        let (_dir, path) = rows_file(&[Value::Object(row.clone()).to_string()]);
        let rows = read_rows(&path).unwrap();
        let candidate = &rows[0].candidate;
        assert_eq!(candidate.environment_setup_commit, "a".repeat(40), "the base commit's environment");
        assert_eq!(candidate.created_at.to_rfc3339(), "2024-01-18T22:01:13+00:00");
        // A date in neither form is named, with the form to give.
        row.insert("created_at".into(), "18/01/2024".into());
        let (_dir, path) = rows_file(&[Value::Object(row).to_string()]);
        let error = read_rows(&path).unwrap_err().to_string();
        assert!(error.contains("created_at `18/01/2024`") && error.contains("RFC 3339"), "{error}");
    }

    #[test]
    fn a_bad_row_names_its_line_and_is_bad_usage() {
        let (_dir, path) = rows_file(&[row_line("acme__calc-1", &[], &[]), "{\"instance_id\": 3}".to_string()]);
        let error = read_rows(&path).unwrap_err();
        assert!(error.is_usage());
        assert!(error.to_string().starts_with("line 3 of `"), "{error}");
        assert!(error.hint().unwrap().contains("twelve SWE-bench fields"));
    }

    #[test]
    fn a_line_that_is_not_utf8_and_a_field_of_the_wrong_type_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.jsonl");
        let mut bytes = format!("{}\n", row_line("acme__calc-1", &[], &[])).into_bytes();
        bytes.extend_from_slice(b"{\"instance_id\": \"caf\xe9\"}\n");
        fs_err::write(&path, &bytes).unwrap();
        let error = read_rows(&path).unwrap_err();
        assert!(error.is_usage());
        assert!(error.to_string().starts_with("line 2 of `"), "{error}");
        assert!(error.to_string().contains("not UTF-8"), "{error}");

        let mut row: serde_json::Value = serde_json::from_str(&row_line("acme__calc-2", &[], &[])).unwrap();
        row["base_commit"] = 5.into();
        let (_dir, path) = rows_file(&[row.to_string()]);
        let error = read_rows(&path).unwrap_err().to_string();
        assert!(error.contains("base_commit: invalid type"), "{error}");
    }

    #[test]
    fn an_instance_id_that_is_not_one_path_component_is_bad_usage_naming_the_line_and_the_rule() {
        for bad in ["../../../../x", "/tmp/elsewhere", "acme/calc-1", ".hidden-1"] {
            let (_dir, path) = rows_file(&[row_line("acme__calc-1", &[], &[]), row_line(bad, &[], &[])]);
            let error = read_rows(&path).unwrap_err();
            assert!(error.is_usage(), "{bad}");
            let message = error.to_string();
            assert!(message.starts_with("line 3 of `"), "{message}");
            assert!(message.contains(&format!("invalid instance_id `{bad}`")), "{message}");
            assert!(message.contains("allowed: 1-200 characters of A-Z, a-z, 0-9"), "{message}");
        }
    }
}
