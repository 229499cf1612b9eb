//! The review page (`swe-harvest review`), tested as a person uses it: the real binary
//! serves a store built like the demo's (validated tasks of two repositories, their
//! validation runs, logs and environments, released as `demo/1`), and a real headless
//! chromium reads it: filters, opens a task, rejects it with a note using only the
//! keyboard, reloads and finds the decision kept, sees a decision made in another
//! browser on another server of the same data dir, goes read-only while another
//! process owns the data dir; then `release --exclude-rejected` / `--reviewed-only`
//! and `export --stage reviews` honour the decisions, and a task whose content
//! changed needs review again. Bad input (unknown or empty release, a taken port, a
//! foreign host or origin) is answered clearly without a browser.
//!
//! Also, ignored by default: the screenshots of docs/ (from the demo's data,
//! `scripts/review-screenshots.sh`) and the benchmark on 5,000 synthetic tasks
//! (`scripts/bench-review.sh`).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use fantoccini::key::Key;
use swe_harvest::model::probe::{Mutant, MutantRun, MutantStatus, MutationOperator, ProbeRecord, task_hash};
use swe_harvest::model::{
    Candidate, EnvironmentSpec, RepoSlug, RunPhase, Rung, Stage, Task, TestStatus, ValidationRun,
};
use swe_harvest::store::{self, Store, StoreError};

use crate::support::browser::Browser;
use crate::support::{SweHarvest, failure, stderr, stdout, validation_run};

// ---------------------------------------------------------------- the store ---

/// What one seeded task is made of.
struct Seed {
    repo: &'static str,
    number: u64,
    created: (i32, u32, u32),
    issue: String,
    hints: &'static str,
    flaky: bool,
}

fn python_patch(number: u64) -> (String, String, Vec<String>, Vec<String>) {
    let patch = format!(
        "diff --git a/widgets/parse.py b/widgets/parse.py\n--- a/widgets/parse.py\n+++ b/widgets/parse.py\n\
         @@ -1,6 +1,8 @@\n def parse(text):\n-    value = float(text)\n-    return str(value)\n\
         +    # Keep the digits the user typed: \"1.50\" stays \"1.50\" (#{number}).\n+    if \".\" in text:\n\
         +        return text.strip()\n+    return str(int(text))\n \n \n def normalise(text):\n"
    );
    let test_patch = format!(
        "diff --git a/tests/test_parse.py b/tests/test_parse.py\n--- a/tests/test_parse.py\n+++ b/tests/test_parse.py\n\
         @@ -3,3 +3,7 @@ from widgets.parse import parse\n \n def test_integer():\n     assert parse(\"3\") == \"3\"\n\
         +\n+\n+def test_trailing_zeros_{number}():\n+    assert parse(\"1.50\") == \"1.50\"\n"
    );
    let fail_to_pass = vec![format!("tests/test_parse.py::test_trailing_zeros_{number}")];
    let pass_to_pass =
        vec!["tests/test_parse.py::test_integer".to_string(), "tests/test_parse.py::test_empty".to_string()];
    (patch, test_patch, fail_to_pass, pass_to_pass)
}

fn go_patch(number: u64) -> (String, String, Vec<String>, Vec<String>) {
    let patch = format!(
        "diff --git a/units/convert.go b/units/convert.go\n--- a/units/convert.go\n+++ b/units/convert.go\n\
         @@ -8,6 +8,9 @@ func Convert(value float64, from, to string) (float64, error) {{\n \tif from == to {{\n\
         \t\treturn value, nil\n \t}}\n+\tif _, ok := factor[to]; !ok {{\n+\t\treturn 0, fmt.Errorf(\"unknown unit %q (#{number})\", to)\n\
         +\t}}\n \treturn value * factor[from] / factor[to], nil\n }}\n"
    );
    let test_patch = format!(
        "diff --git a/units/convert_test.go b/units/convert_test.go\n--- a/units/convert_test.go\n+++ b/units/convert_test.go\n\
         @@ -20,3 +20,10 @@ func TestConvertSame(t *testing.T) {{\n \t\tt.Fatal(err)\n \t}}\n }}\n+\n\
         +func TestConvertUnknown{number}(t *testing.T) {{\n+\tif _, err := Convert(1, \"m\", \"parsec\"); err == nil {{\n\
         +\t\tt.Fatal(\"want an error\")\n+\t}}\n+}}\n"
    );
    (patch, test_patch, vec![format!("TestConvertUnknown{number}")], vec!["TestConvertSame".to_string()])
}

fn task_of(seed: &Seed) -> Task {
    let repo: RepoSlug = seed.repo.parse().unwrap();
    let go = seed.repo.ends_with("gadgets");
    let (patch, test_patch, fail_to_pass, pass_to_pass) =
        if go { go_patch(seed.number) } else { python_patch(seed.number) };
    let created_at = Utc.with_ymd_and_hms(seed.created.0, seed.created.1, seed.created.2, 9, 30, 0).unwrap();
    let flaky_tests = if seed.flaky { vec![pass_to_pass[0].clone()] } else { Vec::new() };
    let pass_to_pass = pass_to_pass.into_iter().filter(|test| !flaky_tests.contains(test)).collect();
    Task {
        candidate: Candidate {
            instance_id: Candidate::instance_id_for(&repo, seed.number),
            repo,
            pull_number: seed.number,
            issue_numbers: vec![seed.number - 1],
            base_commit: format!("{:040x}", seed.number * 7919),
            head_commit: format!("{:040x}", seed.number * 7927),
            test_files: vec![test_patch.split(" b/").nth(1).unwrap().lines().next().unwrap().to_string()],
            patch,
            test_patch,
            problem_statement: seed.issue.clone(),
            hints_text: seed.hints.to_string(),
            created_at,
            merged_at: Some(created_at + chrono::Duration::days(2)),
            version: "1.0".into(),
            environment_setup_commit: format!("{:040x}", if go { 42 } else { 41 }),
        },
        fail_to_pass,
        pass_to_pass,
        flaky_tests,
        needs_network: Vec::new(),
        fail_to_pass_no_result_before: Vec::new(),
        validation_runs: 2,
        image: Some(if go { "swe-harvest/env:octo-gadgets-1.0" } else { "swe-harvest/env:acme-widgets-1.0" }.into()),
        environment_rung: Some(if go { Rung::Dated } else { Rung::RelaxedPackages }),
    }
}

/// Writes tasks the way validate does: the task, its runs (two attempts, before and
/// after the gold patch), their logs, its environment, and the funnel's rows.
fn seed_store(data_dir: &Path, tasks: &[Task]) {
    let mut store = Store::open_in(data_dir).unwrap();
    store
        .transaction(|tx| -> Result<(), StoreError> {
            for task in tasks {
                let candidate = &task.candidate;
                let go = candidate.repo.name() == "gadgets";
                let spec = EnvironmentSpec {
                    ecosystem: if go { "go" } else { "python" }.into(),
                    runtime: if go { "1.24" } else { "3.11" }.into(),
                    test_command: if go { "go test -json ./..." } else { "pytest -rA" }.into(),
                    source: if go { "inferred:go.mod" } else { "inferred:pyproject" }.into(),
                    rung: task.environment_rung.unwrap_or_default(),
                    ..EnvironmentSpec::default()
                };
                let image = task.image.as_deref().unwrap();
                store::validation::record_environment(
                    tx,
                    image,
                    &candidate.repo,
                    &candidate.environment_setup_commit,
                    &spec,
                    Some(image),
                    "built",
                    None,
                )?;
                let mut runs = Vec::new();
                for attempt in 1..=2u32 {
                    for phase in [RunPhase::Pre, RunPhase::Post] {
                        let mut tests = std::collections::BTreeMap::new();
                        for test in &task.fail_to_pass {
                            let status = if phase == RunPhase::Pre { TestStatus::Failed } else { TestStatus::Passed };
                            tests.insert(test.clone(), status);
                        }
                        for test in &task.pass_to_pass {
                            tests.insert(test.clone(), TestStatus::Passed);
                        }
                        for test in &task.flaky_tests {
                            tests.insert(
                                test.clone(),
                                if attempt == 1 { TestStatus::Passed } else { TestStatus::Failed },
                            );
                        }
                        runs.push(ValidationRun {
                            image: image.to_string(),
                            exit_code: Some(if phase == RunPhase::Pre { 1 } else { 0 }),
                            duration_secs: 1.5 + f64::from(attempt),
                            tests,
                            ..validation_run(&candidate.instance_id, phase, attempt)
                        });
                    }
                    let log = data_dir.join(format!("logs/validate/{}/run-{attempt}.log", candidate.instance_id));
                    fs_err::create_dir_all(log.parent().unwrap()).unwrap();
                    fs_err::write(
                        &log,
                        format!("run {attempt} of {}\n: '>>>>> Start Test Output'\n", candidate.instance_id),
                    )
                    .unwrap();
                }
                store::validation::insert_runs(tx, "seeded", &runs)?;
                store::candidates::upsert_task(tx, task)?;
                store::record_passed(tx, Stage::Extract, &candidate.repo, &candidate.pull_number.to_string())?;
                store::record_passed(tx, Stage::Validate, &candidate.repo, &candidate.instance_id)?;
            }
            Ok(())
        })
        .unwrap();
}

/// Six tasks like the demo's: two repositories, Python and Go, three months; one
/// issue holds HTML and a `javascript:` link that must stay text.
fn demo_like_tasks() -> Vec<Task> {
    let issue = |title: &str, body: &str| format!("{title}\n{body}\n");
    [
        Seed {
            repo: "acme/widgets",
            number: 12,
            created: (2024, 1, 8),
            issue: issue(
                "parse() drops trailing zeros",
                "When I call `parse(\"1.50\")` I get `\"1.5\"`:\n\n```python\n>>> parse(\"1.50\")\n'1.5'\n```\n\n\
                 The digits I typed should stay. <script>window.__injected = true</script> \
                 [more](javascript:window.__injected=true)",
            ),
            hints: "Maybe `normalise()` has the same bug?",
            flaky: false,
        },
        Seed {
            repo: "acme/widgets",
            number: 15,
            created: (2024, 2, 3),
            issue: issue("parse() of an empty string", "`parse(\"\")` raises `ValueError`; it should return `\"\"`."),
            hints: "",
            flaky: false,
        },
        Seed {
            repo: "acme/widgets",
            number: 20,
            created: (2024, 2, 20),
            issue: issue(
                "parse() is slow on long inputs",
                "Parsing a 1 MB string takes seconds.\n\n- expected: linear time\n- got: quadratic",
            ),
            hints: "Profiling shows `str.strip` in a loop.",
            flaky: true,
        },
        Seed {
            repo: "octo/gadgets",
            number: 5,
            created: (2024, 1, 15),
            issue: issue(
                "Convert accepts unknown units",
                "`Convert(1, \"m\", \"parsec\")` returns `+Inf` and no error.",
            ),
            hints: "",
            flaky: false,
        },
        Seed {
            repo: "octo/gadgets",
            number: 9,
            created: (2024, 3, 2),
            issue: issue("Convert to the same unit allocates", "See ![profile](https://example.com/profile.png)."),
            hints: "",
            flaky: false,
        },
        Seed {
            repo: "octo/gadgets",
            number: 11,
            created: (2024, 3, 28),
            issue: issue("Document Convert's errors", "Which errors can `Convert` return?"),
            hints: "",
            flaky: false,
        },
    ]
    .iter()
    .map(task_of)
    .collect()
}

// --------------------------------------------------------------- the server ---

/// A `swe-harvest review` process, killed when dropped.
struct ReviewServer {
    child: Child,
    url: String,
    stderr: Arc<Mutex<String>>,
}

impl ReviewServer {
    fn start(harvest: &SweHarvest, args: &[&str]) -> ReviewServer {
        let mut child = harvest
            .command()
            .arg("review")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("swe-harvest review starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let collected = stderr.clone();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(read) = pipe.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                collected.lock().unwrap().push_str(&String::from_utf8_lossy(&buffer[..read]));
            }
        });
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.trim().to_string();
        assert!(url.starts_with("http://127.0.0.1:"), "no URL on stdout; stderr:\n{}", stderr.lock().unwrap());
        ReviewServer { child, url, stderr }
    }

    fn port(&self) -> u16 {
        self.url.trim_end_matches('/').rsplit(':').next().unwrap().parse().unwrap()
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits (5 s at most) for `text` on the server's stderr, which a thread collects.
    fn wait_for_stderr(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !self.stderr().contains(text) {
            assert!(Instant::now() < deadline, "no `{text}` on the server's stderr:\n{}", self.stderr());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ReviewServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP request to the server, written out whole (HTTP/1.0, so that the answer's
/// body ends with the connection): (status, head, body).
fn http(port: u16, request: &str) -> (u16, String, String) {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    (status, head.to_string(), body.to_string())
}

fn released(harvest: &SweHarvest, version: &str, flags: &[&str]) -> (PathBuf, Vec<String>) {
    let output = harvest.run(&[&["release", "--name", "demo", "--version", version][..], flags].concat());
    assert!(output.status.success(), "release failed:\n{}", stderr(&output));
    let dir = PathBuf::from(stdout(&output).trim());
    let ids = swe_harvest::dataset::read_records(&dir.join("tasks.jsonl"))
        .unwrap()
        .iter()
        .map(|row| row["instance_id"].as_str().unwrap().to_string())
        .collect();
    (dir, ids)
}

// ------------------------------------------------------------------ the tests ---

#[test]
fn a_reviewer_rejects_a_task_with_the_keyboard_and_the_release_leaves_it_out() {
    let harvest = SweHarvest::new();
    seed_store(&harvest.data_dir, &demo_like_tasks());
    let (_, ids) = released(&harvest, "1", &[]);
    assert_eq!(ids.len(), 6);
    let ana = ReviewServer::start(&harvest, &["--release", "demo/1", "--port", "0", "--reviewer", "ana"]);
    let bo = ReviewServer::start(&harvest, &["--release", "demo/1", "--port", "0", "--reviewer", "bo"]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let Some(browser) = runtime.block_on(Browser::start()) else { return };
    runtime.block_on(async {
        let client = &browser.client;
        client.goto(&ana.url).await.unwrap();
        browser.wait_for("the list", "window.reviewMetrics && window.reviewMetrics.ready").await;
        assert!(browser.text("#counts").await.contains("6 of 6 tasks shown"), "{}", browser.text("#counts").await);
        assert!(browser.text("#funnel").await.contains("validate 6 of 6"), "{}", browser.text("#funnel").await);

        // Filter: search for one repository, from the keyboard.
        browser.press("/").await;
        browser.press("gadgets").await;
        browser.press(&Key::Enter.to_string()).await;
        let rows = "document.querySelectorAll('#list-rows .list-row').length";
        browser.wait_for("three gadgets rows", &format!("{rows} === 3")).await;
        let listed = browser.eval("[...document.querySelectorAll('#list-rows .list-row')].map(row => row.dataset.id)").await;
        assert_eq!(listed, serde_json::json!(["octo__gadgets-11", "octo__gadgets-5", "octo__gadgets-9"]));

        // Open the second row.
        browser.press("j").await;
        browser.press(&Key::Enter.to_string()).await;
        browser.wait_for("the task", "document.getElementById('task-title').textContent === 'octo__gadgets-5'").await;
        assert!(browser.text("#issue").await.contains("returns +Inf and no error"));
        assert!(browser.text("#patch").await.contains("unknown unit"));
        assert!(browser.text("#environment").await.contains("go 1.24"), "{}", browser.text("#environment").await);
        assert!(browser.text("#runs").await.contains("before #1"), "{}", browser.text("#runs").await);
        let log = browser.eval("document.querySelector('#runs a').getAttribute('href')").await;
        assert_eq!(log, "/api/tasks/octo__gadgets-5/runs/1/log");

        // Reject with a reason (the second: tests assert strings the issue never gives)
        // and a note: keys only.
        browser.press("x").await;
        browser.wait_for("the reason picker", "!document.getElementById('reason-picker').hidden").await;
        browser.press("2").await;
        browser.wait_for("the note field focused", "document.activeElement.id === 'note'").await;
        browser.press("asserts an error message the issue never gives").await;
        browser.press(&Key::Enter.to_string()).await;
        // Saved, then on to the next task of the list.
        browser.wait_for("the next task", "document.getElementById('task-title').textContent === 'octo__gadgets-9'").await;
        browser.press("k").await;
        browser.wait_for("the rejected task", "document.getElementById('task-title').textContent === 'octo__gadgets-5'").await;
        let decided = browser.text("#decision-current").await;
        assert!(decided.contains("rejected") && decided.contains("tests_assert_unseen_strings"), "{decided}");

        // Reload: the decision is kept.
        client.refresh().await.unwrap();
        browser.wait_for("the page again", "window.reviewMetrics && window.reviewMetrics.taskShown === 'octo__gadgets-5'").await;
        let decided = browser.text("#decision-current").await;
        assert!(decided.contains("rejected") && decided.contains("ana"), "{decided}");
        let note = browser.eval("document.getElementById('note').value").await;
        assert_eq!(note, "asserts an error message the issue never gives");

        // Back to the list: the row says so, and "to review" leaves it out.
        browser.press(&Key::Escape.to_string()).await;
        browser.wait_for("the list", "!document.getElementById('list-view').hidden").await;
        let state = browser.eval("document.querySelector('.list-row[data-id=\"octo__gadgets-5\"] .c-state').textContent").await;
        assert_eq!(state, "rejected: tests_assert_unseen_strings");
        browser.press("u").await;
        browser.wait_for("two rows to review", &format!("{rows} === 2")).await;

        // The injected HTML and link of another issue stay text.
        client.goto(&format!("{}#/task/acme__widgets-12", ana.url)).await.unwrap();
        browser.wait_for("the task", "window.reviewMetrics && window.reviewMetrics.taskShown === 'acme__widgets-12'").await;
        assert!(browser.text("#issue").await.contains("<script>window.__injected = true</script>"));
        assert_eq!(browser.eval("window.__injected === undefined && !document.querySelector('#issue script, #issue a[href^=javascript]')").await, true);
        assert_eq!(browser.eval("document.querySelector('#issue pre code').textContent").await, ">>> parse(\"1.50\")\n'1.5'\n");

        // Another reviewer, on another server of the same data dir, keeps octo__gadgets-9;
        // this page shows it as changed elsewhere.
        client.goto(&format!("{}#/task/octo__gadgets-9", ana.url)).await.unwrap();
        browser.wait_for("the task", "window.reviewMetrics && window.reviewMetrics.taskShown === 'octo__gadgets-9'").await;
        let first = client.window().await.unwrap();
        let second = client.new_window(true).await.unwrap();
        client.switch_to_window(second.handle).await.unwrap();
        client.goto(&format!("{}#/task/octo__gadgets-9", bo.url)).await.unwrap();
        browser.wait_for("the task on the other server", "window.reviewMetrics && window.reviewMetrics.taskShown === 'octo__gadgets-9'").await;
        browser.press("y").await;
        browser.wait_for("the keep saved", "document.getElementById('toast').textContent.startsWith('saved octo__gadgets-9')").await;
        client.close_window().await.unwrap();
        client.switch_to_window(first).await.unwrap();
        browser.wait_for("the change from elsewhere", "!document.getElementById('changed-elsewhere').hidden").await;
        let changed = browser.text("#changed-elsewhere").await;
        assert!(changed.contains("kept by bo"), "{changed}");
        assert!(browser.text("#decision-current").await.contains("kept"));

        // Another process owns the data dir: the page goes read-only and says so.
        let lock = swe_harvest::lock::DataDirLock::acquire(&harvest.data_dir, "swe-harvest validate (test)").unwrap();
        browser.wait_for("the read-only banner", "!document.getElementById('banner').hidden").await;
        let banner = browser.text("#banner").await;
        assert!(banner.contains("read-only") && banner.contains("swe-harvest validate (test)"), "{banner}");
        browser.press("y").await;
        browser.wait_for("the refusal", "document.getElementById('toast').textContent.includes('read-only')").await;
        drop(lock);
        browser.wait_for("writable again", "document.getElementById('banner').hidden").await;
    });
    runtime.block_on(browser.close());
    drop(ana);
    drop(bo);

    // The release honours the decisions.
    let (dir, ids) = released(&harvest, "2", &["--exclude-rejected"]);
    assert_eq!(ids.len(), 5);
    assert!(!ids.contains(&"octo__gadgets-5".to_string()), "{ids:?}");
    let manifest: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["counts"]["left_out_by_filters"]["rejected_in_review"], 1);
    assert_eq!(manifest["filters"]["exclude_rejected"], true);
    assert_eq!(manifest["counts"]["review"]["kept"], 1);
    let card = fs_err::read_to_string(dir.join("README.md")).unwrap();
    assert!(card.contains("1 of the 5 tasks were reviewed by a person") && card.contains("1 kept"), "{card}");
    let (_, ids) = released(&harvest, "3", &["--reviewed-only"]);
    assert_eq!(ids, ["octo__gadgets-9"]);

    let (out, _) = harvest.exported("reviews", "jsonl");
    let rows = swe_harvest::dataset::read_records(&out).unwrap();
    let row = |id: &str| rows.iter().find(|row| row["instance_id"] == id).unwrap_or_else(|| panic!("{id}: {rows:?}"));
    let columns = |id: &str, names: &[&str]| -> Vec<String> {
        names.iter().map(|name| row(id)[*name].as_str().unwrap_or("").to_string()).collect()
    };
    assert_eq!(
        columns("octo__gadgets-5", &["decision", "reason", "reviewer", "current", "note"]),
        ["reject", "tests_assert_unseen_strings", "ana", "true", "asserts an error message the issue never gives"]
    );
    assert_eq!(columns("octo__gadgets-9", &["decision", "reviewer"]), ["keep", "bo"]);

    // A task whose content changed needs review again; its old decision stays history.
    let mut changed =
        demo_like_tasks().into_iter().find(|task| task.candidate.instance_id == "octo__gadgets-9").unwrap();
    changed.candidate.problem_statement.push_str("Edited after the review.\n");
    let mut store = Store::open_in(&harvest.data_dir).unwrap();
    store.transaction(|tx| store::candidates::upsert_task(tx, &changed)).unwrap();
    drop(store);
    let server = ReviewServer::start(&harvest, &["--stage", "validated", "--port", "0"]);
    let (status, _, body) =
        http(server.port(), &format!("GET /api/tasks HTTP/1.0\r\nHost: 127.0.0.1:{}\r\n\r\n", server.port()));
    assert_eq!(status, 200, "{body}");
    let tasks: serde_json::Value = serde_json::from_str(&body).unwrap();
    let summary = tasks.as_array().unwrap().iter().find(|task| task["id"] == "octo__gadgets-9").unwrap();
    assert!(summary["decision"].is_null(), "{summary}");
    assert_eq!(summary["earlier"]["decision"], "keep", "{summary}");
    let output = harvest.run(&["release", "--name", "demo", "--version", "4", "--reviewed-only"]);
    let error = failure(&output, 1);
    assert!(error.contains("not_reviewed 5, rejected_in_review 1"), "{error}");
}

/// The screen's records on the page: a screened release's flags in the list (and its
/// flag filter), the flags with their reasons on the task, and each flag's evidence
/// marked where it occurs in the issue and the diffs.
#[test]
fn the_screens_flags_and_their_evidence_show_in_the_list_and_the_task() {
    let harvest = SweHarvest::new();
    seed_store(&harvest.data_dir, &demo_like_tasks());
    let screened = harvest.run(&["screen"]);
    assert!(screened.status.success(), "{}", stderr(&screened));
    released(&harvest, "1", &[]);
    let server = ReviewServer::start(&harvest, &["--release", "demo/1", "--port", "0"]);
    let (status, _, body) =
        http(server.port(), &format!("GET /api/tasks HTTP/1.0\r\nHost: 127.0.0.1:{}\r\n\r\n", server.port()));
    assert_eq!(status, 200, "{body}");
    let tasks: Vec<serde_json::Value> = serde_json::from_str(&body).unwrap();
    assert!(tasks.iter().all(|task| task["score"].is_number() && task["difficulty"].is_string()), "{tasks:?}");
    let flagged = tasks.iter().find(|task| !task["flags"].as_array().unwrap().is_empty()).unwrap_or_else(|| {
        panic!("the screen flags none of the demo-like tasks: {tasks:?}");
    });
    let (id, flag) = (flagged["id"].as_str().unwrap(), flagged["flags"][0].as_str().unwrap());
    let with_flag = tasks.iter().filter(|task| task["flags"].as_array().unwrap().iter().any(|f| f == flag)).count();

    // The list opens on the screen's verdicts, most urgent first: flag, uncertain, keep.
    let rank = |task: &serde_json::Value| {
        ["flag", "uncertain", "keep"].iter().position(|v| task["verdict"] == *v).unwrap_or(3)
    };
    let mut expected: Vec<(usize, &str)> =
        tasks.iter().map(|task| (rank(task), task["id"].as_str().unwrap())).collect();
    expected.sort();
    assert_eq!(expected[0].0, 0, "the flaky task is flagged: {tasks:?}");
    assert!(expected.iter().any(|(rank, _)| *rank == 1), "some task is uncertain: {tasks:?}");
    let expected_order: Vec<&str> = expected.iter().map(|(_, id)| *id).collect();

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let Some(browser) = runtime.block_on(Browser::start()) else { return };
    runtime.block_on(async {
        browser.client.goto(&server.url).await.unwrap();
        browser.wait_for("the list", "window.reviewMetrics && window.reviewMetrics.ready").await;
        let order = browser.eval("[...document.querySelectorAll('#list-rows .list-row')].map(row => row.dataset.id)").await;
        assert_eq!(order, serde_json::json!(expected_order), "flag first, then uncertain, then keep");
        let first = browser.text(&format!(".list-row[data-id=\"{}\"] .c-score", expected_order[0])).await;
        assert!(first.contains("flag"), "the row shows its verdict: {first}");
        let select = format!("(() => {{ const s = document.getElementById('filter-flag'); s.value = '{flag}'; s.dispatchEvent(new Event('change')); return s.value; }})()");
        assert_eq!(browser.eval(&select).await, flag);
        let rows = "document.querySelectorAll('#list-rows .list-row').length";
        browser.wait_for("the rows with the flag", &format!("{rows} === {with_flag}")).await;
        let row_flags = browser.text(&format!(".list-row[data-id=\"{id}\"] .c-flags")).await;
        assert!(row_flags.contains(flag), "{row_flags}");

        browser.client.goto(&format!("{}#/task/{id}", server.url)).await.unwrap();
        browser.wait_for("the task", &format!("window.reviewMetrics && window.reviewMetrics.taskShown === '{id}'")).await;
        // Lists closed at first are filled, and marked, when opened.
        browser.eval("(() => { for (const d of document.querySelectorAll('#f2p, #flaky')) d.open = true; return true; })()").await;
        let flags = browser.text("#flags").await;
        assert!(flags.contains(flag) && flags.contains("score "), "{flags}");
        // Each flag says what it was worth on the development data.
        let measured = swe_harvest::screen::precision::of(flag.parse().unwrap()).describe();
        assert!(flags.contains(&measured), "the flag's precision is shown with its reason: {flags}");
        assert!(flags.contains("kappa"), "the difficulty says how sure it is: {flags}");
        let marks = browser
            .eval("[...document.querySelectorAll('#issue mark.evidence, #patch mark.evidence, #test-patch mark.evidence, #f2p mark.evidence, #flaky mark.evidence')].map(m => m.textContent)")
            .await;
        let terms = browser.eval("[...document.querySelectorAll('#flags .evidence-term')].map(t => t.textContent)").await;
        let terms = terms.as_array().unwrap();
        assert!(!terms.is_empty(), "the flag lists its evidence: {flags}");
        assert!(
            marks.as_array().unwrap().iter().any(|mark| terms.contains(mark)),
            "a piece of evidence is marked in the texts or the test lists: marks {marks}, evidence {terms:?}"
        );
    });
    runtime.block_on(browser.close());
}

/// A probe record of `task` as the store keeps it, for the task as it is now: one
/// killed mutant, and `survivors` surviving ones (a wrong fix in `calc/ops.py`).
fn probe_record(task: &Task, survivors: usize) -> ProbeRecord {
    let mutant = |id: &str, change: &str| {
        Mutant {
        id: id.into(),
        operator: MutationOperator::DropStatement,
        file: "calc/ops.py".into(),
        line: 7,
        function: "divide".into(),
        change: change.into(),
        patch: "diff --git a/calc/ops.py b/calc/ops.py\n--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -5,3 +5,3 @@ def divide(a, b):\n     if b == 0:\n-        return None\n+        pass\n     return a / b\n".into(),
    }
    };
    let run = |mutant: Mutant, status: MutantStatus| MutantRun {
        mutant,
        status,
        killing_tests: Vec::new(),
        detail: String::new(),
        seconds: 1.0,
    };
    let mut runs = vec![run(mutant("killed", "`x` becomes `y`"), MutantStatus::Killed)];
    for index in 0..survivors {
        runs.push(run(
            mutant(&format!("survivor-{index}"), "the statement `return None` is dropped"),
            MutantStatus::Survived,
        ));
    }
    let candidate = &task.candidate;
    ProbeRecord {
        instance_id: candidate.instance_id.clone(),
        content_hash: task_hash(candidate, &task.fail_to_pass, &task.pass_to_pass, task.image.as_deref()),
        probe_key: "seeded".into(),
        mutation_score: ProbeRecord::score_of(&runs),
        no_score_reason: String::new(),
        candidates: runs.len(),
        runs,
        seconds: 2.0,
    }
}

#[test]
fn probes_survivors_show_under_the_gold_patch_and_the_list_filters_weak_tests_and_sorts_by_mutation_score() {
    let harvest = SweHarvest::new();
    let tasks = demo_like_tasks();
    seed_store(&harvest.data_dir, &tasks);
    let (weak, strong) = (&tasks[0], &tasks[1]);
    {
        let store = Store::open_in(&harvest.data_dir).unwrap();
        for (task, survivors) in [(weak, 1), (strong, 0)] {
            store::probe::upsert(store.connection(), &task.candidate.repo, "seeded", &probe_record(task, survivors))
                .unwrap();
        }
    }
    let server = ReviewServer::start(&harvest, &["--stage", "validated", "--port", "0"]);
    let (status, _, body) =
        http(server.port(), &format!("GET /api/tasks HTTP/1.0\r\nHost: 127.0.0.1:{}\r\n\r\n", server.port()));
    assert_eq!(status, 200, "{body}");
    let listed: Vec<serde_json::Value> = serde_json::from_str(&body).unwrap();
    let of = |task: &Task| listed.iter().find(|row| row["id"] == task.candidate.instance_id.as_str()).unwrap().clone();
    assert_eq!(of(weak)["mutation_score"], 0.5);
    assert!(of(weak)["flags"].as_array().unwrap().iter().any(|flag| flag == "weak_tests"), "{listed:?}");
    assert_eq!(of(strong)["mutation_score"], 1.0);
    assert!(!of(strong)["flags"].as_array().unwrap().iter().any(|flag| flag == "weak_tests"));
    let weak_id = weak.candidate.instance_id.clone();

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let Some(browser) = runtime.block_on(Browser::start()) else { return };
    runtime.block_on(async {
        browser.client.goto(&server.url).await.unwrap();
        browser.wait_for("the list", "window.reviewMetrics && window.reviewMetrics.ready").await;
        // Weakest tests first: the task with a survivor heads the list.
        let sort = "(() => { const s = document.getElementById('sort'); s.value = 'mutation-asc'; s.dispatchEvent(new Event('change')); return s.value; })()";
        assert_eq!(browser.eval(sort).await, "mutation-asc");
        browser.wait_for("the sorted list", &format!("document.querySelector('#list-rows .list-row').dataset.id === '{weak_id}'")).await;
        let score = browser.text(&format!(".list-row[data-id=\"{weak_id}\"] .c-mutation")).await;
        assert_eq!(score.trim(), "0.50");
        let filter = "(() => { const s = document.getElementById('filter-flag'); s.value = 'weak_tests'; s.dispatchEvent(new Event('change')); return s.value; })()";
        assert_eq!(browser.eval(filter).await, "weak_tests");
        browser.wait_for("the weak task alone", "document.querySelectorAll('#list-rows .list-row').length === 1").await;

        browser.client.goto(&format!("{}#/task/{weak_id}", server.url)).await.unwrap();
        browser.wait_for("the task", &format!("window.reviewMetrics && window.reviewMetrics.taskShown === '{weak_id}'")).await;
        assert_eq!(browser.eval("document.getElementById('probe-card').hidden").await, false);
        let survivors = browser.text("#survivors").await;
        assert!(survivors.contains("this patch passes every test: the statement `return None` is dropped"), "{survivors}");
        assert!(survivors.contains("calc/ops.py:7, in divide"), "{survivors}");
        let stats = browser.text("#probe-stats").await;
        assert!(stats.contains("1 survivor") && stats.contains("mutation score 0.50"), "{stats}");
        // The survivor's diff is drawn as the gold patch is: its added line is there.
        let added = browser.eval("[...document.querySelectorAll('#survivors td.add')].map(cell => cell.textContent.trim())").await;
        assert!(added.as_array().unwrap().iter().any(|cell| cell == "pass"), "{added}");

        let strong_id = strong.candidate.instance_id.clone();
        browser.client.goto(&format!("{}#/task/{strong_id}", server.url)).await.unwrap();
        browser.wait_for("the strong task", &format!("window.reviewMetrics && window.reviewMetrics.taskShown === '{strong_id}'")).await;
        assert_eq!(browser.eval("document.getElementById('probe-card').hidden").await, true);
    });
    runtime.block_on(browser.close());
}

#[test]
fn bad_input_is_answered_clearly_without_a_browser() {
    let harvest = SweHarvest::new();
    let output = harvest.run(&["review"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("there is no state store"), "{}", stderr(&output));

    seed_store(&harvest.data_dir, &demo_like_tasks()[..2]);
    let output = harvest.run(&["review", "--release", "nope/1"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("there is no release `nope/1` in this data dir; it has no release yet"),
        "{}",
        stderr(&output)
    );
    released(&harvest, "1", &[]);
    let output = harvest.run(&["review", "--release", "nope/1"]);
    assert!(stderr(&output).contains("it has demo/1"), "{}", stderr(&output));
    assert!(stderr(&output).contains("hint: pass `--release NAME/VERSION`"), "{}", stderr(&output));
    let output = harvest.run(&["review", "--release", "demo"]);
    let error = failure(&output, 2);
    assert!(error.contains("expected NAME/VERSION"), "{error}");

    let empty = harvest.data_dir.join("releases/empty/1");
    fs_err::create_dir_all(&empty).unwrap();
    fs_err::write(empty.join("tasks.jsonl"), "").unwrap();
    let output = harvest.run(&["review", "--release", "empty/1"]);
    let error = failure(&output, 2);
    assert!(error.contains("the release `empty/1` holds no task"), "{error}");

    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let output = harvest.run(&["review", "--release", "demo/1", "--port", &port]);
    let error = failure(&output, 2);
    assert!(error.contains(&format!("port {port} on 127.0.0.1 is in use")), "{error}");
    assert!(stderr(&output).contains("--port"), "{}", stderr(&output));

    // Another process owns the data dir: the page opens read-only and says why.
    let lock = swe_harvest::lock::DataDirLock::acquire(&harvest.data_dir, "swe-harvest validate (test)").unwrap();
    let server = ReviewServer::start(&harvest, &["--release", "demo/1", "--port", "0"]);
    server.wait_for_stderr("warning: the page opens read-only: the data dir");
    assert!(server.stderr().contains("swe-harvest validate (test)"), "{}", server.stderr());
    let port = server.port();
    let host = format!("127.0.0.1:{port}");
    let put = |origin: &str, body: &str| {
        http(
            port,
            &format!(
                "PUT /api/tasks/acme__widgets-12/decision HTTP/1.0\r\nHost: {host}\r\n{origin}Content-Type: application/json\r\n\
                 Content-Length: {}\r\n\r\n{body}",
                body.len()
            ),
        )
    };
    let (status, _, body) = put("", r#"{"decision":"keep"}"#);
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("read-only") && body.contains("swe-harvest validate (test)"), "{body}");
    drop(lock);

    // The page and its answers: own script only, own host only, own origin only.
    let (status, head, body) = http(port, &format!("GET / HTTP/1.0\r\nHost: {host}\r\n\r\n"));
    assert_eq!(status, 200);
    assert!(body.contains("<script src=\"/review.js\" defer></script>"));
    assert!(head.to_lowercase().contains("content-security-policy: default-src 'none'; script-src 'self'"), "{head}");
    let (status, _, _) = http(port, "GET /api/tasks HTTP/1.0\r\nHost: attacker.example:80\r\n\r\n");
    assert_eq!(status, 403, "a request for another host (DNS rebinding) is refused");
    let (status, _, _) = put("Origin: http://attacker.example\r\n", r#"{"decision":"keep"}"#);
    assert_eq!(status, 403, "a write from another origin is refused");
    let (status, _, body) = put("", r#"{"decision":"reject"}"#);
    assert_eq!(status, 400);
    assert!(body.contains("a reject needs a reason"), "{body}");
    let (status, _, body) = put("", r#"{"decision":"reject","reason":"because"}"#);
    assert_eq!(status, 400);
    assert!(body.contains("`because` is not a reject reason"), "{body}");
    let (status, _, body) = put("", r#"{"decision":"maybe"}"#);
    assert_eq!(status, 400);
    assert!(body.contains("keep, reject or needs_work"), "{body}");
    let (status, _, body) = put("", r#"{"decision":"keep","note":"fine"}"#);
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = http(port, &format!("GET /api/tasks/nope/runs/1/log HTTP/1.0\r\nHost: {host}\r\n\r\n"));
    assert_eq!(status, 404);
    assert!(body.contains("no task `nope`"), "{body}");
    let (status, _, body) =
        http(port, &format!("GET /api/tasks/acme__widgets-12/runs/2/log HTTP/1.0\r\nHost: {host}\r\n\r\n"));
    assert_eq!(status, 200);
    assert!(body.contains("run 2 of acme__widgets-12"), "{body}");
}

// ------------------------------------------------- screenshots and benchmark ---

/// The screenshots of docs/, from the demo's data: run by `scripts/review-screenshots.sh`
/// with `SWE_HARVEST_REVIEW_DEMO_DATA` (the demo's data dir) and
/// `SWE_HARVEST_REVIEW_SCREENSHOTS` (where the PNGs go).
#[test]
#[ignore = "writes docs/ screenshots from a demo run: scripts/review-screenshots.sh"]
fn screenshots_of_the_review_page_on_the_demo() {
    let (Some(data), Some(out)) =
        (std::env::var_os("SWE_HARVEST_REVIEW_DEMO_DATA"), std::env::var_os("SWE_HARVEST_REVIEW_SCREENSHOTS"))
    else {
        panic!("set SWE_HARVEST_REVIEW_DEMO_DATA and SWE_HARVEST_REVIEW_SCREENSHOTS (scripts/review-screenshots.sh)");
    };
    let harvest = SweHarvest { data_dir: PathBuf::from(data), work_dir: tempfile::tempdir().unwrap() };
    let out = PathBuf::from(out);
    let server = ReviewServer::start(&harvest, &["--release", "demo/1", "--port", "0", "--reviewer", "maintainer"]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let Some(browser) = runtime.block_on(Browser::start()) else { panic!("no browser for the screenshots") };
    runtime.block_on(async {
        browser.client.goto(&server.url).await.unwrap();
        browser.wait_for("the list", "window.reviewMetrics && window.reviewMetrics.ready").await;
        // The window's size is the outer one: grow it by the browser's own bars so that
        // the page itself is 1280x800.
        let bars =
            browser.eval("[window.outerWidth - window.innerWidth, window.outerHeight - window.innerHeight]").await;
        let bar = |index: usize| bars[index].as_u64().unwrap() as u32;
        browser.client.set_window_size(1280 + bar(0), 800 + bar(1)).await.unwrap();
        browser.wait_for("the 1280x800 page", "window.innerWidth === 1280 && window.innerHeight === 800").await;
        fs_err::write(out.join("review-list.png"), browser.client.screenshot().await.unwrap()).unwrap();
        browser.press("j").await;
        browser.press(&Key::Enter.to_string()).await;
        browser.wait_for("a task", "window.reviewMetrics.taskShown").await;
        browser.press("x").await;
        browser.press("1").await;
        browser.press("the issue never says which unit").await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        fs_err::write(out.join("review-task.png"), browser.client.screenshot().await.unwrap()).unwrap();
    });
    runtime.block_on(browser.close());
}

/// Seconds at the given percentile of sorted samples.
fn percentile(sorted: &[f64], fraction: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * fraction).round() as usize]
}

/// The review page's speed on 5,000 synthetic tasks, measured in the browser: the time
/// from navigation to the list drawn, and from a key press to the next task drawn.
/// Run by `scripts/bench-review.sh` (release build); prints figures, asserts none.
#[test]
#[ignore = "benchmark: scripts/bench-review.sh"]
fn bench_review_page_on_5000_tasks() {
    let count: u64 = std::env::var("SWE_HARVEST_BENCH_REVIEW_TASKS").ok().and_then(|n| n.parse().ok()).unwrap_or(5000);
    let harvest = SweHarvest::new();
    let started = Instant::now();
    let repos = ["acme/widgets", "octo/gadgets", "pallets-like/web", "numeric/kernels", "tools/cli"];
    let tasks: Vec<Task> = (0..count)
        .map(|index| {
            let mut task = task_of(&Seed {
                repo: if index % 2 == 0 { "acme/widgets" } else { "octo/gadgets" },
                number: 100 + index,
                created: (2023 + (index % 3) as i32, 1 + (index % 12) as u32, 1 + (index % 28) as u32),
                issue: format!(
                    "Issue {index}: a synthetic report\n{}\n\n```python\nparse(\"{index}\")\n```\n",
                    "The parser misreads numbers with trailing zeros in some locales. ".repeat(12)
                ),
                hints: "A comment before the fix.",
                flaky: index % 17 == 0,
            });
            let repo: RepoSlug = repos[(index % 5) as usize].parse().unwrap();
            task.candidate.instance_id = Candidate::instance_id_for(&repo, 100 + index);
            task.candidate.repo = repo;
            task.pass_to_pass.extend((0..20).map(|n| format!("tests/test_more.py::test_case_{n}")));
            task
        })
        .collect();
    seed_store(&harvest.data_dir, &tasks);
    println!("BENCH review: seeded {count} tasks in {:.1} s", started.elapsed().as_secs_f64());
    let server = ReviewServer::start(&harvest, &["--stage", "validated", "--port", "0"]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let Some(browser) = runtime.block_on(Browser::start()) else { panic!("no browser for the benchmark") };
    runtime.block_on(async {
        let mut opens = Vec::new();
        for _ in 0..5 {
            browser.client.goto("about:blank").await.unwrap();
            browser.client.goto(&server.url).await.unwrap();
            browser.wait_for("the list", "window.reviewMetrics && window.reviewMetrics.ready").await;
            let shown = browser.eval("document.querySelectorAll('#list-rows .list-row').length").await;
            assert!(shown.as_u64().unwrap() > 10, "the list shows rows");
            opens.push(browser.eval("window.reviewMetrics.listReadyMs").await.as_f64().unwrap());
        }
        browser.press(&Key::Enter.to_string()).await;
        browser.wait_for("a task", "window.reviewMetrics.taskShown").await;
        let moves = 40;
        for step in 1..=moves {
            browser.press("j").await;
            browser.wait_for("the next task", &format!("window.reviewMetrics.navigations.length === {step}")).await;
        }
        let mut navigations: Vec<f64> =
            serde_json::from_value(browser.eval("window.reviewMetrics.navigations").await).unwrap();
        opens.sort_by(f64::total_cmp);
        navigations.sort_by(f64::total_cmp);
        println!(
            "BENCH review: list of {count} tasks opens in {:.0} ms (median of {}, max {:.0} ms; goal < 1000 ms)",
            percentile(&opens, 0.5),
            opens.len(),
            opens[opens.len() - 1]
        );
        println!(
            "BENCH review: next task in {:.1} ms (median of {moves}, p95 {:.1} ms, max {:.1} ms; goal < 100 ms)",
            percentile(&navigations, 0.5),
            percentile(&navigations, 0.95),
            navigations[navigations.len() - 1]
        );
    });
    runtime.block_on(browser.close());
}
