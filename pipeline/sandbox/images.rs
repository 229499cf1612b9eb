//! Environment images: one per (repository, spec, environment commit, date), built on
//! a [`Backend`] from the Dockerfile that the project's ecosystem writes
//! ([`crate::ecosystem::Ecosystem::environment_dockerfile`]) and a tar context (the
//! repository at the environment commit, the extra CA bundle), tagged by the hash of
//! everything that goes into it, and reused by every task and run that shares it.
//! Concurrent workers asking for one image wait for a single build (single flight per
//! key).
//!
//! Layers: the base image (OS + language runtime, `validate.base_images`) and on top
//! the environment (the project's dependencies as of the date, an unprivileged user
//! `harvest` with uid 1000). `/testbed` is emptied at the end: each run copies the
//! repository at its own base commit there.
//!
//! Base image fallback (decision): when the configured image is neither present nor
//! pullable, the ecosystem's local base image (built by `scripts/setup.sh`, e.g.
//! `swe-harvest/base:py3.11`) is used if present, logged once per runtime; otherwise
//! the environment fails with `base_image_missing`.
//!
//! The extra CA bundle ([`CA_PATH`]) and the registries ([`crate::sandbox::Registries`])
//! are only visible to the build steps that install packages, never set in the image's
//! environment.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use tokio::sync::OnceCell;

use super::{Backend, BuildFailure, BuildLimits, ImageBuild, Owner, archive, script};
use crate::model::drop_reason::ValidateDropReason;
use crate::model::{EnvironmentSpec, RepoSlug};

/// Where the CA bundle goes inside images (the build context's `ca.crt`).
pub const CA_PATH: &str = "/etc/swe-harvest/ca.crt";

#[derive(Debug, Clone, thiserror::Error)]
pub enum ImageError {
    #[error(
        "no base image for the runtime {runtime}: `{configured}` is not present and cannot be pulled, and the local \
         fallback `{fallback}` is missing; run scripts/setup.sh to build it, or set validate.base_images.\"{runtime}\""
    )]
    BaseImageMissing { runtime: String, configured: String, fallback: String },
    #[error("no base image is configured for the runtime {runtime}; add it to validate.base_images")]
    NoBaseImageConfigured { runtime: String },
    #[error("building the environment image `{tag}` failed: {message}; the build log is `{log}`")]
    BuildFailed { tag: String, message: String, log: PathBuf },
    #[error(
        "building the environment image `{tag}` took longer than {seconds}s (validate.build_timeout_secs); its last output: {last_output}; the build log is `{log}`"
    )]
    BuildTimeout { tag: String, seconds: u64, last_output: String, log: PathBuf },
    #[error("failed to prepare the build context of `{tag}`: {message}")]
    Context { tag: String, message: String },
    #[error("the container engine failed while building `{tag}`: {message}")]
    Engine { tag: String, message: String },
}

impl ImageError {
    /// Why the task that needed the image is dropped.
    pub fn reason(&self) -> ValidateDropReason {
        match self {
            ImageError::BaseImageMissing { .. } | ImageError::NoBaseImageConfigured { .. } => {
                ValidateDropReason::BaseImageMissing
            }
            ImageError::BuildTimeout { .. } => ValidateDropReason::EnvironmentBuildTimeout,
            _ => ValidateDropReason::EnvironmentBuildFailed,
        }
    }
}

/// What one environment image is made of.
#[derive(Debug, Clone)]
pub struct EnvironmentRequest {
    pub repo: RepoSlug,
    pub mirror: PathBuf,
    pub environment_setup_commit: String,
    pub spec: EnvironmentSpec,
    /// Dependencies are resolved as of this time (`UV_EXCLUDE_NEWER`).
    pub date: DateTime<Utc>,
    /// The project's version (for `SETUPTOOLS_SCM_PRETEND_VERSION`: there is no `.git`).
    pub version: String,
}

/// A ready environment image.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltImage {
    pub tag: String,
    pub key: String,
    /// True when the image existed before this request.
    pub reused: bool,
    pub build_secs: f64,
}

/// Settings of image builds, resolved from the config.
#[derive(Debug, Clone)]
pub struct ImageSettings {
    pub base_images: BTreeMap<String, String>,
    /// The CA bundle's bytes (read once from `validate.extra_ca_file`).
    pub extra_ca: Option<Vec<u8>>,
    /// `validate.gradle_distributions`: a Gradle version's distribution zip.
    pub gradle_distributions: BTreeMap<String, PathBuf>,
    /// The package registries the builds reach (`validate.registries`).
    pub registries: crate::sandbox::Registries,
    pub build_timeout: Duration,
    /// Memory and CPU of the builds.
    pub build_limits: BuildLimits,
    /// Build logs go to `<logs_dir>/build/<tag>.log`.
    pub logs_dir: PathBuf,
}

type Flight = Arc<OnceCell<Result<BuiltImage, ImageError>>>;
/// A runtime's base image and its id, once resolved.
type ResolvedBase = Result<(String, String), ImageError>;

/// What the project's ecosystem says an environment image is.
pub struct Recipe<'a> {
    pub request: &'a EnvironmentRequest,
    /// The local base image for the runtime (from `scripts/setup.sh`), used when the
    /// configured one cannot be had.
    pub fallback_base: String,
    /// The Dockerfile on a given base image.
    pub dockerfile: &'a (dyn Fn(&str) -> String + Sync),
    /// Files the build context holds besides the repository and the CA bundle (name,
    /// content), for the Dockerfile to `COPY`; part of the content key.
    pub files: Vec<(String, Vec<u8>)>,
    /// How the context carries the repository.
    pub testbed: TestbedCopy,
}

/// How an environment build's context carries the repository at the environment
/// commit, owned by the unprivileged user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestbedCopy {
    /// A `testbed/` folder, for the Dockerfile to `COPY testbed/ /testbed/`.
    Folder,
    /// One file, [`TESTBED_TARBALL`] (its entries under `testbed/`), for a Dockerfile
    /// whose install step unpacks it and empties `/testbed` again. The legacy builder's
    /// `COPY` of a folder handles each file (2,327 of sqlfluff's: 5-6 s where the
    /// tarball's copy and unpacking took 1-2 s, 2026-11-28); the files unpacked and
    /// removed within one step are in no layer.
    Tarball,
}

/// The name of the repository's tarball in a build context ([`TestbedCopy::Tarball`]).
pub const TESTBED_TARBALL: &str = "testbed.tar";

/// Builds environment images, once per key.
pub struct Images {
    backend: Arc<dyn Backend>,
    settings: ImageSettings,
    flights: Mutex<HashMap<String, Flight>>,
    bases: tokio::sync::Mutex<HashMap<String, ResolvedBase>>,
}

/// The content key of an image: the Dockerfile (which names the environment
/// commit, the spec's commands and the date), the base image's id and the CA bundle.
pub fn content_key(dockerfile: &str, base_image_id: &str, extra_ca: Option<&[u8]>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"swe-harvest environment image v1\0");
    hasher.update(dockerfile.as_bytes());
    hasher.update(b"\0");
    hasher.update(base_image_id.as_bytes());
    hasher.update(b"\0");
    if let Some(ca) = extra_ca {
        hasher.update(Sha256::digest(ca));
    }
    hex::encode(hasher.finalize())
}

/// `dockerfile` with its content key among the labels of its last line (or a line of
/// its own when the last is no `LABEL`): the legacy builder makes each `LABEL` line,
/// and the build's own labels, a step of their own, each a container made and
/// committed.
fn with_key_label(dockerfile: &str, key: &str) -> String {
    let text = dockerfile.trim_end_matches('\n');
    let last = text.rsplit('\n').next().unwrap_or_default();
    if last.starts_with("LABEL ") {
        format!("{text} swe-harvest.key={key}\n")
    } else {
        format!("{text}\nLABEL swe-harvest.key={key}\n")
    }
}

/// The content key extended by the build context's extra files ([`Recipe::files`]);
/// unchanged when there are none, so that the keys of images without any stay.
pub fn with_files(key: String, files: &[(impl AsRef<str>, impl AsRef<[u8]>)]) -> String {
    if files.is_empty() {
        return key;
    }
    let mut hasher = Sha256::new();
    hasher.update(key.as_bytes());
    for (name, content) in files {
        hasher.update(b"\0");
        hasher.update(name.as_ref().as_bytes());
        hasher.update(b"\0");
        hasher.update(Sha256::digest(content.as_ref()));
    }
    hex::encode(hasher.finalize())
}

/// The tag of an environment image: `swe-harvest/env.<owner>__<name>:<key prefix>`.
pub fn tag_for(repo: &RepoSlug, key: &str) -> String {
    // Valid for every GitHub name (`.github`, `b_`): see `docker_name_component`.
    let repository = crate::model::ids::docker_name_component(&repo.double_underscore());
    format!("swe-harvest/env.{repository}:{}", &key[..16])
}

impl Images {
    pub fn new(backend: Arc<dyn Backend>, settings: ImageSettings) -> Images {
        Images {
            backend,
            settings,
            flights: Mutex::new(HashMap::new()),
            bases: tokio::sync::Mutex::new(HashMap::new()),
        }
    }

    pub fn settings(&self) -> &ImageSettings {
        &self.settings
    }

    /// The base image for `runtime` and its id, with the fallback described above.
    pub async fn base_image(&self, runtime: &str, fallback: &str) -> Result<(String, String), ImageError> {
        let mut bases = self.bases.lock().await;
        if let Some(known) = bases.get(runtime) {
            return known.clone();
        }
        let resolved = self.resolve_base(runtime, fallback).await;
        bases.insert(runtime.to_string(), resolved.clone());
        resolved
    }

    async fn resolve_base(&self, runtime: &str, fallback: &str) -> Result<(String, String), ImageError> {
        let fallback = fallback.to_string();
        let configured = self.settings.base_images.get(runtime).cloned();
        if let Some(configured) = &configured {
            if let Some(id) = self.backend.image_id(configured).await {
                return Ok((configured.clone(), id));
            }
            if self.backend.pull(configured).await {
                if let Some(id) = self.backend.image_id(configured).await {
                    return Ok((configured.clone(), id));
                }
            }
        }
        match self.backend.image_id(&fallback).await {
            Some(id) => {
                match &configured {
                    Some(configured) => tracing::warn!(
                        runtime, configured = %configured, fallback = %fallback,
                        "the configured base image is missing and cannot be pulled; using the local one from scripts/setup.sh"
                    ),
                    None => {
                        tracing::warn!(runtime, fallback = %fallback, "no base image configured; using the local one")
                    }
                }
                Ok((fallback, id))
            }
            None => match configured {
                Some(configured) => {
                    Err(ImageError::BaseImageMissing { runtime: runtime.to_string(), configured, fallback })
                }
                None => Err(ImageError::NoBaseImageConfigured { runtime: runtime.to_string() }),
            },
        }
    }

    /// The environment image of `recipe`: reused when it exists, else built once,
    /// however many workers ask at the same time.
    pub async fn ensure(&self, recipe: &Recipe<'_>) -> Result<BuiltImage, ImageError> {
        let (dockerfile, key) = self.dockerfile_and_key(recipe).await?;
        let flight = {
            let mut flights = self.flights.lock().expect("the flights lock is never poisoned");
            flights.entry(key.clone()).or_default().clone()
        };
        flight.get_or_init(|| self.build(recipe, dockerfile, key.clone())).await.clone()
    }

    /// What building `recipe`'s image asks of the backend (its tag, its context with
    /// the Dockerfile, its build network), whether or not the image exists: for a
    /// benchmark that builds it itself.
    pub async fn image_build_of(&self, recipe: &Recipe<'_>) -> Result<ImageBuild, ImageError> {
        let (dockerfile, key) = self.dockerfile_and_key(recipe).await?;
        let tag = tag_for(&recipe.request.repo, &key);
        self.image_build(recipe, &dockerfile, &tag, &key).await
    }

    /// The Dockerfile of `recipe` on its base image, and the image's content key.
    async fn dockerfile_and_key(&self, recipe: &Recipe<'_>) -> Result<(String, String), ImageError> {
        let (base, base_id) = self.base_image(&recipe.request.spec.runtime, &recipe.fallback_base).await?;
        let dockerfile = (recipe.dockerfile)(&base);
        let key = with_files(content_key(&dockerfile, &base_id, self.settings.extra_ca.as_deref()), &recipe.files);
        Ok((dockerfile, key))
    }

    /// The build of an environment image: the context (the repository at the
    /// environment commit as the recipe carries it, the CA bundle, the recipe's files)
    /// and the registries' network.
    async fn image_build(
        &self,
        recipe: &Recipe<'_>,
        dockerfile: &str,
        tag: &str,
        key: &str,
    ) -> Result<ImageBuild, ImageError> {
        let context = {
            let request = recipe.request.clone();
            let extra_ca = self.settings.extra_ca.clone();
            let dockerfile = with_key_label(dockerfile, key);
            let files = recipe.files.clone();
            let testbed = recipe.testbed;
            tokio::task::spawn_blocking(move || {
                let ca = extra_ca.as_deref().map(|ca| ("ca.crt", ca, 0o644));
                let mut extra: Vec<(&str, &[u8], u32)> = ca.into_iter().collect();
                extra.extend(files.iter().map(|(name, content)| (name.as_str(), content.as_slice(), 0o644)));
                archive::build_context(
                    &dockerfile,
                    &extra,
                    &request.mirror,
                    &request.environment_setup_commit,
                    Owner::UNPRIVILEGED,
                    testbed,
                )
            })
            .await
            .map_err(|error| ImageError::Context { tag: tag.to_string(), message: error.to_string() })?
            .map_err(|message| ImageError::Context { tag: tag.to_string(), message })?
        };
        let allowlist = super::egress::Allowlist::of(&self.settings.registries)
            .map_err(|message| ImageError::Context { tag: tag.to_string(), message })?;
        Ok(ImageBuild {
            tag: tag.to_string(),
            context,
            labels: BTreeMap::new(),
            network: super::BuildNetwork::Registries(Arc::new(allowlist)),
            timeout: self.settings.build_timeout,
            limits: self.settings.build_limits,
        })
    }

    async fn build(&self, recipe: &Recipe<'_>, dockerfile: String, key: String) -> Result<BuiltImage, ImageError> {
        let request = recipe.request;
        let tag = tag_for(&request.repo, &key);
        if self.backend.image_id(&tag).await.is_some() {
            tracing::debug!(image = %tag, "environment image exists; reusing it");
            return Ok(BuiltImage { tag, key, reused: true, build_secs: 0.0 });
        }
        let started = Instant::now();
        let log_path = self.settings.logs_dir.join("build").join(format!("{}.log", tag.replace(['/', ':'], "_")));
        tracing::info!(image = %tag, repo = %request.repo, commit = %request.environment_setup_commit, "building an environment image");
        let build = self.image_build(recipe, &dockerfile, &tag, &key).await?;
        let mut log = String::new();
        log.push_str(&dockerfile);
        log.push_str("\n--- build output ---\n");
        let outcome = self.backend.build(&build, &mut log).await;
        // Plain text: the ladder reads uv's hints in it, and users read it.
        write_log(&log_path, &script::strip_ansi(&log));
        match outcome {
            Err(BuildFailure::TimedOut { step_output }) => Err(ImageError::BuildTimeout {
                tag,
                seconds: self.settings.build_timeout.as_secs(),
                last_output: match last_meaningful_lines(&step_output) {
                    lines if lines.is_empty() => "(none)".to_string(),
                    lines => lines,
                },
                log: log_path,
            }),
            Err(BuildFailure::Failed { message, step_output, refused }) => {
                let mut message = build_diagnosis(&step_output, &message);
                if !refused.is_empty() {
                    message = format!("{}; {message}", super::egress::diagnosis(&refused));
                }
                Err(ImageError::BuildFailed { tag, message, log: log_path })
            }
            Ok(()) => {
                if self.backend.image_id(&tag).await.is_none() {
                    return Err(ImageError::Engine {
                        tag,
                        message: "the build ended but the image is not there".into(),
                    });
                }
                let build_secs = started.elapsed().as_secs_f64();
                tracing::info!(image = %tag, seconds = format!("{build_secs:.1}"), "built the environment image");
                Ok(BuiltImage { tag, key, reused: false, build_secs })
            }
        }
    }
}

/// At most this many lines of a failing step's output make its diagnosis...
const DIAGNOSIS_LINES: usize = 8;
/// ... and at most this many characters (the end is kept).
const DIAGNOSIS_CHARS: usize = 2000;

/// The diagnosis of a failed build, so that a user can fix it in one look: the last
/// meaningful lines of the failing step's own output (the resolver's error and hint,
/// the compiler's error), and the step's exit code. Never the step's command, which
/// the engine's message repeats (`The command '/bin/sh -c ...' returned a non-zero
/// code: 1`) and which says nothing of the cause. A failure outside a step's command
/// (a `COPY`, the engine) is the engine's message.
pub fn build_diagnosis(step_output: &str, engine_message: &str) -> String {
    let engine_message = engine_message.trim();
    // `The command '/bin/sh -c ...' returned a non-zero code: 1`, behind a prefix of
    // the client's (bollard: `Docker stream error: `).
    let exit_code = engine_message
        .contains("The command '")
        .then(|| engine_message.rsplit_once("returned a non-zero code: "))
        .flatten()
        .map(|(_, code)| code.trim().to_string());
    let output = last_meaningful_lines(step_output);
    let diagnosis = match (exit_code, output.is_empty()) {
        (Some(code), false) => format!("{output} (the step exited with code {code})"),
        (Some(code), true) => format!("a build step exited with code {code} and printed nothing"),
        (None, false) => format!("{output} ({engine_message})"),
        (None, true) => engine_message.to_string(),
    };
    match releases_not_served(step_output).as_slice() {
        [] => diagnosis,
        releases => format!(
            "the registry does not serve {} (404 Not Found), which the install asks for: a release unpublished since, \
             or one the registry reached here lacks (validate.registries names another); {diagnosis}",
            releases.iter().map(|release| format!("`{release}`")).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// The npm releases (`name@version`) whose tarballs a step's output says the
/// registry answered 404 for: a package manager names the tarball's URL
/// (`.../babel-plugin-polyfill-es-shims/-/babel-plugin-polyfill-es-shims-0.5.0.tgz`,
/// Yarn's `Request URL:` below its `Response Code: 404`, npm's `404 Not Found - GET
/// URL`). Found on babel-13928 (2026-11-29), whose lockfile pins such a release.
fn releases_not_served(step_output: &str) -> Vec<String> {
    let mut releases: Vec<String> = Vec::new();
    // Lines after Yarn's `Response Code: 404` that may still bring its `Request URL:`.
    let mut yarn_lines_left: u8 = 0;
    for line in step_output.lines() {
        let yarn_url = yarn_lines_left > 0 && line.contains("Request URL:");
        if (line.contains("404") || yarn_url)
            && let Some(release) = line.split_whitespace().find_map(npm_tarball_release)
            && !releases.contains(&release)
        {
            releases.push(release);
        }
        yarn_lines_left = if line.contains("Response Code: 404") { 3 } else { yarn_lines_left.saturating_sub(1) };
    }
    releases
}

/// `name@version` of an npm tarball URL (`.../NAME/-/BASENAME-VERSION.tgz`, a scoped
/// name's basename without its scope).
fn npm_tarball_release(word: &str) -> Option<String> {
    let (package, file) = word.trim_end_matches(['.', ',', ')', '\'']).rsplit_once("/-/")?;
    let (before, basename) = package.rsplit_once('/')?;
    let version = file.strip_suffix(".tgz")?.strip_prefix(basename)?.strip_prefix('-')?;
    match before.rsplit('/').next().filter(|part| part.starts_with('@')) {
        Some(scope) => Some(format!("{scope}/{basename}@{version}")),
        None => Some(format!("{basename}@{version}")),
    }
}

/// The last lines of a step's output that say something (at most [`DIAGNOSIS_LINES`]
/// and [`DIAGNOSIS_CHARS`], the end kept), trimmed and joined with ` | `.
/// Lines that a tool prints after every failure, whatever its cause: Maven's epilogue
/// (how to rerun it, where to read about errors, how to resume), which filled a
/// failed Maven build's whole diagnosis and hid the compiler's error above it.
const BOILERPLATE: &[&str] = &[
    "To see the full stack trace of the errors",
    "Re-run Maven using the -X switch",
    "For more information about the errors and possible solutions",
    "[Help 1] http",
    "After correcting the problems, you can resume the build",
    "mvn <args> -rf :",
];

fn last_meaningful_lines(step_output: &str) -> String {
    let meaningful: Vec<&str> = step_output
        .lines()
        .map(str::trim_end)
        .filter(|line| line.chars().any(char::is_alphanumeric))
        .filter(|line| !BOILERPLATE.iter().any(|boilerplate| line.contains(boilerplate)))
        .collect();
    let mut lines: Vec<&str> = meaningful[meaningful.len().saturating_sub(DIAGNOSIS_LINES)..].to_vec();
    // Whole lines from the end, within the character budget.
    let mut budget = DIAGNOSIS_CHARS;
    let mut kept = 0;
    for line in lines.iter().rev() {
        if line.len() > budget && kept > 0 {
            break;
        }
        budget = budget.saturating_sub(line.len());
        kept += 1;
    }
    lines.drain(..lines.len() - kept);
    let output = lines.iter().map(|line| line.trim()).collect::<Vec<_>>().join(" | ");
    if output.len() <= DIAGNOSIS_CHARS {
        return output;
    }
    let cut = output.len() - DIAGNOSIS_CHARS;
    let start = (cut..output.len()).find(|&index| output.is_char_boundary(index)).unwrap_or(output.len());
    format!("...{}", &output[start..])
}

pub fn write_log(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        let _ = fs_err::create_dir_all(parent);
    }
    if let Err(error) = fs_err::write(path, text) {
        tracing::warn!(%error, "could not write a build log");
    }
}

/// What the Dockerfile tests of every ecosystem start from.
#[cfg(test)]
pub mod fixtures {
    use chrono::TimeZone;

    use super::*;

    /// A request for `spec`: acme/gadget at a fixed commit, dated 2023-05-04, version 1.0.
    pub fn request(spec: EnvironmentSpec) -> EnvironmentRequest {
        EnvironmentRequest {
            repo: "acme/gadget".parse().unwrap(),
            mirror: PathBuf::from("/nonexistent"),
            environment_setup_commit: "a".repeat(40),
            spec,
            date: Utc.with_ymd_and_hms(2023, 5, 4, 3, 2, 1).unwrap(),
            version: "1.0".into(),
        }
    }

    /// A request for a spec of `ecosystem` on `runtime` that installs with `install` and
    /// tests with `test_command`.
    pub fn request_for(ecosystem: &str, runtime: &str, install: &[&str], test_command: &str) -> EnvironmentRequest {
        request(EnvironmentSpec {
            ecosystem: ecosystem.into(),
            runtime: runtime.into(),
            install: install.iter().map(|step| step.to_string()).collect(),
            test_command: test_command.into(),
            ..Default::default()
        })
    }

    /// Build settings with `ca` as the extra CA bundle and nothing else configured.
    pub fn settings(ca: Option<&[u8]>) -> ImageSettings {
        ImageSettings {
            base_images: BTreeMap::new(),
            extra_ca: ca.map(<[u8]>::to_vec),
            gradle_distributions: BTreeMap::new(),
            registries: Default::default(),
            build_timeout: Duration::from_secs(60),
            build_limits: Default::default(),
            logs_dir: PathBuf::from("/tmp"),
        }
    }

    /// [`settings`] without a CA, with the registries that `mirror` sets (the others
    /// stay the public ones).
    pub fn mirrored(mirror: impl FnOnce(&mut crate::sandbox::Registries)) -> ImageSettings {
        let mut mirrored = settings(None);
        mirror(&mut mirrored.registries);
        mirrored
    }

    /// The line of the Dockerfile `text` that runs `step`, once no `ENV` line of the
    /// image names any of `step_only`: what the build sets for that step alone (the
    /// CA, a registry) must not reach the tests' containers.
    pub fn step_line<'a>(text: &'a str, step: &str, step_only: &[&str]) -> &'a str {
        for env in text.lines().filter(|line| line.starts_with("ENV ")) {
            for name in step_only {
                assert!(!env.contains(name), "`{name}` is set for the image, not for its step `{step}`: {env}");
            }
        }
        text.lines().find(|line| line.contains(step)).unwrap_or_else(|| panic!("no step `{step}`: {text}"))
    }
}

#[cfg(test)]
mod tests {
    //! A new backend needs nothing but its implementation: this fake one (images in a
    //! map, jobs answered with a canned log) serves the image machinery and
    //! `run_job` exactly as Docker does.

    use std::collections::BTreeSet;
    use std::path::Path;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use chrono::TimeZone;

    use super::*;
    use crate::sandbox::{JobOutput, Limits, RunError};

    #[derive(Default)]
    struct FakeBackend {
        images: Mutex<BTreeMap<String, String>>,
        builds: AtomicUsize,
        contexts: Mutex<Vec<Vec<u8>>>,
    }

    #[async_trait::async_trait]
    impl Backend for FakeBackend {
        fn name(&self) -> &'static str {
            "fake"
        }
        async fn image_id(&self, reference: &str) -> Option<String> {
            self.images.lock().unwrap().get(reference).cloned()
        }
        async fn pull(&self, _: &str) -> bool {
            false
        }
        async fn build(&self, build: &ImageBuild, log: &mut String) -> Result<(), BuildFailure> {
            self.builds.fetch_add(1, Ordering::SeqCst);
            // Let the other workers ask while this build runs.
            tokio::time::sleep(Duration::from_millis(50)).await;
            log.push_str("built\n");
            self.contexts.lock().unwrap().push(build.context.clone());
            self.images.lock().unwrap().insert(build.tag.clone(), format!("sha256:{}", build.tag.len()));
            Ok(())
        }
        async fn push(&self, tag: &str, registry: &str) -> Result<String, String> {
            Ok(format!("{registry}/{tag}"))
        }
        async fn run(&self, job: &crate::sandbox::Job, _: Limits) -> Result<JobOutput, RunError> {
            Ok(JobOutput {
                log: format!("@@swe-harvest {} pre begin\nok\n@@swe-harvest {} pre end 0\n", job.token, job.token),
                reports: [("pre.xml".to_string(), "<testsuites/>".to_string())].into(),
                exit_code: Some(0),
                ..JobOutput::default()
            })
        }
        async fn remove_running(&self) {}
        async fn sweep(&self, _: &str) -> usize {
            0
        }
    }

    /// A one-commit repository with `setup.py`; returns its commit.
    fn repository(dir: &Path) -> String {
        let repository = git2::Repository::init(dir).unwrap();
        fs_err::write(dir.join("setup.py"), "print('hi')\n").unwrap();
        let mut index = repository.index().unwrap();
        index.add_path(Path::new("setup.py")).unwrap();
        let tree = repository.find_tree(index.write_tree().unwrap()).unwrap();
        let signature = git2::Signature::now("t", "t@example.com").unwrap();
        repository.commit(Some("HEAD"), &signature, &signature, "one", &tree, &[]).unwrap().to_string()
    }

    /// A request for the one commit of a [`repository`] made in `dir`.
    fn request_in(dir: &Path) -> EnvironmentRequest {
        EnvironmentRequest {
            repo: "Acme/Widgets".parse().unwrap(),
            mirror: dir.to_path_buf(),
            environment_setup_commit: repository(dir),
            spec: EnvironmentSpec { runtime: "3.11".into(), ..EnvironmentSpec::default() },
            date: Utc.with_ymd_and_hms(2024, 1, 1, 0, 0, 0).unwrap(),
            version: "1.0".into(),
        }
    }

    fn settings(dir: &Path) -> ImageSettings {
        ImageSettings {
            base_images: [("3.11".to_string(), "python:3.11-slim".to_string())].into(),
            extra_ca: Some(b"CA".to_vec()),
            gradle_distributions: BTreeMap::new(),
            registries: Default::default(),
            build_timeout: Duration::from_secs(60),
            build_limits: BuildLimits::default(),
            logs_dir: dir.join("logs"),
        }
    }

    /// The recipe of `request`'s image, with the runtime's local base as its fallback.
    fn recipe<'a>(request: &'a EnvironmentRequest, dockerfile: &'a (dyn Fn(&str) -> String + Sync)) -> Recipe<'a> {
        Recipe {
            request,
            fallback_base: "local/base:3.11".into(),
            dockerfile,
            files: Vec::new(),
            testbed: TestbedCopy::Folder,
        }
    }

    #[tokio::test]
    async fn environment_images_are_built_once_on_any_backend_and_reused() {
        let repo = tempfile::tempdir().unwrap();
        let request = request_in(repo.path());
        let backend = Arc::new(FakeBackend::default());
        backend.images.lock().unwrap().insert("local/base:3.11".into(), "sha256:base".into());
        let images = Images::new(backend.clone(), settings(repo.path()));
        let dockerfile = |base: &str| format!("FROM {base}\nRUN true\n");
        let recipe = recipe(&request, &dockerfile);

        // Three workers at once, one build; the configured base cannot be had, so the local one is used.
        let built = futures::future::join_all((0..3).map(|_| images.ensure(&recipe))).await;
        assert_eq!(backend.builds.load(Ordering::SeqCst), 1);
        let tags: BTreeSet<String> = built.iter().map(|image| image.as_ref().unwrap().tag.clone()).collect();
        assert_eq!(tags.len(), 1);
        let first = built[0].as_ref().unwrap();
        assert!(!first.reused && first.tag.starts_with("swe-harvest/env.acme__widgets:"), "{first:?}");

        // The context carries the Dockerfile, the CA bundle and the repository at the commit.
        let context = backend.contexts.lock().unwrap()[0].clone();
        let mut names = BTreeSet::new();
        for entry in tar::Archive::new(context.as_slice()).entries().unwrap() {
            names.insert(entry.unwrap().path().unwrap().display().to_string());
        }
        for name in ["Dockerfile", "ca.crt", "testbed", "testbed/setup.py"] {
            assert!(names.contains(name), "{name} missing from {names:?}");
        }
        let log =
            settings(repo.path()).logs_dir.join("build").join(format!("{}.log", first.tag.replace(['/', ':'], "_")));
        assert!(fs_err::read_to_string(&log).unwrap().contains("FROM local/base:3.11"));

        // Another process finds the image and does not build again.
        let again = Images::new(backend.clone(), settings(repo.path())).ensure(&recipe).await.unwrap();
        assert!(again.reused);
        assert_eq!(again.tag, first.tag);
        assert_eq!(backend.builds.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn the_content_key_joins_the_last_label_line_or_gets_one() {
        let labelled = with_key_label("FROM b\nRUN x\nLABEL swe-harvest.repo=a/b\n", "k1");
        assert_eq!(labelled, "FROM b\nRUN x\nLABEL swe-harvest.repo=a/b swe-harvest.key=k1\n");
        assert_eq!(with_key_label("FROM b\nRUN x\n", "k1"), "FROM b\nRUN x\nLABEL swe-harvest.key=k1\n");
    }

    #[test]
    fn extra_context_files_change_the_key_and_no_files_keep_it() {
        let key = content_key("FROM base\n", "sha256:1", None);
        assert_eq!(with_files(key.clone(), &[] as &[(&str, &[u8])]), key, "images without extra files keep their keys");
        let one = with_files(key.clone(), &[("a.sh", b"echo 1")]);
        assert_ne!(one, key);
        assert_ne!(one, with_files(key.clone(), &[("a.sh", b"echo 2")]), "the content counts");
        assert_ne!(one, with_files(key.clone(), &[("b.sh", b"echo 1")]), "the name counts");
        assert_eq!(one.len(), key.len());
    }

    #[test]
    fn a_failed_build_is_diagnosed_by_its_steps_last_lines_not_its_command() {
        let message =
            "Docker stream error: The command '/bin/sh -c set -e; uv pip install -e .' returned a non-zero code: 1";
        let output = "Using Python 3.11.2 environment at: /opt/venv\n  × No solution found when resolving dependencies:\n  \
                      ╰─▶ Because there are no versions of atomicwrites==1.3.0 and you require atomicwrites==1.3.0, we \
                      can conclude that your requirements are unsatisfiable.\n\n      hint: atomicwrites was requested \
                      with a pinned version\n";
        let diagnosis = build_diagnosis(output, message);
        assert!(diagnosis.starts_with("Using Python 3.11.2"), "{diagnosis}");
        assert!(
            diagnosis.contains(
                "× No solution found when resolving dependencies: | ╰─▶ Because there are no versions of atomicwrites"
            ),
            "{diagnosis}"
        );
        assert!(
            diagnosis.ends_with("hint: atomicwrites was requested with a pinned version (the step exited with code 1)"),
            "{diagnosis}"
        );
        assert!(!diagnosis.contains("/bin/sh"), "{diagnosis}");
        // Only the last lines of a long output, within bounds.
        let long: String = (0..500).map(|line| format!("compiling unit {line} {}\n", "x".repeat(400))).collect();
        let diagnosis =
            build_diagnosis(&format!("{long}error: command 'gcc' failed: No such file or directory\n"), message);
        assert!(diagnosis.len() <= DIAGNOSIS_CHARS + 100, "{}", diagnosis.len());
        assert!(diagnosis.contains("error: command 'gcc' failed") && diagnosis.contains("unit 499"), "{diagnosis}");
        assert!(!diagnosis.contains("unit 400 "), "{diagnosis}");
        // A silent step, and a failure outside any step's command.
        assert_eq!(build_diagnosis("\n", message), "a build step exited with code 1 and printed nothing");
        assert_eq!(build_diagnosis("", "COPY failed: file not found"), "COPY failed: file not found");
    }

    #[test]
    fn a_release_the_registry_does_not_serve_is_named() {
        let message = "Docker stream error: The command '/bin/sh -c yarn install' returned a non-zero code: 1";
        let yarn = "➤ YN0000: ┌ Fetch step\n\
                    ➤ YN0035: │ babel-plugin-polyfill-es-shims@npm:0.5.0: The remote server failed to provide the requested resource\n\
                    ➤ YN0035: │   Response Code: 404 (Not Found)\n➤ YN0035: │   Request Method: GET\n\
                    ➤ YN0035: │   Request URL: https://registry.example.org/babel-plugin-polyfill-es-shims/-/babel-plugin-polyfill-es-shims-0.5.0.tgz\n\
                    ➤ YN0000: └ Completed in 0s 743ms\n";
        let diagnosis = build_diagnosis(yarn, message);
        assert!(
            diagnosis.starts_with("the registry does not serve `babel-plugin-polyfill-es-shims@0.5.0` (404 Not Found)"),
            "{diagnosis}"
        );
        assert!(diagnosis.ends_with("(the step exited with code 1)"), "{diagnosis}");
        let npm = "npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry.example.org/@acme/calc/-/calc-1.2.3.tgz - Not found\n";
        assert!(build_diagnosis(npm, message).starts_with("the registry does not serve `@acme/calc@1.2.3`"));
        let other = "npm ERR! 404 Not Found - GET https://registry.example.org/left-pad - Not found\n\
                     fetched https://registry.example.org/mocha/-/mocha-10.2.0.tgz\n";
        assert!(!build_diagnosis(other, message).contains("does not serve"), "a tarball fetched is no 404's");
    }

    #[test]
    fn a_failed_maven_build_is_diagnosed_by_its_error_not_its_epilogue() {
        let message = "Docker stream error: The command '/bin/sh -c mvn test-compile' returned a non-zero code: 1";
        let output = "[INFO] BUILD FAILURE\n\
            [ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:compile (default-compile) on project tool: Compilation failure\n\
            [ERROR] /testbed/tool/src/main/java/com/acme/tool/Tool.java:[3,22] package com.acme.calc does not exist\n\
            [ERROR] -> [Help 1]\n[ERROR] \n\
            [ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n\
            [ERROR] Re-run Maven using the -X switch to enable full debug logging.\n[ERROR] \n\
            [ERROR] For more information about the errors and possible solutions, please read the following articles:\n\
            [ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/MojoFailureException\n[ERROR] \n\
            [ERROR] After correcting the problems, you can resume the build with the command\n\
            [ERROR]   mvn <args> -rf :tool\n";
        let diagnosis = build_diagnosis(output, message);
        assert!(diagnosis.contains("on project tool: Compilation failure"), "{diagnosis}");
        assert!(diagnosis.contains("Tool.java:[3,22] package com.acme.calc does not exist"), "{diagnosis}");
        assert!(!diagnosis.contains("re-run Maven") && !diagnosis.contains("-rf :tool"), "{diagnosis}");
    }

    #[tokio::test]
    async fn no_base_image_is_a_base_image_missing_drop() {
        let repo = tempfile::tempdir().unwrap();
        let request = request_in(repo.path());
        let images = Images::new(Arc::new(FakeBackend::default()), settings(repo.path()));
        let dockerfile = |base: &str| format!("FROM {base}\n");
        let recipe = recipe(&request, &dockerfile);
        let error = images.ensure(&recipe).await.unwrap_err();
        assert_eq!(error.reason(), ValidateDropReason::BaseImageMissing);
        assert!(error.to_string().contains("scripts/setup.sh"), "{error}");
    }

    #[tokio::test]
    async fn run_job_keeps_the_log_and_reports_of_any_backend() {
        let dir = tempfile::tempdir().unwrap();
        let job = crate::sandbox::Job {
            instance_id: "a__b-1".into(),
            attempt: 2,
            image: "img".into(),
            user: Owner::UNPRIVILEGED,
            testbed: None,
            files: Vec::new(),
            script: String::new(),
            token: "tok".into(),
            env: Vec::new(),
            phases: 2,
            log_path: dir.path().join("a__b-1").join("run-2.log"),
            data_dir_label: String::new(),
        };
        let limits = Limits {
            memory_bytes: 1,
            nano_cpus: 1,
            pids_limit: 1,
            file_size_bytes: 1,
            run_timeout: Duration::from_secs(1),
        };
        let output = crate::sandbox::run_job(&FakeBackend::default(), &job, limits).await.unwrap();
        let steps = crate::sandbox::script::split_steps(&output.log, "tok");
        assert_eq!(steps["pre"].exit_code, Some(0));
        assert_eq!(fs_err::read_to_string(&job.log_path).unwrap(), output.log);
        assert_eq!(fs_err::read_to_string(dir.path().join("a__b-1/run-2-pre.xml")).unwrap(), "<testsuites/>");
    }
}
