//! `probe --input ROWS.jsonl --out OUT.jsonl`: the fields probe adds to a row
//! (`mutation_score`, `surviving_mutants`, and `probe`: what ran and why there is no
//! score), and the targets of rows that carry their own validation (a `validate
//! --input` output: a `diagnosis` whose status is `labelled`, with the image its
//! labels came from). Rows without one are validated first by the caller, exactly as
//! `validate --input` does.

use serde_json::{Map, Value, json};

use super::{Target, TaskProbe};
use crate::model::probe::{MutantStatus, SurvivingMutant};
use crate::task_rows::InputRow;

/// The fields probe adds to a row, in order.
pub const PROBE_FIELDS: [&str; 3] = ["mutation_score", "surviving_mutants", "probe"];

/// A test list of a row: a JSON-encoded string (SWE-bench's) or a JSON list.
pub fn list_field(fields: &Map<String, Value>, key: &str) -> Vec<String> {
    match fields.get(key) {
        Some(Value::String(encoded)) => serde_json::from_str(encoded).unwrap_or_default(),
        Some(Value::Array(items)) => items.iter().filter_map(|item| item.as_str().map(String::from)).collect(),
        _ => Vec::new(),
    }
}

/// The target of a row that carries its own validation (its `diagnosis` says
/// `labelled` and names the image), with the row's own labels; `None` otherwise.
pub fn validated_target(row: &InputRow) -> Option<Target> {
    let diagnosis = row.fields.get("diagnosis")?;
    if diagnosis.get("status")?.as_str()? != "labelled" {
        return None;
    }
    let image = diagnosis.get("image")?.as_str()?.to_string();
    let fail_to_pass = list_field(&row.fields, "FAIL_TO_PASS");
    if fail_to_pass.is_empty() {
        return None;
    }
    Some(Target {
        candidate: row.candidate.clone(),
        fail_to_pass,
        pass_to_pass: list_field(&row.fields, "PASS_TO_PASS"),
        image: Some(image),
        spec: None,
    })
}

/// The fields of one row's probe: its score (a number, or null), its survivors (as
/// releases carry them, smallest first) and what ran.
pub fn probe_fields(outcome: Option<&TaskProbe>, not_validated: Option<&str>) -> [(&'static str, Value); 3] {
    let Some(outcome) = outcome else {
        let why = not_validated.unwrap_or("interrupted before this row was probed");
        return [
            ("mutation_score", Value::Null),
            ("surviving_mutants", json!([])),
            ("probe", json!({"status": "not_probed", "detail": why})),
        ];
    };
    let record = outcome.record.as_ref();
    let survivors: Vec<SurvivingMutant> =
        record.map(|record| record.survivors().into_iter().map(SurvivingMutant::from).collect()).unwrap_or_default();
    let mut probe = json!({
        "status": if record.is_some() { "probed" } else { "not_probed" },
    });
    if let Some(record) = record {
        let counts: Map<String, Value> = MutantStatus::ALL
            .iter()
            .map(|status| (status.as_str().to_string(), record.count(*status).into()))
            .collect();
        probe["mutants"] = Value::Object(counts);
        probe["candidates"] = record.candidates.into();
        // The task's seconds in probe (its containers, this run or the one that made
        // the record), and in the mutants' test phases alone.
        probe["seconds"] = ((record.seconds * 10.0).round() / 10.0).into();
        probe["test_seconds"] = ((record.runs.iter().map(|run| run.seconds).sum::<f64>() * 10.0).round() / 10.0).into();
    }
    if let Some(set_aside) = &outcome.set_aside {
        probe["reason"] = set_aside.reason.as_str().into();
        probe["detail"] = set_aside.detail.clone().into();
    }
    [
        ("mutation_score", record.and_then(|record| record.mutation_score).map_or(Value::Null, Value::from)),
        ("surviving_mutants", serde_json::to_value(&survivors).expect("survivors serialize")),
        ("probe", probe),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_carries_its_own_validation_only_when_labelled_with_an_image() {
        let candidate = crate::model::Task::example("a/b", 1).candidate;
        let mut fields = Map::new();
        fields.insert("FAIL_TO_PASS".into(), "[\"t::a\"]".into());
        fields.insert("PASS_TO_PASS".into(), json!(["t::b"]));
        let row = |diagnosis: Value| {
            let mut fields = fields.clone();
            fields.insert("diagnosis".into(), diagnosis);
            InputRow { fields, candidate: candidate.clone() }
        };
        let target = validated_target(&row(json!({"status": "labelled", "image": "env:1"}))).unwrap();
        assert_eq!(target.fail_to_pass, ["t::a"]);
        assert_eq!(target.pass_to_pass, ["t::b"]);
        assert_eq!(target.image.as_deref(), Some("env:1"));
        assert!(validated_target(&row(json!({"status": "dropped", "image": "env:1"}))).is_none());
        assert!(validated_target(&row(json!({"status": "labelled"}))).is_none());
        assert!(validated_target(&InputRow { fields: fields.clone(), candidate: candidate.clone() }).is_none());
    }

    #[test]
    fn a_row_that_was_not_probed_says_why_and_has_no_score() {
        let [score, survivors, probe] = probe_fields(None, Some("dropped by validate: no_fail_to_pass"));
        assert_eq!(score, ("mutation_score", Value::Null));
        assert_eq!(survivors.1, json!([]));
        assert_eq!(probe.1["detail"], "dropped by validate: no_fail_to_pass");
    }
}
