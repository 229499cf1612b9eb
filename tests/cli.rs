//! The command line's contract: commands, exit codes, config errors, `status`.

use swe_harvest::model::{Rejection, RepoSlug, Stage};
use swe_harvest::store::{self, Store};

use crate::support::{SweHarvest, failure, stderr, stdout};

#[test]
fn every_command_of_the_contract_has_help() {
    let harvest = SweHarvest::new();
    for (command, options) in [
        ("discover", &["--language", "--min-stars", "--limit", "--out", "--exclude-dataset"][..]),
        ("crawl", &["--repo", "--since", "--until", "--api-url"][..]),
        ("mirror", &["--repo", "--clone-url"][..]),
        ("extract", &["--repo", "--compat"][..]),
        (
            "validate",
            &[
                "--repo",
                "--instance",
                "--input",
                "--out",
                "--compare",
                "--write-config",
                "--workers",
                "--runs",
                "--coverage",
            ][..],
        ),
        (
            "release",
            &[
                "--name",
                "--version",
                "--created-after",
                "--created-before",
                "--repo",
                "--exclude-dataset",
                "--split-by",
                "--images",
                "--push",
                "--force",
            ][..],
        ),
        ("evaluate", &["--release", "--predictions", "--mode"][..]),
        ("run", &["--repo", "--since", "--until", "--api-url", "--clone-url", "--compat", "--workers", "--runs"][..]),
        ("status", &["--repo", "--json", "--report"][..]),
        ("export", &["--stage", "--format", "--out"][..]),
    ] {
        let output = harvest.run(&[command, "--help"]);
        assert!(output.status.success(), "{command} --help failed: {}", stderr(&output));
        let help = stdout(&output);
        for option in options {
            assert!(help.contains(option), "`{command} --help` does not mention {option}:\n{help}");
        }
        for global in ["--data-dir", "--config", "--verbose", "--quiet"] {
            assert!(help.contains(global), "`{command} --help` does not mention {global}");
        }
    }
}

#[test]
fn bad_repo_slug_is_a_usage_error_naming_the_input() {
    let harvest = SweHarvest::new();
    let output = harvest.run(&["crawl", "--repo", "not-a-slug"]);
    let error = failure(&output, 2);
    assert!(error.contains("not-a-slug") && error.contains("OWNER/NAME"), "{error}");
}

#[test]
fn unknown_command_and_missing_options_exit_2() {
    let harvest = SweHarvest::new();
    assert_eq!(harvest.run(&["harvest-everything"]).status.code(), Some(2));
    assert_eq!(harvest.run(&["release", "--name", "x"]).status.code(), Some(2));
    assert_eq!(harvest.run(&["validate", "--input", "rows.jsonl"]).status.code(), Some(2), "--input needs --out");
}

/// What `status` says with `text` as its config file `bad.toml`, which it must refuse
/// as bad usage (exit 2).
fn bad_config_error(text: &str) -> String {
    let output = SweHarvest::new().run_with_config("bad.toml", text, &["status"]);
    failure(&output, 2)
}

#[test]
fn config_with_unknown_key_exits_2_naming_file_and_key() {
    let error = bad_config_error("[extract]\ncompatibility = \"swebench\"\n");
    assert!(error.contains("bad.toml"), "{error}");
    assert!(error.contains("compatibility"), "{error}");
    assert!(error.contains("`compat`"), "names what is allowed: {error}");
    assert!(error.contains("hint:"), "{error}");
}

#[test]
fn config_with_wrong_type_exits_2() {
    let error = bad_config_error("[validate]\nmemory_bytes = \"4G\"\n");
    assert!(error.contains("validate.memory_bytes"), "{error}");
}

#[test]
fn bad_environment_override_exits_2_naming_the_variable() {
    let harvest = SweHarvest::new();
    let output = harvest.command().env("SWE_HARVEST_VALIDATE__RUNS", "0").args(["status"]).output().unwrap();
    let error = failure(&output, 2);
    assert!(error.contains("SWE_HARVEST_VALIDATE__RUNS") && error.contains("at least 1"), "{error}");
}

#[test]
fn status_without_a_store_says_how_to_start() {
    let harvest = SweHarvest::new();
    let output = harvest.run(&["status"]);
    let error = failure(&output, 2);
    assert!(error.contains("swe-harvest crawl"), "{error}");
}

fn seeded_store(harvest: &SweHarvest) {
    let mut store = Store::open_in(&harvest.data_dir).unwrap();
    let requests: RepoSlug = "psf/requests".parse().unwrap();
    let flask: RepoSlug = "pallets/flask".parse().unwrap();
    store
        .transaction(|tx| -> Result<(), store::StoreError> {
            for number in 1..=5 {
                store::record_passed(tx, Stage::Crawl, &requests, &number.to_string())?;
            }
            for (number, reason) in [(1, "no_linked_issue"), (2, "no_linked_issue"), (3, "no_test_change")] {
                store::record_dropped(
                    tx,
                    &Rejection {
                        stage: Stage::Extract,
                        repo: requests.clone(),
                        item: number.to_string(),
                        reason: reason.into(),
                        detail: "detail".into(),
                    },
                )?;
            }
            store::record_passed(tx, Stage::Extract, &requests, "4")?;
            store::record_passed(tx, Stage::Crawl, &flask, "9")?;
            // Recording an item again replaces its outcome; it is not counted twice.
            store::record_passed(tx, Stage::Extract, &requests, "4")?;
            Ok(())
        })
        .unwrap();
}

#[test]
fn status_prints_the_funnel_as_a_table() {
    let harvest = SweHarvest::new();
    seeded_store(&harvest);
    let output = harvest.run(&["status"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "\
REPOSITORY     STAGE    ENTERED  PASSED  DROPPED  DROP REASONS
pallets/flask  crawl          1       1        0
psf/requests   crawl          5       5        0
               extract        4       1        3  no_linked_issue 2, no_test_change 1
(all)          crawl          6       6        0
               extract        4       1        3  no_linked_issue 2, no_test_change 1
"
    );
    let only = stdout(&harvest.run(&["status", "--repo", "pallets/flask"]));
    assert!(only.contains("pallets/flask") && !only.contains("psf/requests"), "{only}");
}

#[test]
fn status_json_has_the_same_counts() {
    let harvest = SweHarvest::new();
    seeded_store(&harvest);
    let output = harvest.run(&["status", "--json", "--repo", "psf/requests"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let repositories = json["repositories"].as_array().unwrap();
    assert_eq!(repositories.len(), 1);
    assert_eq!(repositories[0]["repo"], "psf/requests");
    let extract = &repositories[0]["stages"][1];
    assert_eq!(extract["stage"], "extract");
    assert_eq!(extract["entered"], 4);
    assert_eq!(extract["passed"], 1);
    assert_eq!(extract["dropped"], 3);
    assert_eq!(extract["reasons"]["no_linked_issue"], 2);
    assert_eq!(json["total"][0]["entered"], 5);
}

#[test]
fn status_report_writes_an_html_page_with_a_chart_and_the_numbers() {
    let harvest = SweHarvest::new();
    seeded_store(&harvest);
    let page = harvest.path("funnel.html");
    let output = harvest.command().args(["status", "--report"]).arg(&page).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let html = fs_err::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<svg").count(), 3, "one chart for all and one per repository");
    assert!(html.contains("<h2 id=\"psf/requests\">psf/requests</h2>"));
    assert!(html.contains("dropped: no_linked_issue"));
    assert!(html.contains("4 in &#183; 1 passed &#183; 3 dropped"), "numbers beside the bars");
    assert!(stdout(&output).contains("REPOSITORY"), "the table is still printed");
}
