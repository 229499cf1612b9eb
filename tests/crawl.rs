//! The crawl stage against the GitHub API simulator: pagination, every fault kind,
//! failures recorded and resumed, kill-and-resume, incremental refresh, the
//! per-issue plan, the date window, and the token never leaking; through REST
//! (`--api rest`) and through GraphQL (`--api graphql`): the same merged PRs,
//! referenced issues, funnel and candidates out of extract, in a quarter of the
//! requests, with every GraphQL query checked against GitHub's public schema.

use std::collections::BTreeSet;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use swe_harvest::store::Store;

use chrono::{DateTime, Utc};

use crate::support::github_sim::data::{self, SimRepo};
use crate::support::github_sim::{Fault, FaultKind, Fixtures, GenerateSpec, GithubSchema, GithubSim, Stats, generate};
use crate::support::{SweHarvest, stderr};

const REPO: &str = "acme/widgets";
const TOKEN: &str = "ghp_test_token_never_stored_7f3a9c";

fn fixtures_with(repo: SimRepo) -> Fixtures {
    let mut fixtures = Fixtures::default();
    fixtures.repos.insert(REPO.to_string(), repo);
    fixtures
}

fn small_repo() -> SimRepo {
    generate(REPO, &GenerateSpec::new(60, 40, 120))
}

/// `swe-harvest crawl --api <api>` against the simulator, with short backoffs.
fn crawl_through(api: &str, harvest: &SweHarvest, sim: &GithubSim) -> Command {
    let mut command = harvest.command();
    command
        .env("GITHUB_TOKEN", TOKEN)
        .env("SWE_HARVEST_GITHUB__BACKOFF_INITIAL_MS", "10")
        .env("SWE_HARVEST_GITHUB__BACKOFF_MAX_SECS", "1")
        .env("SWE_HARVEST_GITHUB__SECONDARY_LIMIT_WAIT_SECS", "1")
        .args(["crawl", "--repo", REPO, "--api-url", sim.url(), "--api", api]);
    command
}

/// `swe-harvest crawl --api rest`, `per_page` items a page.
fn crawl_command(harvest: &SweHarvest, sim: &GithubSim, per_page: u32) -> Command {
    let mut command = crawl_through("rest", harvest, sim);
    command.env("SWE_HARVEST_GITHUB__PER_PAGE", per_page.to_string());
    command
}

/// `swe-harvest crawl --api graphql`, `page_size` pull requests or issues per query.
fn graphql_command(harvest: &SweHarvest, sim: &GithubSim, page_size: u32) -> Command {
    let mut command = crawl_through("graphql", harvest, sim);
    command.env("SWE_HARVEST_CRAWL__GRAPHQL_PAGE_SIZE", page_size.to_string());
    command
}

/// A crawl killed (SIGKILL) once the simulator has answered each of its kill points'
/// requests, then run to the end, beside a clean crawl of the same repository.
struct KilledCrawl {
    clean: SweHarvest,
    clean_requests: u64,
    harvest: SweHarvest,
    sim: GithubSim,
}

/// Crawls `repo` cleanly, then again killed at each of `kill_points` (the simulator
/// answering each request after `delay`, so that kills land mid-run) and resumed;
/// asserts that the resumed crawl stored the clean run's rows and fetched again only
/// the pages in flight at a kill.
fn crawl_killed_at(
    repo: SimRepo,
    kill_points: &[u64],
    delay: Duration,
    command: impl Fn(&SweHarvest, &GithubSim) -> Command,
) -> KilledCrawl {
    let clean_sim = GithubSim::start(fixtures_with(repo.clone()));
    let clean = SweHarvest::new();
    run_ok(command(&clean, &clean_sim));
    let clean_requests = clean_sim.stats().total;

    let sim = GithubSim::start(fixtures_with(repo));
    sim.set_delay(delay);
    let harvest = SweHarvest::new();
    let mut interrupted = 0;
    for &kill_after in kill_points {
        assert!(kill_after < clean_requests, "kill points fall inside the crawl ({clean_requests} requests)");
        let mut child = command(&harvest, &sim).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        let started = Instant::now();
        while sim.stats().total < kill_after && started.elapsed() < Duration::from_secs(30) {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        if child.try_wait().unwrap().is_none() {
            interrupted += 1;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
    }
    assert!(interrupted >= kill_points.len() - 1, "the crawl was killed mid-run {interrupted} times");
    sim.set_delay(Duration::ZERO);
    run_ok(command(&harvest, &sim));

    assert_eq!(raw_rows(&harvest), raw_rows(&clean), "same rows as the clean run");
    let fetched_twice = sim.stats().urls_fetched_twice();
    assert!(
        fetched_twice.len() <= kill_points.len(),
        "only pages in flight at a kill may be fetched again: {fetched_twice:?}"
    );
    KilledCrawl { clean, clean_requests, harvest, sim }
}

/// A merged pull request, new since the last crawl, that fixes `issue`.
fn new_fix(number: u64, issue: u64, now: DateTime<Utc>) -> Value {
    data::pull_request(
        REPO,
        &data::PullSpec {
            number,
            title: "A new fix".into(),
            body: Some(format!("Fixes #{issue}")),
            author: "newcomer".into(),
            created_at: now - chrono::Duration::hours(2),
            updated_at: now,
            closed_at: Some(now),
            merged_at: Some(now),
            labels: vec![],
        },
    )
}

/// A comment on `issue` posted since the last crawl.
fn late_comment(id: u64, issue: u64, now: DateTime<Utc>) -> Value {
    data::comment(REPO, id, issue, "late", "Late comment", now, now)
}

/// Adds `count` comments on `issue` (ids from 800,000,000) from 2021-06-01 on,
/// `minutes_apart` apart (0: all at one instant): a thread longer than a page.
fn add_long_thread(repo: &mut SimRepo, issue: u64, count: u64, minutes_apart: i64) {
    let first = chrono::DateTime::parse_from_rfc3339("2021-06-01T00:00:00Z").unwrap().to_utc();
    for index in 0..count {
        let at = first + chrono::Duration::minutes(index as i64 * minutes_apart);
        repo.comments.push(data::comment(REPO, 800_000_000 + index, issue, "chatty", "+1", at, at));
    }
}

/// A simulator serving [`small_repo`] and a harvest that crawled it through `command`
/// (20 items a page), then again with nothing changed; with what the second crawl
/// asked for.
fn crawled_twice(command: fn(&SweHarvest, &GithubSim, u32) -> Command) -> (GithubSim, SweHarvest, Stats) {
    let sim = GithubSim::start(fixtures_with(small_repo()));
    let harvest = SweHarvest::new();
    run_ok(command(&harvest, &sim, 20));
    sim.reset_stats();
    run_ok(command(&harvest, &sim, 20));
    let stats = sim.stats();
    (sim, harvest, stats)
}

/// Asserts that a refresh stored the new fix `new_number` ([`new_fix`]) and the
/// edited body of `edited_issue`.
fn assert_fix_and_edit_stored(store: &Store, new_number: u64, edited_issue: u64) {
    let slug = REPO.parse().unwrap();
    assert!(swe_harvest::store::raw::pull_request(store.connection(), &slug, new_number).unwrap().is_some());
    let issue = swe_harvest::store::raw::issue(store.connection(), &slug, edited_issue).unwrap().unwrap();
    assert_eq!(issue.body.as_deref(), Some("Edited body"));
}

fn run(mut command: Command) -> Output {
    command.output().expect("the swe-harvest binary runs")
}

/// Runs and asserts that the command succeeded, showing its stderr when it did not.
fn run_ok(command: Command) -> Output {
    let output = run(command);
    assert!(output.status.success(), "{}", stderr(&output));
    output
}

/// Runs with a deadline, so that a crawl stuck waiting fails the test instead of hanging it.
fn run_within(mut command: Command, deadline: Duration) -> Output {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawns");
    let started = Instant::now();
    loop {
        if child.try_wait().expect("waits").is_some() {
            return child.wait_with_output().expect("output");
        }
        if started.elapsed() > deadline {
            child.kill().ok();
            let output = child.wait_with_output().expect("output");
            panic!("the crawl did not finish within {deadline:?}:\n{}", stderr(&output));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn open_store(harvest: &SweHarvest) -> Store {
    Store::open_in(&harvest.data_dir).expect("the store opens")
}

/// Every row of the raw tables and the crawl funnel, without write times.
fn raw_rows(harvest: &SweHarvest) -> Vec<String> {
    let store = open_store(harvest);
    let mut rows = Vec::new();
    for (table, sql) in [
        ("pull_requests", "SELECT repo || ' ' || number || ' ' || merged || ' ' || data FROM pull_requests"),
        ("issues", "SELECT repo || ' ' || number || ' ' || data FROM issues"),
        ("issue_comments", "SELECT repo || ' ' || id || ' ' || issue_number || ' ' || data FROM issue_comments"),
        (
            "stage_items",
            "SELECT stage || ' ' || repo || ' ' || item || ' ' || outcome || ' ' || COALESCE(reason, '') FROM stage_items",
        ),
        ("stage_totals", "SELECT stage || ' ' || repo || ' ' || reason || ' ' || total FROM stage_totals"),
    ] {
        let mut statement = store.connection().prepare(sql).unwrap();
        let mut table_rows: Vec<String> = statement
            .query_map([], |row| row.get::<_, String>(0))
            .unwrap()
            .map(|row| format!("{table}: {}", row.unwrap()))
            .collect();
        table_rows.sort();
        rows.extend(table_rows);
    }
    rows
}

fn count(store: &Store, sql: &str) -> u64 {
    store.connection().query_row(sql, [], |row| row.get(0)).unwrap()
}

/// What the fixtures hold, counted from the fixture JSON itself.
struct Expected {
    merged: u64,
    unmerged: u64,
    issues: u64,
    comments: u64,
}

fn expected(repo: &SimRepo) -> Expected {
    let merged = repo.pulls.iter().filter(|pull| !pull["merged_at"].is_null()).count() as u64;
    Expected {
        merged,
        unmerged: repo.pulls.len() as u64 - merged,
        issues: repo.issues.len() as u64,
        comments: repo.comments.len() as u64,
    }
}

/// Serves [`small_repo`] from a simulator that `prepare` sets up (faults, token
/// limits), crawls it into a new harvest through the REST command with `env` added
/// (a `GITHUB_TOKENS` there stands instead of the one token), within a minute (a
/// wait obeyed whole would outlive it), and asserts that the crawl stored everything;
/// returns the simulator, for what it served.
fn crawl_small_repo_completely(prepare: impl FnOnce(&GithubSim), env: &[(&str, &str)]) -> GithubSim {
    let repo = small_repo();
    let expected = expected(&repo);
    let sim = GithubSim::start(fixtures_with(repo));
    prepare(&sim);
    let harvest = SweHarvest::new();
    let mut command = crawl_command(&harvest, &sim, 20);
    if env.iter().any(|(name, _)| *name == "GITHUB_TOKENS") {
        command.env_remove("GITHUB_TOKEN");
    }
    command.envs(env.iter().copied());
    let output = run_within(command, Duration::from_secs(60));
    assert!(output.status.success(), "{}", stderr(&output));
    assert_complete(&harvest, &expected);
    sim
}

fn assert_complete(harvest: &SweHarvest, expected: &Expected) {
    let store = open_store(harvest);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM pull_requests WHERE merged"), expected.merged, "merged PRs");
    assert_eq!(count(&store, "SELECT COUNT(*) FROM pull_requests WHERE NOT merged"), 0, "unmerged PRs are not stored");
    assert_eq!(count(&store, "SELECT COUNT(*) FROM issues"), expected.issues, "issues");
    assert_eq!(count(&store, "SELECT COUNT(*) FROM issue_comments"), expected.comments, "comments");
    assert_eq!(
        count(&store, "SELECT COUNT(*) FROM stage_items WHERE stage = 'crawl' AND reason = 'not_merged'"),
        expected.unmerged,
        "unmerged PRs are dropped in the funnel"
    );
    assert_eq!(count(&store, "SELECT COUNT(*) FROM failed_requests"), 0, "nothing is missing");
}

#[test]
fn crawl_reads_every_page_and_stores_prs_issues_and_comments() {
    let repo = small_repo();
    let expected = expected(&repo);
    let sim = GithubSim::start(fixtures_with(repo.clone()));
    let harvest = SweHarvest::new();
    let output = run_ok(crawl_command(&harvest, &sim, 20));
    assert_complete(&harvest, &expected);

    // One request per page of 20: no per-PR calls.
    let stats = sim.stats();
    let pages = |items: u64| items.div_ceil(20);
    assert_eq!(stats.count("pulls", 200), pages(expected.merged + expected.unmerged));
    assert_eq!(stats.count("issues", 200), pages(expected.issues + expected.merged + expected.unmerged));
    assert_eq!(stats.count("issue_comments", 200), pages(expected.comments));
    assert_eq!(stats.endpoint_total("issue"), 0, "no per-issue calls in the bulk plan");

    // Stored objects carry the fixture's fields.
    let store = open_store(&harvest);
    let slug = REPO.parse().unwrap();
    let fixture = repo.pulls.iter().find(|pull| !pull["merged_at"].is_null()).unwrap();
    let stored = swe_harvest::store::raw::pull_request(store.connection(), &slug, fixture["number"].as_u64().unwrap())
        .unwrap()
        .expect("the merged PR is stored");
    assert_eq!(stored.title, fixture["title"].as_str().unwrap());
    assert_eq!(stored.body.as_deref(), fixture["body"].as_str());
    assert_eq!(stored.base_sha, fixture["base"]["sha"].as_str().unwrap());
    assert_eq!(stored.head_sha, fixture["head"]["sha"].as_str().unwrap());
    assert_eq!(stored.head_ref, fixture["head"]["ref"].as_str().unwrap());
    assert_eq!(stored.merge_commit_sha.as_deref(), fixture["merge_commit_sha"].as_str());
    assert_eq!(stored.author.as_deref(), fixture["user"]["login"].as_str());
    assert_eq!(
        stored.merged_at.unwrap().format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        fixture["merged_at"].as_str().unwrap()
    );
    let fixture_issue =
        repo.issues.iter().find(|issue| issue["labels"].as_array().is_some_and(|l| !l.is_empty())).unwrap();
    let issue = swe_harvest::store::raw::issue(store.connection(), &slug, fixture_issue["number"].as_u64().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(issue.labels, vec![fixture_issue["labels"][0]["name"].as_str().unwrap().to_string()]);
    let fixture_comment = &repo.comments[0];
    let issue_number: u64 = fixture_comment["issue_url"].as_str().unwrap().rsplit('/').next().unwrap().parse().unwrap();
    let comments = swe_harvest::store::raw::comments(store.connection(), &slug, issue_number).unwrap();
    assert!(comments.iter().any(|comment| comment.id == fixture_comment["id"].as_u64().unwrap()
        && comment.body.as_deref() == fixture_comment["body"].as_str()));

    let summary = stderr(&output);
    assert!(summary.contains(&format!("{} merged", expected.merged)), "{summary}");
    assert!(summary.contains("requests"), "{summary}");
}

#[test]
fn a_day_long_retry_after_is_capped() {
    let sim = crawl_small_repo_completely(
        |sim| sim.add_fault(Fault::new("/pulls", FaultKind::SecondaryRetryAfter { secs: 86_400 })),
        &[("SWE_HARVEST_GITHUB__MAX_RETRY_AFTER_SECS", "1")],
    );
    assert!(sim.stats().status_total(403) >= 1, "the fault was served");
}

#[test]
fn credentials_in_the_api_url_are_refused_and_never_printed() {
    let sim = GithubSim::start(fixtures_with(small_repo()));
    let harvest = SweHarvest::new();
    let with_credentials = sim.url().replacen("http://", "http://someone:s3cret-password@", 1);
    let mut command = harvest.command();
    command.env("GITHUB_TOKEN", TOKEN).args(["crawl", "--repo", REPO, "--api-url", &with_credentials]);
    let output = run(command);
    assert!(!output.status.success());
    let text = format!("{}{}", stderr(&output), String::from_utf8_lossy(&output.stdout));
    assert!(!text.contains("s3cret-password"), "{text}");
    assert!(text.contains("****") && text.contains("GITHUB_TOKEN"), "{text}");
    assert_eq!(sim.stats().total, 0, "nothing was sent");
}

#[test]
fn a_token_that_cannot_be_a_header_is_refused_not_dropped() {
    let sim = GithubSim::start(fixtures_with(small_repo()));
    let harvest = SweHarvest::new();
    let mut command = harvest.command();
    command.env("GITHUB_TOKEN", "ghp_first\nghp_second").args(["crawl", "--repo", REPO, "--api-url", sim.url()]);
    let output = run(command);
    assert!(!output.status.success(), "requests would have gone out anonymous");
    let text = stderr(&output);
    assert!(text.contains("copy the token again"), "{text}");
    assert!(!text.contains("ghp_first"), "{text}");
    assert_eq!(sim.stats().total, 0, "nothing was sent");
}

#[test]
fn every_fault_kind_is_recovered() {
    let cases: Vec<(&str, Fault, u16)> = vec![
        (
            "secondary limit with Retry-After",
            Fault::new("/pulls", FaultKind::SecondaryRetryAfter { secs: 1 }).skip(1),
            403,
        ),
        ("secondary limit message", Fault::new("/issues?", FaultKind::SecondaryMessage).times(2), 403),
        ("429 with Retry-After", Fault::new("/issues/comments", FaultKind::TooManyRequests { secs: 1 }), 429),
        ("primary exhaustion", Fault::new("/issues?", FaultKind::PrimaryExhausted { reset_in_secs: 2 }).skip(1), 403),
        ("500", Fault::new("/pulls", FaultKind::Status { status: 500 }).times(3), 500),
        ("502", Fault::new("/issues/comments", FaultKind::Status { status: 502 }).skip(2).times(2), 502),
        ("invalid JSON", Fault::new("/pulls", FaultKind::InvalidJson).skip(1).times(2), 200),
        ("slow answer past the timeout", Fault::new("/issues?", FaultKind::Slow { millis: 1_600 }), 0),
        ("dropped connection", Fault::new("/issues/comments", FaultKind::Disconnect).times(2), 0),
    ];
    let clean_sim = GithubSim::start(fixtures_with(small_repo()));
    assert!(run(crawl_command(&SweHarvest::new(), &clean_sim, 20)).status.success());
    let clean_total = clean_sim.stats().total;
    for (name, fault, status) in cases {
        eprintln!("case: {name}"); // shown with a failure in the crawl's assertions
        let timeout = [("SWE_HARVEST_GITHUB__REQUEST_TIMEOUT_SECS", "1")];
        let sim = crawl_small_repo_completely(|sim| sim.add_fault(fault), &timeout);
        let stats = sim.stats();
        if status != 0 && status != 200 {
            assert!(stats.status_total(status) >= 1, "{name}: the fault was served: {stats:?}");
        }
        assert!(stats.total > clean_total, "{name}: the fault cost a request: {stats:?}");
    }
}

#[test]
fn an_exhausted_token_is_rotated_out_without_waiting_for_its_reset() {
    let sim = crawl_small_repo_completely(
        // The first request exhausts the first token for an hour.
        |sim| sim.add_fault(Fault::new("/pulls", FaultKind::PrimaryExhausted { reset_in_secs: 3_600 })),
        &[("GITHUB_TOKENS", "tok-first,tok-second")],
    );
    let seen = sim.tokens_seen();
    assert_eq!(seen.get("tok-first"), Some(&1), "{seen:?}");
    assert!(seen.get("tok-second").copied().unwrap_or(0) > 5, "{seen:?}");
}

#[test]
fn a_token_running_low_is_swapped_for_a_fuller_one_before_it_runs_out() {
    let sim = crawl_small_repo_completely(
        |sim| sim.set_token_limit(12),
        &[("GITHUB_TOKENS", "tok-a, tok-b"), ("SWE_HARVEST_GITHUB__ROTATE_BELOW_REMAINING", "5")],
    );
    let stats = sim.stats();
    assert_eq!(stats.status_total(403), 0, "no request hit an exhausted token: {stats:?}");
    let seen = sim.tokens_seen();
    // tok-a is left with 4 requests (< 5) after its 8th; the rest goes to tok-b.
    assert_eq!(seen.get("tok-a"), Some(&8), "{seen:?}");
    assert_eq!(seen.get("tok-b").copied(), Some(stats.total - 8), "{seen:?}");
}

#[test]
fn a_crawl_resumes_where_it_stopped_when_the_api_root_moves() {
    let repo = small_repo();
    let expected = expected(&repo);
    let first = GithubSim::start(fixtures_with(repo.clone()));
    // Page 2 of the merged pulls keeps failing: the checkpoint stays on it.
    first.add_fault(Fault::new("/pulls", FaultKind::Status { status: 500 }).skip(1).times(1_000));
    let harvest = SweHarvest::new();
    let mut command = crawl_command(&harvest, &first, 20);
    command.env("SWE_HARVEST_GITHUB__MAX_RETRIES", "1");
    assert_eq!(run(command).status.code(), Some(1));
    drop(first);

    // The same API on another port (a restarted proxy, another GHES host name).
    let second = GithubSim::start(fixtures_with(repo));
    let output = run_within(crawl_command(&harvest, &second, 20), Duration::from_secs(60));
    assert!(output.status.success(), "{}", stderr(&output));
    assert_complete(&harvest, &expected);
    let store = open_store(&harvest);
    let stored: String = store
        .connection()
        .query_row("SELECT group_concat(cursor, ' ') FROM checkpoints", [], |row| row.get(0))
        .unwrap();
    assert!(!stored.contains("http://"), "checkpoints hold no API root: {stored}");
}

#[test]
fn failed_requests_are_recorded_reported_and_fetched_by_the_next_run() {
    let repo = small_repo();
    let expected = expected(&repo);
    let sim = GithubSim::start(fixtures_with(repo));
    // Comments page 2 keeps failing, issues page 1 keeps answering broken JSON.
    sim.add_fault(Fault::new("/issues/comments", FaultKind::Status { status: 500 }).skip(1).times(1_000));
    sim.add_fault(Fault::new("/issues?", FaultKind::InvalidJson).times(1_000));
    let harvest = SweHarvest::new();
    let mut command = crawl_command(&harvest, &sim, 20);
    command.env("SWE_HARVEST_GITHUB__MAX_RETRIES", "2");
    let output = run(command);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let error = stderr(&output);
    assert!(error.contains("2 requests failed for good"), "{error}");
    assert!(error.contains("/repos/acme/widgets/issues/comments?") && error.contains("HTTP 500"), "{error}");
    assert!(error.contains("/repos/acme/widgets/issues?") && error.contains("JSON"), "{error}");
    assert!(error.contains("hint: run the same crawl again"), "{error}");
    {
        let store = open_store(&harvest);
        assert_eq!(count(&store, "SELECT COUNT(*) FROM failed_requests"), 2);
        assert_eq!(count(&store, "SELECT COUNT(*) FROM pull_requests"), expected.merged, "the pulls were not held up");
    }

    sim.clear_faults();
    sim.reset_stats();
    run_ok(crawl_command(&harvest, &sim, 20));
    assert_complete(&harvest, &expected);
    let stats = sim.stats();
    assert_eq!(stats.endpoint_total("pulls"), 0, "the finished pulls listing was not fetched again: {stats:?}");
    assert_eq!(stats.count("issue_comments", 200), expected.comments.div_ceil(20) - 1, "comments resumed at page 2");
    assert!(stats.urls_fetched_twice().is_empty(), "{stats:?}");
}

#[test]
fn killed_at_any_point_and_restarted_the_crawl_ends_with_the_rows_of_a_clean_run() {
    let repo = generate(REPO, &GenerateSpec::new(80, 50, 150));
    let kill_points = [2, 7, 12, 13, 21, 30, 36];
    let killed =
        crawl_killed_at(repo, &kill_points, Duration::from_millis(25), |harvest, sim| crawl_command(harvest, sim, 10));
    let stats = killed.sim.stats();
    assert!(
        stats.count("pulls", 200) + stats.count("issues", 200) + stats.count("issue_comments", 200)
            <= killed.clean_requests + kill_points.len() as u64
    );
}

#[test]
fn a_second_crawl_fetches_only_what_changed() {
    let repo = small_repo();
    // Nothing changed: first pages only, the pulls answered 304.
    let (sim, harvest, stats) = crawled_twice(crawl_command);
    assert_eq!(stats.count("pulls", 304), 1, "{stats:?}");
    assert!(stats.total <= 3, "one request per listing: {stats:?}");
    assert!(stats.by_url.keys().all(|url| !url.contains("&page=")), "no page beyond the first: {stats:?}");
    // And again: now every listing is unchanged behind its ETag.
    sim.reset_stats();
    assert!(run(crawl_command(&harvest, &sim, 20)).status.success());
    assert_eq!(sim.stats().status_total(304), 3, "{:?}", sim.stats());
    assert_eq!(sim.stats().total, 3);

    // A new merged PR, an edited issue, a new comment.
    let now = chrono::Utc::now();
    let edited_issue = repo.issues[3]["number"].as_u64().unwrap();
    let new_number = 10_000;
    sim.update(|fixtures| {
        let repo = fixtures.repos.get_mut(REPO).unwrap();
        repo.pulls.push(new_fix(new_number, edited_issue, now));
        let issue = &mut repo.issues[3];
        issue["body"] = Value::String("Edited body".into());
        issue["updated_at"] = Value::String(now.format("%Y-%m-%dT%H:%M:%SZ").to_string());
        repo.comments.push(late_comment(999_999_999, edited_issue, now));
    });
    sim.reset_stats();
    run_ok(crawl_command(&harvest, &sim, 20));
    assert!(sim.stats().total <= 3, "{:?}", sim.stats());
    let store = open_store(&harvest);
    let slug = REPO.parse().unwrap();
    assert_fix_and_edit_stored(&store, new_number, edited_issue);
    let comments = swe_harvest::store::raw::comments(store.connection(), &slug, edited_issue).unwrap();
    assert!(comments.iter().any(|comment| comment.id == 999_999_999));
}

#[test]
fn since_and_until_bound_the_pull_requests_by_creation_date() {
    let repo = small_repo();
    let sim = GithubSim::start(fixtures_with(repo.clone()));
    let harvest = SweHarvest::new();
    let (since, until) = ("2020-01-02", "2020-01-05");
    let mut command = crawl_command(&harvest, &sim, 20);
    command.args(["--since", since, "--until", until]);
    run_ok(command);
    let in_window = |pull: &&Value| {
        let created = pull["created_at"].as_str().unwrap();
        created >= since && created < until
    };
    let expected: BTreeSet<u64> = repo
        .pulls
        .iter()
        .filter(in_window)
        .filter(|pull| !pull["merged_at"].is_null())
        .map(|pull| pull["number"].as_u64().unwrap())
        .collect();
    assert!(!expected.is_empty() && expected.len() < 60, "the window holds some PRs: {}", expected.len());
    let store = open_store(&harvest);
    let stored: BTreeSet<u64> = swe_harvest::store::raw::pull_requests(store.connection(), &REPO.parse().unwrap())
        .unwrap()
        .into_iter()
        .map(|pull| pull.number)
        .collect();
    assert_eq!(stored, expected);

    let bad = run({
        let mut command = crawl_command(&harvest, &sim, 20);
        command.args(["--since", until, "--until", since]);
        command
    });
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
}

#[test]
fn few_mentioned_issues_in_a_big_repository_are_fetched_one_by_one() {
    let repo = generate(REPO, &GenerateSpec { unmerged_pulls: 0, ..GenerateSpec::new(12, 800, 300) });
    // Which issues the PRs mention, read from the fixture bodies ("Fixes #N").
    let mentioned: BTreeSet<u64> = repo
        .pulls
        .iter()
        .filter_map(|pull| pull["body"].as_str()?.strip_prefix("Fixes #")?.split('.').next()?.parse().ok())
        .collect();
    assert!(!mentioned.is_empty());
    let expected_comments = repo
        .comments
        .iter()
        .filter(|comment| {
            let number: u64 = comment["issue_url"].as_str().unwrap().rsplit('/').next().unwrap().parse().unwrap();
            mentioned.contains(&number)
        })
        .count() as u64;
    let sim = GithubSim::start(fixtures_with(repo));
    let harvest = SweHarvest::new();
    run_ok(crawl_command(&harvest, &sim, 100));
    let stats = sim.stats();
    assert_eq!(stats.endpoint_total("issues"), 0, "no bulk issue listing: {stats:?}");
    assert_eq!(stats.endpoint_total("issue_comments"), 0, "no bulk comment listing: {stats:?}");
    assert_eq!(stats.count("issue", 200), mentioned.len() as u64);
    let store = open_store(&harvest);
    let stored: BTreeSet<u64> = {
        let mut statement = store.connection().prepare("SELECT number FROM issues").unwrap();
        statement.query_map([], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(stored, mentioned);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM issue_comments"), expected_comments);

    // Refreshing asks for nothing new.
    sim.reset_stats();
    assert!(run(crawl_command(&harvest, &sim, 100)).status.success());
    assert_eq!(sim.stats().endpoint_total("issue"), 0, "{:?}", sim.stats());
}

#[test]
fn the_token_appears_in_no_stored_row_log_line_or_error_message() {
    let repo = small_repo();
    let sim = GithubSim::start(fixtures_with(repo));
    // One request fails for good, so error messages are printed too.
    sim.add_fault(Fault::new("/issues/comments", FaultKind::Status { status: 502 }).times(1_000));
    sim.add_fault(Fault::new("/pulls", FaultKind::SecondaryRetryAfter { secs: 1 }));
    let harvest = SweHarvest::new();
    let mut command = crawl_command(&harvest, &sim, 20);
    command.env("SWE_HARVEST_GITHUB__MAX_RETRIES", "1").env("RUST_LOG", "trace").arg("-vv");
    let output = run(command);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(sim.tokens_seen().contains_key(TOKEN), "the token was sent to the API");
    let logs = stderr(&output);
    assert!(logs.contains("TRACE") || logs.contains("DEBUG"), "verbose logs were captured");
    assert!(!logs.contains(TOKEN), "the token is in the logs");
    assert!(!String::from_utf8_lossy(&output.stdout).contains(TOKEN));

    let store = open_store(&harvest);
    let tables: Vec<String> = {
        let mut statement = store.connection().prepare("SELECT name FROM sqlite_master WHERE type = 'table'").unwrap();
        statement.query_map([], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
    };
    assert!(tables.len() >= 5);
    let mut cells = 0;
    for table in tables {
        let mut statement = store.connection().prepare(&format!("SELECT * FROM \"{table}\"")).unwrap();
        let columns = statement.column_count();
        let mut rows = statement.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            for column in 0..columns {
                let text = match row.get_ref(column).unwrap() {
                    rusqlite::types::ValueRef::Text(text) | rusqlite::types::ValueRef::Blob(text) => {
                        String::from_utf8_lossy(text).into_owned()
                    }
                    other => format!("{other:?}"),
                };
                cells += 1;
                assert!(!text.contains(TOKEN), "the token is stored in table {table}");
            }
        }
    }
    assert!(cells > 100, "the store was searched: {cells} cells");
    // The whole file too (WAL included), in case of a table this test does not know.
    for entry in fs_err::read_dir(&harvest.data_dir).unwrap() {
        let bytes = fs_err::read(entry.unwrap().path()).unwrap();
        assert!(!bytes.windows(TOKEN.len()).any(|window| window == TOKEN.as_bytes()));
    }
}

#[test]
fn api_url_flag_beats_the_environment_variable() {
    let repo = small_repo();
    let sim = GithubSim::start(fixtures_with(repo));
    let harvest = SweHarvest::new();
    let mut command = crawl_command(&harvest, &sim, 100);
    // A dead address in the environment; the flag wins.
    command.env("SWE_HARVEST_API_URL", "http://127.0.0.1:9");
    run_ok(command);
    assert!(sim.stats().total > 0);

    // The environment variable alone is used.
    let other = SweHarvest::new();
    let mut command = other.command();
    command.env("GITHUB_TOKEN", TOKEN).env("SWE_HARVEST_API_URL", sim.url()).args(["crawl", "--repo", REPO]);
    let before = sim.stats().total;
    run_ok(command);
    assert!(sim.stats().total > before);
}

#[test]
fn without_a_token_the_crawl_warns_once_and_goes_on() {
    let sim = GithubSim::start(fixtures_with(generate(REPO, &GenerateSpec::new(5, 5, 5))));
    let harvest = SweHarvest::new();
    let mut command = crawl_command(&harvest, &sim, 100);
    command.env_remove("GITHUB_TOKEN");
    let output = run_ok(command);
    assert_eq!(stderr(&output).matches("no GITHUB_TOKEN").count(), 1, "{}", stderr(&output));
    assert_eq!(sim.tokens_seen().keys().collect::<Vec<_>>(), vec!["anonymous"]);
}

#[test]
fn fixture_objects_fit_octocrab_models() {
    let generated = generate(REPO, &GenerateSpec::new(20, 10, 30));
    let on_disk = Fixtures::load(&crate::support::project_root().join("tests/fixtures/github")).unwrap();
    let demo = &on_disk.repos["acme/demo"];
    for repo in [&generated, demo] {
        for pull in &repo.pulls {
            serde_json::from_value::<octocrab::models::pulls::PullRequest>(pull.clone()).unwrap();
            let entry = data::pull_request_as_issue(REPO, pull);
            let issue = serde_json::from_value::<octocrab::models::issues::Issue>(entry).unwrap();
            assert!(issue.pull_request.is_some());
        }
        for issue in &repo.issues {
            let issue = serde_json::from_value::<octocrab::models::issues::Issue>(issue.clone()).unwrap();
            assert!(issue.pull_request.is_none());
        }
        for comment in &repo.comments {
            serde_json::from_value::<octocrab::models::issues::Comment>(comment.clone()).unwrap();
        }
    }
    assert_eq!(on_disk.search_repositories.len(), 4);
    for repository in &on_disk.search_repositories {
        serde_json::from_value::<octocrab::models::Repository>(repository.clone()).unwrap();
    }
}

#[test]
fn crawl_of_the_fixture_folder_stores_what_the_files_hold() {
    let fixtures = Fixtures::load(&crate::support::project_root().join("tests/fixtures/github")).unwrap();
    let demo = fixtures.repos["acme/demo"].clone();
    let sim = GithubSim::start(fixtures);
    let harvest = SweHarvest::new();
    // acme/widgets is not in the folder: its failure must not stop acme/demo.
    let mut command = crawl_command(&harvest, &sim, 5);
    command.args(["--repo", "acme/demo"]);
    let output = run(command);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let error = stderr(&output);
    assert!(error.contains("/repos/acme/widgets/pulls") && error.contains("HTTP 404"), "{error}");
    let store = open_store(&harvest);
    let expected = expected(&demo);
    let counted = |sql: &str| count(&store, &sql.replace("REPO", "'acme/demo'"));
    assert_eq!(counted("SELECT COUNT(*) FROM pull_requests WHERE repo = REPO"), expected.merged);
    assert_eq!(counted("SELECT COUNT(*) FROM issues WHERE repo = REPO"), expected.issues);
    assert_eq!(counted("SELECT COUNT(*) FROM issue_comments WHERE repo = REPO"), expected.comments);
}

/// Records the progress messages the client sends.
#[derive(Default)]
struct RecordingReporter {
    messages: std::sync::Mutex<Vec<String>>,
}

impl swe_harvest::progress::Reporter for RecordingReporter {
    fn message(&self, message: &str) {
        self.messages.lock().unwrap().push(message.to_string());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_wait_is_shown_as_a_countdown_then_the_request_succeeds() {
    use std::sync::Arc;
    use swe_harvest::github::{ClientSettings, Fetched, GithubClient};

    let sim = GithubSim::start(fixtures_with(small_repo()));
    sim.add_fault(Fault::new("/pulls", FaultKind::PrimaryExhausted { reset_in_secs: 3 }));
    let config = swe_harvest::github::GithubConfig {
        api_url: sim.url().to_string(),
        ..swe_harvest::github::GithubConfig::default()
    };
    let reporter = Arc::new(RecordingReporter::default());
    let client = GithubClient::new(
        ClientSettings::from_config(&config, vec![swe_harvest::secret::Secret::new(TOKEN)]),
        reporter.clone(),
    )
    .unwrap();
    let url = client.url("/repos/acme/widgets/pulls", &[("state", "closed".into())]);
    let started = Instant::now();
    let fetched = client.get_json::<Vec<octocrab::models::pulls::PullRequest>>(&url, None).await.unwrap();
    assert!(matches!(fetched, Fetched::Fresh { ref value, .. } if !value.is_empty()));
    assert!(started.elapsed() >= Duration::from_secs(1), "it waited for the reset");
    let messages = reporter.messages.lock().unwrap().clone();
    let countdown: Vec<&String> = messages.iter().filter(|message| message.contains("resuming in")).collect();
    assert!(countdown.len() >= 2, "{messages:?}");
    assert!(countdown.windows(2).all(|pair| pair[0] != pair[1]), "the countdown counts down: {messages:?}");
    assert!(messages.last().unwrap().contains("resumed"), "{messages:?}");
    assert_eq!(client.stats().retries, 0, "waiting for a reset is not a retry");
    assert_eq!(sim.stats().count("pulls", 403), 1);
}

// ---- GraphQL (`--api graphql`).

/// The closing references the GraphQL crawl stored: (pull, issue) pairs.
fn closing_references(harvest: &SweHarvest) -> BTreeSet<(u64, u64)> {
    let store = open_store(harvest);
    let mut statement = store
        .connection()
        .prepare("SELECT pull_number, issue_number FROM pull_request_references WHERE source = 'closing'")
        .unwrap();
    statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?))).unwrap().map(Result::unwrap).collect()
}

/// Issue numbers a generated PR body closes (`Fixes #N...`).
fn fixed_issue(pull: &Value) -> Option<u64> {
    let rest = pull["body"].as_str()?.strip_prefix("Fixes #")?;
    rest[..rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len())].parse().ok()
}

/// The numbers that `#N` names in a merged PR's title, body and commit messages.
fn mentions(pull: &Value) -> BTreeSet<u64> {
    let pattern = regex::Regex::new(r"(?:^|[\s(])#(\d+)\b").unwrap();
    let mut texts = vec![pull["title"].as_str().unwrap_or_default(), pull["body"].as_str().unwrap_or_default()];
    texts.extend(pull["_commit_messages"].as_array().into_iter().flatten().filter_map(Value::as_str));
    texts.iter().flat_map(|text| pattern.captures_iter(text).map(|captures| captures[1].parse().unwrap())).collect()
}

fn merged_pulls(repo: &SimRepo) -> impl Iterator<Item = &Value> {
    repo.pulls.iter().filter(|pull| !pull["merged_at"].is_null())
}

/// What the GraphQL crawl asks for by number: every number merged PRs mention, less
/// the merged PRs (issues, closed-unmerged PRs, numbers that resolve to nothing).
fn referred_numbers(repo: &SimRepo) -> BTreeSet<u64> {
    let merged: BTreeSet<u64> = merged_pulls(repo).filter_map(|pull| pull["number"].as_u64()).collect();
    merged_pulls(repo).flat_map(mentions).filter(|number| !merged.contains(number)).collect()
}

/// The issues among [`referred_numbers`]: what the GraphQL crawl stores.
fn referenced_issues(repo: &SimRepo) -> BTreeSet<u64> {
    let issues: BTreeSet<u64> = repo.issues.iter().filter_map(|issue| issue["number"].as_u64()).collect();
    referred_numbers(repo).intersection(&issues).copied().collect()
}

fn comment_issue(comment: &Value) -> u64 {
    comment["issue_url"].as_str().unwrap().rsplit('/').next().unwrap().parse().unwrap()
}

fn stored_issue_numbers(store: &Store) -> BTreeSet<u64> {
    let mut statement = store.connection().prepare("SELECT number FROM issues").unwrap();
    statement.query_map([], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
}

/// The crawl stage of the funnel that `status` prints.
fn crawl_funnel(harvest: &SweHarvest) -> swe_harvest::store::StageFunnel {
    let report = open_store(harvest).funnel(&[]).unwrap();
    report.total.into_iter().find(|stage| stage.stage == swe_harvest::model::Stage::Crawl).expect("a crawl funnel")
}

/// A GraphQL crawl of `repo` is complete: every merged PR, exactly the issues merged
/// PRs refer to with all their comments, the unmerged PRs counted in the funnel.
fn assert_graphql_complete(harvest: &SweHarvest, repo: &SimRepo) {
    let expected = expected(repo);
    let referenced = referenced_issues(repo);
    let store = open_store(harvest);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM pull_requests WHERE merged"), expected.merged, "merged PRs");
    assert_eq!(count(&store, "SELECT COUNT(*) FROM pull_requests WHERE NOT merged"), 0, "unmerged PRs are not stored");
    assert_eq!(stored_issue_numbers(&store), referenced, "the issues merged PRs refer to, and no other");
    let comments = repo.comments.iter().filter(|comment| referenced.contains(&comment_issue(comment))).count();
    assert_eq!(count(&store, "SELECT COUNT(*) FROM issue_comments"), comments as u64, "their comments");
    let funnel = crawl_funnel(harvest);
    assert_eq!((funnel.passed, funnel.dropped), (expected.merged, expected.unmerged), "{funnel:?}");
    assert_eq!(funnel.reasons.get("not_merged"), Some(&expected.unmerged).filter(|count| **count > 0));
    assert_eq!(count(&store, "SELECT COUNT(*) FROM failed_requests"), 0, "nothing is missing");
}

/// Rows of one SQL query, sorted.
fn rows(harvest: &SweHarvest, sql: &str) -> Vec<String> {
    let store = open_store(harvest);
    let mut statement = store.connection().prepare(sql).unwrap();
    let mut rows: Vec<String> =
        statement.query_map([], |row| row.get::<_, String>(0)).unwrap().map(Result::unwrap).collect();
    rows.sort();
    rows
}

/// What extract and status read, from REST's store and GraphQL's: the same merged
/// PRs, the same rows for the issues merged PRs refer to and their comments, the same
/// funnel; GraphQL's crawl items are REST's (the merged PRs and the referenced
/// closed-unmerged ones; the other unmerged ones are counted).
fn assert_same_as_rest(graphql: &SweHarvest, rest: &SweHarvest, referenced: &BTreeSet<u64>) {
    let pulls = "SELECT repo || ' ' || number || ' ' || merged || ' ' || data FROM pull_requests";
    assert_eq!(rows(graphql, pulls), rows(rest, pulls), "merged PRs");
    let numbers = referenced.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    let issues = format!("SELECT repo || ' ' || number || ' ' || data FROM issues WHERE number IN ({numbers})");
    assert_eq!(rows(graphql, &issues), rows(rest, &issues), "referenced issues");
    let comments = format!(
        "SELECT repo || ' ' || id || ' ' || issue_number || ' ' || data FROM issue_comments WHERE issue_number IN ({numbers})"
    );
    assert_eq!(rows(graphql, &comments), rows(rest, &comments), "their comments");
    let funnel = |harvest: &SweHarvest| serde_json::to_value(open_store(harvest).funnel(&[]).unwrap()).unwrap();
    assert_eq!(funnel(graphql), funnel(rest), "the funnel");
    let items = "SELECT stage || ' ' || repo || ' ' || item || ' ' || outcome || ' ' || COALESCE(reason, '') || ' ' \
                 || COALESCE(detail, '') FROM stage_items";
    let rest_items: BTreeSet<String> = rows(rest, items).into_iter().collect();
    let missing: Vec<String> = rows(graphql, items).into_iter().filter(|row| !rest_items.contains(row)).collect();
    assert!(missing.is_empty(), "crawl items REST does not have: {missing:?}");
}

#[test]
fn graphql_stores_what_extract_reads_as_rest_does_in_a_quarter_of_the_requests() {
    // The shape of real histories: 0.75 closed-unmerged PRs and 1.5 issues per merged
    // PR, most issues referenced by no merged PR.
    let repo = generate(REPO, &GenerateSpec::real_shape(300));
    let expected = expected(&repo);
    let referenced = referenced_issues(&repo);
    assert!(referenced.len() * 2 < repo.issues.len(), "most issues are referenced by no merged PR");
    let rest_sim = GithubSim::start(fixtures_with(repo.clone()));
    let rest = SweHarvest::new();
    run_ok(crawl_command(&rest, &rest_sim, 100));

    let sim = GithubSim::start(fixtures_with(repo.clone()));
    let graphql = SweHarvest::new();
    let output = run_ok(graphql_command(&graphql, &sim, 100));
    assert_graphql_complete(&graphql, &repo);
    assert_same_as_rest(&graphql, &rest, &referenced);
    // A closed-unmerged PR that a merged PR names is listed, so extract knows it is no issue.
    let continued: BTreeSet<u64> = referred_numbers(&repo)
        .into_iter()
        .filter(|number| repo.pulls.iter().any(|pull| pull["number"].as_u64() == Some(*number)))
        .collect();
    assert!(!continued.is_empty(), "some merged PRs continue closed-unmerged ones");
    let listed: BTreeSet<u64> = rows(&graphql, "SELECT item FROM stage_items WHERE reason = 'not_merged'")
        .iter()
        .map(|item| item.parse().unwrap())
        .collect();
    assert_eq!(listed, continued);

    // One query per 100 merged PRs and per 100 numbers that merged PRs refer to.
    let stats = sim.stats();
    let pull_pages = expected.merged.div_ceil(100);
    let by_number = (referred_numbers(&repo).len() as u64).div_ceil(100);
    assert_eq!(stats.by_operation.get("PullRequests"), Some(&pull_pages), "{stats:?}");
    assert_eq!(stats.by_operation.get("IssuesByNumber"), Some(&by_number), "{stats:?}");
    assert_eq!(stats.total, pull_pages + by_number, "nothing else: {stats:?}");
    assert_eq!(stats.endpoint_total("graphql"), stats.total, "no REST request: {stats:?}");
    let rest_requests = rest_sim.stats().total;
    assert!(stats.total * 1000 / expected.merged <= 25, "{} requests for {} merged PRs", stats.total, expected.merged);
    assert!(stats.total * 4 <= rest_requests, "GraphQL {} requests, REST {rest_requests}", stats.total);
    // 3 points a page of PRs (labels, references, commits of 100 PRs), 2 per 100
    // numbers (labels, comments); a point per 100 connections GitHub assumes full.
    let referred = referred_numbers(&repo).len() as u64;
    let batch_points = |size: u64| ((size * 2) as f64 / 100.0).round().max(1.0) as u64;
    let by_number_points = (referred / 100) * 2 + if referred % 100 > 0 { batch_points(referred % 100) } else { 0 };
    assert_eq!(stats.points, pull_pages * 3 + by_number_points, "{stats:?}");
    let summary = stderr(&output);
    assert!(summary.contains("through the graphql API") && summary.contains("GraphQL points"), "{summary}");
    assert!(summary.contains(&format!("GitHub counts {} closed unmerged", expected.unmerged)), "{summary}");

    // GitHub's closing references: the simulator links `Fixes #N` of the body.
    let expected_references: BTreeSet<(u64, u64)> =
        merged_pulls(&repo).filter_map(|pull| Some((pull["number"].as_u64()?, fixed_issue(pull)?))).collect();
    assert!(expected_references.len() > 100);
    assert_eq!(closing_references(&graphql), expected_references);
}

#[test]
fn graphql_is_the_default_with_a_token_and_finds_the_enterprise_endpoint_under_api() {
    let sim = GithubSim::start(fixtures_with(generate(REPO, &GenerateSpec::new(30, 20, 40))));
    let harvest = SweHarvest::new();
    // GitHub Enterprise: REST under /api/v3, GraphQL under /api/graphql.
    let mut command = harvest.command();
    command.env("GITHUB_TOKEN", TOKEN).args(["crawl", "--repo", REPO, "--api-url", &format!("{}/api/v3", sim.url())]);
    run_ok(command);
    let stats = sim.stats();
    assert!(stats.endpoint_total("graphql") > 0, "{stats:?}");
    assert!(stats.by_url.keys().all(|url| url.starts_with("/api/graphql#")), "{stats:?}");

    // Without a token: REST, since GitHub refuses anonymous GraphQL.
    sim.reset_stats();
    let anonymous = SweHarvest::new();
    let mut command = anonymous.command();
    command.args(["crawl", "--repo", REPO, "--api-url", sim.url()]);
    let output = run_ok(command);
    assert_eq!(sim.stats().endpoint_total("graphql"), 0, "{:?}", sim.stats());
    assert!(stderr(&output).contains("through the rest API"), "{}", stderr(&output));
}

#[test]
fn graphql_recovers_from_every_fault_kind_and_waits_out_its_points() {
    let repo = small_repo();
    let cases: Vec<(&str, Fault, u16)> = vec![
        (
            "secondary limit with Retry-After",
            Fault::new("/graphql#PullRequests", FaultKind::SecondaryRetryAfter { secs: 1 }).skip(1),
            403,
        ),
        ("secondary limit message", Fault::new("/graphql#IssuesByNumber", FaultKind::SecondaryMessage).times(2), 403),
        ("502", Fault::new("/graphql#IssuesByNumber", FaultKind::Status { status: 502 }).times(2), 502),
        (
            "points used up (RATE_LIMITED in a 200)",
            Fault::new("/graphql#PullRequests", FaultKind::GraphqlRateLimited { reset_in_secs: 2 }).skip(1),
            200,
        ),
        (
            "primary exhaustion (403)",
            Fault::new("/graphql#IssuesByNumber", FaultKind::PrimaryExhausted { reset_in_secs: 2 }),
            403,
        ),
        (
            "errors in a 200 body, no data",
            Fault::new(
                "/graphql#IssuesByNumber",
                FaultKind::GraphqlErrors {
                    kind: "INTERNAL".into(),
                    message: "Something went wrong while executing your query.".into(),
                },
            )
            .times(2),
            200,
        ),
        ("invalid JSON", Fault::new("/graphql#PullRequests", FaultKind::InvalidJson), 200),
        ("dropped connection", Fault::new("/graphql", FaultKind::Disconnect).skip(2).times(2), 0),
    ];
    let clean_sim = GithubSim::start(fixtures_with(repo.clone()));
    assert!(run(graphql_command(&SweHarvest::new(), &clean_sim, 20)).status.success());
    let clean_total = clean_sim.stats().total;
    for (name, fault, status) in cases {
        let sim = GithubSim::start(fixtures_with(repo.clone()));
        sim.add_fault(fault);
        let harvest = SweHarvest::new();
        let started = Instant::now();
        let output = run_within(graphql_command(&harvest, &sim, 20), Duration::from_secs(60));
        assert!(output.status.success(), "{name}: {}", stderr(&output));
        assert_graphql_complete(&harvest, &repo);
        let stats = sim.stats();
        if status != 0 {
            assert!(stats.status_total(status) >= 1, "{name}: the fault was served: {stats:?}");
        }
        assert!(stats.total > clean_total, "{name}: the fault cost a request: {stats:?}");
        if name.starts_with("points") {
            assert!(started.elapsed() >= Duration::from_secs(1), "{name}: it waited for the reset");
            assert_eq!(stats.status_total(403), 0, "{name}");
        }
    }
}

#[test]
fn graphql_query_too_large_or_timing_out_is_asked_again_with_fewer_items() {
    let repo = generate(REPO, &GenerateSpec::real_shape(200));
    let referred = referred_numbers(&repo).len() as u64;
    // A page of 100 PRs (with labels, closing references and commits) may return
    // 14,600 nodes, of 50 7,300; 100 issues by number (labels, comments) 12,000, 50 6,000.
    assert!(referred > 84, "a batch of 100 numbers is too large: {referred}");
    for (name, configure) in [
        ("node limit", Box::new(|sim: &GithubSim| sim.set_graphql_node_limit(10_000)) as Box<dyn Fn(&GithubSim)>),
        ("timeout", Box::new(|sim: &GithubSim| sim.set_graphql_timeout_above_nodes(10_000))),
    ] {
        let sim = GithubSim::start(fixtures_with(repo.clone()));
        configure(&sim);
        let harvest = SweHarvest::new();
        let output = run_within(graphql_command(&harvest, &sim, 100), Duration::from_secs(60));
        assert!(output.status.success(), "{name}: {}", stderr(&output));
        assert!(stderr(&output).contains("asking for 50 items per page"), "{name}: {}", stderr(&output));
        assert!(stderr(&output).contains("asking for 50 issues per query"), "{name}: {}", stderr(&output));
        assert_graphql_complete(&harvest, &repo);
        let stats = sim.stats();
        // Each first query failed, then pages of 50: 200 merged PRs, the referred numbers.
        assert_eq!(stats.by_operation.get("PullRequests"), Some(&4), "{name}: {stats:?}");
        assert_eq!(stats.by_operation.get("IssuesByNumber"), Some(&referred.div_ceil(50)), "{name}: {stats:?}");
        assert_eq!(stats.total, 2 + 4 + referred.div_ceil(50), "{name}: {stats:?}");
    }
}

#[test]
fn graphql_crawl_killed_at_any_point_resumes_without_duplicates() {
    let repo = generate(REPO, &GenerateSpec::real_shape(80));
    let kill_points = [1, 3, 6, 9, 10, 12];
    let killed = crawl_killed_at(repo, &kill_points, Duration::from_millis(40), |harvest, sim| {
        let mut command = graphql_command(harvest, sim, 10);
        command.env("SWE_HARVEST_CRAWL__GRAPHQL_ISSUES_PER_QUERY", "10");
        command
    });
    assert_eq!(closing_references(&killed.harvest), closing_references(&killed.clean));
    let stats = killed.sim.stats();
    assert!(stats.count("graphql", 200) <= killed.clean_requests + kill_points.len() as u64, "{stats:?}");
}

#[test]
fn a_graphql_refresh_costs_a_handful_of_points_and_fetches_only_what_changed() {
    let repo = small_repo();
    let (sim, harvest, stats) = crawled_twice(graphql_command);
    assert_eq!(stats.total, 2, "one query for PRs, one for issues updated since: {stats:?}");
    assert!(stats.points <= 5, "{stats:?}");

    // Since the last pass: a new merged PR fixes an issue that was edited and
    // commented; an issue an older PR refers to got a comment; an issue no merged PR
    // refers to got one too.
    let now = chrono::Utc::now();
    let referenced = referenced_issues(&repo);
    let unreferenced: Vec<u64> = repo
        .issues
        .iter()
        .filter_map(|issue| issue["number"].as_u64())
        .filter(|number| !referenced.contains(number))
        .collect();
    let edited_issue = *referenced.iter().next().unwrap();
    let commented_issue = *referenced.iter().nth(1).unwrap();
    let ignored_issue = unreferenced[0];
    let new_number = 10_000;
    let stamp = Value::String(now.format("%Y-%m-%dT%H:%M:%SZ").to_string());
    sim.update(|fixtures| {
        let repo = fixtures.repos.get_mut(REPO).unwrap();
        repo.pulls.push(new_fix(new_number, edited_issue, now));
        for (number, id) in [(edited_issue, 999_999_991), (commented_issue, 999_999_992), (ignored_issue, 999_999_993)]
        {
            let issue = repo.issues.iter_mut().find(|issue| issue["number"].as_u64() == Some(number)).unwrap();
            if number == edited_issue {
                issue["body"] = Value::String("Edited body".into());
            }
            // A new comment updates its issue, as on GitHub.
            issue["updated_at"] = stamp.clone();
            repo.comments.push(late_comment(id, number, now));
        }
    });
    sim.reset_stats();
    run_ok(graphql_command(&harvest, &sim, 20));
    let stats = sim.stats();
    assert_eq!(stats.total, 2, "{stats:?}");
    let store = open_store(&harvest);
    let slug = REPO.parse().unwrap();
    assert_fix_and_edit_stored(&store, new_number, edited_issue);
    let comment_ids = |number| -> Vec<u64> {
        swe_harvest::store::raw::comments(store.connection(), &slug, number).unwrap().iter().map(|c| c.id).collect()
    };
    assert!(comment_ids(edited_issue).contains(&999_999_991));
    assert!(comment_ids(commented_issue).contains(&999_999_992), "a referenced issue's new comment is fetched");
    assert!(
        swe_harvest::store::raw::issue(store.connection(), &slug, ignored_issue).unwrap().is_none(),
        "an issue no merged PR refers to is not stored"
    );
    assert!(closing_references(&harvest).contains(&(new_number, edited_issue)));
}

#[test]
fn graphql_fetches_few_mentioned_issues_by_number_in_batches_and_uses_partial_answers() {
    let mut repo = generate(REPO, &GenerateSpec { unmerged_pulls: 0, ..GenerateSpec::new(12, 800, 300) });
    // A PR mentions an issue that does not exist: GitHub answers NOT_FOUND beside the data.
    repo.pulls[0]["body"] = Value::String("See #99999 and #1.".into());
    let mut mentioned: BTreeSet<u64> = repo.pulls.iter().filter_map(fixed_issue).collect();
    mentioned.insert(1);
    let issue_numbers: BTreeSet<u64> = repo.issues.iter().filter_map(|issue| issue["number"].as_u64()).collect();
    mentioned.retain(|number| issue_numbers.contains(number));
    // One issue has more comments than one page: they are fetched on.
    let busy = *mentioned.iter().next().unwrap();
    add_long_thread(&mut repo, busy, 130, 1);
    let expected_comments =
        repo.comments.iter().filter(|comment| mentioned.contains(&comment_issue(comment))).count() as u64;
    let sim = GithubSim::start(fixtures_with(repo));
    let harvest = SweHarvest::new();
    let mut command = graphql_command(&harvest, &sim, 100);
    command.env("SWE_HARVEST_CRAWL__GRAPHQL_ISSUES_PER_QUERY", "4");
    run_ok(command);
    let stats = sim.stats();
    assert_eq!(stats.by_operation.get("Issues"), None, "no listing of issues: {stats:?}");
    let referred = mentioned.len() as u64 + 1; // and 99999
    assert_eq!(stats.by_operation.get("IssuesByNumber"), Some(&referred.div_ceil(4)), "{stats:?}");
    assert_eq!(stats.by_operation.get("IssueComments"), Some(&1), "the busy issue's second page: {stats:?}");
    let store = open_store(&harvest);
    assert_eq!(stored_issue_numbers(&store), mentioned);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM issue_comments"), expected_comments);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM failed_requests"), 0, "a partial answer is no failure");

    sim.reset_stats();
    assert!(run(graphql_command(&harvest, &sim, 100)).status.success());
    assert_eq!(sim.stats().by_operation.get("IssuesByNumber"), None, "{:?}", sim.stats());
}

#[test]
fn the_token_appears_in_no_graphql_log_line_or_stored_row() {
    let sim = GithubSim::start(fixtures_with(small_repo()));
    sim.add_fault(Fault::new("/graphql#IssuesByNumber", FaultKind::Status { status: 502 }).times(1_000));
    let harvest = SweHarvest::new();
    let mut command = graphql_command(&harvest, &sim, 20);
    command.env("SWE_HARVEST_GITHUB__MAX_RETRIES", "1").env("RUST_LOG", "trace").arg("-vv");
    let output = run(command);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let logs = stderr(&output);
    assert!(logs.contains("IssuesByNumber") && logs.contains("HTTP 502"), "{logs}");
    assert!(!logs.contains(TOKEN) && !String::from_utf8_lossy(&output.stdout).contains(TOKEN));
    for entry in fs_err::read_dir(&harvest.data_dir).unwrap() {
        let bytes = fs_err::read(entry.unwrap().path()).unwrap();
        assert!(!bytes.windows(TOKEN.len()).any(|window| window == TOKEN.as_bytes()));
    }
    // The failed page is fetched by the next run.
    sim.clear_faults();
    run_ok(graphql_command(&harvest, &sim, 20));
    assert_graphql_complete(&harvest, &small_repo());
}

#[test]
fn graphql_counts_the_unmerged_prs_of_the_window_as_rest_lists_them() {
    let repo = generate(REPO, &GenerateSpec::real_shape(120));
    let window = ["--since", "2020-01-05", "--until", "2020-01-12"];
    let sim = GithubSim::start(fixtures_with(repo.clone()));
    let (rest, graphql) = (SweHarvest::new(), SweHarvest::new());
    for mut command in [crawl_command(&rest, &sim, 100), graphql_command(&graphql, &sim, 100)] {
        command.args(window);
        run_ok(command);
    }
    let in_window = |pull: &&Value| {
        let created = pull["created_at"].as_str().unwrap();
        ("2020-01-05".."2020-01-12").contains(&created)
    };
    let unmerged = repo.pulls.iter().filter(in_window).filter(|pull| pull["merged_at"].is_null()).count() as u64;
    let merged = repo.pulls.iter().filter(in_window).filter(|pull| !pull["merged_at"].is_null()).count() as u64;
    assert!(unmerged > 10 && merged > 10 && merged < 120, "the window holds some PRs: {merged} merged, {unmerged} not");
    let funnel = crawl_funnel(&graphql);
    assert_eq!((funnel.passed, funnel.dropped), (merged, unmerged), "{funnel:?}");
    assert_eq!(
        serde_json::to_value(open_store(&graphql).funnel(&[]).unwrap()).unwrap(),
        serde_json::to_value(open_store(&rest).funnel(&[]).unwrap()).unwrap(),
        "the same funnel as REST's"
    );
    let pulls = "SELECT repo || ' ' || number || ' ' || data FROM pull_requests";
    assert_eq!(rows(&graphql, pulls), rows(&rest, pulls));
}

#[test]
fn every_graphql_query_the_crawler_sends_is_one_githubs_schema_accepts() {
    if !GithubSchema::shared_path().exists() {
        eprintln!(
            "SKIPPED: GitHub's GraphQL schema is not at {} (the shared data folder); its queries were not validated",
            GithubSchema::shared_path().display()
        );
        return;
    }
    // Every operation and every variant: the first page's count of unmerged PRs by
    // `totalCount` (no window) and by `search` (a window), later pages, the refresh
    // listing, numbers that are issues, closed PRs or nothing, long comment threads.
    let mut repo = generate(REPO, &GenerateSpec::real_shape(150));
    repo.pulls[0]["body"] = Value::String("See #99999.".into());
    let busy = *referenced_issues(&repo).iter().next().unwrap();
    add_long_thread(&mut repo, busy, 120, 0);
    let sim = GithubSim::start(fixtures_with(repo.clone()));
    for window in [&[][..], &["--since", "2020-01-03", "--until", "2020-01-20"][..]] {
        let harvest = SweHarvest::new();
        for _pass in 0..2 {
            let output = run({
                let mut command = graphql_command(&harvest, &sim, 50);
                command.args(window);
                command
            });
            assert!(output.status.success(), "{}", stderr(&output));
        }
        if window.is_empty() {
            assert_graphql_complete(&harvest, &repo);
        }
    }
    let stats = sim.stats();
    assert_eq!(stats.refused, Vec::<String>::new(), "GitHub would refuse these queries");
    assert_eq!(stats.schema_checked, stats.endpoint_total("graphql"), "every query was checked: {stats:?}");
    for operation in swe_harvest::crawl::GRAPHQL_OPERATIONS {
        assert!(stats.by_operation.get(operation).is_some_and(|count| *count > 0), "{operation} was sent: {stats:?}");
    }
    let first_pages = |variable: &str| stats.by_url.keys().filter(|url| url.contains(variable)).count();
    assert!(first_pages("unmergedQuery") >= 1, "the window's count was searched: {stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulator_refuses_what_github_refuses() {
    let sim = GithubSim::start(fixtures_with(small_repo()));
    let settings = swe_harvest::github::ClientSettings::from_config(
        &swe_harvest::github::GithubConfig {
            api_url: sim.url().to_string(),
            max_retries: 0,
            ..swe_harvest::github::GithubConfig::default()
        },
        vec![swe_harvest::secret::Secret::new(TOKEN)],
    );
    let client =
        swe_harvest::github::GithubClient::new(settings, std::sync::Arc::new(swe_harvest::progress::NoReporter))
            .unwrap();
    let ask = |query: &'static str| {
        let client = &client;
        async move {
            client.graphql::<Value>("Probe", query, &serde_json::json!({"owner": "acme", "name": "widgets"})).await
        }
    };
    // A connection listed without `first` or `last`: GitHub's own rule, schema or not.
    let unbounded = "query Probe($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { \
                     issues { nodes { number } } } }";
    let error = ask(unbounded).await.unwrap_err().to_string();
    assert!(error.contains("must provide a `first` or `last` value"), "{error}");
    let bounded = "query Probe($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { \
                   issues(first: 3) { nodes { number } } } }";
    assert!(ask(bounded).await.is_ok());
    if !GithubSchema::shared_path().exists() {
        eprintln!("SKIPPED (in part): GitHub's GraphQL schema is absent; a field GitHub lacks was not tried");
        return;
    }
    let unknown_field = "query Probe($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { \
                         issues(first: 3) { nodes { number mergedAt } } } }";
    let error = ask(unknown_field).await.unwrap_err().to_string();
    assert!(error.contains("mergedAt"), "{error}");
    let undeclared = "query Probe { repository(owner: $owner, name: \"widgets\") { name } }";
    assert!(ask(undeclared).await.is_err());
    let refused = sim.stats().refused;
    assert_eq!(refused.len(), 3, "{refused:?}");
    assert!(refused.iter().all(|why| why.starts_with("Probe: ")), "{refused:?}");
}

/// Two of the demo's repositories (real git history), their GitHub side served by
/// the simulator: crawled through REST and through GraphQL, mirrored, extracted.
#[test]
fn graphql_and_rest_crawls_give_the_same_candidates() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("demo");
    let output = Command::new(env!("CARGO_BIN_EXE_demo-fixtures")).arg(&root).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let sim = GithubSim::start(Fixtures::load(&root.join("fixtures")).unwrap());
    let repos = ["demo-org/calculator", "demo-org/textkit"];
    let candidates = |api: &str, use_api_closing_references: bool| {
        let harvest = SweHarvest::new();
        let mut command = harvest.command();
        command.env("GITHUB_TOKEN", TOKEN).args(["crawl", "--api-url", sim.url(), "--api", api, "--repo"]).args(repos);
        let output = run(command);
        assert!(output.status.success(), "{api}: {}", stderr(&output));
        let clone_url = format!("{}/repos/{{owner}}__{{name}}.git", root.display());
        let output = harvest.run(&["mirror", "--clone-url", &clone_url, "--repo", repos[0], repos[1]]);
        assert!(output.status.success(), "{}", stderr(&output));
        let mut command = harvest.command();
        command
            .env("SWE_HARVEST_EXTRACT__USE_API_CLOSING_REFERENCES", use_api_closing_references.to_string())
            .args(["extract", "--repo", repos[0], repos[1]]);
        run_ok(command);
        let store = open_store(&harvest);
        swe_harvest::store::candidates::candidates(store.connection(), &[]).unwrap()
    };
    let rest = candidates("rest", false);
    assert!(rest.len() >= 3, "the demo has candidates: {}", rest.len());
    assert!(rest.iter().any(|candidate| !candidate.hints_text.is_empty()), "some with hints");
    for (api, use_api) in [("graphql", false), ("graphql", true)] {
        let graphql = candidates(api, use_api);
        assert_eq!(
            serde_json::to_value(&graphql).unwrap(),
            serde_json::to_value(&rest).unwrap(),
            "{api} with use_api_closing_references = {use_api}"
        );
    }
}
