//! The offline demo, end to end: `scripts/demo.sh` with the binaries of this build
//! (crawl from the simulator, mirror, extract, validate in Docker, release), and its
//! own check of every expected task and drop reason.

use crate::support::project_root;

#[test]
fn offline_demo_releases_exactly_the_expected_tasks() {
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_swe-harvest")).parent().unwrap();
    let work = tempfile::tempdir().unwrap();
    let output = std::process::Command::new("bash")
        .arg(project_root().join("scripts/demo.sh"))
        .env("SWE_HARVEST_DEMO_BIN_DIR", bin_dir)
        .env("SWE_HARVEST_DEMO_DIR", work.path())
        .env_remove("GITHUB_TOKEN")
        .env_remove("GITHUB_TOKENS")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the demo failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("all checks passed"), "{stdout}");
    assert!(!stdout.contains("FAIL "), "{stdout}");
    assert!(work.path().join("data/releases/demo/1/tasks.parquet").exists());
}
