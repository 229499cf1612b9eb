//! `validate --input`: rows read by [`crate::task_rows`] (each the candidate it
//! describes), written back in their order with fresh
//! FAIL_TO_PASS / PASS_TO_PASS, flaky tests, coverage and a `diagnosis`, and compared
//! with their own labels (`--compare`: FAIL_TO_PASS exactly, PASS_TO_PASS by recall).
//! Pure over the stage's [`Summary`] apart from reading and writing the two files;
//! the validation itself is the stage's.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use serde_json::{Map, Value};

use super::grain::Grain;
use super::{Summary, TaskOutcome};
use crate::model::encode_test_list;
pub use crate::task_rows::{InputRow, RowsError, read_rows};

fn outcome_of<'a>(summary: &'a Summary, instance_id: &str) -> Option<&'a TaskOutcome> {
    summary.outcomes.iter().find(|outcome| outcome.instance_id == instance_id)
}

/// One row with its fresh labels, validation runs, coverage and diagnosis.
fn fresh_row(row: &InputRow, summary: &Summary) -> Map<String, Value> {
    let mut object = row.fields.clone();
    let outcome = outcome_of(summary, &row.candidate.instance_id);
    let (fail_to_pass, pass_to_pass, flaky, mut diagnosis) = match outcome.map(|outcome| &outcome.result) {
        Some(Ok(labels)) => (
            labels.fail_to_pass.clone(),
            labels.pass_to_pass.clone(),
            labels.flaky.clone(),
            serde_json::json!({
                "status": "labelled",
                "pass_to_fail": labels.pass_to_fail,
                "interrupted_before": labels.interrupted_before,
                "time_zone_dependent": labels.time_zone_dependent,
            }),
        ),
        Some(Err(dropped)) => (
            Vec::new(),
            Vec::new(),
            Vec::new(),
            serde_json::json!({"status": "dropped", "reason": dropped.reason, "detail": dropped.detail}),
        ),
        None => (
            Vec::new(),
            Vec::new(),
            Vec::new(),
            serde_json::json!({"status": "not_validated", "reason": "interrupted"}),
        ),
    };
    object.insert("FAIL_TO_PASS".into(), encode_test_list(&fail_to_pass).into());
    object.insert("PASS_TO_PASS".into(), encode_test_list(&pass_to_pass).into());
    object.insert("flaky_tests".into(), encode_test_list(&flaky).into());
    let no_result_before = outcome
        .and_then(|outcome| outcome.result.as_ref().ok())
        .map(|labels| labels.no_result_before.clone())
        .unwrap_or_default();
    object.insert("fail_to_pass_no_result_before".into(), encode_test_list(&no_result_before).into());
    object.insert("validation_runs".into(), outcome.map_or(0, |outcome| outcome.runs).into());
    if let Some(coverage) = outcome.and_then(|outcome| outcome.coverage.as_ref()) {
        let values = crate::swt::coverage_columns(Some(coverage));
        for (name, value) in crate::swt::COVERAGE_COLUMNS.iter().zip(values) {
            object.insert((*name).into(), value.into());
        }
        if let Some(why) = coverage.why_not_measured() {
            diagnosis["coverage"] = why.into();
        }
    }
    if let Some(outcome) = outcome {
        diagnosis["needs_network"] = outcome.needs_network().to_vec().into();
        if let Some(observed) = outcome.observed.as_ref().filter(|observed| !observed.defined_by_the_fix.is_empty()) {
            diagnosis["defined_by_the_fix"] = observed.defined_by_the_fix.clone().into();
        }
        // Which tests ran, when the runner chose them (C): labels or a drop read with it.
        if let Some(observed) = outcome.observed.as_ref().filter(|observed| !observed.test_selection.is_empty()) {
            diagnosis["test_selection"] = observed.test_selection.clone().into();
        }
        diagnosis["image"] = outcome.image.clone().into();
        diagnosis["environment"] = outcome.spec.as_ref().map(|spec| spec.source.clone()).into();
        diagnosis["runtime"] = outcome.spec.as_ref().map(|spec| spec.runtime.clone()).into();
        diagnosis["rung"] = outcome.spec.as_ref().map(|spec| spec.rung.as_str()).into();
        // What inference took from the project's CI, and what of it could not be used
        // (a service its tests need, a file that does not parse).
        if let Some(spec) = outcome.spec.as_ref().filter(|spec| !spec.ci.is_empty()) {
            diagnosis["ci"] = spec.ci.clone().into();
        }
        if let Some(needed) = &outcome.runtime_needed {
            diagnosis["runtime_needed"] = serde_json::json!({"runtime": needed.runtime, "why": needed.why});
        }
    }
    if let Some(outcome) = outcome {
        let published = published_list(&row.fields, "FAIL_TO_PASS", Some(outcome));
        let fresh = comparable(&fail_to_pass, outcome);
        let (not_found, by_parent) = not_found_in(&published, &fresh, outcome);
        let missed: Map<String, Value> =
            not_found.iter().map(|test| (test.clone(), Value::from(miss_cause(test, outcome, &row.fields)))).collect();
        let extra = unpublished(&fail_to_pass, &published, outcome);
        diagnosis["published_fail_to_pass"] = serde_json::json!({
            "same": missed.is_empty() && extra.is_empty(),
            "missed": missed,
            "found_by_our_parent": by_parent.into_iter().map(|(test, parent)| (test, Value::from(parent))).collect::<Map<String, Value>>(),
            "extra": extra,
            "extra_in_neither_published_list": unlisted(&fail_to_pass, &row.fields, outcome),
        });
    }
    object.insert("diagnosis".into(), diagnosis);
    object
}

/// A published test list of a row (a JSON-encoded string, or an array), normalised,
/// each name as the task's ecosystem (when the outcome knows it) names that test
/// ([`crate::ecosystem::Ecosystem::published_as_ours`]).
fn published_list(object: &Map<String, Value>, key: &str, outcome: Option<&TaskOutcome>) -> BTreeSet<String> {
    let ecosystem = outcome.and_then(ecosystem_of);
    match object.get(key) {
        Some(Value::String(encoded)) => serde_json::from_str::<Vec<String>>(encoded).unwrap_or_default(),
        Some(value) => serde_json::from_value::<Vec<String>>(value.clone()).unwrap_or_default(),
        None => Vec::new(),
    }
    .into_iter()
    .map(|id| normalize_id(&ecosystem.map_or(id.clone(), |ecosystem| ecosystem.published_as_ours(&id))))
    .collect()
}

/// The ecosystem of a validated task's environment.
fn ecosystem_of(outcome: &TaskOutcome) -> Option<&'static dyn crate::ecosystem::Ecosystem> {
    outcome.spec.as_ref().and_then(|spec| crate::ecosystem::for_spec(spec).ok())
}

/// Why a test of the published FAIL_TO_PASS is not in ours, from what the runs
/// showed of it: the network, a pass before the fix (the published row's label, or
/// an environment that differs), a failure after it, flakiness, a skip, or no result.
pub fn miss_cause(test: &str, outcome: &TaskOutcome, published: &Map<String, Value>) -> String {
    let Some(observed) = &outcome.observed else {
        return match &outcome.result {
            Err(dropped) => match crate::sandbox::egress::refused_in(&dropped.detail).as_slice() {
                [] => format!("not run: the task was dropped ({})", dropped.reason),
                refused => format!(
                    "{NEEDS_NETWORK}: the task was dropped ({}): its build reached for {}, which no registry is",
                    dropped.reason,
                    refused.join(", ")
                ),
            },
            Ok(_) => "not run".to_string(),
        };
    };
    let has = |list: &[String]| comparable(list, outcome).contains(test);
    let cause = if defined_by_the_gold_patch(test, outcome, published) {
        DEFINED_BY_THE_FIX
    } else if has(&observed.needs_network) {
        NEEDS_NETWORK
    } else if has(&observed.fail_to_pass) {
        "fail to pass here"
    } else if has(&observed.pass_to_pass) {
        if passed_in_published_base_run(published, test) {
            PASSES_HERE_AS_IN_BASE_RUN
        } else {
            "passes before the gold patch here"
        }
    } else if has(&observed.fail_to_fail) {
        match &outcome.result {
            Err(dropped) if dropped.detail.contains(super::judge::PAST_THE_FILE_SIZE_LIMIT) => {
                "fails after the gold patch here too, where a run wrote past the file-size limit (validate.file_size_bytes): depends on the environment"
            }
            _ => "fails after the gold patch here too",
        }
    } else if has(&observed.pass_to_fail) {
        "passes before and fails after the gold patch here"
    } else if has(&observed.time_zone_dependent) {
        "depends on the time zone here (its result changed in the run under another time zone)"
    } else if has(&observed.flaky) {
        "flaky here"
    } else if has(&observed.skipped) {
        "skipped here"
    } else if let Some(why) = Grain::new(Some(observed), ecosystem_of(outcome), normalize_id).why_not_fail_to_pass(test)
    {
        return why;
    } else if passed_in_published_base_run(published, test) {
        BUILD_STOPPED
    } else if unreached_by_published_runs_before_the_fix(published, test) {
        UNREACHED_BEFORE_THE_FIX
    } else {
        "no result here (not collected under this id)"
    };
    cause.to_string()
}

/// The cause of a published test that the row's gold patch itself defines (an
/// inline test module of a source file the fix changes: bat's `vscreen::tests::*`
/// in `src/vscreen.rs`): no other fix could pass it, so it is no fair label, and a
/// row whose only misses are such tests is set aside as a stopped run's are.
pub const DEFINED_BY_THE_FIX: &str =
    "defined by the gold patch itself (no other fix could pass it): no fair label, set aside";

/// Whether the row's gold patch (`patch`, Multi-SWE-bench's `fix_patch`) defines
/// `test`, as the task's ecosystem reads it
/// ([`crate::ecosystem::Ecosystem::defined_by_the_patch`]).
fn defined_by_the_gold_patch(test: &str, outcome: &TaskOutcome, published: &Map<String, Value>) -> bool {
    let patch = published.get("patch").or_else(|| published.get("fix_patch")).and_then(Value::as_str);
    match (ecosystem_of(outcome), patch) {
        (Some(ecosystem), Some(patch)) => ecosystem.defined_by_the_patch(test, patch),
        _ => false,
    }
}

/// The cause of a miss that the network would have decided: a test that failed for
/// lack of it, or a task whose build reached for a host that is no registry.
const NEEDS_NETWORK: &str = "needs the network";

/// The cause of a published `n2p` test that our runs did not run and that the
/// published row's own run of the base commit passed: Multi-SWE-bench runs the whole
/// build (`cargo test` over the workspace, `mvn test` over every module, every Mocha
/// file), which stops when the test patch does not compile before the fix, or ends
/// early when a failing test takes the run down (express-5555: 678 of 939 tests gave a
/// result), so every test it did not reach counts as `n2p`. Ours runs the targets the test
/// patch touches, whose tests that fail to compile are FAIL_TO_PASS (decision:
/// unchanged tests of other targets that pass on the base commit are not).
pub const BUILD_STOPPED: &str = "not run here (not in a target the test patch touches); it passed in the published row's own base run, and is n2p there only because that row's run with the test patch stopped before it (a compile error, or a run ended early)";

/// The cause of a published `n2p` test that our runs did not run and that neither of
/// the published row's runs before the fix reached: both ended early (tracing-1291:
/// `cargo test` stops at the first test binary that fails, and the bug's test failed
/// in both; 116 of the 287 tests that its run after the fix counts gave a result).
pub const UNREACHED_BEFORE_THE_FIX: &str = "not run here (not in a target the test patch touches); neither of the published row's runs before the fix reached it (both ended early: they gave fewer tests a result than its run after the fix), and it is n2p there only for that";

/// The cause of a published `n2p` test that passed in the published row's own base
/// run and passes before the gold patch here: its `n2p` says only that the published
/// test-patch run gave it no result, as a stopped build or run does.
pub const PASSES_HERE_AS_IN_BASE_RUN: &str =
    "passes before the gold patch here, as in the published row's own base run";

/// Whether a Multi-SWE-bench row lists `test` as `n2p` although its own run of the
/// base commit (`run`) passed it.
fn passed_in_published_base_run(published: &Map<String, Value>, test: &str) -> bool {
    n2p_states(published, test).any(|states| states.get("run").and_then(Value::as_str) == Some("PASS"))
}

/// The states (`run`, `test`, `fix`) of each `n2p` entry of a Multi-SWE-bench row
/// that names `test`.
fn n2p_states<'a>(published: &'a Map<String, Value>, test: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    published
        .get("n2p_tests")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(move |(name, _)| normalize_id(name) == test)
        .map(|(_, states)| states)
}

/// Whether a Multi-SWE-bench row lists `test` as `n2p` with no result in its own runs
/// of the base commit and of the test patch, each of which gave fewer tests a result
/// than its run after the fix, while its fix declares no test of that name.
fn unreached_by_published_runs_before_the_fix(published: &Map<String, Value>, test: &str) -> bool {
    let no_result_before = n2p_states(published, test)
        .any(|states| ["run", "test"].iter().all(|phase| states.get(*phase).and_then(Value::as_str) == Some("NONE")));
    let results = |key: &str| -> Option<u64> {
        let result = published.get(key)?;
        ["passed_count", "failed_count", "skipped_count"].iter().map(|count| result.get(*count)?.as_u64()).sum()
    };
    let ended_early = match (results("run_result"), results("test_patch_result"), results("fix_patch_result")) {
        (Some(base), Some(test_patch), Some(fix)) => base < fix && test_patch < fix,
        _ => false,
    };
    no_result_before && ended_early && !declared_by_the_fix(published, test)
}

/// Whether the row's fix adds a line that declares a test function of `test`'s last
/// name (`fn name`, `def name`, `func name`, `void name`) or a test titled with it
/// (`it("... name`): such a test has no result before the fix for its own reason.
fn declared_by_the_fix(published: &Map<String, Value>, test: &str) -> bool {
    let name = test.rsplit([':', '.', '>', '/']).next().unwrap_or(test).trim();
    let Some(patch) = published.get("fix_patch").and_then(Value::as_str) else { return false };
    if name.is_empty() {
        return false;
    }
    let escaped = regex::escape(name);
    let declaration = regex::Regex::new(&format!(
        r#"(\b(fn|def|func|void)\s+{escaped}\b)|(\b(it|test)\s*\(\s*["'`][^"'`]*{escaped})"#
    ))
    .expect("an escaped name makes a valid pattern");
    patch.lines().any(|line| line.starts_with('+') && declaration.is_match(line))
}

/// The rows, in their order, with fresh labels and a diagnosis.
pub fn fresh_rows(rows: &[InputRow], summary: &Summary) -> Vec<Map<String, Value>> {
    rows.iter().map(|row| fresh_row(row, summary)).collect()
}

/// Writes the rows back, in their order, with fresh labels and a diagnosis
/// (temp file in the target folder, sync, rename).
pub fn write_rows(out: &Path, rows: &[InputRow], summary: &Summary) -> Result<(), RowsError> {
    let mut text = String::new();
    for (row, fresh) in rows.iter().zip(fresh_rows(rows, summary)) {
        let line = serde_json::to_string(&fresh)
            .map_err(|source| RowsError::Encode { instance_id: row.candidate.instance_id.clone(), source })?;
        text.push_str(&line);
        text.push('\n');
    }
    Ok(write_whole(out, &text)?)
}

/// Writes `text` to `out` (its folder made when missing) whole or not at all: a
/// stopped run leaves no half-written file.
pub fn write_whole(out: &Path, text: &str) -> std::io::Result<()> {
    let parent = out.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs_err::create_dir_all(parent)?;
    let temporary = parent.join(format!(".{}.tmp", out.file_name().and_then(|name| name.to_str()).unwrap_or("out")));
    let mut file = fs_err::File::create(&temporary)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    fs_err::rename(&temporary, out)?;
    Ok(())
}

/// Per row: FAIL_TO_PASS same / missing / extra, PASS_TO_PASS recall; then how many
/// rows got exactly the published FAIL_TO_PASS.
pub fn compare(rows: &[InputRow], summary: &Summary) -> String {
    let mut text = String::new();
    let (mut exact, mut total) = (0, 0);
    // Rows exact but for extra tests that the published row lists in neither list
    // (its run did not run them, as SWE-bench Multilingual's commands that name
    // tests do not, or they failed after its fix).
    let mut exact_but_unlisted = 0;
    // Rows whose every published fail-to-pass test is ours; and those whose only
    // misses are tests of Multi-SWE-bench's stopped builds (`BUILD_STOPPED`,
    // `UNREACHED_BEFORE_THE_FIX`, and `PASSES_HERE_AS_IN_BASE_RUN`: tests the stopped
    // test-patch run gave no result).
    let (mut recovered, mut recovered_but_stopped_builds) = (0, 0);
    // Whether a test that a row's gold patch defines was set aside (`DEFINED_BY_THE_FIX`).
    let mut defined_by_a_fix_set_aside = false;
    // Rows whose every missed test needs the network, and the misses by cause.
    let mut network_only = 0;
    let mut causes: BTreeMap<String, usize> = BTreeMap::new();
    for row in rows {
        let instance_id = &row.candidate.instance_id;
        total += 1;
        let Some(outcome) = outcome_of(summary, instance_id) else {
            let _ = writeln!(text, "{instance_id}\tnot validated");
            continue;
        };
        let published_f2p = published_list(&row.fields, "FAIL_TO_PASS", Some(outcome));
        let published_p2p = published_list(&row.fields, "PASS_TO_PASS", Some(outcome));
        let missed_causes = |missing: &mut dyn Iterator<Item = &String>| -> Vec<(String, String)> {
            missing.map(|test| (test.clone(), miss_cause(test, outcome, &row.fields))).collect()
        };
        let labels = match &outcome.result {
            Ok(labels) => labels,
            Err(dropped) => {
                let missed = missed_causes(&mut published_f2p.iter());
                tally(&missed, &mut causes, &mut network_only);
                let _ = writeln!(text, "{instance_id}\tdropped: {}{}", dropped.reason, describe_misses(&missed));
                continue;
            }
        };
        let fresh_f2p = comparable(&labels.fail_to_pass, outcome);
        let fresh_p2p = comparable(&labels.pass_to_pass, outcome);
        let (not_found, by_parent) = not_found_in(&published_f2p, &fresh_f2p, outcome);
        let missed = missed_causes(&mut not_found.iter());
        let extra = unpublished(&labels.fail_to_pass, &published_f2p, outcome);
        if missed.is_empty() {
            recovered += 1;
        } else if missed.iter().all(|(_, cause)| {
            [BUILD_STOPPED, UNREACHED_BEFORE_THE_FIX, PASSES_HERE_AS_IN_BASE_RUN, DEFINED_BY_THE_FIX]
                .contains(&cause.as_str())
        }) {
            recovered_but_stopped_builds += 1;
            defined_by_a_fix_set_aside |= missed.iter().any(|(_, cause)| cause == DEFINED_BY_THE_FIX);
        }
        let f2p = if missed.is_empty() && extra.is_empty() {
            exact += 1;
            "FAIL_TO_PASS same".to_string()
        } else {
            if extra.is_empty() {
                tally(&missed, &mut causes, &mut network_only);
            } else {
                tally(&missed, &mut causes, &mut 0);
            }
            let unlisted = unlisted(&labels.fail_to_pass, &row.fields, outcome);
            if missed.is_empty() && unlisted.len() == extra.len() {
                exact_but_unlisted += 1;
            }
            let note = if unlisted.is_empty() {
                String::new()
            } else {
                format!(" ({} of them in neither published list)", unlisted.len())
            };
            format!("FAIL_TO_PASS{} extra {extra:?}{note}", describe_misses(&missed))
        };
        let f2p = if by_parent.is_empty() {
            f2p
        } else {
            let found: Vec<String> = by_parent.iter().map(|(test, parent)| format!("{test:?} by {parent:?}")).collect();
            format!("{f2p} (found by our coarser parent: {})", found.join(", "))
        };
        let whole = Grain::new(Some(labels), ecosystem_of(outcome), normalize_id);
        let p2p_found = |test: &&String| fresh_p2p.contains(test.as_str()) || whole.pass_to_pass_as_a_whole(test);
        let found = published_p2p.iter().filter(p2p_found).count();
        let p2p_missing: Vec<&String> = published_p2p.iter().filter(|test| !p2p_found(test)).collect();
        let p2p_extra = unpublished(&labels.pass_to_pass, &published_p2p, outcome).len();
        let _ = writeln!(
            text,
            "{instance_id}\t{f2p}\tPASS_TO_PASS recall {found}/{} extra {p2p_extra}{}",
            published_p2p.len(),
            if p2p_missing.is_empty() { String::new() } else { format!(" missing {p2p_missing:?}") }
        );
    }
    let _ = writeln!(text, "FAIL_TO_PASS exactly the published list: {exact} of {total} rows");
    if exact_but_unlisted > 0 {
        let _ = writeln!(
            text,
            "the same but for extra tests in neither published list (not run there, or failing after its fix): {} of {total} rows",
            exact + exact_but_unlisted
        );
    }
    let _ = writeln!(
        text,
        "every published fail-to-pass test in ours: {recovered} of {total} rows{}",
        if recovered_but_stopped_builds == 0 {
            String::new()
        } else {
            format!(
                "; {} of {total} with the n2p tests of stopped published runs (a compile error, a run ended early){} set aside",
                recovered + recovered_but_stopped_builds,
                if defined_by_a_fix_set_aside { " and the tests that gold patches define" } else { "" }
            )
        }
    );
    if !causes.is_empty() {
        let by_cause: Vec<String> = causes.iter().map(|(cause, count)| format!("{count} {cause}")).collect();
        let _ = writeln!(
            text,
            "published FAIL_TO_PASS tests missed, by cause: {}; rows that differ only by tests that need the network: {network_only}",
            by_cause.join(", ")
        );
    }
    text
}

/// Our ids as compared with a published list: each normalised, and the other names
/// its ecosystem says published rows give it ([`crate::ecosystem::Ecosystem::published_forms`]:
/// Multi-SWE-bench's JS rows name a test `title` or `file:title`), and the test of the
/// runner it was part of ([`crate::model::labels::Labels::part_of`]: Multi-SWE-bench names fmt's CTest test
/// `format-test` where ours are its GoogleTest cases): a published test that holds one
/// of ours is in ours as Java's published classes are.
fn comparable(ids: &[String], outcome: &TaskOutcome) -> BTreeSet<String> {
    let ecosystem = ecosystem_of(outcome);
    let part_of = outcome.observed.as_ref().or(outcome.result.as_ref().ok()).map(|labels| &labels.part_of);
    let mut set = BTreeSet::new();
    if !ids.is_empty() {
        // Multi-SWE-bench's one result of a whole run (zstd's `make test`) holds every test.
        set.insert(WHOLE_RUN.to_string());
    }
    for id in ids {
        let whole = part_of.and_then(|part_of| part_of.get(id));
        for name in std::iter::once(id).chain(whole) {
            set.insert(normalize_id(name));
            if let Some(ecosystem) = ecosystem {
                set.extend(ecosystem.published_forms(name).iter().map(|form| normalize_id(form)));
            }
        }
    }
    set
}

/// Multi-SWE-bench's id of the one result of a whole test run (facebook/zstd's rows:
/// `make test` failed before the fix and passed after it): a published list naming it
/// holds every test of ours.
const WHOLE_RUN: &str = "all tests";

/// Our ids of which no form is in either published list (FAIL_TO_PASS or
/// PASS_TO_PASS): tests the published run did not run, or that failed after its fix.
fn unlisted(ids: &[String], published: &Map<String, Value>, outcome: &TaskOutcome) -> Vec<String> {
    let listed: BTreeSet<String> = published_list(published, "FAIL_TO_PASS", Some(outcome))
        .union(&published_list(published, "PASS_TO_PASS", Some(outcome)))
        .cloned()
        .collect();
    unpublished(ids, &listed, outcome)
}

/// Our ids of which no form is in the published list, at our grain or another
/// ([`Grain::covered`]: a published class holds our method, our file's own id holds the
/// published tests of the file).
fn unpublished(ids: &[String], published: &BTreeSet<String>, outcome: &TaskOutcome) -> Vec<String> {
    let grain = Grain::new(None, ecosystem_of(outcome), normalize_id);
    let around = grain.around(published);
    ids.iter()
        .filter(|id| comparable(std::slice::from_ref(id), outcome).is_disjoint(published))
        .filter(|id| !grain.covered(id, &around))
        .map(|id| normalize_id(id))
        .collect()
}

/// The published fail-to-pass tests not in ours, at our grain or another
/// ([`super::grain`]: a coarser published id whose tests here are fail-to-pass together is
/// in ours); and, apart, the finer published ids found by our fail-to-pass parent
/// where we have only the parent, each with that parent.
fn not_found_in(
    published: &BTreeSet<String>,
    fresh: &BTreeSet<String>,
    outcome: &TaskOutcome,
) -> (Vec<String>, Vec<(String, String)>) {
    let labels = outcome.observed.as_ref().or(outcome.result.as_ref().ok());
    let grain = Grain::new(labels, ecosystem_of(outcome), normalize_id);
    let (mut not_found, mut by_parent) = (Vec::new(), Vec::new());
    for test in published.difference(fresh) {
        if outcome.result.is_ok() && grain.fail_to_pass_as_a_whole(test) {
            continue;
        }
        match grain.found_by_parent(test).filter(|_| outcome.result.is_ok()) {
            Some(parent) => by_parent.push((test.clone(), parent)),
            None => not_found.push(test.clone()),
        }
    }
    (not_found, by_parent)
}

/// Counts misses by cause; a row whose every miss needs the network counts in `network_only`.
fn tally(missed: &[(String, String)], causes: &mut BTreeMap<String, usize>, network_only: &mut usize) {
    for (_, cause) in missed {
        *causes.entry(cause.clone()).or_default() += 1;
    }
    if !missed.is_empty() && missed.iter().all(|(_, cause)| cause.starts_with(NEEDS_NETWORK)) {
        *network_only += 1;
    }
}

/// ` missing [test (cause), ...]`, or nothing.
fn describe_misses(missed: &[(String, String)]) -> String {
    if missed.is_empty() {
        return String::new();
    }
    let described: Vec<String> = missed.iter().map(|(test, cause)| format!("{test:?} ({cause})")).collect();
    format!(" missing [{}]", described.join(", "))
}

/// Test ids as compared: pytest escapes control characters of parametrised ids
/// (`\n` as a backslash and an `n`), while published rows sometimes hold them raw;
/// and SWE-bench's pytest log parser splits a result line on whitespace, so its
/// published ids end at the first space of a parameter (`test_x[a:` for
/// `test_x[a: str = None]`). Other runners' ids keep their spaces
/// (Django's `test_name (module.Class)`).
fn normalize_id(id: &str) -> String {
    let id = match id.split_once(' ') {
        Some((head, _)) if head.contains("::") => head,
        _ => id,
    };
    id.replace("\\n", "\n").replace("\\t", "\t")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::drop_reason::ValidateDropReason;
    use crate::model::labels::Labels;
    use crate::task_rows::test_rows::*;
    use crate::validate::Dropped;
    use crate::validate::grain;

    fn outcome(instance_id: &str, result: Result<Labels, Dropped>) -> TaskOutcome {
        TaskOutcome {
            instance_id: instance_id.into(),
            repo: "acme/calc".into(),
            version: "1.0".into(),
            observed: result.as_ref().ok().cloned(),
            result,
            image: Some("env:1".into()),
            spec: None,
            runtime_needed: None,
            runs: 2,
            coverage: None,
            coverage_secs: 0.0,
            build_secs: 0.0,
            test_secs: 0.0,
            total_secs: 0.0,
        }
    }

    /// A Multi-SWE-bench row of acme/gadget with these `f2p` and `n2p` tests.
    fn msb_row(number: u64, f2p: Value, n2p: Value) -> String {
        serde_json::json!({
            "org": "acme", "repo": "gadget", "number": number,
            "base": {"label": "acme:main", "ref": "main", "sha": "c".repeat(40)},
            "resolved_issues": [], "fix_patch": "", "test_patch": PATCH,
            "f2p_tests": f2p, "n2p_tests": n2p, "s2p_tests": {}, "p2p_tests": {},
        })
        .to_string()
    }

    fn labels(fail_to_pass: &[&str], pass_to_pass: &[&str]) -> Labels {
        Labels {
            fail_to_pass: fail_to_pass.iter().map(ToString::to_string).collect(),
            pass_to_pass: pass_to_pass.iter().map(ToString::to_string).collect(),
            ..Labels::default()
        }
    }

    #[test]
    fn multi_swe_bench_rows_become_candidates_with_their_fail_to_pass_and_new_tests_published() {
        let line = serde_json::json!({
            "org": "acme", "repo": "gadget", "number": 41,
            "base": {"label": "acme:main", "ref": "main", "sha": "c".repeat(40)},
            "resolved_issues": [{"number": 40, "title": "Broken", "body": "It breaks."}],
            "fix_patch": "diff --git a/a.go b/a.go\n",
            "test_patch": "diff --git a/a_test.go b/a_test.go\n--- a/a_test.go\n+++ b/a_test.go\n",
            "f2p_tests": {"TestOld": {"run": "PASS", "test": "FAIL", "fix": "PASS"}},
            "n2p_tests": {"TestNew/sub": {"run": "NONE", "test": "NONE", "fix": "PASS"}},
            "s2p_tests": {}, "p2p_tests": {"TestKept": {"run": "PASS", "test": "PASS", "fix": "PASS"}},
        })
        .to_string();
        let (_dir, path) = rows_file(&[line]);
        let rows = read_rows(&path).unwrap();
        let candidate = &rows[0].candidate;
        assert_eq!(candidate.instance_id, "acme__gadget-41");
        assert_eq!((candidate.repo.to_string(), candidate.pull_number), ("acme/gadget".to_string(), 41));
        assert_eq!(
            (candidate.base_commit.clone(), candidate.environment_setup_commit.clone()),
            ("c".repeat(40), "c".repeat(40))
        );
        assert_eq!(candidate.problem_statement, "Broken\nIt breaks.\n");
        assert_eq!(candidate.test_files, vec!["a_test.go".to_string()]);
        assert_eq!(
            published_list(&rows[0].fields, "FAIL_TO_PASS", None),
            ["TestNew/sub", "TestOld"].map(String::from).into()
        );
        assert_eq!(published_list(&rows[0].fields, "PASS_TO_PASS", None), ["TestKept".to_string()].into());
        assert!(rows[0].fields.contains_key("f2p_tests"), "the row's own fields are kept");
    }

    /// Multi-SWE-bench names fmt's CTest tests (`chrono-test`) where ours are the
    /// GoogleTest cases their programs report (`chrono_test.glibc_extensions`).
    #[test]
    fn a_published_test_that_ran_our_cases_compares_with_them() {
        let n2p = |test: &str| serde_json::json!({test: {"run": "PASS", "test": "NONE", "fix": "PASS"}});
        let (_dir, path) = rows_file(&[
            msb_row(1, serde_json::json!({}), n2p("chrono-test")),
            msb_row(2, serde_json::json!({}), n2p("format-test")),
        ]);
        let rows = read_rows(&path).unwrap();
        let part_of: BTreeMap<String, String> = [
            ("chrono_test.glibc_extensions", "chrono-test"),
            ("chrono_test.format", "chrono-test"),
            ("format_test.width", "format-test"),
        ]
        .map(|(case, test)| (case.to_string(), test.to_string()))
        .into();
        // Row 1: a case of `chrono-test` fails before the fix and passes after it.
        // Row 2: every case of `format-test` passes before it.
        let chrono =
            Labels { part_of: part_of.clone(), ..labels(&["chrono_test.glibc_extensions"], &["chrono_test.format"]) };
        let format = Labels { part_of, ..labels(&["chrono_test.glibc_extensions"], &["format_test.width"]) };
        let summary = Summary {
            outcomes: vec![outcome("acme__gadget-1", Ok(chrono)), outcome("acme__gadget-2", Ok(format))],
            ..Summary::default()
        };
        let text = compare(&rows, &summary);
        assert!(text.contains("acme__gadget-1\tFAIL_TO_PASS same\t"), "{text}");
        assert!(
            text.contains("acme__gadget-2\tFAIL_TO_PASS missing [\"format-test\" (passes before the gold patch here, as in the published row's own base run)] extra [\"chrono_test.glibc_extensions\"]"),
            "not the cause of a test never run: {text}"
        );
        assert!(text.contains("every published fail-to-pass test in ours: 1 of 2 rows"), "{text}");
    }

    /// Multi-SWE-bench publishes zstd's whole `make test` as the one test `all tests`.
    #[test]
    fn a_published_whole_run_holds_every_test_of_ours() {
        let whole = serde_json::json!({"all tests": {"run": "PASS", "test": "FAIL", "fix": "PASS"}});
        let (_dir, path) =
            rows_file(&[msb_row(1, whole.clone(), serde_json::json!({})), msb_row(2, whole, serde_json::json!({}))]);
        let rows = read_rows(&path).unwrap();
        let summary = Summary {
            outcomes: vec![
                outcome("acme__gadget-1", Ok(labels(&["tests/make-test-fuzzer"], &[]))),
                outcome("acme__gadget-2", Ok(labels(&[], &["tests/make-test-fuzzer"]))),
            ],
            ..Summary::default()
        };
        let text = compare(&rows, &summary);
        assert!(text.contains("acme__gadget-1\tFAIL_TO_PASS same\t"), "{text}");
        assert!(
            text.contains("acme__gadget-2\tFAIL_TO_PASS missing [\"all tests\" (passes before the gold patch here)]"),
            "a whole run that passed before is no fail-to-pass of ours: {text}"
        );
    }

    /// Multi-SWE-bench's `n2p` holds every test of a build that stopped at the test
    /// patch's compile error, also unchanged ones that passed on the base commit.
    #[test]
    fn n2p_tests_that_the_published_base_run_passed_and_we_did_not_run_are_set_aside_by_their_own_cause() {
        let new = serde_json::json!({"run": "NONE", "test": "NONE", "fix": "PASS"});
        let old = serde_json::json!({"run": "PASS", "test": "NONE", "fix": "PASS"});
        let (_dir, path) = rows_file(&[
            msb_row(1, serde_json::json!({}), serde_json::json!({"tests::new": new, "other::unchanged": old})),
            msb_row(2, serde_json::json!({}), serde_json::json!({"tests::new": new, "tests::lost": new})),
            msb_row(3, serde_json::json!({}), serde_json::json!({"tests::new": new, "tests::ran": old})),
        ]);
        let rows = read_rows(&path).unwrap();
        let ran = Labels { pass_to_pass: vec!["tests::ran".into()], ..labels(&["tests::new"], &[]) };
        let summary = Summary {
            outcomes: vec![
                outcome("acme__gadget-1", Ok(labels(&["tests::new"], &[]))),
                outcome("acme__gadget-2", Ok(labels(&["tests::new"], &[]))),
                outcome("acme__gadget-3", Ok(ran)),
            ],
            ..Summary::default()
        };
        let text = compare(&rows, &summary);
        assert!(text.contains(&format!("\"other::unchanged\" ({BUILD_STOPPED})")), "{text}");
        assert!(text.contains("\"tests::lost\" (no result here (not collected under this id))"), "{text}");
        assert!(
            text.contains("\"tests::ran\" (passes before the gold patch here, as in the published row's own base run)"),
            "{text}"
        );
        assert!(
            text.contains(
                "every published fail-to-pass test in ours: 0 of 3 rows; 2 of 3 with the n2p tests of stopped published runs (a compile error, a run ended early) set aside"
            ),
            "{text}"
        );
    }

    /// Multi-SWE-bench's runs end early too (`cargo test` stops after the first test
    /// binary that fails): a test that neither run before the fix reached is `n2p`.
    #[test]
    fn n2p_tests_that_no_published_run_before_the_fix_reached_are_set_aside_unless_the_fix_adds_them() {
        let new = serde_json::json!({"run": "NONE", "test": "NONE", "fix": "PASS"});
        let counts = |passed: u64, failed: u64| serde_json::json!({"passed_count": passed, "failed_count": failed, "skipped_count": 1});
        let row = |number: u64, n2p: Value, fix_patch: &str, before: u64| -> String {
            let mut row: Value = serde_json::from_str(&msb_row(number, serde_json::json!({}), n2p)).unwrap();
            row["fix_patch"] = fix_patch.into();
            row["run_result"] = counts(before, 1);
            row["test_patch_result"] = counts(before, 1);
            row["fix_patch_result"] = counts(285, 0);
            row.to_string()
        };
        // A test the fix declares has no result before it for its own reason; a word
        // of the fix that only names a test does not make it the fix's.
        let fix = "diff --git a/src/lib.rs b/src/lib.rs\n+    #[test]\n+    fn added_by_fix() {}\n+    let unreached = fields(1);\n";
        let (_dir, path) = rows_file(&[
            row(1, serde_json::json!({"tests::new": new, "other::unreached": new}), fix, 114),
            row(2, serde_json::json!({"tests::new": new, "other::added_by_fix": new}), fix, 114),
            // Runs before the fix that gave as many tests a result: nothing ended early.
            row(3, serde_json::json!({"tests::new": new, "other::lost": new}), fix, 284),
        ]);
        let rows = read_rows(&path).unwrap();
        let summary = Summary {
            outcomes: (1..=3)
                .map(|n| outcome(&format!("acme__gadget-{n}"), Ok(labels(&["tests::new"], &[]))))
                .collect(),
            ..Summary::default()
        };
        let text = compare(&rows, &summary);
        assert!(text.contains(&format!("\"other::unreached\" ({UNREACHED_BEFORE_THE_FIX})")), "{text}");
        assert!(text.contains("\"other::added_by_fix\" (no result here (not collected under this id))"), "{text}");
        assert!(text.contains("\"other::lost\" (no result here (not collected under this id))"), "{text}");
        assert!(
            text.contains("every published fail-to-pass test in ours: 0 of 3 rows; 1 of 3 with the n2p tests of stopped published runs"),
            "{text}"
        );
    }

    #[test]
    fn a_language_that_cannot_measure_coverage_says_so_in_the_row_and_leaves_the_figures_empty() {
        let (dir, path) = rows_file(&[row_line("acme__calc-1", &["old"], &[])]);
        let rows = read_rows(&path).unwrap();
        let unsupported = crate::model::GoldenCoverage::Unsupported { language: "go".into() };
        let summary = Summary {
            outcomes: vec![TaskOutcome {
                coverage: Some(unsupported),
                ..outcome("acme__calc-1", Ok(labels(&["t::a"], &[])))
            }],
            ..Summary::default()
        };
        let out = dir.path().join("fresh.jsonl");
        write_rows(&out, &rows, &summary).unwrap();
        let written: Value = serde_json::from_str(fs_err::read_to_string(&out).unwrap().trim()).unwrap();
        assert_eq!(written["diagnosis"]["coverage"], "go cannot measure change coverage (only Python can)");
        for column in crate::swt::COVERAGE_COLUMNS {
            assert_eq!(written[column], "", "{column} is empty, not 0");
        }
    }

    #[test]
    fn rows_are_written_back_with_fresh_labels_and_a_diagnosis() {
        let (dir, path) = rows_file(&[
            row_line("acme__calc-1", &["old"], &[]),
            row_line("acme__calc-2", &[], &[]),
            row_line("acme__calc-3", &[], &[]),
        ]);
        let rows = read_rows(&path).unwrap();
        let summary = Summary {
            outcomes: vec![
                outcome("acme__calc-1", Ok(labels(&["t::a"], &["t::b"]))),
                TaskOutcome {
                    observed: Some(Labels {
                        needs_network: vec!["t::online".into()],
                        test_selection: vec!["before and after the gold patch: all of them".into()],
                        ..Labels::default()
                    }),
                    ..outcome(
                        "acme__calc-2",
                        Err(Dropped { reason: ValidateDropReason::NoFailToPass, detail: "none".into() }),
                    )
                },
            ],
            ..Summary::default()
        };
        let out = dir.path().join("out").join("fresh.jsonl");
        write_rows(&out, &rows, &summary).unwrap();
        let written: Vec<Value> =
            fs_err::read_to_string(&out).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect();
        assert_eq!(written.len(), 3);
        assert_eq!(written[0]["FAIL_TO_PASS"], "[\"t::a\"]");
        assert_eq!(written[0]["PASS_TO_PASS"], "[\"t::b\"]");
        assert_eq!(written[0]["validation_runs"], 2);
        assert_eq!(written[0]["extra_column"], 7);
        assert_eq!(written[0]["diagnosis"]["status"], "labelled");
        assert_eq!(written[0]["diagnosis"]["image"], "env:1");
        assert_eq!(written[1]["diagnosis"]["status"], "dropped");
        assert_eq!(written[1]["diagnosis"]["reason"], "no_fail_to_pass");
        assert_eq!(
            written[1]["diagnosis"]["test_selection"],
            serde_json::json!(["before and after the gold patch: all of them"])
        );
        assert!(written[0]["diagnosis"].get("test_selection").is_none(), "the tests to run were given");
        assert_eq!(written[1]["FAIL_TO_PASS"], "[]");
        // A miss that the network explains says so.
        assert_eq!(written[1]["diagnosis"]["needs_network"], serde_json::json!(["t::online"]));
        assert_eq!(written[0]["diagnosis"]["needs_network"], serde_json::json!([]));
        assert_eq!(written[2]["diagnosis"], serde_json::json!({"status": "not_validated", "reason": "interrupted"}));
        assert!(!dir.path().join("out").join(".fresh.jsonl.tmp").exists(), "the temp file was renamed");
    }

    /// What inference took from the project's CI (here: a service its tests need) is in
    /// a dropped row's diagnosis; a spec without any says nothing of CI.
    #[test]
    fn a_rows_diagnosis_says_what_inference_took_from_ci() {
        let (dir, path) = rows_file(&[row_line("acme__calc-1", &[], &[]), row_line("acme__calc-2", &[], &[])]);
        let rows = read_rows(&path).unwrap();
        let service = "CI starts the service `postgres` (image `postgres:14`) for `ci.yml` job `test`: tests that need it \
                       have no such service here";
        let dropped = Err(Dropped { reason: ValidateDropReason::NoFailToPass, detail: "none".into() });
        let summary = Summary {
            outcomes: vec![
                TaskOutcome {
                    spec: Some(crate::model::EnvironmentSpec { ci: vec![service.into()], ..Default::default() }),
                    ..outcome("acme__calc-1", dropped.clone())
                },
                TaskOutcome {
                    spec: Some(crate::model::EnvironmentSpec::default()),
                    ..outcome("acme__calc-2", dropped)
                },
            ],
            ..Summary::default()
        };
        let out = dir.path().join("fresh.jsonl");
        write_rows(&out, &rows, &summary).unwrap();
        let written: Vec<Value> =
            fs_err::read_to_string(&out).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect();
        assert_eq!(written[0]["diagnosis"]["ci"], serde_json::json!([service]));
        assert!(written[1]["diagnosis"].get("ci").is_none(), "{}", written[1]["diagnosis"]);
    }

    #[test]
    fn compare_reports_fail_to_pass_exactly_and_pass_to_pass_by_recall() {
        let (dir, path) = rows_file(&[
            row_line("acme__calc-1", &["t::a"], &["t::b", "t::c"]),
            row_line("acme__calc-2", &["t::x"], &[]),
            row_line("acme__calc-3", &[], &[]),
            row_line("acme__calc-4", &["t::p[a\\nb]"], &[]),
            // An extra test that the published row lists nowhere (its run did not run
            // it), and one it lists as passing before its fix.
            row_line("acme__calc-5", &["t::a"], &["t::b"]),
            row_line("acme__calc-6", &["t::a"], &["t::b"]),
        ]);
        let rows = read_rows(&path).unwrap();
        let summary = Summary {
            outcomes: vec![
                outcome("acme__calc-1", Ok(labels(&["t::a"], &["t::b", "t::d"]))),
                outcome("acme__calc-2", Ok(labels(&["t::y"], &[]))),
                outcome("acme__calc-4", Err(Dropped { reason: ValidateDropReason::Timeout, detail: String::new() })),
                outcome("acme__calc-5", Ok(labels(&["t::a", "t::new"], &["t::b"]))),
                outcome("acme__calc-6", Ok(labels(&["t::a", "t::b"], &[]))),
            ],
            ..Summary::default()
        };
        assert_eq!(
            compare(&rows, &summary),
            "acme__calc-1\tFAIL_TO_PASS same\tPASS_TO_PASS recall 1/2 extra 1 missing [\"t::c\"]\n\
             acme__calc-2\tFAIL_TO_PASS missing [\"t::x\" (no result here (not collected under this id))] extra [\"t::y\"] (1 of them in neither published list)\tPASS_TO_PASS recall 0/0 extra 0\n\
             acme__calc-3\tnot validated\n\
             acme__calc-4\tdropped: timeout missing [\"t::p[a\\nb]\" (not run: the task was dropped (timeout))]\n\
             acme__calc-5\tFAIL_TO_PASS extra [\"t::new\"] (1 of them in neither published list)\tPASS_TO_PASS recall 1/1 extra 0\n\
             acme__calc-6\tFAIL_TO_PASS extra [\"t::b\"]\tPASS_TO_PASS recall 0/1 extra 0 missing [\"t::b\"]\n\
             FAIL_TO_PASS exactly the published list: 1 of 6 rows\n\
             the same but for extra tests in neither published list (not run there, or failing after its fix): 2 of 6 rows\n\
             every published fail-to-pass test in ours: 3 of 6 rows\n\
             published FAIL_TO_PASS tests missed, by cause: 1 no result here (not collected under this id), 1 not run: the task was dropped (timeout); rows that differ only by tests that need the network: 0\n"
        );
        let out = dir.path().join("fresh.jsonl");
        write_rows(&out, &rows, &summary).unwrap();
        let written: Vec<Value> =
            fs_err::read_to_string(&out).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect();
        let unlisted = |index: usize| {
            written[index]["diagnosis"]["published_fail_to_pass"]["extra_in_neither_published_list"].clone()
        };
        assert_eq!(unlisted(4), serde_json::json!(["t::new"]));
        assert_eq!(unlisted(5), serde_json::json!([]));
    }

    /// A task dropped because its build reached for a host that is no registry (a
    /// crate from GitHub) misses its tests for want of the network, and says where.
    #[test]
    fn a_task_whose_build_was_refused_a_host_misses_its_tests_for_want_of_the_network() {
        let (_dir, path) =
            rows_file(&[row_line("acme__calc-1", &["t::a"], &[]), row_line("acme__calc-2", &["t::b"], &[])]);
        let rows = read_rows(&path).unwrap();
        let refused = crate::sandbox::egress::diagnosis(&["github.com:443".to_string()]);
        let build_failed = Dropped {
            reason: ValidateDropReason::EnvironmentBuildFailed,
            detail: format!(
                "every rung of the environment ladder failed:\nrung dated (rust1.85): {refused}; the build log is x"
            ),
        };
        let summary = Summary {
            outcomes: vec![
                outcome("acme__calc-1", Err(build_failed)),
                outcome("acme__calc-2", Err(Dropped { reason: ValidateDropReason::Timeout, detail: String::new() })),
            ],
            ..Summary::default()
        };
        let text = compare(&rows, &summary);
        assert!(
            text.contains("acme__calc-1\tdropped: environment_build_failed missing [\"t::a\" (needs the network: the task was dropped (environment_build_failed): its build reached for github.com:443, which no registry is)]"),
            "{text}"
        );
        assert!(text.contains("(not run: the task was dropped (timeout))"), "{text}");
        assert!(text.ends_with("rows that differ only by tests that need the network: 1\n"), "{text}");
    }

    /// A published test that fails after the fix here only because a run wrote past
    /// the container's file-size limit depends on the environment, and says so.
    #[test]
    fn a_test_stopped_by_the_file_size_limit_after_the_fix_depends_on_the_environment() {
        let (_dir, path) = rows_file(&[row_line("acme__calc-1", &["all tests"], &[])]);
        let rows = read_rows(&path).unwrap();
        let detail = format!(
            "no test failed before the gold patch ...; {} (`File size limit exceeded`)",
            super::super::judge::PAST_THE_FILE_SIZE_LIMIT
        );
        let stopped = TaskOutcome {
            observed: Some(Labels { fail_to_fail: vec!["all tests".into()], ..Labels::default() }),
            ..outcome("acme__calc-1", Err(Dropped { reason: ValidateDropReason::NoFailToPass, detail }))
        };
        let text = compare(&rows, &Summary { outcomes: vec![stopped], ..Summary::default() });
        assert!(
            text.contains("\"all tests\" (fails after the gold patch here too, where a run wrote past the file-size limit (validate.file_size_bytes): depends on the environment)"),
            "{text}"
        );
    }

    /// A Java row that names classes (Multi-SWE-bench's) and one that names each case of
    /// a parameterized method (a third-party release) compare with our method ids.
    /// bat's held-out row: its fix adds `src/vscreen.rs` with an inline test module,
    /// whose tests the published row lists as fail-to-pass; ours never label them.
    #[test]
    fn published_tests_that_the_gold_patch_defines_are_set_aside_with_that_cause() {
        let fix = "diff --git a/src/vscreen.rs b/src/vscreen.rs\nnew file mode 100644\n--- /dev/null\n+++ b/src/vscreen.rs\n\
                   @@ -0,0 +1,5 @@\n+#[cfg(test)]\n+mod tests {\n+    #[test]\n+    fn fits() {}\n+}\n";
        let new = serde_json::json!({"run": "NONE", "test": "NONE", "fix": "PASS"});
        let mut row: Value = serde_json::from_str(&msb_row(
            1,
            serde_json::json!({}),
            serde_json::json!({"vscreen::tests::fits": new, "tests::bug": new}),
        ))
        .unwrap();
        row["fix_patch"] = fix.into();
        let (_dir, path) = rows_file(&[row.to_string()]);
        let rows = read_rows(&path).unwrap();
        let rust = |ecosystem: &str| TaskOutcome {
            spec: Some(crate::model::EnvironmentSpec { ecosystem: ecosystem.into(), ..Default::default() }),
            ..outcome("acme__gadget-1", Ok(labels(&["tests::bug"], &[])))
        };
        let text = compare(&rows, &Summary { outcomes: vec![rust("rust")], ..Summary::default() });
        assert!(text.contains(&format!("\"vscreen::tests::fits\" ({DEFINED_BY_THE_FIX})")), "{text}");
        assert!(
            text.contains("in ours: 0 of 1 rows; 1 of 1 with the n2p tests of stopped published runs (a compile error, a run ended early) and the tests that gold patches define set aside"),
            "{text}"
        );
        // The row written back names the tests that its runs set aside.
        let observed =
            Labels { defined_by_the_fix: vec!["vscreen::tests::fits".into()], ..labels(&["tests::bug"], &[]) };
        let outcome = TaskOutcome { observed: Some(observed), ..rust("rust") };
        let written = fresh_rows(&rows, &Summary { outcomes: vec![outcome], ..Summary::default() });
        assert_eq!(written[0]["diagnosis"]["defined_by_the_fix"], serde_json::json!(["vscreen::tests::fits"]));
        assert_eq!(
            written[0]["diagnosis"]["published_fail_to_pass"]["missed"]["vscreen::tests::fits"],
            DEFINED_BY_THE_FIX
        );
        // A language whose tests live in test files reads no such test in a fix.
        let text = compare(&rows, &Summary { outcomes: vec![rust("go")], ..Summary::default() });
        assert!(text.contains("\"vscreen::tests::fits\" (no result here (not collected under this id))"), "{text}");
    }

    #[test]
    fn java_rows_naming_classes_or_parameter_cases_compare_with_our_methods() {
        let (_dir, path) = rows_file(&[
            row_line("acme__calc-1", &["com.acme.FooTest"], &["com.acme.BarTest"]),
            row_line(
                "acme__calc-2",
                &["com.acme.FooTest#adds"],
                &["com.acme.FooTest#parses(String)[1]", "com.acme.FooTest#parses(String)[2]"],
            ),
        ]);
        let rows = read_rows(&path).unwrap();
        let java = |instance_id: &str| TaskOutcome {
            spec: Some(crate::model::EnvironmentSpec { ecosystem: "java".into(), ..Default::default() }),
            ..outcome(
                instance_id,
                Ok(labels(&["com.acme.FooTest#adds"], &["com.acme.BarTest#b", "com.acme.FooTest#parses"])),
            )
        };
        let summary = Summary { outcomes: vec![java("acme__calc-1"), java("acme__calc-2")], ..Summary::default() };
        let text = compare(&rows, &summary);
        assert!(text.starts_with("acme__calc-1\tFAIL_TO_PASS same\tPASS_TO_PASS recall 1/1"), "{text}");
        assert!(text.contains("acme__calc-2\tFAIL_TO_PASS same\tPASS_TO_PASS recall 1/1 extra 1\n"), "{text}");
        assert!(text.contains("FAIL_TO_PASS exactly the published list: 2 of 2 rows"), "{text}");
    }

    /// An outcome of `ecosystem` with these labels.
    fn labelled_in(ecosystem: &str, instance_id: &str, labels: Labels) -> TaskOutcome {
        TaskOutcome {
            spec: Some(crate::model::EnvironmentSpec { ecosystem: ecosystem.into(), ..Default::default() }),
            ..outcome(instance_id, Ok(labels))
        }
    }

    /// A published class is all of its methods together (decision, 2026-12-07): in ours
    /// when one method is fail-to-pass and none fails after the fix; a class with a
    /// method that fails after it is missed, saying why. A published method of which we
    /// have only the class (a run read from Maven's console) is found by it, and said so.
    #[test]
    fn a_published_java_class_is_all_of_its_methods_together_and_a_method_is_found_by_its_class() {
        let (dir, path) = rows_file(&[
            row_line("acme__calc-1", &["com.acme.FooTest"], &["com.acme.BarTest"]),
            row_line("acme__calc-2", &["com.acme.FooTest"], &[]),
            row_line("acme__calc-3", &["com.acme.BazTest#parses"], &[]),
        ]);
        let rows = read_rows(&path).unwrap();
        let whole = labels(&["com.acme.FooTest#adds"], &["com.acme.FooTest#keeps", "com.acme.BarTest#b"]);
        let broken = Labels {
            fail_to_fail: vec!["com.acme.FooTest#breaks".into()],
            ..labels(&["com.acme.FooTest#adds"], &["com.acme.BarTest#b"])
        };
        let summary = Summary {
            outcomes: vec![
                labelled_in("java", "acme__calc-1", whole),
                labelled_in("java", "acme__calc-2", broken),
                labelled_in("java", "acme__calc-3", labels(&["com.acme.BazTest"], &[])),
            ],
            ..Summary::default()
        };
        let text = compare(&rows, &summary);
        assert!(text.starts_with("acme__calc-1\tFAIL_TO_PASS same\tPASS_TO_PASS recall 1/1 extra 1\n"), "{text}");
        assert!(
            text.contains(&format!(
                "acme__calc-2\tFAIL_TO_PASS missing [\"com.acme.FooTest\" ({}: 1 do not pass after the gold patch here (com.acme.FooTest#breaks), 1 fail to pass)]",
                grain::FINER_HERE
            )),
            "{text}"
        );
        assert!(
            text.contains("acme__calc-3\tFAIL_TO_PASS same (found by our coarser parent: \"com.acme.BazTest#parses\" by \"com.acme.BazTest\")"),
            "{text}"
        );
        let out = dir.path().join("fresh.jsonl");
        write_rows(&out, &rows, &summary).unwrap();
        let written: Vec<Value> =
            fs_err::read_to_string(&out).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect();
        let third = &written[2]["diagnosis"]["published_fail_to_pass"];
        assert_eq!(third["found_by_our_parent"], serde_json::json!({"com.acme.BazTest#parses": "com.acme.BazTest"}));
        assert_eq!(third["same"], true);
    }

    /// A published Go parent test is its subtests together, where ours has them and not
    /// it; a published subtest of which we have only the parent is found by it. (A
    /// subtest one level down is also spelled by its parent's name, as Multi-SWE-bench's
    /// parsers name it: a form, not a grain; so these subtests are two levels down.)
    #[test]
    fn go_parents_and_subtests_compare_across_the_grain() {
        let (_dir, path) = rows_file(&[
            row_line("acme__calc-1", &["TestParse"], &[]),
            row_line("acme__calc-2", &["TestParse"], &[]),
            row_line("acme__calc-3", &["TestRound/half_up"], &[]),
        ]);
        let rows = read_rows(&path).unwrap();
        let flaky = Labels { flaky: vec!["TestParse/b/y".into()], ..labels(&["TestParse/a/x"], &[]) };
        let summary = Summary {
            outcomes: vec![
                labelled_in("go", "acme__calc-1", labels(&["TestParse/a/x"], &["TestParse/b/y"])),
                labelled_in("go", "acme__calc-2", flaky),
                labelled_in("go", "acme__calc-3", labels(&["TestRound"], &[])),
            ],
            ..Summary::default()
        };
        let text = compare(&rows, &summary);
        assert!(text.starts_with("acme__calc-1\tFAIL_TO_PASS same\t"), "{text}");
        assert!(text.contains("acme__calc-2\tFAIL_TO_PASS missing [\"TestParse\" (its tests here"), "{text}");
        assert!(text.contains("(found by our coarser parent: \"TestRound/half_up\" by \"TestRound\")"), "{text}");
    }

    /// SWE-bench's doctest parser names a case `Test case > subcase`, and a nested
    /// subcase by its own name under its test case, beside the subcase around it;
    /// Multi-SWE-bench may name the CTest test that ran the program. Ours are the
    /// innermost subcases under everything around them, each part of its CTest test.
    #[test]
    fn doctest_subcases_compare_with_swe_benchs_names_and_the_ctest_test_that_ran_them() {
        let (_dir, path) = rows_file(&[
            row_line("acme__calc-1", &["basic usage > conversion to json via free-functions"], &[]),
            row_line("acme__calc-2", &["parse > empty", "parse > object"], &["parse > array"]),
            row_line("acme__calc-3", &["test-udt_cpp11"], &[]),
        ]);
        let rows = read_rows(&path).unwrap();
        let part_of = |ids: &[&str]| ids.iter().map(|id| (id.to_string(), "test-udt_cpp11".to_string())).collect();
        let udt = Labels {
            part_of: part_of(&["basic usage > conversion to json via free-functions", "basic usage > keeps"]),
            ..labels(&["basic usage > conversion to json via free-functions"], &["basic usage > keeps"])
        };
        let nested = Labels {
            part_of: part_of(&["parse > object > empty", "parse > array"]),
            ..labels(&["parse > object > empty"], &["parse > array"])
        };
        let summary = Summary {
            outcomes: vec![
                labelled_in("c", "acme__calc-1", udt.clone()),
                labelled_in("c", "acme__calc-2", nested),
                labelled_in("c", "acme__calc-3", udt),
            ],
            ..Summary::default()
        };
        let text = compare(&rows, &summary);
        assert!(text.starts_with("acme__calc-1\tFAIL_TO_PASS same\t"), "{text}");
        assert!(text.contains("acme__calc-2\tFAIL_TO_PASS same\tPASS_TO_PASS recall 1/1"), "{text}");
        assert!(text.contains("acme__calc-3\tFAIL_TO_PASS same\t"), "{text}");
        assert!(text.contains("FAIL_TO_PASS exactly the published list: 3 of 3 rows"), "{text}");
    }

    /// A JS file's own id, fail-to-pass when its `describe` body threw before the fix
    /// (iamkun/dayjs-2369), is the published file-level id; beside published tests of
    /// that file it is no extra test.
    #[test]
    fn a_js_files_own_id_compares_with_a_published_file_and_is_no_extra_beside_its_tests() {
        let (_dir, path) = rows_file(&[
            row_line("acme__calc-1", &["test/plugin/duration.test.js"], &[]),
            row_line("acme__calc-2", &["test/a.test.js > add > adds"], &[]),
            row_line("acme__calc-3", &["test/a.test.js"], &[]),
        ]);
        let rows = read_rows(&path).unwrap();
        let summary = Summary {
            outcomes: vec![
                labelled_in(
                    "node",
                    "acme__calc-1",
                    labels(&["test/plugin/duration.test.js"], &["test/plugin/duration.test.js > Add > adds"]),
                ),
                labelled_in("node", "acme__calc-2", labels(&["test/a.test.js", "test/a.test.js > add > adds"], &[])),
                labelled_in("node", "acme__calc-3", labels(&["test/a.test.js > add > adds"], &["test/a.test.js"])),
            ],
            ..Summary::default()
        };
        let text = compare(&rows, &summary);
        assert!(text.contains("FAIL_TO_PASS exactly the published list: 3 of 3 rows"), "{text}");
    }

    #[test]
    fn every_missed_published_test_is_explained_by_what_the_runs_showed_in_the_compare_and_the_row() {
        let (dir, path) = rows_file(&[
            row_line("acme__calc-1", &["t::a", "t::net", "t::before", "t::after", "t::skip"], &[]),
            row_line("acme__calc-2", &["t::net"], &[]),
        ]);
        let rows = read_rows(&path).unwrap();
        let observed = Labels {
            fail_to_pass: vec!["t::a".into()],
            pass_to_pass: vec!["t::before".into()],
            fail_to_fail: vec!["t::after".into()],
            skipped: vec!["t::skip".into()],
            needs_network: vec!["t::net".into()],
            ..Labels::default()
        };
        let dropped = Dropped { reason: ValidateDropReason::NoFailToPass, detail: String::new() };
        let summary = Summary {
            outcomes: vec![
                outcome("acme__calc-1", Ok(observed.clone())),
                TaskOutcome { observed: Some(observed), ..outcome("acme__calc-2", Err(dropped)) },
            ],
            ..Summary::default()
        };
        let text = compare(&rows, &summary);
        assert!(text.contains("\"t::net\" (needs the network)"), "{text}");
        assert!(text.contains("\"t::before\" (passes before the gold patch here)"), "{text}");
        assert!(text.contains("\"t::after\" (fails after the gold patch here too)"), "{text}");
        assert!(text.contains("\"t::skip\" (skipped here)"), "{text}");
        assert!(
            text.contains("acme__calc-2\tdropped: no_fail_to_pass missing [\"t::net\" (needs the network)]"),
            "{text}"
        );
        assert!(text.ends_with("rows that differ only by tests that need the network: 1\n"), "{text}");

        let out = dir.path().join("fresh.jsonl");
        write_rows(&out, &rows, &summary).unwrap();
        let written: Vec<Value> =
            fs_err::read_to_string(&out).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect();
        let first = &written[0]["diagnosis"]["published_fail_to_pass"];
        assert_eq!(first["same"], false);
        assert_eq!(first["missed"]["t::before"], "passes before the gold patch here");
        assert_eq!(first["missed"].as_object().unwrap().len(), 4, "{first}");
        assert_eq!(written[1]["diagnosis"]["published_fail_to_pass"]["missed"]["t::net"], "needs the network");
    }

    #[test]
    fn escaped_control_characters_compare_equal_to_raw_ones() {
        assert_eq!(normalize_id("t::p[a\\nb\\tc]"), "t::p[a\nb\tc]");
        // SWE-bench's pytest ids end at a parameter's first space; Django's keep theirs.
        assert_eq!(normalize_id("t.py::test_x[a: str = None-Optional[str]]"), "t.py::test_x[a:");
        assert_eq!(normalize_id("test_help (admin.tests.AdminTests)"), "test_help (admin.tests.AdminTests)");
    }
}
