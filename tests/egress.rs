//! Environment builds run the repository's code (a `setup.py`, an npm `postinstall`, a
//! Cargo `build.rs`) with the registries in reach and nothing else: each test's
//! hostile build step tries to reach a server the test starts on the host's address,
//! the Docker bridge's address, a server in a network namespace the test makes, and
//! the link-local metadata address, directly and through the build proxy. None of
//! them gets a connection, the proxy's refusals are in the build log, and the
//! project's real dependencies still install from the registry (the task is
//! labelled).

use std::process::Command;

use crate::languages::{BASE_TESTS_JS, BUGGY_ADD_JS, FIXED_ADD_JS};
use crate::support::names;
use crate::support::probes::{self, Probes};
use crate::support::python_project::{self, Project, Scenario};
use crate::support::workspace::{ADD_NEGATIVE, Workspace};

/// Asserts that nothing reached the probes' servers and that the build proxy refused
/// every target (so the probe did run).
fn assert_contained(workspace: &Workspace, probes: &Probes) {
    assert_eq!(probes.connections(), 0, "a hostile build step reached a server of the test");
    let refused = probes::refused_in_build_logs(workspace.data_dir());
    for (host, port) in probes.targets() {
        let target = format!("{host}:{port}");
        assert!(
            refused.iter().any(|line| line.contains(&target)),
            "the build proxy did not refuse {target} (did the probe run?); refused: {refused:?}"
        );
    }
}

#[test]
fn a_setup_py_reaches_no_address_of_the_host_or_the_namespace_and_its_dependencies_install() {
    let Some(workspace) = Workspace::with_base_images("python", &["py3.11"]) else { return };
    let Some(probes) = Probes::start() else { return };
    let setup_py =
        format!("{}\nfrom setuptools import setup\n\nsetup()\n", probes::python_probe(&probes.targets_literal()));
    let project = Project::dated_with_files("2024-05-02T12:00:00+00:00", &[("setup.py", &setup_py)]);
    let candidate = project.candidate(1, &Scenario::fixing_add("negative"));
    // setuptools and pytest came from the registry through the proxy.
    assert_eq!(workspace.labelled_alone(&project, &candidate).fail_to_pass, names(&[ADD_NEGATIVE]));
    assert_contained(&workspace, &probes);
}

const PACKAGE_JSON: &str = r#"{
  "name": "calc",
  "version": "1.0.0",
  "private": true,
  "scripts": {"postinstall": "node probe.js", "test": "mocha 'test/**/*.test.js' --timeout 5000 --exit"},
  "devDependencies": {"mocha": "^10.2.0"}
}
"#;
const TESTS_WITH_NEGATIVE_JS: &str = "const assert = require('assert');\nconst { add } = require('../lib/calc');\n\ndescribe('add', () => {\n  it('adds small numbers', () => assert.strictEqual(add(1, 2), 3));\n  it('adds a negative number', () => assert.strictEqual(add(1, -1), 0));\n});\n";

#[test]
fn an_npm_postinstall_reaches_no_address_of_the_host_or_the_namespace_and_mocha_installs() {
    let Some(workspace) = Workspace::with_base_images("node", &["node18"]) else { return };
    let Some(probes) = Probes::start() else { return };
    let project = Project::of_files(&[
        ("package.json", PACKAGE_JSON),
        (".nvmrc", "18\n"),
        ("probe.js", &probes::node_probe(&probes.targets_literal())),
        ("lib/calc.js", BUGGY_ADD_JS),
        ("test/calc.test.js", BASE_TESTS_JS),
    ]);
    let candidate = project.candidate(
        1,
        &Scenario::new("negative").gold("lib/calc.js", FIXED_ADD_JS).test("test/calc.test.js", TESTS_WITH_NEGATIVE_JS),
    );
    assert_eq!(
        workspace.labelled_alone(&project, &candidate).fail_to_pass,
        names(&["test/calc.test.js > add > adds a negative number"])
    );
    assert_contained(&workspace, &probes);
}

const CARGO_TOML: &str = "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2018\"\nbuild = \"build.rs\"\n\n[dependencies]\ncfg-if = \"1\"\n";
const LIB_RS: &str = "/// Adds, but subtracts a negative `b`.\npub fn add(a: i32, b: i32) -> i32 {\n    cfg_if::cfg_if! { if #[cfg(unix)] { if b < 0 { a - b } else { a + b } } else { a + b } }\n}\n";
const FIXED_LIB_RS: &str = "/// Adds.\npub fn add(a: i32, b: i32) -> i32 {\n    cfg_if::cfg_if! { if #[cfg(unix)] { a + b } else { a + b } }\n}\n";
const ADD_RS: &str = "#[test]\nfn add_small() {\n    assert_eq!(calc::add(1, 2), 3);\n}\n";
const ADD_WITH_NEGATIVE_RS: &str = "#[test]\nfn add_small() {\n    assert_eq!(calc::add(1, 2), 3);\n}\n\n#[test]\nfn add_negative() {\n    assert_eq!(calc::add(1, -1), 0);\n}\n";

#[test]
fn a_cargo_build_script_reaches_no_address_of_the_host_or_the_namespace_and_its_crates_install() {
    let Some(workspace) = Workspace::with_base_images("rust", &["rust1.63", "rust1.85"]) else { return };
    let Some(probes) = Probes::start() else { return };
    let project = Project::dated_of_files(
        "2021-06-01T12:00:00+00:00",
        &[
            ("Cargo.toml", CARGO_TOML),
            ("build.rs", &probes::rust_probe(&probes.targets_literal())),
            ("src/lib.rs", LIB_RS),
            ("tests/add.rs", ADD_RS),
        ],
    );
    let candidate = project.candidate(
        1,
        &Scenario::new("negative").gold("src/lib.rs", FIXED_LIB_RS).test("tests/add.rs", ADD_WITH_NEGATIVE_RS),
    );
    // cfg-if came from the crates registry through the proxy.
    assert_eq!(workspace.labelled_alone(&project, &candidate).fail_to_pass, names(&["add_negative"]));
    assert_contained(&workspace, &probes);
}

/// A project whose dependency comes from a host no registry setting names (a name
/// under `.invalid`, which resolves nowhere: the test sends no traffic out).
fn pyproject_with_url_dependency() -> String {
    python_project::PYPROJECT.replace(
        "[project.optional-dependencies]",
        "dependencies = [\"calc-extra @ https://downloads.example.invalid/calc_extra-1.0.tar.gz\"]\n\n[project.optional-dependencies]",
    )
}

/// Only the first rung is built: another runtime (3.9 is there) or pytest's pins
/// would reach the same host.
#[test]
fn a_build_refused_a_destination_is_dropped_naming_it_and_the_setting_that_would_allow_it() {
    let Some(workspace) = Workspace::with_base_images("python", &["py3.11", "py3.9"]) else { return };
    let project =
        Project::dated_with_files("2024-05-03T12:00:00+00:00", &[("pyproject.toml", &pyproject_with_url_dependency())]);
    let candidate = project.candidate(1, &Scenario::fixing_add("negative"));
    workspace.seeded(&project, &[candidate]);
    workspace.validate(&["--runs", "1"]);
    let (reason, message) = workspace.dropped("acme__calc-1");
    assert_eq!(reason, "environment_build_failed", "{message}");
    assert!(
        message.contains("`downloads.example.invalid:443`")
            && message.contains("\"https://downloads.example.invalid\" in validate.registries.allow"),
        "{message}"
    );
    let logs = workspace.build_logs();
    assert_eq!(logs.matches("# Generated by swe-harvest: an environment image").count(), 1, "one rung built: {logs}");
}

/// A rule in the host's `nat` table that masquerades what leaves every user-defined
/// bridge (`-o br-+ -j MASQUERADE`): as an engine stopped without its clean-up leaves
/// one behind for a subnet its networks had (found on this machine, 2026-11-28: `-s
/// 172.18.0.0/16 ! -o docker_gwbridge -j MASQUERADE`), but for every build network.
/// Deleted on drop, or by [`HostNatRule::lift_once_a_network_is_passed_over`].
struct HostNatRule {
    rule: Vec<String>,
}

impl HostNatRule {
    /// `None` (the test skipped, saying why) without root or iptables.
    fn on_every_build_network() -> Option<HostNatRule> {
        let root = Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == "0");
        let iptables = Command::new("iptables").args(["-t", "nat", "-S", "POSTROUTING"]).output();
        if !root || !iptables.is_ok_and(|output| output.status.success()) {
            eprintln!("skipped: adding a NAT rule to the host needs root and iptables");
            return None;
        }
        let rule: Vec<String> = ["POSTROUTING", "-o", "br-+", "-j", "MASQUERADE"].map(str::to_string).to_vec();
        let added = Command::new("iptables").args(["-t", "nat", "-A"]).args(&rule).output().expect("iptables runs");
        assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
        Some(HostNatRule { rule })
    }

    /// Deletes the rule as soon as two build networks exist at once: the first was
    /// passed over and kept while the second is made, whose probe then connects.
    fn lift_once_a_network_is_passed_over(self) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || {
            for _ in 0..6000 {
                let listed = Command::new("docker")
                    .args(["network", "ls", "-q", "--filter", "label=swe-harvest.egress"])
                    .output()
                    .expect("docker runs");
                if String::from_utf8_lossy(&listed.stdout).lines().count() >= 2 {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            drop(self);
        })
    }
}

impl Drop for HostNatRule {
    fn drop(&mut self) {
        let _ = Command::new("iptables").args(["-t", "nat", "-D"]).args(&self.rule).output();
    }
}

/// The subnets that networks hold for having been passed over, with those networks.
fn held_subnets() -> Vec<(String, String)> {
    let listed = Command::new("docker")
        .args(["network", "ls", "--filter", "label=swe-harvest.unreachable-subnet"])
        .args(["--format", "{{.Label \"swe-harvest.unreachable-subnet\"}} {{.Name}}"])
        .output()
        .expect("docker runs");
    String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter_map(|line| line.split_once(' '))
        .map(|(subnet, name)| (subnet.to_string(), name.to_string()))
        .collect()
}

// Runs alone on the engine (its name holds `_nat_rule_`: .config/nextest.toml): the
// rule breaks every build network while it holds.
#[test]
fn a_build_network_that_a_host_nat_rule_covers_is_passed_over_its_subnet_held_and_the_task_labelled() {
    let Some(workspace) = Workspace::with_base_images("python", &["py3.11"]) else { return };
    let Some(rule) = HostNatRule::on_every_build_network() else { return };
    let held_before = held_subnets();
    let lifted = rule.lift_once_a_network_is_passed_over();
    // A setup.py of its own, so that its environment is built now, through the proxy.
    let nonce = format!("{:?}", std::time::SystemTime::now());
    let setup_py = format!("# {nonce}\nfrom setuptools import setup\n\nsetup()\n");
    let project = Project::dated_with_files("2024-05-04T12:00:00+00:00", &[("setup.py", &setup_py)]);
    let candidate = project.candidate(1, &Scenario::fixing_add("negative"));
    // pytest and setuptools came from the registry through the proxy of another network.
    assert_eq!(workspace.labelled_alone(&project, &candidate).fail_to_pass, names(&[ADD_NEGATIVE]));
    lifted.join().expect("the rule's watcher ends");
    let logs = workspace.build_logs();
    let passed_over: Vec<&str> = logs
        .split("--- a build network of subnet ")
        .skip(1)
        .filter_map(|rest| rest.split_whitespace().next())
        .collect();
    assert!(!passed_over.is_empty(), "no build log says a network was passed over: {logs}");
    // Each subnet passed over is held from now on, so that no later build network gets it.
    let held = held_subnets();
    for (subnet, network) in held.iter().filter(|held| !held_before.contains(held)) {
        let _ = Command::new("docker").args(["network", "rm", network]).output();
        assert!(passed_over.contains(&subnet.as_str()), "{network} holds {subnet}, which no build passed over");
    }
    for subnet in &passed_over {
        assert!(
            held.iter().any(|(held, _)| held == subnet),
            "the subnet {subnet} passed over is held by no network: {held:?}"
        );
    }
    let left = Command::new("docker")
        .args(["network", "ls", "-q", "--filter", "label=swe-harvest.egress"])
        .output()
        .expect("docker runs");
    assert_eq!(String::from_utf8_lossy(&left.stdout).trim(), "", "build networks left behind");
}
