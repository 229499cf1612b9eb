//! Every environment variable swe-harvest reads, named once, here.
//!
//! Besides these, any config key can be set as `SWE_HARVEST_<SECTION>__<KEY>`
//! (section and key upper-cased, a double underscore between them), for example
//! `SWE_HARVEST_VALIDATE__RUNS=5`, which the `config` module applies. Precedence:
//! built-in defaults < config file < environment < command-line flags.

/// The data dir (`--data-dir`).
pub const SWE_HARVEST_DATA_DIR: &str = "SWE_HARVEST_DATA_DIR";
/// The pipeline config file (`--config`).
pub const SWE_HARVEST_CONFIG: &str = "SWE_HARVEST_CONFIG";
/// The GitHub API root (`--api-url`), e.g. a GitHub Enterprise server or the simulator.
pub const SWE_HARVEST_API_URL: &str = "SWE_HARVEST_API_URL";
/// A directory of local bare mirrors (`<owner>+<name>/repo` or `<owner>__<name>.git`),
/// used by the conformance tests and benchmarks against real repositories.
pub const SWE_HARVEST_MIRRORS: &str = "SWE_HARVEST_MIRRORS";
/// The screen's development set: a folder holding `quality/` of the ground truth
/// (default: `../shared/groundtruth` seen from the project root); tests only.
pub const SWE_HARVEST_SCREEN_DEV: &str = "SWE_HARVEST_SCREEN_DEV";
/// The larger part of the screen's development set: a folder with
/// `ensembled_annotations_public.csv` and `swe-bench-lite.jsonl` (docs/screen.md says
/// where they come from); tests only.
pub const SWE_HARVEST_SCREEN_DEV_EXTRA: &str = "SWE_HARVEST_SCREEN_DEV_EXTRA";
/// Annotated rows validated (and probed) by the pipeline, for measuring the screen's
/// run-based signals: a folder with `validated.jsonl` (`validate --input --coverage`
/// output) or `probed.jsonl` (`probe --input` output) and the `data/` dir they ran
/// in (its run logs); tests only (docs/screen.md).
pub const SWE_HARVEST_SCREEN_VALIDATED: &str = "SWE_HARVEST_SCREEN_VALIDATED";
/// One GitHub token. Never written to the store, a log, a dataset or a container.
pub const GITHUB_TOKEN: &str = "GITHUB_TOKEN";
/// Several GitHub tokens, comma-separated, rotated as each runs low.
pub const GITHUB_TOKENS: &str = "GITHUB_TOKENS";
/// The Docker engine to use (bollard's convention), e.g. `unix:///var/run/docker.sock`.
pub const DOCKER_HOST: &str = "DOCKER_HOST";
/// The registry's user and password for the swarm backend's pushes and the nodes'
/// pulls (`validate.registry`); read from the environment only, never stored.
pub const SWE_HARVEST_REGISTRY_USERNAME: &str = "SWE_HARVEST_REGISTRY_USERNAME";
pub const SWE_HARVEST_REGISTRY_PASSWORD: &str = "SWE_HARVEST_REGISTRY_PASSWORD";
/// Who decides on the review page (`review --reviewer`).
pub const SWE_HARVEST_REVIEWER: &str = "SWE_HARVEST_REVIEWER";
/// The login name: the review page's reviewer when none is given.
pub const USER: &str = "USER";
/// Log filter in `tracing`'s syntax; overrides `-v` / `-q`.
pub const RUST_LOG: &str = "RUST_LOG";
/// Prefix of the generic config overrides.
pub const CONFIG_OVERRIDE_PREFIX: &str = "SWE_HARVEST_";

/// Tokens from `GITHUB_TOKENS` (comma-separated) or else `GITHUB_TOKEN`; empty
/// entries are ignored.
pub fn github_tokens() -> Vec<crate::secret::Secret> {
    let raw = std::env::var(GITHUB_TOKENS)
        .ok()
        .filter(|value| !value.trim().is_empty())
        .or_else(|| std::env::var(GITHUB_TOKEN).ok())
        .unwrap_or_default();
    raw.split(',').map(str::trim).filter(|token| !token.is_empty()).map(crate::secret::Secret::new).collect()
}
