//! The build network benchmark (ignored by default; run by
//! `scripts/bench-build-network.sh`): for each language, the environment image of the
//! small project that its tests build, built through the egress proxy (the product's
//! own build: `DockerBackend::build` of the `ImageBuild` that `Images` renders, on its
//! build network) and open (the engine's ordinary build of the same context on its
//! default bridge, without a proxy: done here, in no product code path, only to have
//! something to compare with). Two builds per mode, interleaved (proxy, open, proxy,
//! open) so that both modes see the same load. Each build misses the engine's cache
//! for the environment's own steps (a `LABEL` of its own after every `FROM`), while
//! the base images are used as they are; neither mode gets the build's memory and CPU
//! limits (the open build has no way to get the same ones from the product). Prints
//! per language the seconds of each build, the medians and their difference, and the
//! destinations the proxy let through (its log, in the build log) with the config key
//! that allows each; and first, the fixed part of the cost: a build's network and
//! proxy made and removed with no build. The images built here are removed, also
//! when it fails.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use bollard::Docker;
use bollard::query_parameters::{BuildImageOptionsBuilder, RemoveImageOptionsBuilder};
use futures::StreamExt;

use swe_harvest::config::LoadedConfig;
use swe_harvest::sandbox::docker::DockerBackend;
use swe_harvest::sandbox::egress::{self, Allowlist, BuildEgress};
use swe_harvest::sandbox::images::{EnvironmentRequest, Images, Recipe};
use swe_harvest::sandbox::{Backend, BuildLimits, BuildNetwork, ImageBuild, RUN_LABEL};
use swe_harvest::validate::{Environment, ValidateFlags, ValidateSettings, read_environment};

use crate::support::base_images_missing;
use crate::support::python_project::{self, Project};

/// One language's project and the base images its tests need.
struct Language {
    name: &'static str,
    /// As `base_images_missing` and `scripts/setup.sh` name it.
    setup_name: &'static str,
    base_images: &'static [&'static str],
    project: fn() -> Project,
}

const LANGUAGES: &[Language] = &[
    Language { name: "Python", setup_name: "python", base_images: &["py3.11"], project: Project::new },
    Language {
        name: "Go",
        setup_name: "go",
        base_images: &["go1.19"],
        project: crate::languages::go_project_with_a_module,
    },
    Language {
        name: "Rust",
        setup_name: "rust",
        base_images: &["rust1.63", "rust1.85"],
        project: || crate::languages::rust_project().0,
    },
    Language {
        name: "JavaScript",
        setup_name: "node",
        base_images: &["node18"],
        project: || crate::languages::npm_project(crate::languages::BASE_TESTS_JS),
    },
    Language {
        name: "Java (Maven)",
        setup_name: "java",
        base_images: &["jdk17"],
        project: crate::languages::maven_project,
    },
    Language { name: "C", setup_name: "c", base_images: &["gcc12"], project: crate::language_c::autotools_project },
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Proxy,
    Open,
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Mode::Proxy => "proxy",
            Mode::Open => "open",
        }
    }
}

/// The images this benchmark built: removed when it ends, whatever happens.
#[derive(Default)]
struct BuiltHere(Vec<String>);

impl Drop for BuiltHere {
    fn drop(&mut self) {
        for tag in &self.0 {
            let _ = std::process::Command::new("docker").args(["image", "rm", tag]).output();
        }
    }
}

/// What the library would ask the engine to build for `project`: its environment as
/// inference sees it at the base commit, rendered by `Images`, and its runtime.
async fn rendered(images: &Images, settings: &ValidateSettings, project: &Project, dir: &Path) -> (ImageBuild, String) {
    let mirror = project.mirror_into(dir);
    let Environment { ecosystem, files, date, .. } = read_environment(&mirror, &project.base_commit, None).unwrap();
    // The runtimes whose base image is here, as validate chooses among them.
    let mut runtimes = Vec::new();
    for runtime in settings.images.base_images.keys().filter(|runtime| ecosystem.owns_runtime(runtime)) {
        if images.base_image(runtime, &ecosystem.local_base_image(runtime)).await.is_ok() {
            runtimes.push(runtime.clone());
        }
    }
    let spec = ecosystem.infer(&files, date, &runtimes).unwrap();
    let request = EnvironmentRequest {
        repo: python_project::REPO.parse().unwrap(),
        mirror,
        environment_setup_commit: project.base_commit.clone(),
        spec,
        date,
        version: "1.0".into(),
    };
    let dockerfile = |base: &str| ecosystem.environment_dockerfile(&request, base, &settings.images);
    let recipe = Recipe {
        request: &request,
        fallback_base: ecosystem.local_base_image(&request.spec.runtime),
        dockerfile: &dockerfile,
        files: ecosystem.environment_context_files(&request, &settings.images),
        testbed: ecosystem.testbed_copy(),
    };
    (images.image_build_of(&recipe).await.unwrap(), request.spec.runtime.clone())
}

/// `build` under another tag, new to the engine's cache: a `LABEL` with `stamp` right
/// after every `FROM` of its Dockerfile (every later step's parent is new), no limits.
fn unique(build: &ImageBuild, tag: &str, stamp: &str) -> ImageBuild {
    let mut archive = tar::Archive::new(build.context.as_slice());
    let mut context = tar::Builder::new(Vec::new());
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().into_owned();
        let mut header = entry.header().clone();
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut data).unwrap();
        if path == Path::new("Dockerfile") {
            let text = String::from_utf8(data).unwrap();
            let lines: Vec<String> = text
                .lines()
                .map(|line| match line.starts_with("FROM ") {
                    true => format!("{line}\nLABEL swe-harvest.bench-build-network=\"{stamp}\""),
                    false => line.to_string(),
                })
                .collect();
            data = (lines.join("\n") + "\n").into_bytes();
            header.set_size(data.len() as u64);
        }
        context.append_data(&mut header, &path, data.as_slice()).unwrap();
    }
    ImageBuild {
        tag: tag.to_string(),
        context: context.into_inner().unwrap(),
        limits: BuildLimits::default(),
        ..build.clone()
    }
}

/// The engine's ordinary build of `build`'s context, on its default bridge.
async fn build_open(docker: &Docker, build: &ImageBuild) -> Result<(), String> {
    let options = BuildImageOptionsBuilder::default().dockerfile("Dockerfile").t(&build.tag).rm(true).forcerm(true);
    let context = bollard::body_full(build.context.clone().into());
    let mut stream = docker.build_image(options.build(), None, Some(context));
    let mut output = String::new();
    while let Some(item) = stream.next().await {
        let info = item.map_err(|error| error.to_string())?;
        output.push_str(info.stream.as_deref().unwrap_or_default());
        if let Some(detail) = info.error_detail {
            return Err(format!("{}; its output: {output}", detail.message.unwrap_or_default()));
        }
    }
    Ok(())
}

/// The lines of a build log's section `--- {title} by the build proxy ---`.
fn proxy_section(log: &str, title: &str) -> Vec<String> {
    let Some((_, after)) = log.split_once(&format!("--- {title} by the build proxy ---\n")) else { return Vec::new() };
    after.lines().take_while(|line| !line.is_empty() && !line.starts_with("--- ")).map(str::to_string).collect()
}

/// A destination the proxy let through, with the config key that allows it.
fn with_setting(destination: &str, allowlist: &Allowlist) -> String {
    let setting = allowlist.destinations().iter().find(|allowed| match destination.strip_prefix("http://") {
        Some(host) => allowed.plain_http && host.split(':').next() == Some(allowed.host.as_str()),
        None => !allowed.plain_http && destination == format!("{}:{}", allowed.host, allowed.port),
    });
    format!("{destination} ({})", setting.map_or("?", |allowed| allowed.setting.as_str()))
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    if sorted.len() % 2 == 0 { (sorted[middle - 1] + sorted[middle]) / 2.0 } else { sorted[middle] }
}

#[test]
#[ignore = "a benchmark: run scripts/bench-build-network.sh"]
fn bench_build_network_through_the_proxy_and_open() {
    let rounds: usize =
        std::env::var("SWE_HARVEST_BENCH_ROUNDS").ok().and_then(|value| value.parse().ok()).unwrap_or(2);
    let chosen = std::env::var("SWE_HARVEST_BENCH_LANGUAGES").unwrap_or_default();
    let work = tempfile::tempdir().unwrap();
    let loaded = LoadedConfig::load_with_env(None, python_project::validate_env()).unwrap();
    let settings = ValidateSettings::resolve(
        work.path().to_path_buf(),
        &loaded.config.validate,
        loaded.repos_dir.clone(),
        &ValidateFlags::default(),
    )
    .unwrap();
    let stamp = format!("{}-{}", chrono::Utc::now().format("%Y%m%dT%H%M%S"), std::process::id());
    let mut built_here = BuiltHere::default();
    let mut table = vec![
        "| language | through the proxy (s) | open (s) | difference | the proxy let through |".to_string(),
        "| --- | --- | --- | --- | --- |".to_string(),
    ];
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let backend = Arc::new(DockerBackend::connect().await.unwrap());
        let docker = Docker::connect_with_local_defaults().unwrap();
        let images = Images::new(backend.clone(), settings.images.clone());
        // The fixed part of the cost: the build's network and proxy made and removed.
        let proxy_image = egress::proxy_image(&docker).await.unwrap();
        let allowlist = Allowlist::of(&settings.images.registries).unwrap();
        let labels: HashMap<String, String> =
            [(RUN_LABEL.to_string(), swe_harvest::process::RunId::current().to_string())].into();
        let mut fixed = Vec::new();
        for _ in 0..rounds.max(3) {
            let started = Instant::now();
            let opened = BuildEgress::open(&docker, &proxy_image, &allowlist, labels.clone()).await.unwrap();
            opened.close(&docker).await;
            fixed.push(started.elapsed().as_secs_f64());
        }
        println!("BENCH build network: a build's network and proxy made and removed in {:.2} s (median of {})", median(&fixed), fixed.len());
        for language in LANGUAGES {
            if !chosen.is_empty() && !chosen.split_whitespace().any(|name| name == language.setup_name) {
                continue;
            }
            if base_images_missing(language.setup_name, language.base_images) {
                continue;
            }
            let dir = work.path().join(language.setup_name);
            let (build, runtime) = rendered(&images, &settings, &(language.project)(), &dir).await;
            let BuildNetwork::Registries(allowlist) = &build.network else { panic!("an environment build is open") };
            let allowlist = allowlist.clone();
            let (mut proxy, mut open) = (Vec::new(), Vec::new());
            let (mut let_through, mut refused) = (Vec::new(), Vec::new());
            for round in 1..=rounds {
                for mode in [Mode::Proxy, Mode::Open] {
                    let unique_stamp = format!("{stamp}-{round}-{}", mode.as_str());
                    let tag = format!("swe-harvest/bench-build-network:{}-{unique_stamp}", language.setup_name);
                    let build = unique(&build, &tag, &unique_stamp);
                    built_here.0.push(tag.clone());
                    let started = Instant::now();
                    match mode {
                        Mode::Proxy => {
                            let mut log = String::new();
                            let outcome = backend.build(&build, &mut log).await;
                            assert!(outcome.is_ok(), "{} through the proxy: {outcome:?}\n{log}", language.name);
                            proxy.push(started.elapsed().as_secs_f64());
                            for destination in proxy_section(&log, "let through") {
                                if !let_through.contains(&destination) {
                                    let_through.push(destination);
                                }
                            }
                            refused.extend(proxy_section(&log, "refused"));
                        }
                        Mode::Open => {
                            let outcome = build_open(&docker, &build).await;
                            assert!(outcome.is_ok(), "{} open: {outcome:?}", language.name);
                            open.push(started.elapsed().as_secs_f64());
                        }
                    }
                    let options = RemoveImageOptionsBuilder::default().build();
                    let _ = docker.remove_image(&tag, Some(options), None).await;
                }
            }
            let seconds = |values: &[f64]| values.iter().map(|value| format!("{value:.1}")).collect::<Vec<_>>();
            let (proxy_median, open_median) = (median(&proxy), median(&open));
            let difference = proxy_median - open_median;
            let reached: Vec<String> =
                let_through.iter().map(|destination| with_setting(destination, &allowlist)).collect();
            println!(
                "BENCH build network, {} ({}): through the proxy {} s (median {proxy_median:.1}), open {} s (median \
                 {open_median:.1}): {difference:+.1} s ({:+.0}%); the proxy let through: {}; refused: {}",
                language.name,
                runtime,
                seconds(&proxy).join(", "),
                seconds(&open).join(", "),
                100.0 * difference / open_median,
                if reached.is_empty() { "nothing".to_string() } else { reached.join(", ") },
                if refused.is_empty() { "nothing".to_string() } else { refused.join(", ") },
            );
            table.push(format!(
                "| {} | {} (median {proxy_median:.1}) | {} (median {open_median:.1}) | {difference:+.1} s ({:+.0}%) | {} |",
                language.name,
                seconds(&proxy).join(", "),
                seconds(&open).join(", "),
                100.0 * difference / open_median,
                reached.join(", "),
            ));
        }
    });
    println!("BENCH build network, {rounds} builds per mode, interleaved:\n{}", table.join("\n"));
}
