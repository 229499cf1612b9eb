//! The discover stage against the simulator's search API: filters, paging,
//! exclusion by reference datasets (JSONL and parquet), the TOML list, the store.

use chrono::{DateTime, Utc};

use crate::support::github_sim::data::repository;
use crate::support::github_sim::{Fixtures, GithubSim};
use crate::support::{SweHarvest, failure, stderr, stdout};

fn day(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(&format!("{text}T12:00:00Z")).unwrap().with_timezone(&Utc)
}

/// 150 Python repositories (stars 10..1500, half pushed recently, licenses
/// alternating), plus some in other languages.
fn search_fixtures() -> Fixtures {
    let mut fixtures = Fixtures::default();
    for index in 1..=150u32 {
        let pushed = if index % 2 == 0 { day("2026-06-01") } else { day("2023-01-01") };
        let license = if index % 3 == 0 { Some("apache-2.0") } else { Some("mit") };
        fixtures.search_repositories.push(repository(
            &format!("org{index}/py{index}"),
            "Python",
            index * 10,
            pushed,
            license,
        ));
    }
    for index in 1..=20u32 {
        fixtures.search_repositories.push(repository(
            &format!("rs{index}/tool"),
            "Rust",
            5_000,
            day("2026-06-01"),
            Some("mit"),
        ));
    }
    fixtures
}

#[test]
fn discover_filters_pages_excludes_and_writes_the_list() {
    let sim = GithubSim::start(search_fixtures());
    let harvest = SweHarvest::new();
    // Reference datasets: one JSONL, one parquet.
    let jsonl = harvest.path("reference.jsonl");
    fs_err::write(&jsonl, "{\"repo\": \"org150/py150\", \"instance_id\": \"x\"}\n{\"repo\": \"other/thing\"}\n")
        .unwrap();
    let parquet = harvest.path("reference.parquet");
    swe_harvest::dataset::Dataset {
        columns: vec!["repo".into(), "instance_id".into()],
        rows: vec![vec!["ORG148/py148".into(), "a".into()], vec!["nobody/else".into(), "b".into()]],
    }
    .write_parquet(&parquet)
    .unwrap();
    let out = harvest.path("repos.toml");
    let output = harvest
        .command()
        .env("GITHUB_TOKEN", "tok")
        .args(["discover", "--language", "Python", "--min-stars", "200", "--limit", "40"])
        .args(["--pushed-after", "2026-01-01", "--license", "mit", "--api-url", sim.url(), "--out"])
        .arg(&out)
        .arg("--exclude-dataset")
        .arg(&jsonl)
        .arg(&parquet)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));

    // Expected, from the fixture rules: even index (recent push), not divisible by
    // 3 (mit), stars = index * 10 >= 200, minus 150 and 148; by stars, descending.
    let expected: Vec<String> = (1..=150u32)
        .rev()
        .filter(|index| index % 2 == 0 && index % 3 != 0 && index * 10 >= 200 && *index != 150 && *index != 148)
        .take(40)
        .map(|index| format!("org{index}/py{index}"))
        .collect();
    let printed: Vec<String> = stdout(&output).lines().map(str::to_string).collect();
    assert_eq!(printed, expected);
    assert!(stderr(&output).contains("left out 1"), "{}", stderr(&output));

    let list: toml::Table = fs_err::read_to_string(&out).unwrap().parse().unwrap();
    let listed: Vec<String> =
        list["repos"].as_array().unwrap().iter().map(|value| value.as_str().unwrap().to_string()).collect();
    assert_eq!(listed, expected);

    let store = swe_harvest::store::Store::open_in(&harvest.data_dir).unwrap();
    let stored = swe_harvest::store::discover::repositories(store.connection()).unwrap();
    assert_eq!(stored.len(), expected.len());
    assert!(stored.iter().all(|(_, data)| data["license"] == "mit" && data["language"] == "Python"));
    let funnel = store.funnel(&[]).unwrap();
    let discover = funnel.total.iter().find(|stage| stage.stage == swe_harvest::model::Stage::Discover).unwrap();
    assert_eq!(discover.passed, expected.len() as u64);
    assert_eq!(discover.reasons.get("in_reference_dataset"), Some(&1));
}

#[test]
fn discover_pages_past_the_first_hundred() {
    let sim = GithubSim::start(search_fixtures());
    let harvest = SweHarvest::new();
    let output = harvest
        .command()
        .env("GITHUB_TOKEN", "tok")
        .args(["discover", "--language", "python", "--min-stars", "1", "--limit", "130", "--api-url", sim.url()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output).lines().count(), 130);
    assert_eq!(sim.stats().count("search_repositories", 200), 2);
}

#[test]
fn discover_goes_past_the_search_apis_thousand_results() {
    // 1,500 repositories with distinct star counts, then 1,200 that share one.
    let mut fixtures = Fixtures::default();
    for index in 1..=1500u32 {
        let name = format!("org{index}/many");
        fixtures.search_repositories.push(repository(&name, "Go", 2_000 + index, day("2026-06-01"), Some("mit")));
    }
    for index in 1..=1200u32 {
        let name = format!("tie{index}/same");
        fixtures.search_repositories.push(repository(&name, "Go", 1_000, day("2026-06-01"), Some("mit")));
    }
    let sim = GithubSim::start(fixtures);
    let harvest = SweHarvest::new();
    let discover = |min_stars: &str, limit: &str| {
        harvest
            .command()
            .env("GITHUB_TOKEN", "tok")
            .args(["discover", "--language", "go", "--min-stars", min_stars, "--limit", limit, "--api-url", sim.url()])
            .output()
            .unwrap()
    };
    let output = discover("2001", "1400");
    assert!(output.status.success(), "{}", stderr(&output));
    let found: Vec<String> = stdout(&output).lines().map(String::from).collect();
    assert_eq!(found.len(), 1400, "past the first 1,000");
    let distinct: std::collections::BTreeSet<&String> = found.iter().collect();
    assert_eq!(distinct.len(), 1400, "no repository twice");
    assert_eq!(found[0], "org1500/many");
    assert_eq!(found[1399], "org101/many");
    assert!(!stderr(&output).contains("warning"), "{}", stderr(&output));

    // More than 1,000 with one star count: it says so instead of stopping silently.
    let output = discover("1000", "2700");
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).lines().count() < 2700);
    assert!(stderr(&output).contains("cap of 1,000 results"), "{}", stderr(&output));
}

#[test]
fn a_bad_reference_dataset_is_an_error_naming_the_file() {
    let sim = GithubSim::start(search_fixtures());
    let harvest = SweHarvest::new();
    let bad = harvest.path("bad.jsonl");
    fs_err::write(&bad, "{\"instance_id\": \"x\"}\n").unwrap();
    let output = harvest
        .command()
        .args(["discover", "--language", "Python", "--api-url", sim.url(), "--exclude-dataset"])
        .arg(&bad)
        .output()
        .unwrap();
    let error = failure(&output, 1);
    assert!(error.contains("bad.jsonl") && error.contains("repo"), "{error}");
}
