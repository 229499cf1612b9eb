//! The command-line contract of docs/commands.md, as clap derive structs. Only
//! parsing lives here; each command's file resolves these into settings and runs.

use std::path::PathBuf;

use chrono::NaiveDate;
use clap::{Args, Parser, Subcommand, ValueEnum};

use swe_harvest::ecosystem::repo_config::Compat;
use swe_harvest::model::RepoSlug;

#[derive(Debug, Parser)]
#[command(
    name = "swe-harvest",
    version,
    about = "Build SWE-bench style benchmark tasks from real GitHub history",
    long_about = "Build SWE-bench style benchmark tasks from real GitHub history.\n\n\
        Stages: discover -> crawl -> mirror -> extract -> validate -> probe -> screen -> release. Every stage \
        reads from and writes to the store in the data dir, and resumes where it stopped."
)]
pub struct Cli {
    /// The data dir: state store, mirrors, logs and releases.
    #[arg(long, global = true, env = "SWE_HARVEST_DATA_DIR", default_value = "data", value_name = "DIR")]
    pub data_dir: PathBuf,

    /// The pipeline config file [default: configs/pipeline.toml when it exists].
    #[arg(long, global = true, env = "SWE_HARVEST_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// More log output (-v debug, -vv trace). RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,

    /// Only errors.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Find candidate repositories through the search API.
    Discover(DiscoverArgs),
    /// Fetch merged PRs, the issues they reference and their comments into the store.
    Crawl(CrawlArgs),
    /// Clone or update a bare git mirror per repository, with PR heads.
    Mirror(MirrorArgs),
    /// Turn merged PRs into task candidates (patch, test patch, problem statement).
    Extract(ExtractArgs),
    /// Run each candidate's tests in containers to compute FAIL_TO_PASS / PASS_TO_PASS.
    Validate(ValidateArgs),
    /// Run wrong fixes derived from each task's gold patch against its tests; keep the ones that pass.
    Probe(ProbeArgs),
    /// Score each validated task's quality (flags with evidence, keep/flag, difficulty).
    Screen(ScreenArgs),
    /// Write a versioned dataset (parquet + JSONL + manifest + card).
    Release(ReleaseArgs),
    /// Grade predictions (code patches or generated tests) against a release.
    Evaluate(EvaluateArgs),
    /// Run all stages for the given repositories.
    Run(RunArgs),
    /// Print the funnel: how many items entered and left each stage, and why.
    Status(StatusArgs),
    /// Write candidates, tasks or review decisions from the store to a file.
    Export(ExportArgs),
    /// Read, judge and curate tasks in the browser: a local web page (127.0.0.1).
    Review(ReviewArgs),
    /// The base images of the runtime catalogue (what scripts/setup.sh builds).
    #[command(subcommand)]
    Images(ImagesCommand),
    /// Remove the swarm backend's job images older than an age: from the registry
    /// (`validate.registry`), every node's cache and the builder.
    Gc(GcArgs),
}

impl Command {
    /// Whether the command writes to the data dir, and so must own it (`lock`) for its
    /// whole run: every command but `status`, `export` and `validate --plan`, which only read, `review`,
    /// which takes the lock only for the moment it writes a decision, and `images`,
    /// which does not use it.
    pub fn writes(&self) -> bool {
        match self {
            // A plan only reads (the store, mirrors): a running validate need not stop for it.
            Command::Validate(args) => !args.plan,
            _ => !matches!(self, Command::Status(_) | Command::Export(_) | Command::Review(_) | Command::Images(_)),
        }
    }

    /// The command's name, as typed.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Discover(_) => "discover",
            Command::Crawl(_) => "crawl",
            Command::Mirror(_) => "mirror",
            Command::Extract(_) => "extract",
            Command::Validate(_) => "validate",
            Command::Probe(_) => "probe",
            Command::Screen(_) => "screen",
            Command::Release(_) => "release",
            Command::Evaluate(_) => "evaluate",
            Command::Run(_) => "run",
            Command::Status(_) => "status",
            Command::Export(_) => "export",
            Command::Review(_) => "review",
            Command::Images(_) => "images",
            Command::Gc(_) => "gc",
        }
    }
}

#[derive(Debug, Args)]
pub struct GcArgs {
    /// Remove job images made longer ago than this (`30d`, `12h`, `0s` for all).
    #[arg(long, value_name = "AGE", default_value = "7d", value_parser = humantime::parse_duration)]
    pub older_than: std::time::Duration,
    /// Only list what would be removed.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Subcommand)]
pub enum ImagesCommand {
    /// What scripts/setup.sh builds: the Debian suites' root file systems, then each
    /// image's tag, runtime, suite, packages and check. Without `--language` or
    /// `--image`, every image of the catalogue.
    Plan(ImagesPlanArgs),
}

#[derive(Debug, Args)]
pub struct ImagesPlanArgs {
    /// The images a language makes by default (`python`, `go`, `node`, ...); repeatable.
    #[arg(long, value_name = "L")]
    pub language: Vec<String>,
    /// One image by its tag (`gcc14`; `py3.8` from its upstream image only); repeatable.
    #[arg(long, value_name = "TAG")]
    pub image: Vec<String>,
    /// As JSON.
    #[arg(long, conflicts_with = "tsv")]
    pub json: bool,
    /// As tab-separated lines for scripts/setup.sh (`suite` and `image` records; `-`
    /// for an empty field, spaces between packages).
    #[arg(long)]
    pub tsv: bool,
}

#[derive(Debug, Args)]
pub struct DiscoverArgs {
    /// Primary language of the repositories, e.g. `Python`.
    #[arg(long, value_name = "L")]
    pub language: String,
    /// Minimum number of stars.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub min_stars: u32,
    /// At most this many repositories.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub limit: usize,
    /// Also write the result as a TOML repository list.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Leave out repositories that appear in this dataset (JSONL or parquet with a `repo` column).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub exclude_dataset: Vec<PathBuf>,
    /// Only repositories pushed to on or after this date (YYYY-MM-DD).
    #[arg(long, value_name = "DATE")]
    pub pushed_after: Option<NaiveDate>,
    /// Only repositories under this license, by GitHub's key (e.g. `mit`, `apache-2.0`).
    #[arg(long, value_name = "KEY")]
    pub license: Option<String>,
    /// The GitHub API root [env: SWE_HARVEST_API_URL].
    #[arg(long, value_name = "URL")]
    pub api_url: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct RepoSelection {
    /// Repositories as OWNER/NAME.
    #[arg(long = "repo", value_name = "OWNER/NAME", num_args = 1.., required = true)]
    pub repos: Vec<RepoSlug>,
}

#[derive(Debug, Args, Clone)]
pub struct CrawlOptions {
    /// Only PRs created on or after this date (YYYY-MM-DD).
    #[arg(long, value_name = "DATE")]
    pub since: Option<NaiveDate>,
    /// Only PRs created before this date (YYYY-MM-DD).
    #[arg(long, value_name = "DATE")]
    pub until: Option<NaiveDate>,
    /// The GitHub API root, e.g. a GitHub Enterprise server [env: SWE_HARVEST_API_URL].
    #[arg(long, value_name = "URL")]
    pub api_url: Option<String>,
    /// Which API to crawl with [default: graphql with a token, rest without; config crawl.api].
    #[arg(long, value_enum)]
    pub api: Option<ApiArg>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ApiArg {
    Graphql,
    Rest,
}

impl From<ApiArg> for swe_harvest::crawl::CrawlApi {
    fn from(value: ApiArg) -> Self {
        match value {
            ApiArg::Graphql => swe_harvest::crawl::CrawlApi::Graphql,
            ApiArg::Rest => swe_harvest::crawl::CrawlApi::Rest,
        }
    }
}

#[derive(Debug, Args)]
pub struct CrawlArgs {
    #[command(flatten)]
    pub selection: RepoSelection,
    #[command(flatten)]
    pub options: CrawlOptions,
}

#[derive(Debug, Args, Clone)]
pub struct MirrorOptions {
    /// Clone from this URL or local path instead of GitHub; `{owner}` and `{name}` are replaced.
    #[arg(long, value_name = "URL_OR_PATH")]
    pub clone_url: Option<String>,
}

#[derive(Debug, Args)]
pub struct MirrorArgs {
    #[command(flatten)]
    pub selection: RepoSelection,
    #[command(flatten)]
    pub options: MirrorOptions,
}

#[derive(Debug, Args, Clone)]
pub struct ExtractOptions {
    /// Classify test files as SWE-bench does (reproduces its rows byte for byte).
    #[arg(long, value_enum, value_name = "MODE")]
    pub compat: Option<CompatArg>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CompatArg {
    Native,
    Swebench,
}

impl From<CompatArg> for Compat {
    fn from(value: CompatArg) -> Self {
        match value {
            CompatArg::Native => Compat::Native,
            CompatArg::Swebench => Compat::Swebench,
        }
    }
}

#[derive(Debug, Args)]
pub struct ExtractArgs {
    #[command(flatten)]
    pub selection: RepoSelection,
    #[command(flatten)]
    pub options: ExtractOptions,
}

#[derive(Debug, Args, Clone)]
pub struct ValidateOptions {
    /// Tasks validated at once [default: from cores and memory].
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Repetitions of the pre and post runs [default: 3].
    #[arg(long, value_name = "N")]
    pub runs: Option<u32>,
    /// Also measure the golden tests' change coverage (SWT-Bench).
    #[arg(long)]
    pub coverage: bool,
    /// Where the runs go [default: `validate.backend`, else local].
    #[arg(long, value_enum, value_name = "BACKEND")]
    pub backend: Option<BackendArg>,
}

/// `--backend`: the local Docker engine, or a swarm managed by it (`validate.registry`).
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum BackendArg {
    Local,
    Swarm,
}

impl BackendArg {
    pub fn kind(self) -> swe_harvest::sandbox::BackendKind {
        match self {
            BackendArg::Local => swe_harvest::sandbox::BackendKind::Local,
            BackendArg::Swarm => swe_harvest::sandbox::BackendKind::Swarm,
        }
    }
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Only these repositories.
    #[arg(long = "repo", value_name = "OWNER/NAME", num_args = 1..)]
    pub repos: Vec<RepoSlug>,
    /// Only these instances.
    #[arg(long = "instance", value_name = "ID", num_args = 1..)]
    pub instances: Vec<String>,
    /// Validate rows in the SWE-bench format from this file instead of the store.
    #[arg(long, value_name = "ROWS.jsonl", requires = "out")]
    pub input: Option<PathBuf>,
    /// Where `--input` rows are written back with fresh labels.
    #[arg(long, value_name = "OUT.jsonl", requires = "input")]
    pub out: Option<PathBuf>,
    /// With --input: compare fresh labels with the rows' own and print the differences.
    #[arg(long, requires = "input")]
    pub compare: bool,
    /// Write the inferred environments that worked into configs/repos/<owner>__<name>.toml
    /// (by version, with their ladder rung), so that the next run starts from them.
    #[arg(long)]
    pub write_config: bool,
    /// Only plan: per task, the environment validate would start from (ecosystem,
    /// runtime, install, test command, what came from CI, the test files), one JSON line
    /// each (into --out with --input, else on stdout), and stop there. Builds no image,
    /// starts no container, needs no Docker engine, writes nothing to the store.
    #[arg(long, conflicts_with_all = ["compare", "write_config"])]
    pub plan: bool,
    #[command(flatten)]
    pub options: ValidateOptions,
}

#[derive(Debug, Args)]
pub struct ScreenArgs {
    /// Only these repositories.
    #[arg(long = "repo", value_name = "OWNER/NAME", num_args = 1..)]
    pub repos: Vec<RepoSlug>,
    /// Screen rows in the SWE-bench format (or Multi-SWE-bench's) from this file instead of the store.
    #[arg(long, value_name = "ROWS.jsonl", requires = "out", conflicts_with = "repos")]
    pub input: Option<std::path::PathBuf>,
    /// Where `--input` rows are written with the quality fields added.
    #[arg(long, value_name = "OUT.jsonl", requires = "input")]
    pub out: Option<std::path::PathBuf>,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args, Clone)]
pub struct ProbeArgs {
    /// Only these repositories.
    #[arg(long = "repo", value_name = "OWNER/NAME", num_args = 1..)]
    pub repos: Vec<RepoSlug>,
    /// Only these instances (probed again even when their record holds).
    #[arg(long = "instance", value_name = "ID", num_args = 1..)]
    pub instances: Vec<String>,
    /// Probe rows in the SWE-bench format (or Multi-SWE-bench's) from this file instead of the store;
    /// rows without their own validation (a `validate --input` output) are validated first.
    #[arg(long, value_name = "ROWS.jsonl", requires = "out", conflicts_with_all = ["repos", "instances"])]
    pub input: Option<std::path::PathBuf>,
    /// Where `--input` rows are written with `mutation_score`, `surviving_mutants` and `probe`.
    #[arg(long, value_name = "OUT.jsonl", requires = "input")]
    pub out: Option<std::path::PathBuf>,
    /// Tasks probed at once [default: as for validate].
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Where the mutants run [default: `validate.backend`, else local].
    #[arg(long, value_enum, value_name = "BACKEND")]
    pub backend: Option<BackendArg>,
    #[command(flatten)]
    pub options: ProbeOptions,
}

/// Probe's options that `run` shares.
#[derive(Debug, Args, Clone, Default)]
pub struct ProbeOptions {
    /// At most this many mutants per task [default: `probe.mutants`, 8].
    #[arg(long, value_name = "N")]
    pub mutants: Option<usize>,
}

#[derive(Debug, Args, Clone)]
pub struct ReleaseArgs {
    /// The dataset's name.
    #[arg(long, value_name = "NAME")]
    pub name: String,
    /// The dataset's version, e.g. `2026.11`.
    #[arg(long = "version", id = "release_version", value_name = "VERSION")]
    pub version: String,
    /// Only tasks whose PR was created after this date (YYYY-MM-DD).
    #[arg(long, value_name = "DATE")]
    pub created_after: Option<NaiveDate>,
    /// Only tasks whose PR was created before this date (YYYY-MM-DD).
    #[arg(long, value_name = "DATE")]
    pub created_before: Option<NaiveDate>,
    /// Only these repositories.
    #[arg(long = "repo", value_name = "OWNER/NAME", num_args = 1..)]
    pub repos: Vec<RepoSlug>,
    /// Leave out tasks found in these datasets (parquet or JSONL).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub exclude_dataset: Vec<PathBuf>,
    /// Write one split per period of creation.
    #[arg(long, value_enum, value_name = "PERIOD")]
    pub split_by: Option<SplitBy>,
    /// Build an instance image per task, runnable by SWE-bench's harness.
    #[arg(long)]
    pub images: bool,
    /// Push the instance images to the configured registry.
    #[arg(long, requires = "images")]
    pub push: bool,
    /// An SWT release: only tasks with measured coverage (`validate --coverage`)
    /// whose golden FAIL_TO_PASS held in every one of `release.swt_min_runs` runs.
    #[arg(long)]
    pub swt: bool,
    /// Replace an existing release of this name and version.
    #[arg(long)]
    pub force: bool,
    /// Only tasks whose quality_score is at most this (tasks never screened are left out).
    #[arg(long, value_name = "X")]
    pub max_quality_score: Option<f64>,
    /// Leave out tasks that carry any of these screen flags.
    #[arg(long, value_name = "CODE", num_args = 1..)]
    pub exclude_flag: Vec<swe_harvest::screen::FlagCode>,
    /// Only tasks the screen kept (quality_verdict = keep: uncertain and flag are left out).
    #[arg(long)]
    pub only_kept: bool,
    /// Only tasks whose tests reject at least this share of probe's mutants (tasks not
    /// probed, or probed without a viable mutant, are left out).
    #[arg(long, value_name = "X")]
    pub min_mutation_score: Option<f64>,
    /// Only tasks a person reviewed and kept (`swe-harvest review`).
    #[arg(long)]
    pub reviewed_only: bool,
    /// Leave out tasks a person rejected (`swe-harvest review`).
    #[arg(long)]
    pub exclude_rejected: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SplitBy {
    Month,
}

#[derive(Debug, Args)]
pub struct EvaluateArgs {
    /// The release folder, `<data-dir>/releases/NAME/VERSION`.
    #[arg(long, value_name = "DIR")]
    pub release: PathBuf,
    /// JSONL rows {instance_id, model_name_or_path, model_patch}.
    #[arg(long, value_name = "FILE")]
    pub predictions: PathBuf,
    /// `swe`: the patches fix code; `swt`: the patches add tests.
    #[arg(long, value_enum)]
    pub mode: EvaluateMode,
    /// Containers at once (default: as for validate).
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Where the runs go [default: `validate.backend`, else local].
    #[arg(long, value_enum, value_name = "BACKEND")]
    pub backend: Option<BackendArg>,
    /// The JSON report (default: `<data-dir>/evaluations/<name>-<version>.<mode>.<predictions>.json`).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum EvaluateMode {
    Swe,
    Swt,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub selection: RepoSelection,
    #[command(flatten)]
    pub crawl: CrawlOptions,
    #[command(flatten)]
    pub mirror: MirrorOptions,
    #[command(flatten)]
    pub extract: ExtractOptions,
    #[command(flatten)]
    pub validate: ValidateOptions,
    #[command(flatten)]
    pub probe: ProbeOptions,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Only these repositories.
    #[arg(long = "repo", value_name = "OWNER/NAME", num_args = 1..)]
    pub repos: Vec<RepoSlug>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also write the funnel as an HTML page with a chart.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// What to export.
    #[arg(long, value_enum)]
    pub stage: ExportStage,
    /// The file format.
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// The output file.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportStage {
    Candidates,
    Tasks,
    /// The review decisions (`swe-harvest review`).
    Reviews,
}

#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// Review this release's tasks, as NAME/VERSION (`<data-dir>/releases/NAME/VERSION`).
    #[arg(long, value_name = "NAME/VERSION", conflicts_with = "stage")]
    pub release: Option<String>,
    /// Review the store's tasks of this stage (the default: every validated task).
    #[arg(long, value_enum, value_name = "STAGE")]
    pub stage: Option<ReviewStage>,
    /// The port [default: 8470, or a free one when it is taken].
    #[arg(long, value_name = "N")]
    pub port: Option<u16>,
    /// Who decides, recorded with every decision [default: $USER].
    #[arg(long, value_name = "NAME", env = "SWE_HARVEST_REVIEWER")]
    pub reviewer: Option<String>,
    /// Listen on this address instead of 127.0.0.1, e.g. 0.0.0.0. There is no login:
    /// whoever reaches it reads the tasks and records decisions.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::IpAddr>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ReviewStage {
    Validated,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    Jsonl,
    Parquet,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn command_line_definition_is_consistent() {
        // clap's checks of the whole definition (duplicate names, bad defaults), which
        // otherwise fire only when the broken subcommand is first parsed.
        super::Cli::command().debug_assert();
    }
}
