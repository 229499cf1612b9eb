//! The registry and the swarm backend on a real cluster made by `scripts/cluster.sh`
//! on this machine: the host's engine as manager plus engines in network namespaces.
//! Each test brings the cluster up and takes it down (also when it fails); they skip,
//! saying why, only where this process is not root or cannot make a network namespace.
//!
//! - `release --images --push` reaches the local registry, and the image pulls back;
//! - the demo's tasks validated on the swarm get the labels the local engine gave them,
//!   on more than one node, and leave no service, network or container on any node;
//!   `evaluate --backend swarm` resolves every task with the gold patches, none with
//!   empty ones;
//! - the sweep removes the services and networks of a run that is gone;
//! - a run removes the job images it used from the registry and every node when it
//!   ends; `gc` removes those older than its age (a killed run's), and only those;
//! - `--backend swarm` without `validate.registry`, and an unknown backend, are clear errors;
//! - a hostile job (network probe, fork storm, memory hog, a file past its size limit) on a worker is contained;
//! - a worker killed while it runs a job costs that placement only: the job ends on
//!   another node with its whole output; identical jobs started at once make their
//!   image once.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use swe_harvest::sandbox::swarm::{SwarmBackend, SwarmOptions};
use swe_harvest::sandbox::{Backend, Job, Limits, Owner, script};

use crate::support::{SweHarvest, docker_lane, failure, project_root, stderr, stdout, stopped_build};

/// Why the cluster cannot be made here, if it cannot.
fn unavailable() -> Option<String> {
    let uid = Command::new("id").arg("-u").output().map(|output| stdout(&output).trim().to_string());
    if uid.ok().as_deref() != Some("0") {
        return Some("not root: the test cluster needs network namespaces and extra Docker engines".into());
    }
    let probe = format!("swh-probe-{}", std::process::id());
    let made = Command::new("ip").args(["netns", "add", &probe]).output();
    if !made.is_ok_and(|output| output.status.success()) {
        return Some("`ip netns add` does not work here (no network namespaces)".into());
    }
    let _ = Command::new("ip").args(["netns", "del", &probe]).output();
    None
}

fn script_run(args: &[&str]) -> Output {
    Command::new("bash").arg(project_root().join("scripts/cluster.sh")).args(args).output().expect("bash runs")
}

/// A swarm of `nodes` nodes; `scripts/cluster.sh down` when dropped.
struct Cluster {
    registry: String,
    nodes: u32,
}

impl Cluster {
    /// `None` (after saying why) where the cluster cannot be made.
    fn up(nodes: u32) -> Option<Cluster> {
        if let Some(why) = unavailable() {
            eprintln!("skipped: {why}");
            return None;
        }
        let output = script_run(&["up", &nodes.to_string()]);
        let cluster = Cluster { registry: stdout(&output).trim().to_string(), nodes };
        assert!(output.status.success(), "cluster.sh up {nodes} failed:\n{}", stderr(&output));
        Some(cluster)
    }

    /// The sockets of the extra engines.
    fn worker_sockets(&self) -> Vec<String> {
        (2..=self.nodes).map(|node| format!("unix:///run/swh-cluster/node{node}/docker.sock")).collect()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let output = script_run(&["down"]);
        if !output.status.success() {
            eprintln!("cluster.sh down failed: {}", stderr(&output));
        }
    }
}

fn docker(host: Option<&str>, args: &[&str]) -> String {
    let mut command = Command::new("docker");
    if let Some(host) = host {
        command.args(["-H", host]);
    }
    let output = command.args(args).output().expect("docker runs");
    stdout(&output)
}

/// Waits (30 s at most) until no engine of the cluster has a container labelled
/// `label=value`, and the manager no service or network; panics naming what is left.
fn assert_nothing_left(cluster: &Cluster, label: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut left = Vec::new();
        for host in std::iter::once(None).chain(cluster.worker_sockets().iter().map(|socket| Some(socket.as_str()))) {
            let containers = docker(host, &["ps", "-a", "-q", "--filter", &format!("label={label}")]);
            if !containers.trim().is_empty() {
                left.push(format!("containers on {}: {}", host.unwrap_or("the host"), containers.trim()));
            }
        }
        let services = docker(None, &["service", "ls", "-q", "--filter", &format!("label={label}")]);
        if !services.trim().is_empty() {
            left.push(format!("services: {}", services.trim()));
        }
        let networks = docker(None, &["network", "ls", "-q", "--filter", &format!("label={label}")]);
        if !networks.trim().is_empty() {
            left.push(format!("networks: {}", networks.trim()));
        }
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "left behind after 30 s: {}", left.join("; "));
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Runs the offline demo (local backend) into `harvest`'s work dir; returns the
/// release's `tasks.jsonl`.
fn demo(harvest: &SweHarvest) -> PathBuf {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_swe-harvest")).parent().unwrap();
    let output = Command::new("bash")
        .arg(project_root().join("scripts/demo.sh"))
        .env("SWE_HARVEST_DEMO_BIN_DIR", bin_dir)
        .env("SWE_HARVEST_DEMO_DIR", harvest.work_dir.path())
        .env_remove("GITHUB_TOKEN")
        .env_remove("GITHUB_TOKENS")
        .output()
        .unwrap();
    assert!(output.status.success(), "the demo failed:\n{}\n{}", stdout(&output), stderr(&output));
    harvest.data_dir.join("releases/demo/1/tasks.jsonl")
}

fn rows(path: &Path) -> Vec<serde_json::Value> {
    fs_err::read_to_string(path).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

#[test]
fn release_push_reaches_the_local_registry_and_pulls_back() {
    if let Some(why) = unavailable() {
        eprintln!("skipped: {why}");
        return;
    }
    let registry = Command::new("bash").arg(project_root().join("scripts/registry.sh")).arg("up").output().unwrap();
    assert!(registry.status.success(), "{}", stderr(&registry));
    let registry = stdout(&registry).trim().to_string();
    let harvest = SweHarvest::new();
    let demo_tasks = rows(&demo(&harvest)).len();

    let version = format!("push-{}", std::process::id());
    let released = harvest
        .command()
        .env("SWE_HARVEST_RELEASE__REGISTRY", &registry)
        .args(["release", "--name", "demo", "--version", &version, "--images", "--push"])
        .output()
        .unwrap();
    assert!(released.status.success(), "{}", stderr(&released));
    let dataset = PathBuf::from(stdout(&released).trim()).join("tasks.jsonl");
    let released_rows = rows(&dataset);
    assert_eq!(released_rows.len(), demo_tasks);
    for row in &released_rows {
        let image = row["image"].as_str().unwrap();
        assert!(image.starts_with(&format!("{registry}/")), "the row names the pushed image: {image}");
        let local_tag = image.strip_prefix(&format!("{registry}/")).unwrap();
        let local_id = docker(None, &["image", "inspect", "-f", "{{.Id}}", local_tag]).trim().to_string();
        // The registry has it: removed here, then pulled back, it is the same image.
        docker(None, &["image", "rm", image]);
        assert!(docker(None, &["image", "ls", "-q", image]).trim().is_empty(), "{image} was removed");
        let pulled = Command::new("docker").args(["pull", "-q", image]).output().unwrap();
        assert!(pulled.status.success(), "pulling {image} back: {}", stderr(&pulled));
        let pulled_id = docker(None, &["image", "inspect", "-f", "{{.Id}}", image]).trim().to_string();
        assert_eq!(pulled_id, local_id, "{image} pulled back is the image that was pushed");
        docker(None, &["image", "rm", "-f", image, local_tag]);
    }
}

#[test]
fn swarm_validation_and_evaluation_of_the_demo_give_the_local_results_on_several_nodes_and_leave_nothing() {
    if let Some(why) = unavailable() {
        eprintln!("skipped: {why}");
        return;
    }
    // The demo (its environment images built on an empty engine: minutes) shares the
    // engine with the other Docker tests; the swarm has it alone.
    let harvest = SweHarvest::new();
    let tasks = demo(&harvest);
    docker_lane::alone(|| on_the_swarm(&harvest, &tasks));
}

/// The swarm test after the local demo: the demo's tasks validated and evaluated on a
/// swarm of 3 nodes.
fn on_the_swarm(harvest: &SweHarvest, tasks: &Path) {
    let Some(cluster) = Cluster::up(3) else { return };
    let local = rows(tasks);

    // A fresh data dir: its runs cannot come from the demo's store.
    let fresh = SweHarvest::new();
    let world = harvest.work_dir.path().join("world/repos/{owner}__{name}.git");
    let mirrored = fresh.run(&[
        "mirror",
        "--repo",
        "demo-org/calculator",
        "demo-org/textkit",
        "demo-org/gounits",
        "--clone-url",
        world.to_str().unwrap(),
    ]);
    assert!(mirrored.status.success(), "{}", stderr(&mirrored));
    let out = fresh.path("swarm.jsonl");
    let since = unix_seconds();
    let validated = fresh
        .command()
        .env("SWE_HARVEST_VALIDATE__REGISTRY", &cluster.registry)
        .env("SWE_HARVEST_VALIDATE__EXTRA_CA_FILE", "/etc/ssl/certs/ca-certificates.crt")
        .args(["validate", "--input", tasks.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .args(["--backend", "swarm", "--runs", "4", "--workers", "3"])
        .output()
        .unwrap();
    assert!(validated.status.success(), "{}", stderr(&validated));
    let swarm = rows(&out);
    assert_eq!(swarm.len(), local.len());
    for (local, swarm) in local.iter().zip(&swarm) {
        assert_eq!(local["instance_id"], swarm["instance_id"]);
        for field in ["FAIL_TO_PASS", "PASS_TO_PASS"] {
            assert_eq!(
                local[field], swarm[field],
                "{} {field}: the swarm's labels are the local ones",
                local["instance_id"]
            );
        }
    }
    // Swarm spread the jobs: a node that ran one has pulled a job image (its engine's
    // events say so), and the run removed them all when it ended: from every node and
    // from the registry.
    let pulled = job_images_pulled(&cluster, since);
    let nodes_with_jobs = pulled.values().filter(|images| !images.is_empty()).count();
    assert!(nodes_with_jobs >= 2, "the jobs ran on {nodes_with_jobs} node(s) of 3: {pulled:?}");
    assert_no_job_images(&cluster, pulled.values().flatten());
    let label = fs_err::canonicalize(&fresh.data_dir).unwrap();
    assert_nothing_left(&cluster, &format!("swe-harvest.data-dir={}", label.display()));

    // `probe --backend swarm` runs each task's mutants as jobs on the cluster, in the
    // environments the swarm's validation named, and finds what the local probe found.
    let probed = fresh.path("swarm-probed.jsonl");
    let probe_since = unix_seconds();
    let probe = fresh
        .command()
        .env("SWE_HARVEST_VALIDATE__REGISTRY", &cluster.registry)
        .args(["probe", "--input", out.to_str().unwrap(), "--out", probed.to_str().unwrap()])
        .args(["--backend", "swarm", "--workers", "3"])
        .output()
        .unwrap();
    assert!(probe.status.success(), "{}", stderr(&probe));
    // The release writes both columns as text, `--out` rows as JSON values.
    let score = |row: &serde_json::Value| match &row["mutation_score"] {
        serde_json::Value::String(text) if !text.is_empty() => Some(format!("{:.4}", text.parse::<f64>().unwrap())),
        serde_json::Value::Number(number) => Some(format!("{:.4}", number.as_f64().unwrap())),
        _ => None,
    };
    let survivors = |row: &serde_json::Value| {
        let list = match &row["surviving_mutants"] {
            serde_json::Value::String(text) => serde_json::from_str(text).unwrap(),
            other => other.clone(),
        };
        list.as_array().unwrap().iter().map(|mutant| mutant["patch"].clone()).collect::<Vec<_>>()
    };
    for (local, swarm) in local.iter().zip(&rows(&probed)) {
        let id = &local["instance_id"];
        assert_eq!(score(local), score(swarm), "{id}: the swarm's mutation score is the local one");
        assert_eq!(survivors(local), survivors(swarm), "{id}: the swarm's survivors are the local ones");
    }
    assert!(rows(&probed).iter().any(|row| !survivors(row).is_empty()), "the demo's weak task keeps its survivor");
    let probed_on = job_images_pulled(&cluster, probe_since);
    assert!(probed_on.values().flatten().next().is_some(), "probe ran jobs on the cluster: {probed_on:?}");
    assert_no_job_images(&cluster, probed_on.values().flatten());
    assert_nothing_left(&cluster, &format!("swe-harvest.data-dir={}", label.display()));

    // `evaluate --backend swarm` grades on the cluster: the gold patches resolve every
    // task, empty predictions none.
    let version = format!("swarm-{}", std::process::id());
    let released = harvest.run(&["release", "--name", "demo", "--version", &version, "--images"]);
    assert!(released.status.success(), "{}", stderr(&released));
    let release_dir = PathBuf::from(stdout(&released).trim());
    let released_rows = rows(&release_dir.join("tasks.jsonl"));
    // Counted from here: evaluate's job images are content-addressed and may equal
    // validate's (the same image id and archive), so only evaluate's own pulls count.
    let evaluate_since = unix_seconds();
    for (model, resolved) in [("gold", released_rows.len()), ("empty", 0)] {
        let predictions = harvest.path(&format!("{model}.jsonl"));
        let lines: Vec<String> = released_rows
            .iter()
            .map(|row| {
                let patch = if model == "gold" { row["patch"].clone() } else { serde_json::json!("") };
                serde_json::json!({"instance_id": row["instance_id"], "model_name_or_path": model, "model_patch": patch})
                    .to_string()
            })
            .collect();
        fs_err::write(&predictions, lines.join("\n") + "\n").unwrap();
        let report = harvest.path(&format!("{model}-report.json"));
        let evaluated = harvest
            .command()
            .env("SWE_HARVEST_VALIDATE__REGISTRY", &cluster.registry)
            .args(["evaluate", "--release", release_dir.to_str().unwrap(), "--mode", "swe", "--backend", "swarm"])
            .args(["--predictions", predictions.to_str().unwrap(), "--out", report.to_str().unwrap()])
            .output()
            .unwrap();
        let graded: serde_json::Value = serde_json::from_str(&fs_err::read_to_string(&report).unwrap()).unwrap();
        let predictions = graded["predictions"].as_array().expect("the report lists the predictions");
        assert_eq!(predictions.len(), released_rows.len(), "{graded:#}");
        let resolved_count = predictions.iter().filter(|prediction| prediction["resolved"] == true).count();
        assert_eq!(resolved_count, resolved, "{model}: {}\n{graded:#}", stderr(&evaluated));
    }
    for row in &released_rows {
        docker(None, &["image", "rm", "-f", row["image"].as_str().unwrap()]);
    }
    let evaluated = job_images_pulled(&cluster, evaluate_since);
    assert!(evaluated.values().flatten().next().is_some(), "evaluate ran jobs on the cluster: {evaluated:?}");
    assert_no_job_images(&cluster, evaluated.values().flatten());
    let label = fs_err::canonicalize(&harvest.data_dir).unwrap();
    assert_nothing_left(&cluster, &format!("swe-harvest.data-dir={}", label.display()));
}

/// The engines of the cluster: the host's (`None`) and the workers' sockets.
fn engines(cluster: &Cluster) -> Vec<Option<String>> {
    std::iter::once(None).chain(cluster.worker_sockets().into_iter().map(Some)).collect()
}

/// The job images each engine of the cluster pulled since `since`, from its events.
fn job_images_pulled(cluster: &Cluster, since: u64) -> BTreeMap<String, BTreeSet<String>> {
    let until = (unix_seconds() + 1).to_string();
    engines(cluster)
        .into_iter()
        .map(|host| {
            let events = docker(
                host.as_deref(),
                &["events", "--since", &since.to_string(), "--until", &until, "--filter", "type=image"],
            );
            let pulled = events
                .lines()
                .filter_map(|line| line.split_once(" image pull ")?.1.split_whitespace().next())
                .filter(|image| image.contains("/swe-harvest/job:"))
                .map(str::to_string)
                .collect();
            (host.unwrap_or_else(|| "the host".into()), pulled)
        })
        .collect()
}

/// No engine of the cluster has any of `images`, and the registry has none of their tags.
fn assert_no_job_images<'a>(cluster: &Cluster, images: impl Iterator<Item = &'a String>) {
    let images: BTreeSet<&String> = images.collect();
    for host in engines(cluster) {
        let left = docker(host.as_deref(), &["image", "ls", "--format", "{{.Repository}}:{{.Tag}}"]);
        let left: Vec<&str> = left.lines().filter(|image| images.iter().any(|pulled| pulled == image)).collect();
        assert!(left.is_empty(), "{} keeps job images after the run: {left:?}", host.as_deref().unwrap_or("the host"));
    }
    let tags = Command::new("curl")
        .args(["-fsS", &format!("http://{}/v2/swe-harvest/job/tags/list", cluster.registry)])
        .output()
        .unwrap();
    assert!(tags.status.success(), "the registry lists its job tags: {}", stderr(&tags));
    let tags: serde_json::Value = serde_json::from_slice(&tags.stdout).unwrap();
    let kept: Vec<&&String> = images
        .iter()
        .filter(|image| {
            let tag = image.rsplit_once(':').unwrap().1;
            tags["tags"].as_array().is_some_and(|tags| tags.iter().any(|kept| kept == tag))
        })
        .collect();
    assert!(kept.is_empty(), "the registry keeps job images after the run: {kept:?}");
}

/// A job of `script` on the image `swe-harvest/base:py3.11` (scripts/setup.sh's).
fn job(instance_id: &str, script: &str, data_dir_label: &str) -> Job {
    Job {
        instance_id: instance_id.to_string(),
        attempt: 1,
        image: "swe-harvest/base:py3.11".into(),
        user: Owner::UNPRIVILEGED,
        testbed: None,
        files: Vec::new(),
        script: format!(
            "#!/bin/bash\ntoken=\"$1\"\nmark() {{ printf '\\n@@swe-harvest %s %s\\n' \"$token\" \"$*\"; }}\n{script}"
        ),
        token: script::new_token(),
        env: Vec::new(),
        phases: 1,
        log_path: std::env::temp_dir().join(format!("{instance_id}.log")),
        data_dir_label: data_dir_label.to_string(),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

#[test]
fn a_hostile_job_on_a_worker_is_contained() {
    let Some(cluster) = Cluster::up(2) else { return };
    let label = format!("swh-hostile-{}", std::process::id());
    // Each step prints what it achieved; the markers carry the exit code of each.
    let script = r#"
mark network begin
python3 -c '
import socket
for host, port in [("10.213.0.1", 5000), ("10.213.0.1", 2377), ("1.1.1.1", 443)]:
    try:
        socket.create_connection((host, port), timeout=3); print("REACHED", host, port)
    except OSError as error:
        print("blocked", host, port, error)
'
mark network end $?
mark fork begin
python3 -c '
import os, time
children = []
for _ in range(400):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    children.append(pid)
print("forked", len(children))
for pid in children:
    os.kill(pid, 9)
'
mark fork end 0
mark memory begin
python3 -c 'b = bytearray(1024 * 1024 * 1024); print("ALLOC" + "ATED 1 GiB")'
mark memory end $?
mark disk begin
head -c 2097152 /dev/zero > /tmp/big
mark disk end $?
mark after begin
echo still-here
mark after end 0
"#;
    let job = job(&format!("swh-hostile-{}", std::process::id()), script, &label);
    let limits = Limits {
        memory_bytes: 256 << 20,
        nano_cpus: 500_000_000,
        pids_limit: 64,
        file_size_bytes: 1 << 20,
        run_timeout: Duration::from_secs(120),
    };
    let output = runtime().block_on(async {
        let options =
            SwarmOptions { registry: cluster.registry.clone(), constraints: vec!["node.role==worker".into()] };
        let backend = SwarmBackend::connect(options).await.expect("the swarm backend connects");
        let output = backend.run(&job, limits).await;
        // What a stage does at its end: waits for the removals under way.
        backend.remove_running().await;
        output
    });
    let output = output.expect("the job ran");
    let steps = script::split_steps(&output.log, &job.token);
    let network = &steps["network"].text;
    assert!(!network.contains("REACHED"), "the job reached the network:\n{}", output.log);
    assert_eq!(network.matches("blocked").count(), 3, "{}", output.log);
    let fork = &steps["fork"].text;
    let forked: u32 = fork.trim().strip_prefix("forked ").and_then(|count| count.parse().ok()).unwrap_or(u32::MAX);
    assert!(forked < 64, "the pids limit (64) stopped the fork storm: {fork}");
    assert!(!steps["memory"].text.contains("ALLOCATED"), "1 GiB fit in 256 MiB:\n{}", output.log);
    assert_ne!(steps["memory"].exit_code, Some(0), "{}", output.log);
    // Read from the container's own count of OOM kills (the task's status has none),
    // though the job went on and ended with 0: what Docker's OOMKilled says too.
    assert!(output.oom_killed, "the memory hog was killed by the OOM killer:\n{}", output.log);
    // A file larger than the job's file-size limit (1 MiB) is cut off: the writer is stopped.
    assert_ne!(steps["disk"].exit_code, Some(0), "2 MiB were written under a 1 MiB limit:\n{}", output.log);
    assert!(steps["after"].text.contains("still-here"), "the job went on after each attack:\n{}", output.log);
    assert_eq!(output.exit_code, Some(0));
    // The worker it ran on is still there and answers.
    for socket in cluster.worker_sockets() {
        assert!(!docker(Some(&socket), &["info", "-f", "{{.Swarm.LocalNodeState}}"]).trim().is_empty());
    }
    assert_nothing_left(&cluster, &format!("swe-harvest.data-dir={label}"));
}

/// The jobs of `limits` that the swarm's ready, active nodes of `role` hold, as the
/// Docker CLI describes the nodes.
fn jobs_the_cli_sees_room_for(role: &str, limits: Limits) -> usize {
    let ids = docker(None, &["node", "ls", "-q"]);
    ids.split_whitespace()
        .map(|id| {
            let format = "{{.Spec.Role}} {{.Status.State}} {{.Spec.Availability}} {{.Description.Resources.NanoCPUs}} {{.Description.Resources.MemoryBytes}}";
            let described = docker(None, &["node", "inspect", "-f", format, id]);
            let fields: Vec<&str> = described.split_whitespace().collect();
            if fields[..3] != [role, "ready", "active"] {
                return 0;
            }
            let (cpus, memory): (i64, i64) = (fields[3].parse().unwrap(), fields[4].parse().unwrap());
            (cpus / limits.nano_cpus).min(memory / limits.memory_bytes) as usize
        })
        .sum()
}

#[test]
fn workers_default_to_the_jobs_the_swarms_nodes_hold() {
    let Some(cluster) = Cluster::up(3) else { return };
    let limits = Limits {
        memory_bytes: 256 << 20,
        nano_cpus: 500_000_000,
        pids_limit: 64,
        file_size_bytes: swe_harvest::sandbox::DEFAULT_FILE_SIZE_BYTES as i64,
        run_timeout: Duration::from_secs(60),
    };
    let capacity = |constraints: &[&str]| {
        let options = SwarmOptions {
            registry: cluster.registry.clone(),
            constraints: constraints.iter().map(|constraint| constraint.to_string()).collect(),
        };
        runtime().block_on(async {
            SwarmBackend::connect(options).await.expect("the swarm backend connects").capacity(limits).await
        })
    };
    let on_workers = jobs_the_cli_sees_room_for("worker", limits);
    assert!(on_workers >= 2, "two worker nodes hold at least a job each: {on_workers}");
    assert_eq!(capacity(&["node.role==worker"]), Some(on_workers));
    assert_eq!(capacity(&[]), Some(on_workers + jobs_the_cli_sees_room_for("manager", limits)), "every node");
    assert_eq!(capacity(&["node.role != manager"]), Some(on_workers));
    // No node meets the constraint: one worker still (the swarm says why it waits).
    assert_eq!(capacity(&["node.labels.swh-gpu==yes"]), Some(1));
}

#[test]
fn a_worker_killed_mid_run_loses_no_job() {
    let Some(cluster) = Cluster::up(3) else { return };
    let label = format!("swh-killed-{}", std::process::id());
    // Long enough to be caught running; the end marker proves the whole output came.
    // The three jobs are identical, so they share one job image; the comment makes it
    // new to the registry, as on a fresh machine, so that it is made while they wait.
    let script = format!(
        "# {}\nmark work begin\nfor i in $(seq 1 20); do echo tick $i; sleep 1; done\nmark work end 0\n",
        script::new_token()
    );
    let jobs: Vec<Job> =
        (0..3).map(|index| job(&format!("swh-killed-{}-{index}", std::process::id()), &script, &label)).collect();
    let limits = Limits {
        memory_bytes: 128 << 20,
        nano_cpus: 250_000_000,
        pids_limit: 64,
        file_size_bytes: swe_harvest::sandbox::DEFAULT_FILE_SIZE_BYTES as i64,
        run_timeout: Duration::from_secs(120),
    };
    let runtime = runtime();
    let backend = runtime.block_on(async {
        let options =
            SwarmOptions { registry: cluster.registry.clone(), constraints: vec!["node.role==worker".into()] };
        std::sync::Arc::new(SwarmBackend::connect(options).await.expect("the swarm backend connects"))
    });
    let started = unix_seconds();
    let mut handles: Vec<_> = jobs
        .iter()
        .cloned()
        .map(|job| {
            let backend = backend.clone();
            runtime.spawn(async move { backend.run(&job, limits).await })
        })
        .collect();

    // Kill the worker that runs the first job, once it runs there.
    let deadline = Instant::now() + Duration::from_secs(180);
    let (victim, first_service) = loop {
        assert!(Instant::now() < deadline, "the first job never ran");
        if handles[0].is_finished() {
            let ended = runtime.block_on(&mut handles[0]).unwrap();
            panic!("the first job ended before it was seen running: {:?}", ended.map(|output| output.log));
        }
        let service = service_of(&jobs[0]);
        let format = "{{.Node}} {{.CurrentState}}";
        let running =
            docker(None, &["service", "ps", "--filter", "desired-state=running", "--format", format, &service]);
        if let Some(node) =
            running.lines().find(|line| line.contains("Running")).and_then(|line| line.split(' ').next())
        {
            break (node.trim_start_matches("swh-node").to_string(), service);
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    let killed = script_run(&["kill-node", &victim]);
    assert!(killed.status.success(), "{}", stderr(&killed));
    // The lost placement is replaced by a new service on a live node.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let service = service_of(&jobs[0]);
        if service != "none" && service != first_service {
            break;
        }
        assert!(Instant::now() < deadline, "the job was not placed again after its node died");
        std::thread::sleep(Duration::from_millis(300));
    }

    for (job, handle) in jobs.iter().zip(handles) {
        let output = runtime.block_on(handle).unwrap().expect("the job ended despite the lost node");
        let steps = script::split_steps(&output.log, &job.token);
        assert_eq!(steps.get("work").and_then(|step| step.exit_code), Some(0), "{}: {}", job.instance_id, output.log);
        assert_eq!(steps["work"].text.matches("tick").count(), 20, "{}: the whole output", job.instance_id);
    }
    // One of them committed (and pushed) the shared image while the others waited for
    // it: committed by each at once, one's removal of the tag after its push came
    // before another's push ("tag does not exist").
    assert_eq!(commits(&label, started), 1, "the three identical jobs made their image once");
    runtime.block_on(backend.remove_running());
    // The killed node's engine is gone; the others keep nothing of the jobs.
    let mut sockets = cluster.worker_sockets();
    sockets.retain(|socket| !socket.contains(&format!("node{victim}/")));
    assert!(wait_empty(&sockets, &label), "containers of the jobs are left on the live workers");
    assert_nothing_left_on_the_manager(&label);
}

fn unix_seconds() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

/// How many job images the local engine committed from containers labelled with
/// the data dir `label` since `since` (its events).
fn commits(label: &str, since: u64) -> usize {
    let filter = format!("label=swe-harvest.data-dir={label}");
    let (since, until) = ((since - 1).to_string(), (unix_seconds() + 1).to_string());
    let args = ["events", "--since", &since, "--until", &until, "--filter", "event=commit", "--filter", &filter];
    docker(None, &args).lines().count()
}

fn assert_nothing_left_on_the_manager(label: &str) {
    let filter = format!("label=swe-harvest.data-dir={label}");
    assert!(docker(None, &["service", "ls", "-q", "--filter", &filter]).trim().is_empty(), "services left");
    assert!(docker(None, &["network", "ls", "-q", "--filter", &filter]).trim().is_empty(), "networks left");
}

/// The name of the (current) service of `job`, by its instance label.
fn service_of(job: &Job) -> String {
    docker(None, &["service", "ls", "-q", "--filter", &format!("label=swe-harvest.instance={}", job.instance_id)])
        .lines()
        .next()
        .unwrap_or("none")
        .to_string()
}

fn wait_empty(sockets: &[String], label: &str) -> bool {
    for _ in 0..60 {
        let left: String = sockets
            .iter()
            .map(|socket| {
                docker(Some(socket), &["ps", "-a", "-q", "--filter", &format!("label=swe-harvest.data-dir={label}")])
            })
            .collect();
        if left.trim().is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    false
}

#[test]
fn the_swarm_backend_without_a_registry_says_where_to_set_one() {
    let harvest = SweHarvest::new();
    let output = harvest.run(&["validate", "--backend", "swarm"]);
    assert!(!output.status.success());
    let error = stderr(&output);
    assert!(error.contains("validate.registry") && error.contains("scripts/cluster.sh"), "{error}");
}

#[test]
fn gc_without_a_registry_is_a_usage_error_naming_the_key() {
    let harvest = SweHarvest::new();
    let error = failure(&harvest.run(&["gc", "--older-than", "1d"]), 2);
    assert!(error.contains("validate.registry"), "{error}");
}

#[test]
fn gc_removes_the_job_images_older_than_its_age_from_the_registry_and_every_node() {
    let Some(cluster) = Cluster::up(2) else { return };
    // A job image as a killed run leaves it: labelled, in the registry, pulled by a worker.
    let reference = format!("{}/swe-harvest/job:gc-test-{}", cluster.registry, std::process::id());
    let container = docker(None, &["create", "swe-harvest/base:debian-bookworm", "true"]);
    let committed = docker(None, &["commit", "--change", "LABEL swe-harvest.job=true", container.trim(), &reference]);
    assert!(committed.starts_with("sha256:"), "committed {reference}: {committed}");
    docker(None, &["rm", container.trim()]);
    let pushed = Command::new("docker").args(["push", "-q", &reference]).output().unwrap();
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    let worker = cluster.worker_sockets()[0].clone();
    let pulled = Command::new("docker").args(["-H", &worker, "pull", "-q", &reference]).output().unwrap();
    assert!(pulled.status.success(), "{}", stderr(&pulled));
    let everywhere = BTreeSet::from([reference.clone()]);
    let present = |host: Option<&str>| docker(host, &["image", "ls", "-q", &reference]).trim() != "";

    let harvest = SweHarvest::new();
    let gc = |args: &[&str]| {
        let output = harvest.command().env("SWE_HARVEST_VALIDATE__REGISTRY", &cluster.registry).args(args).output();
        let output = output.unwrap();
        assert!(output.status.success(), "gc {args:?}: {}", stderr(&output));
        stdout(&output)
    };
    let tag = reference.rsplit_once(':').unwrap().1;
    // Younger than an hour: kept.
    let young = gc(&["gc", "--older-than", "1h"]);
    assert!(!young.contains(tag), "{young}");
    assert!(present(None) && present(Some(&worker)), "a young job image stays");
    // A dry run names it in the registry and on both nodes, and removes nothing.
    let dry = gc(&["gc", "--older-than", "0s", "--dry-run"]);
    assert_eq!(dry.matches(tag).count(), 3, "registry, manager and worker: {dry}");
    assert!(dry.contains("node swh-node2: would remove"), "{dry}");
    assert!(present(None) && present(Some(&worker)), "a dry run removes nothing");
    // Older than zero seconds: gone from the registry and from every node.
    let removed = gc(&["gc", "--older-than", "0s"]);
    assert_eq!(removed.matches(tag).count(), 3, "registry, manager and worker: {removed}");
    assert!(!present(None) && !present(Some(&worker)), "gc removed it from the nodes:\n{removed}");
    assert_no_job_images(&cluster, everywhere.iter());
    let label = fs_err::canonicalize(&harvest.data_dir).unwrap();
    assert_nothing_left(&cluster, &format!("swe-harvest.data-dir={}", label.display()));
}

#[test]
fn an_unknown_backend_in_the_config_is_a_usage_error_naming_the_key() {
    let harvest = SweHarvest::new();
    let output = harvest.run_with_config("pipeline.toml", "[validate]\nbackend = \"kubernetes\"\n", &["validate"]);
    let error = failure(&output, 2);
    assert!(error.contains("backend") && error.contains("local") && error.contains("swarm"), "{error}");
}

#[test]
fn a_sweep_removes_the_services_and_networks_a_killed_run_left_on_the_swarm() {
    let Some(cluster) = Cluster::up(1) else { return };
    let label = format!("swh-sweep-{}", std::process::id());
    let data_dir = format!("swe-harvest.data-dir={label}");
    // What a killed run leaves: a labelled network and a service still running on it
    // (no run label: made before runs were labelled, so its run counts as gone).
    let network = format!("swh-sweep-net-{}", std::process::id());
    let made = Command::new("docker")
        .args(["network", "create", "--driver", "overlay", "--internal", "--label", &data_dir, &network])
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", stderr(&made));
    let made = Command::new("docker")
        .args(["service", "create", "--detach", "--name", &format!("swh-sweep-{}", std::process::id())])
        .args(["--label", &data_dir, "--network", &network, "--restart-condition", "none"])
        .args(["--endpoint-mode", "dnsrr", "swe-harvest/base:py3.11", "sleep", "300"])
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", stderr(&made));
    let removed = runtime().block_on(async {
        let options = SwarmOptions { registry: cluster.registry.clone(), constraints: Vec::new() };
        SwarmBackend::connect(options).await.expect("the swarm backend connects").sweep(&label).await
    });
    assert_eq!(removed, 1, "the one service left behind");
    assert_nothing_left(&cluster, &data_dir);
}

/// Issue 66 on the swarm backend, whose environment builds run on the manager's engine
/// (its builder): a `validate --input --backend swarm` stopped by SIGTERM or Ctrl-C
/// before the build's proxy starts, while its install step runs, and while that step
/// is committed leaves no proxy, network or step container there, and no service,
/// container or network of the swarm; the next run builds the environment and labels
/// the row on the swarm.
#[test]
fn a_swarm_validation_stopped_by_sigterm_or_ctrl_c_while_its_environment_builds_leaves_nothing_and_resumes() {
    let Some(cluster) = Cluster::up(1) else { return };
    let env = [("SWE_HARVEST_VALIDATE__REGISTRY", cluster.registry.as_str())];
    let swarm: stopped_build::Extra<'_> = (&env, &["--backend", "swarm"]);
    let nothing_of_the_swarm_left = |workspace: &crate::support::workspace::Workspace| {
        let data_dir = fs_err::canonicalize(workspace.data_dir()).unwrap();
        assert_nothing_left(&cluster, &format!("swe-harvest.data-dir={}", data_dir.display()));
    };
    stopped_build::stopped_before_the_proxy_starts(swarm, &nothing_of_the_swarm_left);
    stopped_build::stopped_while_the_install_step_runs(swarm, &nothing_of_the_swarm_left);
    stopped_build::stopped_while_the_install_step_is_committed(swarm, &nothing_of_the_swarm_left);
}
