//! Environment images: one per (repository, spec, environment commit, date), built
//! with bollard from a generated Dockerfile and a tar context (the repository at the
//! environment commit, the extra CA bundle), tagged by the hash of everything that
//! goes into it, and reused by every task and run that shares it. Concurrent workers
//! asking for one image wait for a single build (single flight per key).
//!
//! Layers: the base image (OS + Python, `validate.base_images`) and on top the
//! environment (a venv at `/opt/venv` with uv, the project's dependencies as of the
//! date, an unprivileged user `harvest` with uid 1000). `/testbed` is emptied at the
//! end: each run copies the repository at its own base commit there.
//!
//! Base image fallback (decision): when the configured image is neither present nor
//! pullable, `swe-harvest/base:pyX.Y` (built by `scripts/setup.sh`) is used if present,
//! logged once per runtime; otherwise the environment fails with `base_image_missing`.
//!
//! The extra CA bundle and the index URL are only visible to the build steps that
//! install packages (as `SSL_CERT_FILE`, `PIP_CERT`, `REQUESTS_CA_BUNDLE`,
//! `PIP_INDEX_URL`, `UV_INDEX_URL`), never set in the image's environment.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::query_parameters::{BuildImageOptionsBuilder, CreateImageOptionsBuilder};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use sha2::{Digest, Sha256};
use tokio::sync::OnceCell;

use super::infer::shell_quote;
use super::source::{self, Mirror, Owner};
use crate::model::{EnvironmentSpec, RepoSlug};

/// uv, pinned so that one spec gives one image.
pub const UV_REQUIREMENT: &str = "uv==0.13.9";
/// The unprivileged user of environment images.
pub const USER: Owner = Owner { uid: 1000, gid: 1000 };
/// Where the CA bundle goes inside images.
const CA_PATH: &str = "/etc/swe-harvest/ca.crt";
/// Local base images built by scripts/setup.sh.
pub const LOCAL_BASE_PREFIX: &str = "swe-harvest/base:py";

#[derive(Debug, Clone, thiserror::Error)]
pub enum ImageError {
    #[error(
        "no base image for Python {runtime}: `{configured}` is not present and cannot be pulled, and the local \
         fallback `{fallback}` is missing; run scripts/setup.sh to build it, or set validate.base_images.\"{runtime}\""
    )]
    BaseImageMissing { runtime: String, configured: String, fallback: String },
    #[error("no base image is configured for Python {runtime}; add it to validate.base_images")]
    NoBaseImageConfigured { runtime: String },
    #[error("building the environment image `{tag}` failed: {message}; the build log is `{log}`")]
    BuildFailed { tag: String, message: String, log: PathBuf },
    #[error(
        "building the environment image `{tag}` took longer than {seconds}s (validate.build_timeout_secs); the build log is `{log}`"
    )]
    BuildTimeout { tag: String, seconds: u64, log: PathBuf },
    #[error("failed to prepare the build context of `{tag}`: {message}")]
    Context { tag: String, message: String },
    #[error("the Docker engine failed while building `{tag}`: {message}")]
    Docker { tag: String, message: String },
}

impl ImageError {
    /// The funnel's reason code.
    pub fn reason(&self) -> &'static str {
        match self {
            ImageError::BaseImageMissing { .. } | ImageError::NoBaseImageConfigured { .. } => "base_image_missing",
            ImageError::BuildTimeout { .. } => "environment_build_timeout",
            _ => "environment_build_failed",
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
    pub index_url: Option<String>,
    pub build_timeout: Duration,
    /// Build logs go to `<logs_dir>/build/<tag>.log`.
    pub logs_dir: PathBuf,
}

type Flight = Arc<OnceCell<Result<BuiltImage, ImageError>>>;

/// Builds environment images, once per key.
pub struct Images {
    docker: Docker,
    settings: ImageSettings,
    flights: Mutex<HashMap<String, Flight>>,
    bases: tokio::sync::Mutex<HashMap<String, Result<(String, String), ImageError>>>,
}

/// The version string handed to setuptools-scm: `1.2` -> `1.2.0`.
pub fn pretend_version(version: &str) -> String {
    let clean: String = version.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    match clean.matches('.').count() {
        0 if clean.is_empty() => "0.0.0".to_string(),
        0 => format!("{clean}.0.0"),
        1 => format!("{clean}.0"),
        _ => clean,
    }
}

/// The Dockerfile of an environment image on `base`.
pub fn dockerfile(request: &EnvironmentRequest, base: &str, settings: &ImageSettings) -> String {
    let spec = &request.spec;
    let mut network_env = Vec::new();
    if settings.extra_ca.is_some() {
        for name in ["SSL_CERT_FILE", "PIP_CERT", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"] {
            network_env.push(format!("{name}={CA_PATH}"));
        }
    }
    if let Some(index) = &settings.index_url {
        network_env.push(format!("PIP_INDEX_URL={}", shell_quote(index)));
        network_env.push(format!("UV_INDEX_URL={}", shell_quote(index)));
    }
    let network_env =
        if network_env.is_empty() { String::new() } else { format!("export {}; ", network_env.join(" ")) };
    let date = request.date.format("%Y-%m-%dT%H:%M:%SZ");
    let mut lines = vec![
        "# Generated by swe-harvest: an environment image (see pipeline/validate/image.rs).".to_string(),
        format!("FROM {base}"),
        "USER root".to_string(),
    ];
    if !spec.system_packages.is_empty() {
        let packages: Vec<String> = spec.system_packages.iter().map(|package| shell_quote(package)).collect();
        lines.push(format!(
            "RUN {network_env}apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends {} && rm -rf /var/lib/apt/lists/*",
            packages.join(" ")
        ));
    }
    lines.push(format!(
        "RUN (getent passwd {uid} >/dev/null || useradd --uid {uid} --user-group --no-create-home harvest) \
         && mkdir -p /home/harvest /opt/venv /testbed /swe-harvest/out \
         && chown -R {uid}:{gid} /home/harvest /opt/venv /testbed /swe-harvest",
        uid = USER.uid,
        gid = USER.gid
    ));
    if settings.extra_ca.is_some() {
        lines.push(format!("COPY ca.crt {CA_PATH}"));
    }
    lines.push(format!("USER {}:{}", USER.uid, USER.gid));
    lines.push("ENV HOME=/home/harvest VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1".to_string());
    lines.push(format!("RUN {network_env}python3 -m venv /opt/venv && python -m pip install --quiet {UV_REQUIREMENT}"));
    lines.push(format!("COPY --chown={}:{} testbed/ /testbed/", USER.uid, USER.gid));
    lines.push("WORKDIR /testbed".to_string());
    let pretend = format!("SETUPTOOLS_SCM_PRETEND_VERSION={}", pretend_version(&request.version));
    if !spec.pre_install.is_empty() {
        lines.push(format!("RUN {network_env}export {pretend}; set -e; {}", spec.pre_install.join("; ")));
    }
    let mut install = spec.install.clone();
    if !spec.extra_packages.is_empty() {
        let packages: Vec<String> = spec.extra_packages.iter().map(|package| shell_quote(package)).collect();
        install.push(format!("uv pip install {}", packages.join(" ")));
    }
    if !install.is_empty() {
        lines
            .push(format!("RUN {network_env}export UV_EXCLUDE_NEWER={date} {pretend}; set -e; {}", install.join("; ")));
    }
    lines.push("RUN find /testbed -mindepth 1 -delete && rm -rf /home/harvest/.cache".to_string());
    lines.push(format!(
        "LABEL swe-harvest.repo={} swe-harvest.environment-setup-commit={} swe-harvest.exclude-newer={date}",
        request.repo, request.environment_setup_commit
    ));
    lines.join("\n") + "\n"
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

/// The tag of an environment image: `swe-harvest/env.<owner>__<name>:<key prefix>`.
pub fn tag_for(repo: &RepoSlug, key: &str) -> String {
    format!("swe-harvest/env.{}:{}", repo.double_underscore().to_lowercase(), &key[..16])
}

impl Images {
    pub fn new(docker: Docker, settings: ImageSettings) -> Images {
        Images { docker, settings, flights: Mutex::new(HashMap::new()), bases: tokio::sync::Mutex::new(HashMap::new()) }
    }

    pub fn settings(&self) -> &ImageSettings {
        &self.settings
    }

    /// The base image for `runtime` and its id, with the fallback described above.
    pub async fn base_image(&self, runtime: &str) -> Result<(String, String), ImageError> {
        let mut bases = self.bases.lock().await;
        if let Some(known) = bases.get(runtime) {
            return known.clone();
        }
        let resolved = self.resolve_base(runtime).await;
        bases.insert(runtime.to_string(), resolved.clone());
        resolved
    }

    async fn resolve_base(&self, runtime: &str) -> Result<(String, String), ImageError> {
        let fallback = format!("{LOCAL_BASE_PREFIX}{runtime}");
        let configured = self.settings.base_images.get(runtime).cloned();
        if let Some(configured) = &configured {
            if let Ok(image) = self.docker.inspect_image(configured).await {
                return Ok((configured.clone(), image.id.unwrap_or_default()));
            }
            let options = CreateImageOptionsBuilder::default().from_image(configured).build();
            let mut pull = self.docker.create_image(Some(options), None, None);
            let mut pulled = true;
            while let Some(item) = pull.next().await {
                if let Err(error) = item {
                    tracing::debug!(image = %configured, %error, "could not pull the base image");
                    pulled = false;
                    break;
                }
            }
            if pulled {
                if let Ok(image) = self.docker.inspect_image(configured).await {
                    return Ok((configured.clone(), image.id.unwrap_or_default()));
                }
            }
        }
        match self.docker.inspect_image(&fallback).await {
            Ok(image) => {
                match &configured {
                    Some(configured) => tracing::warn!(
                        runtime, configured = %configured, fallback = %fallback,
                        "the configured base image is missing and cannot be pulled; using the local one from scripts/setup.sh"
                    ),
                    None => {
                        tracing::warn!(runtime, fallback = %fallback, "no base image configured; using the local one")
                    }
                }
                Ok((fallback, image.id.unwrap_or_default()))
            }
            Err(_) => match configured {
                Some(configured) => {
                    Err(ImageError::BaseImageMissing { runtime: runtime.to_string(), configured, fallback })
                }
                None => Err(ImageError::NoBaseImageConfigured { runtime: runtime.to_string() }),
            },
        }
    }

    /// The environment image for `request`: reused when it exists, else built once,
    /// however many workers ask at the same time.
    pub async fn ensure(&self, request: &EnvironmentRequest) -> Result<BuiltImage, ImageError> {
        let (base, base_id) = self.base_image(&request.spec.runtime).await?;
        let dockerfile = dockerfile(request, &base, &self.settings);
        let key = content_key(&dockerfile, &base_id, self.settings.extra_ca.as_deref());
        let flight = {
            let mut flights = self.flights.lock().expect("the flights lock is never poisoned");
            flights.entry(key.clone()).or_default().clone()
        };
        flight.get_or_init(|| self.build(request, dockerfile, key.clone())).await.clone()
    }

    async fn build(
        &self,
        request: &EnvironmentRequest,
        dockerfile: String,
        key: String,
    ) -> Result<BuiltImage, ImageError> {
        let tag = tag_for(&request.repo, &key);
        if self.docker.inspect_image(&tag).await.is_ok() {
            tracing::debug!(image = %tag, "environment image exists; reusing it");
            return Ok(BuiltImage { tag, key, reused: true, build_secs: 0.0 });
        }
        let started = Instant::now();
        let log_path = self.settings.logs_dir.join("build").join(format!("{}.log", tag.replace(['/', ':'], "_")));
        tracing::info!(image = %tag, repo = %request.repo, commit = %request.environment_setup_commit, "building an environment image");
        let context = {
            let request = request.clone();
            let extra_ca = self.settings.extra_ca.clone();
            let dockerfile = dockerfile.clone();
            let tag = tag.clone();
            tokio::task::spawn_blocking(move || build_context(&request, &dockerfile, extra_ca.as_deref()))
                .await
                .map_err(|error| ImageError::Context { tag: tag.clone(), message: error.to_string() })?
                .map_err(|message| ImageError::Context { tag, message })?
        };
        let mut log = String::new();
        log.push_str(&dockerfile);
        log.push_str("\n--- build output ---\n");
        let labels: HashMap<String, String> = [("swe-harvest.key".to_string(), key.clone())].into();
        let outcome =
            build_from_context(&self.docker, &tag, context, &labels, false, self.settings.build_timeout, &mut log)
                .await;
        write_log(&log_path, &log);
        match outcome {
            Err(BuildFailure::TimedOut) => {
                Err(ImageError::BuildTimeout { tag, seconds: self.settings.build_timeout.as_secs(), log: log_path })
            }
            Err(BuildFailure::Failed(message)) => {
                Err(ImageError::BuildFailed { tag, message: last_lines(&message, 3), log: log_path })
            }
            Ok(()) => {
                if self.docker.inspect_image(&tag).await.is_err() {
                    return Err(ImageError::Docker {
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

/// Why a build did not produce its image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildFailure {
    TimedOut,
    /// The engine's message.
    Failed(String),
}

/// Builds the tar `context` (with its `Dockerfile`) as `tag`, appending the engine's
/// output to `log`. With `network_none` the build's `RUN` steps have no network
/// (instance images install offline: the code being installed is untrusted).
pub async fn build_from_context(
    docker: &Docker,
    tag: &str,
    context: Vec<u8>,
    labels: &HashMap<String, String>,
    network_none: bool,
    timeout: Duration,
    log: &mut String,
) -> Result<(), BuildFailure> {
    let mut options =
        BuildImageOptionsBuilder::default().dockerfile("Dockerfile").t(tag).rm(true).forcerm(true).labels(labels);
    if network_none {
        options = options.networkmode("none");
    }
    let options = options.build();
    let outcome = tokio::time::timeout(timeout, async {
        let mut stream = docker.build_image(options, None, Some(bollard::body_full(context.into())));
        while let Some(item) = stream.next().await {
            match item {
                Ok(info) => {
                    if let Some(text) = info.stream {
                        log.push_str(&text);
                    }
                    if let Some(detail) = info.error_detail {
                        let message = detail.message.unwrap_or_else(|| "the build failed".to_string());
                        log.push_str(&message);
                        return Err(BuildFailure::Failed(message));
                    }
                }
                Err(error) => {
                    log.push_str(&error.to_string());
                    return Err(BuildFailure::Failed(error.to_string()));
                }
            }
        }
        Ok(())
    })
    .await;
    outcome.unwrap_or(Err(BuildFailure::TimedOut))
}

pub fn last_lines(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text.trim().lines().collect();
    lines[lines.len().saturating_sub(count)..].join(" | ")
}

pub fn write_log(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        let _ = fs_err::create_dir_all(parent);
    }
    if let Err(error) = fs_err::write(path, text) {
        tracing::warn!(%error, "could not write a build log");
    }
}

/// The build context: the Dockerfile, the CA bundle, the repository under `testbed/`.
fn build_context(request: &EnvironmentRequest, dockerfile: &str, extra_ca: Option<&[u8]>) -> Result<Vec<u8>, String> {
    let mut builder = tar::Builder::new(Vec::new());
    let root = Owner { uid: 0, gid: 0 };
    source::append_bytes(&mut builder, "Dockerfile", dockerfile.as_bytes(), 0o644, root).map_err(|e| e.to_string())?;
    if let Some(ca) = extra_ca {
        source::append_bytes(&mut builder, "ca.crt", ca, 0o644, root).map_err(|e| e.to_string())?;
    }
    source::append_dir(&mut builder, "testbed", USER).map_err(|e| e.to_string())?;
    let mirror = Mirror::open(&request.mirror).map_err(|e| e.to_string())?;
    mirror.append_tree(&mut builder, &request.environment_setup_commit, "testbed", USER).map_err(|e| e.to_string())?;
    builder.into_inner().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn request() -> EnvironmentRequest {
        EnvironmentRequest {
            repo: "Acme/Widgets".parse().unwrap(),
            mirror: PathBuf::from("/nonexistent"),
            environment_setup_commit: "a".repeat(40),
            spec: EnvironmentSpec {
                runtime: "3.11".into(),
                pre_install: vec!["uv pip install --upgrade setuptools wheel".into()],
                install: vec!["uv pip install --no-build-isolation -e . pytest".into()],
                extra_packages: vec!["pytest<8".into()],
                test_command: "pytest -rA".into(),
                ..Default::default()
            },
            date: Utc.with_ymd_and_hms(2021, 5, 4, 3, 2, 1).unwrap(),
            version: "2.1".into(),
        }
    }

    fn settings(ca: Option<&[u8]>) -> ImageSettings {
        ImageSettings {
            base_images: BTreeMap::new(),
            extra_ca: ca.map(<[u8]>::to_vec),
            index_url: None,
            build_timeout: Duration::from_secs(60),
            logs_dir: PathBuf::from("/tmp"),
        }
    }

    #[test]
    fn dockerfile_caps_dependencies_at_the_date_but_not_the_build_tools() {
        let text = dockerfile(&request(), "swe-harvest/base:py3.11", &settings(Some(b"CA")));
        assert!(text.contains("FROM swe-harvest/base:py3.11\n"));
        let pre = text.lines().find(|line| line.contains("--upgrade setuptools")).unwrap();
        assert!(!pre.contains("UV_EXCLUDE_NEWER"), "{pre}");
        let install = text.lines().find(|line| line.contains("-e . pytest")).unwrap();
        assert!(install.contains("UV_EXCLUDE_NEWER=2021-05-04T03:02:01Z"), "{install}");
        assert!(install.contains("SETUPTOOLS_SCM_PRETEND_VERSION=2.1.0"), "{install}");
        assert!(install.contains("uv pip install 'pytest<8'"), "extra packages after install: {install}");
        assert!(install.contains("SSL_CERT_FILE=/etc/swe-harvest/ca.crt"), "{install}");
        // The CA is exported inside RUN lines only, never as image ENV.
        let env = text.lines().find(|line| line.starts_with("ENV ")).unwrap();
        assert!(!env.contains("SSL_CERT_FILE"), "{env}");
        assert!(text.contains("USER 1000:1000"));
    }

    #[test]
    fn content_key_changes_with_every_input_and_tags_are_valid_references() {
        let a = dockerfile(&request(), "base", &settings(None));
        let key = content_key(&a, "sha256:1", None);
        assert_eq!(key, content_key(&a, "sha256:1", None), "stable");
        assert_ne!(key, content_key(&a, "sha256:2", None), "base image id");
        assert_ne!(key, content_key(&a, "sha256:1", Some(b"ca")), "CA bundle");
        let mut other = request();
        other.environment_setup_commit = "b".repeat(40);
        assert_ne!(key, content_key(&dockerfile(&other, "base", &settings(None)), "sha256:1", None), "commit");
        let mut later = request();
        later.date = Utc.with_ymd_and_hms(2022, 1, 1, 0, 0, 0).unwrap();
        assert_ne!(key, content_key(&dockerfile(&later, "base", &settings(None)), "sha256:1", None), "date");
        let tag = tag_for(&request().repo, &key);
        assert_eq!(tag, format!("swe-harvest/env.acme__widgets:{}", &key[..16]));
    }

    #[test]
    fn pretend_versions_have_three_parts() {
        assert_eq!(pretend_version("2.1"), "2.1.0");
        assert_eq!(pretend_version("0.13"), "0.13.0");
        assert_eq!(pretend_version("3"), "3.0.0");
        assert_eq!(pretend_version(""), "0.0.0");
        assert_eq!(pretend_version("1.2.3rc1"), "1.2.3");
    }
}
