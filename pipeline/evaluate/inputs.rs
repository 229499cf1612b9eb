//! What `evaluate` reads: the release's tasks (with their instance images) and the
//! predictions (JSONL, or a JSON list as SWE-bench also accepts).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::UsageError;
use crate::ecosystem::{self, Ecosystem};
use crate::swt::metrics::ExecutableLines;

/// One task of the release, as `evaluate` needs it.
#[derive(Debug, Clone)]
pub struct ReleaseTask {
    pub instance_id: String,
    /// `owner/name` and the base commit: where the gold patch's files are read from a
    /// mirror (for its mutants), when one is at hand.
    pub repo: String,
    pub base_commit: String,
    pub version: String,
    pub patch: String,
    pub test_patch: String,
    pub image: String,
    pub eval_script: String,
    pub test_command: String,
    /// The ecosystem that runs the task's tests (the release's `ecosystem` column).
    pub ecosystem: &'static dyn Ecosystem,
    pub fail_to_pass: Vec<String>,
    pub pass_to_pass: Vec<String>,
    /// The gold patch's executable lines (`gold_executable_line_map`), when measured.
    pub executable: Option<ExecutableLines>,
    /// The screen's difficulty bucket (the release's `difficulty` column), when screened.
    pub difficulty: Option<String>,
}

impl ReleaseTask {
    /// The golden test patch's test files: the files of T^R.
    pub fn golden_test_files(&self) -> Vec<String> {
        // The task's test command says how its tests run (C: a harness over a build in
        // a folder takes the files of its `tests` folder, whatever their language).
        let spec = crate::model::EnvironmentSpec { test_command: self.test_command.clone(), ..Default::default() };
        self.ecosystem().tests_to_run(&self.test_patch, &spec)
    }

    /// The ecosystem that runs the task's tests: the release's `ecosystem` column;
    /// releases made before that column hold pytest tasks only.
    pub fn ecosystem(&self) -> &'static dyn Ecosystem {
        self.ecosystem
    }

    /// ΔC of tests that run nothing (an empty patch, one that does not apply): 0 when
    /// the gold patch has executable lines, none when they are unknown or absent.
    pub fn change_coverage_of_nothing(&self) -> Option<f64> {
        self.executable.as_ref().filter(|executable| executable.count() > 0).map(|_| 0.0)
    }
}

/// One prediction.
#[derive(Debug, Clone)]
pub struct Prediction {
    pub instance_id: String,
    pub model: String,
    /// `None` or empty: nothing to evaluate.
    pub patch: Option<String>,
}

fn string(record: &Map<String, Value>, key: &str) -> Option<String> {
    record.get(key).and_then(Value::as_str).map(String::from)
}

/// The release's tasks, by instance id. A release without instance images cannot be
/// evaluated: that is a usage error with the command that makes one.
pub fn read_release(dir: &Path) -> anyhow::Result<BTreeMap<String, ReleaseTask>> {
    let path =
        ["tasks.jsonl", "tasks.parquet"].iter().map(|name| dir.join(name)).find(|path| path.is_file()).ok_or_else(
            || {
                UsageError::new(format!("`{}` is not a release: it has no tasks.jsonl or tasks.parquet", dir.display()))
                    .with_hint("pass a release folder, `<data-dir>/releases/NAME/VERSION`")
            },
        )?;
    let records = crate::dataset::read_records(&path)?;
    let mut tasks = BTreeMap::new();
    for (index, record) in records.iter().enumerate() {
        let field = |key: &str| string(record, key);
        let instance_id = field("instance_id")
            .ok_or_else(|| UsageError::new(format!("row {} of `{}` has no instance_id", index + 1, path.display())))?;
        let image = field("image").filter(|image| !image.is_empty()).ok_or_else(|| {
            UsageError::new(format!("task `{instance_id}` of `{}` has no instance image", path.display()))
                .with_hint("make the release with images: `swe-harvest release --name NAME --version VERSION --images`")
        })?;
        let list = |key: &str| -> Vec<String> {
            field(key).and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default()
        };
        let executable = field("gold_executable_line_map")
            .filter(|text| !text.is_empty())
            .and_then(|text| serde_json::from_str(&text).ok());
        let ecosystem = match field("ecosystem").filter(|name| !name.is_empty()) {
            None => ecosystem::ALL[0],
            Some(name) => ecosystem::by_name(&name).ok_or_else(|| {
                UsageError::new(format!(
                    "task `{instance_id}` of `{}` names the ecosystem `{name}`, which this build does not know",
                    path.display()
                ))
                .with_hint(format!(
                    "known ecosystems: {}; evaluate it with the swe-harvest that made the release",
                    ecosystem::ALL.iter().map(|ecosystem| ecosystem.name()).collect::<Vec<_>>().join(", ")
                ))
            })?,
        };
        let task = ReleaseTask {
            repo: field("repo").unwrap_or_default(),
            base_commit: field("base_commit").unwrap_or_default(),
            ecosystem,
            version: field("version").unwrap_or_default(),
            patch: field("patch").unwrap_or_default(),
            test_patch: field("test_patch").unwrap_or_default(),
            eval_script: field("eval_script").unwrap_or_default(),
            test_command: field("test_command")
                .filter(|command| !command.is_empty())
                .unwrap_or_else(|| ecosystem.default_test_command().into()),
            fail_to_pass: list("FAIL_TO_PASS"),
            pass_to_pass: list("PASS_TO_PASS"),
            executable,
            image,
            difficulty: field("difficulty").filter(|bucket| !bucket.is_empty()),
            instance_id: instance_id.clone(),
        };
        tasks.insert(instance_id, task);
    }
    if tasks.is_empty() {
        return Err(UsageError::new(format!("the release `{}` holds no task", dir.display())).into());
    }
    Ok(tasks)
}

/// The predictions, in file order.
pub fn read_predictions(path: &PathBuf) -> anyhow::Result<Vec<Prediction>> {
    let text = fs_err::read_to_string(path)?;
    let bad = |place: String, message: String| {
        UsageError::new(format!("{place} of `{}` is not a prediction: {message}", path.display())).with_hint(
            "predictions are JSON objects {\"instance_id\", \"model_name_or_path\", \"model_patch\"}, one per line",
        )
    };
    let records: Vec<(String, Value)> = if text.trim_start().starts_with('[') {
        let list: Vec<Value> =
            serde_json::from_str(&text).map_err(|error| bad("the list".into(), error.to_string()))?;
        list.into_iter().enumerate().map(|(index, value)| (format!("item {}", index + 1), value)).collect()
    } else {
        let mut records = Vec::new();
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let place = format!("line {}", index + 1);
            let value = serde_json::from_str(line).map_err(|error| bad(place.clone(), error.to_string()))?;
            records.push((place, value));
        }
        records
    };
    let mut predictions = Vec::with_capacity(records.len());
    for (place, value) in records {
        let Value::Object(record) = value else { return Err(bad(place, "not a JSON object".into()).into()) };
        let instance_id =
            string(&record, "instance_id").ok_or_else(|| bad(place.clone(), "no `instance_id`".into()))?;
        predictions.push(Prediction {
            instance_id,
            model: string(&record, "model_name_or_path").unwrap_or_else(|| "unnamed".into()),
            patch: string(&record, "model_patch"),
        });
    }
    if predictions.is_empty() {
        return Err(UsageError::new(format!("`{}` holds no prediction", path.display())).into());
    }
    Ok(predictions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecosystem::fixtures::diff_of;

    /// A C task tested by its own harness over a build in a folder (micropython's
    /// shape): its golden test files are the `.py` tests of its `tests` folder, which a
    /// C task's test files otherwise never are.
    #[test]
    fn a_harness_tasks_golden_test_files_are_the_files_of_its_tests_folder() {
        let task = ReleaseTask {
            instance_id: "acme__calc-1".into(),
            repo: "acme/calc".into(),
            base_commit: String::new(),
            version: "1".into(),
            patch: String::new(),
            test_patch: diff_of(&["tests/basics/neg.py", "tests/basics/neg.py.exp"]),
            image: String::new(),
            eval_script: String::new(),
            test_command: "make -C ports/unix test".into(),
            ecosystem: ecosystem::by_name("c").unwrap(),
            fail_to_pass: Vec::new(),
            pass_to_pass: Vec::new(),
            executable: None,
            difficulty: None,
        };
        assert_eq!(task.golden_test_files(), ["tests/basics/neg.py", "tests/basics/neg.py.exp"]);
        let plain = ReleaseTask { test_command: "make check".into(), ..task };
        assert!(plain.golden_test_files().is_empty(), "a plain make task's test files are C's own");
    }
}
