//! `images plan` and scripts/setup.sh reading it: the runtime catalogue is the one
//! list of base images, and the script builds what the plan says.

use std::collections::BTreeSet;
use std::process::Command;

use swe_harvest::ecosystem::runtimes;

use crate::support::{SweHarvest, base_images_missing, project_root, stderr, stdout};

/// The records of `images plan --tsv`, split into fields.
fn tsv_records(text: &str) -> Vec<Vec<String>> {
    text.lines().map(|line| line.split('\t').map(str::to_string).collect()).collect()
}

#[test]
fn the_tsv_plan_has_one_record_per_suite_and_image_with_every_field_filled() {
    let harvest = SweHarvest::new();
    let output = harvest.run(&["images", "plan", "--tsv", "--language", "go", "--language", "c", "--image", "py3.11"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let records = tsv_records(&stdout(&output));

    let expected = runtimes::plan(&["go".into(), "c".into()], &["py3.11".into()]).unwrap();
    let suites: Vec<&str> =
        records.iter().filter(|record| record[0] == "suite").map(|record| record[2].as_str()).collect();
    let images: Vec<&str> =
        records.iter().filter(|record| record[0] == "image").map(|record| record[1].as_str()).collect();
    assert_eq!(suites, expected.suites.iter().map(|suite| suite.suite.as_str()).collect::<Vec<_>>());
    assert_eq!(images, ["go1.19", "go1.24", "gcc12", "py3.11"], "go's and c's defaults, then the tag asked for");
    // What the images stand on: every suite an image names is bootstrapped, none more.
    let image_suites: BTreeSet<&str> =
        records.iter().filter(|record| record[0] == "image").map(|record| record[4].as_str()).collect();
    assert_eq!(image_suites, suites.iter().copied().collect());

    // Fixed columns, no empty field (the shell's `read` would shift the rest left).
    for record in &records {
        let columns = if record[0] == "suite" { 6 } else { 11 };
        assert_eq!(record.len(), columns, "{record:?}");
        assert!(record.iter().all(|field| !field.is_empty()), "{record:?}");
    }
    let py311 = records.iter().find(|record| record[1] == "py3.11").unwrap();
    assert_eq!((py311[2].as_str(), py311[3].as_str(), py311[4].as_str()), ("3.11", "python", "bookworm"));
    assert!(py311[5].split(' ').any(|package| package == "python3-dev"), "{py311:?}");
    assert_eq!(py311[8], "Python 3.11.");
    let go119 = records.iter().find(|record| record[1] == "go1.19").unwrap();
    assert_eq!((go119[9].as_str(), go119[10].as_str()), ("-", "-"), "no upstream image for Go");
}

/// The test set-up builds the suite's base images from scripts/test-image-plan.tsv,
/// printed beforehand so that no build has to come first: it must be what the
/// catalogue prints now for the languages its first line names.
#[test]
fn the_suites_checked_in_image_plan_is_the_catalogues() {
    let file = project_root().join("scripts/test-image-plan.tsv");
    let checked_in = fs_err::read_to_string(&file).unwrap();
    let (header, plan) = checked_in.split_once('\n').expect("a header line, then the plan");
    let command = header.split('`').nth(1).expect("the header quotes the command that prints the plan");
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[..4], ["swe-harvest", "images", "plan", "--tsv"], "{header}");
    let languages: Vec<&str> = words[4..].chunks(2).map(|pair| pair[1]).collect();
    assert_eq!(languages, ["python", "go", "node", "java", "rust", "c"], "every language the suite validates");
    let output = SweHarvest::new().run(&words[1..]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output) == plan,
        "{} is not the catalogue's plan any more; print it again: `cargo run --quiet -- {}` (after its header line)",
        file.display(),
        words[1..].join(" ")
    );
}

#[test]
fn an_unknown_language_or_image_exits_2_naming_it_and_the_known_ones() {
    let harvest = SweHarvest::new();
    let output = harvest.run(&["images", "plan", "--language", "cobol"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let error = stderr(&output);
    assert!(error.contains("`cobol`") && error.contains("python") && error.contains("rust"), "{error}");

    let output = harvest.run(&["images", "plan", "--image", "jdk8"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("`jdk8`") && stderr(&output).contains("jdk17"), "{}", stderr(&output));
}

#[test]
fn setup_sh_reads_the_plan_and_on_a_ready_machine_makes_nothing() {
    let plan = runtimes::plan(&["go".into()], &[]).unwrap();
    let tags: Vec<&str> = plan.images.iter().map(|image| image.tag.as_str()).collect();
    if base_images_missing("go", &tags) {
        return;
    }
    let output = Command::new(project_root().join("scripts/setup.sh"))
        .env("SWE_HARVEST_BIN", env!("CARGO_BIN_EXE_swe-harvest"))
        .env("SWE_HARVEST_LANGUAGES", "go")
        .env_remove("SWE_HARVEST_BASE_IMAGES")
        .env_remove("SWE_HARVEST_BASE_REPO")
        .env_remove("SWE_HARVEST_REBUILD")
        .output()
        .expect("scripts/setup.sh runs");
    let log = format!("{}{}", stdout(&output), stderr(&output));
    assert!(output.status.success(), "{log}");
    // Exactly the plan's images, each found current by its recipe label.
    let present: Vec<&str> = log
        .lines()
        .filter_map(|line| line.strip_prefix("swe-harvest/base:")?.split_once(": already present").map(|(tag, _)| tag))
        .collect();
    assert_eq!(present, tags, "{log}");
    assert!(!log.contains("making") && !log.contains("bootstrapping"), "{log}");
}

/// An environment image's package lists are refreshed by `APT_UPDATE`, which fails
/// when an index cannot be fetched; plain `apt-get update` exits 0 then, and C's image
/// skipped a library as "not in Debian" on a fresh engine under load (CI, 2026-11-28).
/// Here no network at all (and apt's own retries off, to be quick): both on the same
/// base image of every suite the environment images of the suite's tests stand on.
#[test]
fn an_environment_images_package_lists_that_cannot_be_fetched_fail_its_build() {
    use swe_harvest::ecosystem::APT_UPDATE;
    let tags = ["gcc12", "py3.9"];
    if base_images_missing("c", &tags) {
        return;
    }
    // The exit code of `update`, then its output.
    let run = |tag: &str, update: &str| {
        let script = format!(
            "echo 'Acquire::Retries \"0\";' > /etc/apt/apt.conf.d/80swe-harvest-retries; ({update}) 2>&1; echo \"exit $?\""
        );
        let output = Command::new("docker")
            .args(["run", "--rm", "--network", "none", &format!("swe-harvest/base:{tag}"), "sh", "-c", &script])
            .output()
            .expect("docker runs");
        assert!(output.status.success(), "{}", stderr(&output));
        let text = stdout(&output);
        let (log, code) = text.trim_end().rsplit_once("exit ").expect("the script prints its exit code");
        (code.to_string(), log.to_string())
    };
    for tag in tags {
        let (code, log) = run(tag, "apt-get update");
        assert_eq!(code, "0", "plain apt-get update on {tag}, which is why APT_UPDATE exists: {log}");
        let (code, log) = run(tag, APT_UPDATE);
        assert_ne!(code, "0", "APT_UPDATE on {tag}: {log}");
        // Refused for the fetch, not for an option this suite's apt would not know.
        assert!(log.contains("Temporary failure resolving") || log.contains("Failed to fetch"), "{tag}: {log}");
        assert!(!log.contains("Command line option"), "{tag}: {log}");
    }
}
