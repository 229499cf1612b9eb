//! The Docker test's lane (scripts/docker-lane.sh, nextest's wrapper around each
//! Docker test): two Docker tests share the engine, and a shared test can have it to
//! itself for a moment.

use std::os::fd::{BorrowedFd, RawFd};
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, flock};
use rustix::io::{FdFlags, fcntl_getfd, fcntl_setfd};

/// Keeps the lane to this test's own process: docker-lane.sh hands the lane's lock
/// down as an inherited descriptor, and every process the test starts would inherit
/// it too and hold the lock for as long as it lives. A daemon that a test starts and
/// leaves running (the registry, a cluster's forwarders) held the engine alone for
/// ever and hung the suite (CI, 2026-11-27). Marked close-on-exec before the first
/// test runs, the lock stays with this process only.
#[ctor::ctor(unsafe)]
fn keep_the_lane_to_this_process() {
    let Some(fd) = lane_fd() else { return };
    // SAFETY: docker-lane.sh opened this descriptor for the test process; it stays
    // open for the process's whole life.
    let lane = unsafe { BorrowedFd::borrow_raw(fd) };
    if let Ok(flags) = fcntl_getfd(lane) {
        let _ = fcntl_setfd(lane, flags | FdFlags::CLOEXEC);
    }
}

/// The lane's descriptor, when docker-lane.sh runs this test (shared or alone).
fn lane_fd() -> Option<RawFd> {
    std::env::var("SWE_HARVEST_DOCKER_LANE_FD").ok()?.parse().ok()
}

/// Runs `work` with the Docker engine to this test alone, then shares it again: for
/// the part of a test that another test's containers would disturb (the swarm test's
/// swarm, after its demo ran shared). Outside a shared lane (plain
/// `cargo test`, one test at a time; or a test that runs alone anyway) it just runs
/// `work`.
pub fn alone<T>(work: impl FnOnce() -> T) -> T {
    let Some((fd, turnstile)) = shared_lane() else { return work() };
    // SAFETY: docker-lane.sh opened this descriptor for the test and never closes it;
    // the test process holds it from start to end.
    let lane = unsafe { BorrowedFd::borrow_raw(fd) };
    alone_in(lane, &turnstile, work)
}

/// [`alone`] on the lane's lock `lane` (held shared) behind `turnstile`.
fn alone_in<T>(lane: BorrowedFd<'_>, turnstile: &Path, work: impl FnOnce() -> T) -> T {
    // The shared lock goes first: two shared tests that asked for the engine at once
    // while keeping theirs would each wait for the other's forever.
    flock(lane, FlockOperation::Unlock).expect("the lane's lock is released");
    let gate = fs_err::OpenOptions::new().append(true).create(true).open(turnstile).expect("the turnstile opens");
    flock(&gate, FlockOperation::LockExclusive).expect("the turnstile is taken");
    flock(lane, FlockOperation::LockExclusive).expect("the engine is taken alone");
    drop(gate);
    let result = work();
    flock(lane, FlockOperation::LockShared).expect("the engine is shared again");
    result
}

/// The lane's descriptor and turnstile, when docker-lane.sh runs this test shared.
fn shared_lane() -> Option<(RawFd, PathBuf)> {
    let fd = lane_fd()?;
    let turnstile = std::env::var_os("SWE_HARVEST_DOCKER_TURNSTILE")?;
    Some((fd, PathBuf::from(turnstile)))
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd;
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    use super::*;
    use crate::support::project_root;

    /// `scripts/docker-lane.sh LANE bash -c SCRIPT` with its locks in `dir`.
    fn in_lane(dir: &Path, lane: &str, script: &str) -> Child {
        Command::new(project_root().join("scripts/docker-lane.sh"))
            .args([lane, "bash", "-c", script])
            .current_dir(dir)
            .env("SWE_HARVEST_DOCKER_LANE_DIR", dir)
            .spawn()
            .expect("docker-lane.sh runs")
    }

    /// Waits (at most a minute) for the file `name` in `dir`.
    fn wait_for(dir: &Path, name: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !dir.join(name).exists() {
            assert!(Instant::now() < deadline, "{name} never appeared");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits (at most a minute) until some process holds the lock file `name` in `dir`.
    fn wait_until_held(dir: &Path, name: &str) {
        let file = fs_err::OpenOptions::new().append(true).create(true).open(dir.join(name)).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while flock(&file, FlockOperation::NonBlockingLockExclusive).is_ok() {
            flock(&file, FlockOperation::Unlock).unwrap();
            assert!(Instant::now() < deadline, "nobody took {name}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn shared_tests_run_together_and_an_alone_one_waits_for_them_and_goes_first() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        // Two shared tests at once: the first ends only once the second has run.
        let mut first = in_lane(dir, "shared", "while [ ! -e second ]; do sleep 0.02; done");
        assert!(in_lane(dir, "shared", "touch second").wait().unwrap().success());
        assert!(first.wait().unwrap().success());

        // An alone test waits for the shared one that holds the engine ...
        let mut shared =
            in_lane(dir, "shared", "touch shared; while [ ! -e go ]; do sleep 0.02; done; touch shared-done");
        wait_for(dir, "shared");
        let mut alone =
            in_lane(dir, "alone", "if [ -e shared-done ]; then touch alone-after-shared; fi; touch alone-done");
        // ... and, holding the turnstile while it waits, goes before a shared test that
        // comes after it.
        wait_until_held(dir, "swe-harvest-docker-turnstile.lock");
        let mut later = in_lane(dir, "shared", "if [ -e alone-done ]; then touch later-after-alone; fi");
        fs_err::write(dir.join("go"), "").unwrap();
        for child in [&mut shared, &mut alone, &mut later] {
            assert!(child.wait().unwrap().success());
        }
        assert!(dir.join("alone-after-shared").exists(), "the alone test ran while a shared one held the engine");
        assert!(dir.join("later-after-alone").exists(), "a later shared test went before the waiting alone one");
    }

    /// Played by the test binary itself inside docker-lane.sh (the test below): leaves a
    /// process running, as a test that starts a daemon does, and writes its pid.
    #[test]
    #[ignore = "run by a_process_a_test_leaves_running_does_not_keep_the_lane"]
    fn leave_a_process_running() {
        let Some(pid_file) = std::env::var_os("SWE_HARVEST_LANE_TEST_PID_FILE") else { return };
        let started = Command::new("bash")
            .args(["-c", "sleep 60 </dev/null >/dev/null 2>&1 & echo $!"])
            .output()
            .expect("bash starts sleep");
        fs_err::write(pid_file, String::from_utf8_lossy(&started.stdout).trim()).unwrap();
    }

    #[test]
    fn a_process_a_test_leaves_running_does_not_keep_the_lane() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let pid_file = dir.join("left-running.pid");
        let this_binary = std::env::current_exe().unwrap();
        for lane in ["alone", "shared"] {
            let status = Command::new(project_root().join("scripts/docker-lane.sh"))
                .arg(lane)
                .arg(&this_binary)
                .args(["--ignored", "--exact", "support::docker_lane::tests::leave_a_process_running"])
                .env("SWE_HARVEST_DOCKER_LANE_DIR", dir)
                .env("SWE_HARVEST_LANE_TEST_PID_FILE", &pid_file)
                .stdout(std::process::Stdio::null())
                .status()
                .expect("docker-lane.sh runs the test binary");
            assert!(status.success(), "the test in the {lane} lane failed");
            let pid = fs_err::read_to_string(&pid_file).expect("the test left a process running");
            let lingering = Path::new("/proc").join(pid.trim());
            assert!(lingering.exists(), "the process the test left is still running");
            let lock = fs_err::OpenOptions::new().append(true).open(dir.join("swe-harvest-docker-lane.lock")).unwrap();
            let free = flock(&lock, FlockOperation::NonBlockingLockExclusive).is_ok();
            let _ = Command::new("kill").arg(pid.trim()).status();
            assert!(free, "the process a test in the {lane} lane left running holds the lane");
            flock(&lock, FlockOperation::Unlock).unwrap();
            fs_err::remove_file(&pid_file).unwrap();
        }
    }

    #[test]
    fn a_shared_test_has_the_engine_alone_once_the_other_lane_is_empty_and_shares_it_after() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        // This test plays a shared test as docker-lane.sh would start it.
        let lane = fs_err::OpenOptions::new()
            .append(true)
            .create(true)
            .open(dir.join("swe-harvest-docker-lane.lock"))
            .unwrap();
        flock(&lane, FlockOperation::LockShared).unwrap();
        let turnstile = dir.join("swe-harvest-docker-turnstile.lock");
        let mut other =
            in_lane(dir, "shared", "touch other; while [ ! -e release ]; do sleep 0.02; done; touch other-done");
        wait_for(dir, "other");
        let releaser = {
            let dir = dir.to_path_buf();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                fs_err::write(dir.join("release"), "").unwrap();
            })
        };
        let other_was_done = alone_in(lane.as_fd(), &turnstile, || dir.join("other-done").exists());
        assert!(other_was_done, "the engine was taken alone while the other lane's test still ran");
        releaser.join().unwrap();
        assert!(other.wait().unwrap().success());
        // Shared again: another shared test runs beside this one, an alone one cannot.
        assert!(in_lane(dir, "shared", "true").wait().unwrap().success());
        let mut alone = in_lane(dir, "alone", "touch alone-ran");
        std::thread::sleep(Duration::from_millis(300));
        assert!(!dir.join("alone-ran").exists(), "an alone test ran beside a shared one");
        drop(lane);
        assert!(alone.wait().unwrap().success());
    }

    /// What a test module's source says when its tests drive the Docker engine.
    const DRIVES_THE_ENGINE: &[&str] = &[
        "with_base_images",
        "base_images_missing",
        "DockerBackend",
        "Docker::connect",
        "validate_command",
        "run_harness",
        "new(\"docker\")",
    ];

    #[test]
    fn every_test_module_that_drives_the_engine_runs_in_a_docker_lane() {
        let config: toml::Table =
            toml::from_str(&fs_err::read_to_string(project_root().join(".config/nextest.toml")).unwrap()).unwrap();
        let profile = &config["profile"]["default"];
        let filters = |key: &str, wanted: &dyn Fn(&toml::Table) -> bool| -> Vec<String> {
            profile[key]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|entry| entry.as_table())
                .filter(|entry| wanted(entry))
                .map(|entry| entry["filter"].as_str().unwrap().to_string())
                .collect()
        };
        let grouped = filters("overrides", &|entry| entry.get("test-group").and_then(|g| g.as_str()) == Some("docker"));
        let laned = filters("scripts", &|entry| entry.contains_key("run-wrapper"));
        assert!(!grouped.is_empty() && !laned.is_empty(), "nextest.toml has no docker group or lane");
        let mut outside = Vec::new();
        for file in fs_err::read_dir(project_root().join("tests")).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_none_or(|extension| extension != "rs") {
                continue;
            }
            let source = fs_err::read_to_string(&path).unwrap();
            if !DRIVES_THE_ENGINE.iter().any(|marker| source.contains(marker)) {
                continue;
            }
            let module = path.file_stem().unwrap().to_string_lossy().into_owned();
            let selector = format!("test(/^{module}::/)");
            if !grouped.iter().any(|filter| filter.contains(&selector))
                || !laned.iter().any(|filter| filter.contains(&selector))
            {
                outside.push(module);
            }
        }
        assert!(
            outside.is_empty(),
            "these test modules drive the Docker engine outside nextest's docker group and lanes \
             (.config/nextest.toml): {outside:?}"
        );
    }
}
