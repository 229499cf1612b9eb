//! The set-up of a validate test in one place: a fresh data dir with (usually) a claim
//! on the Docker engine, seeded with a synthetic project's mirror and candidates,
//! validated through the real binary, and read back (labelled tasks, drop reasons,
//! run logs, rows written by `validate --input`). Tests then read like their names:
//!
//! ```ignore
//! let workspace = Workspace::with_docker();
//! let task = workspace.labelled_alone(&project, &candidate);
//! assert_eq!(task.fail_to_pass, names(&[ADD_NEGATIVE]));
//! ```

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use swe_harvest::model::{Candidate, Task, TaskRow};
use swe_harvest::store::Store;

use super::python_project::{self, DockerGuard, Project};
use super::{SweHarvest, names, stderr, tasks};

/// The calculator's regression test: the one test every fixing scenario makes pass.
pub const ADD_NEGATIVE: &str = "tests/test_calc.py::test_add_negative";

/// A data dir for one test, and its claim on the Docker engine when it needs one.
pub struct Workspace {
    // Dropped first: the test's containers go before its data dir.
    docker: Option<DockerGuard>,
    pub harvest: SweHarvest,
}

impl Workspace {
    /// A workspace whose validate runs need a Docker engine (the test fails clearly
    /// without one) and whose containers are removed at the end.
    pub fn with_docker() -> Workspace {
        let harvest = SweHarvest::new();
        let docker = DockerGuard::require(&harvest.data_dir);
        Workspace { docker: Some(docker), harvest }
    }

    /// [`Self::with_docker`] when the base images `images` of `language` are there;
    /// `None`, the test to skip, when one is not ([`super::base_images_missing`] says
    /// how to make them).
    pub fn with_base_images(language: &str, images: &[&str]) -> Option<Workspace> {
        (!super::base_images_missing(language, images)).then(Workspace::with_docker)
    }

    /// A workspace for runs that refuse before any container (bad input, no engine).
    pub fn without_docker() -> Workspace {
        Workspace { docker: None, harvest: SweHarvest::new() }
    }

    pub fn data_dir(&self) -> &Path {
        &self.harvest.data_dir
    }

    /// Every environment build log of the data dir, one after the other.
    pub fn build_logs(&self) -> String {
        fs_err::read_dir(self.data_dir().join("logs/build"))
            .expect("build logs (none when every environment image was there already: give the project a commit of its own)")
            .flatten()
            .map(|entry| fs_err::read_to_string(entry.path()).unwrap_or_default())
            .collect()
    }

    /// A path in the test's work dir (next to the data dir).
    pub fn path(&self, relative: &str) -> PathBuf {
        self.harvest.path(relative)
    }

    /// The containers of this test that are still there.
    pub fn containers(&self) -> Vec<String> {
        self.docker.as_ref().expect("a workspace made with_docker").containers()
    }

    /// Mirrors `project` into the data dir and stores `candidates`: what validate finds.
    pub fn seeded(&self, project: &Project, candidates: &[Candidate]) -> &Workspace {
        project.mirror_into(self.data_dir());
        self.stored(candidates)
    }

    /// Stores `candidates` without a mirror of their repository.
    pub fn stored(&self, candidates: &[Candidate]) -> &Workspace {
        python_project::store_candidates(self.data_dir(), candidates);
        self
    }

    /// `swe-harvest validate ARGS` with the test machine's validate environment.
    pub fn validate(&self, args: &[&str]) -> Output {
        self.validate_with_env(&[], args)
    }

    /// [`Self::validate`] with `env` set besides (settings, a config file, a socket).
    pub fn validate_with_env(&self, env: &[(&str, &str)], args: &[&str]) -> Output {
        let mut command = self.harvest.validate_command();
        for (name, value) in env {
            command.env(name, value);
        }
        command.arg("validate").args(args).output().expect("swe-harvest runs")
    }

    /// [`Self::validate`] that must succeed.
    pub fn validated(&self, args: &[&str]) -> Output {
        let output = self.validate(args);
        assert!(output.status.success(), "validate failed:\n{}", stderr(&output));
        output
    }

    /// [`Self::validate`] that must succeed; a failure shows `id`'s first run log too.
    pub fn validated_showing_log(&self, id: &str, args: &[&str]) -> Output {
        let output = self.validate(args);
        assert!(output.status.success(), "validate failed:\n{}\n{}", stderr(&output), self.run_log(id));
        output
    }

    /// The labelled task `id`; fails the test with the drop reasons when it is not one.
    pub fn task(&self, id: &str) -> Task {
        tasks(&self.harvest).remove(id).unwrap_or_else(|| panic!("{id} not labelled: {:?}", self.drops()))
    }

    /// Seeds `project` and `candidate` alone, validates once (`--runs 1`, which must
    /// succeed) and returns its task.
    pub fn labelled_alone(&self, project: &Project, candidate: &Candidate) -> Task {
        self.seeded(project, std::slice::from_ref(candidate)).validated(&["--runs", "1"]);
        self.task(&candidate.instance_id)
    }

    /// Drop reasons and details from validate's funnel, by instance id.
    pub fn drops(&self) -> BTreeMap<String, (String, String)> {
        let store = Store::open_in(self.data_dir()).unwrap();
        let mut statement = store
            .connection()
            .prepare("SELECT item, reason, detail FROM stage_items WHERE stage = 'validate' AND outcome = 'dropped'")
            .unwrap();
        statement
            .query_map([], |row| Ok((row.get::<_, String>(0)?, (row.get(1)?, row.get(2)?))))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    /// The reason and detail of `id`'s drop; fails the test when it was not dropped.
    pub fn dropped(&self, id: &str) -> (String, String) {
        let mut drops = self.drops();
        drops.remove(id).unwrap_or_else(|| panic!("{id} was not dropped; drops: {drops:?}"))
    }

    /// The stored validation runs of `id`, by phase then attempt.
    pub fn runs(&self, id: &str) -> Vec<swe_harvest::model::ValidationRun> {
        let store = Store::open_in(self.data_dir()).unwrap();
        swe_harvest::store::validation::runs(store.connection(), id).unwrap()
    }

    /// The log of `id`'s first validation run ("" when there is none).
    pub fn run_log(&self, id: &str) -> String {
        fs_err::read_to_string(self.data_dir().join(format!("logs/validate/{id}/run-1.log"))).unwrap_or_default()
    }

    /// The spec of the store's first environment (the one a task was first tried in), as JSON.
    pub fn first_environment_spec(&self) -> serde_json::Value {
        let store = Store::open_in(self.data_dir()).unwrap();
        let spec: String = store.connection().query_row("SELECT spec FROM environments", [], |row| row.get(0)).unwrap();
        serde_json::from_str(&spec).unwrap()
    }

    /// Writes `configs/pipeline.toml` (empty) and `configs/repos/acme__calc.toml`
    /// (`repo_config`) in the work dir; returns the pipeline config's path.
    pub fn with_repo_config(&self, repo_config: &str) -> PathBuf {
        let configs = self.path("configs");
        fs_err::create_dir_all(configs.join("repos")).unwrap();
        fs_err::write(configs.join("pipeline.toml"), "").unwrap();
        fs_err::write(configs.join("repos/acme__calc.toml"), repo_config).unwrap();
        configs.join("pipeline.toml")
    }

    /// Writes `rows` to `<name>.jsonl` and runs `validate --input` on them into
    /// `out/<name>.jsonl`, with `env` and `args` besides.
    pub fn validate_rows(
        &self,
        name: &str,
        rows: &[serde_json::Value],
        env: &[(&str, &str)],
        args: &[&str],
    ) -> RowsRun {
        let lines: Vec<String> = rows.iter().map(ToString::to_string).collect();
        self.validate_lines(name, &lines, env, args)
    }

    /// [`Self::validate_rows`] for rows as JSON lines (published rows read from a file).
    pub fn validate_lines(&self, name: &str, lines: &[String], env: &[(&str, &str)], args: &[&str]) -> RowsRun {
        let input = self.path(&format!("{name}.jsonl"));
        fs_err::write(&input, lines.iter().map(|line| format!("{line}\n")).collect::<String>()).unwrap();
        // In a folder not made yet: validate makes it.
        let out = self.path(&format!("out/{name}.jsonl"));
        let mut all = vec!["--input", input.to_str().unwrap(), "--out", out.to_str().unwrap()];
        all.extend_from_slice(args);
        RowsRun { output: self.validate_with_env(env, &all), out }
    }

    /// `validate --input` on published rows (JSON lines) of repositories whose
    /// mirrors are under `mirrors` (`SWE_HARVEST_MIRRORS`), with `args` besides.
    pub fn validate_published<L: AsRef<str>>(&self, mirrors: &OsStr, lines: &[L], args: &[&str]) -> RowsRun {
        let input = self.path("published.jsonl");
        fs_err::write(&input, lines.iter().map(|line| format!("{}\n", line.as_ref())).collect::<String>()).unwrap();
        let out = self.path("out/published.jsonl");
        let output = self
            .harvest
            .validate_command()
            .env("SWE_HARVEST_MIRRORS", mirrors)
            .arg("validate")
            .args(args)
            .arg("--input")
            .arg(&input)
            .arg("--out")
            .arg(&out)
            .output()
            .expect("swe-harvest runs");
        RowsRun { output, out }
    }
}

/// A run of `validate --input`: its output and the rows it wrote.
pub struct RowsRun {
    pub output: Output,
    pub out: PathBuf,
}

impl RowsRun {
    /// The run that must have succeeded.
    pub fn succeeded(self) -> RowsRun {
        assert!(self.output.status.success(), "validate failed:\n{}", stderr(&self.output));
        self
    }

    /// The rows written, in order.
    pub fn written(&self) -> Vec<serde_json::Value> {
        fs_err::read_to_string(&self.out).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect()
    }

    /// The one row written.
    pub fn row(&self) -> serde_json::Value {
        serde_json::from_str(fs_err::read_to_string(&self.out).unwrap().trim()).unwrap()
    }
}

/// `candidate` as a published row with these labels.
pub fn row_of(candidate: &Candidate, fail_to_pass: &[&str], pass_to_pass: &[&str]) -> serde_json::Value {
    serde_json::to_value(TaskRow::from_candidate(candidate, &names(fail_to_pass), &names(pass_to_pass))).unwrap()
}
