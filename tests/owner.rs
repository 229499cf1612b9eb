//! One owner per data dir: the commands that write take the data dir's lock and a
//! second one is refused with the holder's PID; `status` and `export` never take it.
//! Sweeps remove only the containers of runs that are gone. (Two concurrent
//! `validate` runs and their containers: tests/validate.rs.)

use std::collections::BTreeSet;
use std::process::{Command, Stdio};

use swe_harvest::lock::{DataDirLock, Holder, LOCK_FILE, LockError};
use swe_harvest::process::RunId;
use swe_harvest::sandbox::{DATA_DIR_LABEL, RUN_LABEL};

use crate::support::python_project::DockerGuard;
use crate::support::{SweHarvest, stderr, stdout};

#[test]
fn a_writer_is_refused_with_the_holders_pid_while_status_and_export_still_work() {
    let harvest = SweHarvest::new();
    // A first run creates the store (the extract itself fails: there is no mirror).
    let _ = harvest.run(&["extract", "--repo", "acme/calc"]);
    let holder = DataDirLock::acquire(&harvest.data_dir, "swe-harvest validate --runs 3").unwrap();

    for args in [
        &["crawl", "--repo", "acme/calc", "--api-url", "http://127.0.0.1:9"][..],
        &["extract", "--repo", "acme/calc"],
        &["validate", "--runs", "1"],
        &["release", "--name", "x", "--version", "1"],
    ] {
        let refused = harvest.run(args);
        let text = stderr(&refused);
        assert_eq!(refused.status.code(), Some(2), "{args:?}: {text}");
        assert!(text.contains(&format!("PID {}", std::process::id())), "{args:?} names the holder: {text}");
        assert!(text.contains("swe-harvest validate --runs 3"), "{args:?} names its command: {text}");
        assert!(text.contains("hint:") && text.contains("--data-dir"), "{args:?} says what to do: {text}");
    }

    let status = harvest.run(&["status"]);
    assert!(status.status.success(), "status reads while another process owns the data dir: {}", stderr(&status));
    harvest.exported("candidates", "jsonl"); // export reads too

    drop(holder);
    let after = harvest.run(&["extract", "--repo", "acme/calc"]);
    assert!(!stderr(&after).contains("in use by another"), "free once the holder is gone: {}", stderr(&after));
}

#[test]
fn the_lock_file_names_the_running_holder_and_a_killed_holder_leaves_no_stale_lock() {
    let harvest = SweHarvest::new();
    // An API that accepts connections and never answers: a writer that runs until killed.
    let silent_api = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let api_url = format!("http://{}", silent_api.local_addr().unwrap());
    let mut child = harvest
        .command()
        .args(["crawl", "--repo", "acme/calc", "--api-url", &api_url])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lock_path = harvest.data_dir.join(LOCK_FILE);
    // Probing with `acquire` could win the race and turn the crawl away: read the file.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let holder = loop {
        let written = fs_err::read_to_string(&lock_path).ok();
        if let Some(holder) = written.and_then(|text| serde_json::from_str::<Holder>(text.trim()).ok()) {
            break holder;
        }
        assert!(child.try_wait().unwrap().is_none(), "the crawl ended before it could be observed");
        assert!(std::time::Instant::now() < deadline, "the crawl never took the lock");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(holder.pid, child.id());
    assert!(holder.command.contains("crawl --repo acme/calc"), "{holder:?}");
    let refused = DataDirLock::acquire(&harvest.data_dir, "test").unwrap_err();
    assert!(matches!(&refused, LockError::Held { holder: Some(held), .. } if held.pid == child.id()), "{refused}");

    child.kill().unwrap(); // SIGKILL: no destructor runs.
    child.wait().unwrap();
    DataDirLock::acquire(&harvest.data_dir, "test").expect("the kernel released the killed holder's lock");
}

/// Regression: three processes on a fresh data dir raced in the store migrations
/// ("table repositories already exists"). Now one writer owns the data dir, the
/// others are refused, and readers opening the store meanwhile migrate it safely.
#[test]
fn writers_and_readers_started_at_once_on_a_fresh_data_dir_never_race_in_the_migrations() {
    let harvest = SweHarvest::new();
    let mut children = Vec::new();
    for index in 0..6 {
        let mut command = harvest.command();
        if index % 2 == 0 {
            command.args(["extract", "--repo", "acme/calc"]);
        } else {
            command.arg("status");
        }
        children.push((
            index,
            command.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).spawn().unwrap(),
        ));
    }
    let mut writers_that_ran = 0;
    for (index, child) in children {
        let output = child.wait_with_output().unwrap();
        let text = stderr(&output);
        assert!(!text.contains("already exists") && !text.contains("migrate"), "process {index}: {text}");
        if index % 2 == 0 && !text.contains("in use by another swe-harvest process") {
            writers_that_ran += 1;
        }
        if text.contains("in use by another swe-harvest process") {
            assert_eq!(output.status.code(), Some(2), "{text}");
        }
    }
    assert!(writers_that_ran >= 1, "at least one writer got the data dir");
}

/// An image with no files: enough for containers that are created and never started.
fn empty_image() -> &'static str {
    let tag = "swe-harvest-test/empty:1";
    let present = Command::new("docker").args(["image", "inspect", tag]).output().unwrap().status.success();
    if !present {
        let mut import = Command::new("docker")
            .args(["import", "-", tag])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let mut archive = tar::Builder::new(import.stdin.take().unwrap());
        archive.finish().unwrap();
        drop(archive);
        assert!(import.wait().unwrap().success(), "docker import of an empty image failed");
    }
    tag
}

fn create_container(image: &str, data_dir_label: &str, run: Option<&str>) -> String {
    let mut command = Command::new("docker");
    command.args(["create", "--label", &format!("{DATA_DIR_LABEL}={data_dir_label}")]);
    if let Some(run) = run {
        command.args(["--label", &format!("{RUN_LABEL}={run}")]);
    }
    let output = command.args([image, "true"]).output().unwrap();
    assert!(output.status.success(), "docker create failed: {}", stderr(&output));
    stdout(&output).trim().to_string()
}

/// Regression: validate's start-up sweep removed every container labelled with the
/// data dir, also the live ones of another process, whose runs were then stored as
/// failures. Now it removes only containers whose run is gone.
#[test]
fn a_sweep_removes_the_containers_of_gone_runs_and_leaves_those_of_live_runs() {
    let harvest = SweHarvest::new();
    let docker = DockerGuard::require(&harvest.data_dir);
    let label = fs_err::canonicalize(&harvest.data_dir).unwrap().display().to_string();
    let image = empty_image();

    let mut live_process = Command::new("sleep").arg("600").spawn().unwrap();
    let live_other = RunId::of_process(live_process.id()).unwrap();
    let mut finished = Command::new("true").spawn().unwrap();
    let gone = RunId::of_process(finished.id()).unwrap();
    finished.wait().unwrap();
    let this_run = RunId::current().clone();
    let reused_pid = RunId { start_ticks: this_run.start_ticks + 1, ..this_run.clone() };
    let other_host = RunId { host: format!("{}-elsewhere", this_run.host), ..this_run.clone() };

    let of_this_run = create_container(image, &label, Some(&this_run.to_string()));
    let of_live_other = create_container(image, &label, Some(&live_other.to_string()));
    let of_other_host = create_container(image, &label, Some(&other_host.to_string()));
    create_container(image, &label, Some(&gone.to_string()));
    create_container(image, &label, Some(&reused_pid.to_string()));
    create_container(image, &label, None);

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let sweep = || {
        runtime.block_on(async {
            let backend = swe_harvest::sandbox::connect(swe_harvest::sandbox::BackendKind::Local).await.unwrap();
            backend.sweep(&label).await
        })
    };
    let short = |ids: Vec<String>| -> BTreeSet<String> { ids.iter().map(|id| id[..12].to_string()).collect() };
    let expect = |ids: &[&String]| -> BTreeSet<String> { ids.iter().map(|id| id[..12].to_string()).collect() };

    assert_eq!(sweep(), 3, "the gone run's, the reused PID's and the unlabelled container");
    assert_eq!(short(docker.containers()), expect(&[&of_this_run, &of_live_other, &of_other_host]));

    live_process.kill().unwrap();
    live_process.wait().unwrap();
    assert_eq!(sweep(), 1, "the other process is gone now");
    assert_eq!(short(docker.containers()), expect(&[&of_this_run, &of_other_host]));
}
