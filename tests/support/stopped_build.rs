//! Stopping a run at a chosen point of an environment build (issue 66), and what it
//! left. The engine's own events say when the run gets to the point; the run is frozen
//! at once (SIGSTOP), the point is checked while the run cannot move on, and the
//! signal is sent with SIGCONT. The points:
//! - the build's network is made and its proxy not started yet;
//! - the build's install step (the step that runs the project's `setup.py`) runs;
//! - the install step's command has ended and the engine commits its container (the
//!   `die` of its container, before its `destroy`).
//!
//! Then [`Stopped::assert_nothing_left`]: no container or network labelled with the
//! run, the build network gone, and no container that the engine made on it.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::python_project::{Project, Scenario};
use super::stderr;
use super::workspace::{ADD_NEGATIVE, Workspace, row_of};

/// Where in an environment build the run is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildPoint {
    /// The build's network is made, its proxy not started.
    BeforeTheProxyStarts,
    /// The install step's container runs.
    WhileTheInstallStepRuns,
    /// The install step's command has ended; its container is being committed.
    WhileTheInstallStepIsCommitted,
}

/// The signals that stop a run: cleanly (SIGTERM, Ctrl-C), or not at all (SIGKILL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    Term,
    CtrlC,
    Kill,
}

impl StopSignal {
    fn name(self) -> &'static str {
        match self {
            StopSignal::Term => "TERM",
            StopSignal::CtrlC => "INT",
            StopSignal::Kill => "KILL",
        }
    }
}

/// A `setup.py` for the calculator project that writes `ballast_mib` MiB into the
/// environment and sleeps `sleep_secs` while the environment image is built (its
/// steps reach the registries through the build proxy: `HTTPS_PROXY` is set), once
/// per step, and does neither when a task's run reinstalls the project offline.
pub fn slow_setup_py(sleep_secs: u32, ballast_mib: u32) -> String {
    format!(
        "import os\nimport time\n\nfrom setuptools import setup\n\n\
         MARKER = '/tmp/swe-harvest-test-slow-setup'\n\
         if os.environ.get('HTTPS_PROXY') and not os.path.exists(MARKER):\n    \
             open(MARKER, 'w').close()\n    \
             with open('/opt/venv/swe-harvest-test-ballast', 'wb') as ballast:\n        \
                 for _ in range({ballast_mib}):\n            \
                     ballast.write(os.urandom(1 << 20))\n    \
             time.sleep({sleep_secs})\n\n\
         setup()\n"
    )
}

/// A line of the engine's events.
struct Event {
    kind: String,
    action: String,
    id: String,
    name: String,
}

/// `docker events` for networks and containers, from before the run starts.
pub struct Events {
    watcher: Child,
    lines: Receiver<String>,
}

impl Events {
    pub fn watch() -> Events {
        // From this second on, also what happens before the watcher has subscribed.
        let since = (unix_nanos() / 1_000_000_000).to_string();
        let mut watcher = Command::new("docker")
            .args(["events", "--since", &since, "--filter", "type=network", "--filter", "type=container"])
            .args(["--format", "{{.Type}} {{.Action}} {{.Actor.ID}} {{.Actor.Attributes.name}}"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("docker events runs");
        let stdout = watcher.stdout.take().expect("piped");
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
        Events { watcher, lines }
    }

    fn next(&self, wait: Duration) -> Result<Event, RecvTimeoutError> {
        let line = self.lines.recv_timeout(wait)?;
        let mut words = line.splitn(4, ' ');
        let mut word = || words.next().unwrap_or_default().to_string();
        Ok(Event { kind: word(), action: word(), id: word(), name: word() })
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        let _ = self.watcher.kill();
        let _ = self.watcher.wait();
    }
}

fn kill(signal: &str, pid: u32) {
    let sent = Command::new("kill").args([&format!("-{signal}"), &pid.to_string()]).status().expect("kill runs");
    assert!(sent.success(), "kill -{signal} {pid} failed");
}

fn docker(args: &[&str]) -> Option<String> {
    let output = Command::new("docker").args(args).output().expect("docker runs");
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// What a stopped run made: its run label, its build network and the containers the
/// engine made on that network (its proxy, the network's probe, the build's steps).
#[derive(Debug)]
pub struct Stopped {
    pub run: String,
    pub network: String,
    pub containers: Vec<String>,
    /// Whether the run was stopped at the point (`false`: the point had passed when the
    /// run was frozen, and it was stopped just after).
    pub at_the_point: bool,
    /// When the signal was sent, in nanoseconds since the epoch (the engine's events
    /// are dated so).
    pub signalled_at_nanos: u128,
    /// The install step's container, when the point is one of the install step's.
    pub step: Option<String>,
}

impl Stopped {
    /// Fails the test naming whatever of the run is still on the engine.
    pub fn assert_nothing_left(&self) {
        let mut left = Vec::new();
        let label = format!("label=swe-harvest.run={}", self.run);
        if let Some(ids) = docker(&["ps", "-aq", "--filter", &label]).filter(|ids| !ids.is_empty()) {
            left.push(format!("containers of the run: {ids}"));
        }
        if let Some(ids) = docker(&["network", "ls", "-q", "--filter", &label]).filter(|ids| !ids.is_empty()) {
            left.push(format!("networks of the run: {ids}"));
        }
        if docker(&["network", "inspect", &self.network]).is_some() {
            left.push(format!("the build network {}", self.network));
        }
        for id in &self.containers {
            if let Some(found) =
                docker(&["ps", "-aq", "--no-trunc", "--filter", &format!("id={id}")]).filter(|found| !found.is_empty())
            {
                let status =
                    docker(&["ps", "-a", "--filter", &format!("id={found}"), "--format", "{{.Names}} {{.Status}}"]);
                left.push(format!("the container {found} made on the build network ({})", status.unwrap_or_default()));
            }
        }
        assert!(left.is_empty(), "left behind by the stopped run: {}", left.join("; "));
    }

    /// Whether the run's build network and its proxy are still there (what SIGKILL
    /// leaves to the next run's sweep).
    pub fn proxy_and_network_left(&self) -> bool {
        docker(&["network", "inspect", &self.network]).is_some()
            && docker(&["inspect", &format!("{}-proxy", self.network)]).is_some()
    }

    /// Whether the install step's container was still there when the run got its
    /// signal: its `destroy` (after its commit) came after the signal.
    pub fn step_outlived_the_signal(&self) -> bool {
        let Some(step) = &self.step else { return false };
        let since = (self.signalled_at_nanos / 1_000_000_000).saturating_sub(600).to_string();
        let until = (unix_nanos() / 1_000_000_000 + 1).to_string();
        let destroyed = docker(&[
            "events",
            "--since",
            &since,
            "--until",
            &until,
            "--filter",
            &format!("container={step}"),
            "--filter",
            "event=destroy",
            "--format",
            "{{.TimeNano}}",
        ])
        .unwrap_or_default();
        let destroyed: Vec<u128> = destroyed.lines().filter_map(|line| line.trim().parse().ok()).collect();
        !destroyed.is_empty() && destroyed.iter().all(|&at| at > self.signalled_at_nanos)
    }
}

fn unix_nanos() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos()
}

/// The `swe-harvest.run` label of a build network, if it is one of `pid`'s.
fn run_of(network: &str, pid: u32) -> Option<String> {
    let run = docker(&["network", "inspect", "--format", "{{index .Labels \"swe-harvest.run\"}}", network])?;
    (run.split('/').nth(1) == Some(pid.to_string().as_str())).then_some(run)
}

/// The network mode and command of a container, while it is there.
fn network_and_command(id: &str) -> Option<(String, String)> {
    let text = docker(&["inspect", "--format", "{{.HostConfig.NetworkMode}} {{json .Config.Cmd}}", id])?;
    let (network, command) = text.split_once(' ')?;
    Some((network.to_string(), command.to_string()))
}

/// Whether a container is there and in `state` (`running`, `exited`, ...).
fn in_state(id: &str, state: &str) -> bool {
    docker(&["inspect", "--format", "{{.State.Status}}", id]).is_some_and(|status| status == state)
}

/// The install step's command (the Python environment's one step after the copy).
const INSTALL_STEP: &str = "tar -xf /tmp/swe-harvest-testbed.tar";

/// Waits (at most `limit`) until `child` (a swe-harvest run whose events `events`
/// watches from before its start) gets to `point`, freezes it, checks the point, and
/// stops it with `signal`; waits for it to exit (1, "interrupted") and for the events
/// of its last moments. Panics when the run ends first.
pub fn stop_at(events: &Events, child: Child, point: BuildPoint, signal: StopSignal, limit: Duration) -> Stopped {
    let pid = child.id();
    let deadline = Instant::now() + limit;
    let mut child = child;
    let mut ours: Option<(String, String)> = None;
    let mut containers: Vec<String> = Vec::new();
    let (at_the_point, step) = loop {
        assert!(Instant::now() < deadline, "the run did not get to {point:?} within {}s", limit.as_secs());
        let event = match events.next(Duration::from_millis(500)) {
            Ok(event) => event,
            Err(RecvTimeoutError::Timeout) => {
                if let Some(status) = child.try_wait().unwrap() {
                    let output = child.wait_with_output().unwrap();
                    panic!("the run ended ({status}) before {point:?}: {}", stderr(&output));
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => panic!("docker events stopped"),
        };
        match (event.kind.as_str(), event.action.as_str(), &ours) {
            ("network", "create", None) if event.name.starts_with("swe-harvest-build-") => {
                // Frozen before anything else: the proxy starts within a second.
                let freeze = point == BuildPoint::BeforeTheProxyStarts;
                if freeze {
                    kill("STOP", pid);
                }
                match run_of(&event.name, pid) {
                    Some(run) => {
                        let proxy = format!("{}-proxy", event.name);
                        ours = Some((event.name, run));
                        if freeze {
                            break (!in_state(&proxy, "running"), None);
                        }
                    }
                    None if freeze => kill("CONT", pid),
                    None => {}
                }
            }
            ("container", "create", Some((network, _)))
                if network_and_command(&event.id).is_some_and(|(mode, _)| &mode == network) =>
            {
                containers.push(event.id);
            }
            ("container", "start", Some((network, _))) if point == BuildPoint::WhileTheInstallStepRuns => {
                let is_step = network_and_command(&event.id)
                    .is_some_and(|(mode, command)| &mode == network && command.contains(INSTALL_STEP));
                if is_step {
                    // (Its setup.py sleeps: the step still runs when it is checked.)
                    kill("STOP", pid);
                    break (in_state(&event.id, "running"), Some(event.id));
                }
            }
            ("container", "die", Some((network, _))) if point == BuildPoint::WhileTheInstallStepIsCommitted => {
                let is_step = network_and_command(&event.id)
                    .is_some_and(|(mode, command)| &mode == network && command.contains(INSTALL_STEP));
                if is_step {
                    kill("STOP", pid);
                    // Still there: its image is being committed (it goes once committed).
                    break (in_state(&event.id, "exited"), Some(event.id));
                }
            }
            _ => {}
        }
    };
    let (network, run) = ours.expect("the run's build network was seen");
    kill(signal.name(), pid);
    let signalled_at_nanos = unix_nanos();
    // (A killed run is gone already: nothing to continue.)
    let _ = Command::new("kill").args(["-CONT", &pid.to_string()]).status();
    let output = child.wait_with_output().unwrap();
    if signal == StopSignal::Kill {
        assert_eq!(output.status.code(), None, "SIGKILL ends the run: {}", stderr(&output));
    } else {
        assert_eq!(output.status.code(), Some(1), "an interrupted run is not a success: {}", stderr(&output));
        assert!(stderr(&output).contains("interrupted"), "{}", stderr(&output));
    }
    // The events of the run's last moments (containers made on its network); other
    // tests' events may keep coming, so for two seconds.
    let drained = Instant::now() + Duration::from_secs(2);
    while let Some(event) = drained.checked_duration_since(Instant::now()).and_then(|left| events.next(left).ok()) {
        if event.kind == "container"
            && event.action == "create"
            && network_and_command(&event.id).is_none_or(|(mode, _)| mode == network)
        {
            containers.push(event.id);
        }
    }
    let stopped = Stopped { run, network, containers, at_the_point, signalled_at_nanos, step };
    eprintln!("stopped by SIG{} at {point:?}: {stopped:?}", signal.name());
    stopped
}

/// A workspace with the calculator project's mirror, whose `setup.py` is `setup_py`
/// and whose environment no run has built (a file of its own makes its content key
/// new), and the row of a task that fixes `add`.
pub fn a_row_with_a_cold_environment(setup_py: &str) -> (Workspace, serde_json::Value) {
    let workspace = Workspace::with_docker();
    let nonce = format!("{} {:?}\n", std::process::id(), SystemTime::now());
    let project = Project::with_files(&[("setup.py", setup_py), ("nonce.txt", &nonce)]);
    let candidate = project.candidate(66, &Scenario::fixing_add("negative"));
    project.mirror_into(workspace.data_dir());
    (workspace, row_of(&candidate, &[], &[]))
}

/// The environment and arguments of a validate run besides the test machine's
/// (another backend and its registry).
pub type Extra<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str]);

/// `validate --input` of `row` (with `extra`), stopped by `signal` at `point` of its
/// environment's build.
pub fn stop_rows_run(
    workspace: &Workspace,
    row: &serde_json::Value,
    point: BuildPoint,
    signal: StopSignal,
    (env, args): Extra<'_>,
) -> Stopped {
    let input = workspace.path("rows.jsonl");
    fs_err::write(&input, format!("{row}\n")).unwrap();
    let out = workspace.path("out/rows.jsonl");
    let events = Events::watch();
    let child = workspace
        .harvest
        .validate_command()
        .args(["validate", "--input", input.to_str().unwrap(), "--out", out.to_str().unwrap(), "--runs", "1"])
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    stop_at(&events, child, point, signal, Duration::from_secs(600))
}

/// No other backend: the local engine.
pub const LOCAL: Extra<'static> = (&[], &[]);

/// The next `validate --input` of `row` (with `extra`) builds its environment and
/// labels it, and leaves no container; the environment's image is removed after.
pub fn resumes_and_labels(workspace: &Workspace, row: &serde_json::Value, (env, args): Extra<'_>) {
    let mut all = vec!["--runs", "1"];
    all.extend_from_slice(args);
    let written = workspace.validate_rows("resumed", std::slice::from_ref(row), env, &all).succeeded().row();
    let image = written["diagnosis"]["image"].as_str().unwrap_or_default().to_string();
    let _ = Command::new("docker").args(["image", "rm", "-f", &image]).output();
    assert_eq!(written["diagnosis"]["status"], "labelled", "{written}");
    assert_eq!(written["FAIL_TO_PASS"], format!("[\"{ADD_NEGATIVE}\"]"), "{written}");
    assert!(workspace.containers().is_empty(), "the resumed run left containers");
}

/// Stopped by SIGTERM, then by Ctrl-C, before the build's proxy starts, `validate
/// --input` (with `extra`) leaves nothing of either run on the engine (nor what
/// `check` looks for), and the next run builds the environment and labels the row.
/// The proxy starts within a second of its network: a busy machine can miss that
/// window, and the run is then stopped just after it (and must leave nothing either);
/// it is tried again, up to three times.
pub fn stopped_before_the_proxy_starts(extra: Extra<'_>, check: &dyn Fn(&Workspace)) {
    let (workspace, row) = a_row_with_a_cold_environment(&slow_setup_py(0, 0));
    for signal in [StopSignal::Term, StopSignal::CtrlC] {
        let stopped_at_the_point = (0..3).any(|_| {
            let stopped = stop_rows_run(&workspace, &row, BuildPoint::BeforeTheProxyStarts, signal, extra);
            stopped.assert_nothing_left();
            check(&workspace);
            stopped.at_the_point
        });
        assert!(stopped_at_the_point, "{signal:?} never came before the proxy started");
    }
    resumes_and_labels(&workspace, &row, extra);
    check(&workspace);
}

/// The same, with the build's install step running (its `setup.py` sleeps 30 s): the
/// step's container, the proxy and the network go with the run.
pub fn stopped_while_the_install_step_runs(extra: Extra<'_>, check: &dyn Fn(&Workspace)) {
    let (workspace, row) = a_row_with_a_cold_environment(&slow_setup_py(30, 0));
    for signal in [StopSignal::Term, StopSignal::CtrlC] {
        let stopped = stop_rows_run(&workspace, &row, BuildPoint::WhileTheInstallStepRuns, signal, extra);
        assert!(stopped.at_the_point, "the install step had ended before {signal:?}: {stopped:?}");
        stopped.assert_nothing_left();
        check(&workspace);
    }
    resumes_and_labels(&workspace, &row, extra);
    check(&workspace);
}

/// The same, with the install step's command done and its container being committed
/// (its `setup.py` writes 300 MiB, which takes the engine a second or more to commit).
/// The commit may end before the engine sees the build stopped, and the next build
/// then finds the step in its cache: each attempt gets an environment of its own. A
/// signal that came after the commit (a busy machine) must leave nothing either, and
/// is tried again, up to three times.
pub fn stopped_while_the_install_step_is_committed(extra: Extra<'_>, check: &dyn Fn(&Workspace)) {
    for signal in [StopSignal::Term, StopSignal::CtrlC] {
        let stopped_at_the_point = (0..3).any(|_| {
            let (workspace, row) = a_row_with_a_cold_environment(&slow_setup_py(0, 300));
            let stopped = stop_rows_run(&workspace, &row, BuildPoint::WhileTheInstallStepIsCommitted, signal, extra);
            stopped.assert_nothing_left();
            check(&workspace);
            let at_the_point = stopped.at_the_point && stopped.step_outlived_the_signal();
            if at_the_point {
                resumes_and_labels(&workspace, &row, extra);
                check(&workspace);
            }
            at_the_point
        });
        assert!(stopped_at_the_point, "{signal:?} never came before the install step's commit ended");
    }
}
