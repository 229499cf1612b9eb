//! `gc`: removes the swarm backend's job images older than `--older-than` from the
//! registry, the nodes and the builder (`sandbox::job_images`); prints what went where
//! on stdout and what could not be removed on stderr. A run removes its own job images
//! when it ends: this is for those of killed runs, and for a registry shared by many.

use std::fmt::Write as _;
use std::io::Write;

use swe_harvest::UsageError;
use swe_harvest::sandbox::job_images::{Collected, Selection};
use swe_harvest::sandbox::swarm::{SwarmBackend, SwarmOptions};

use super::args::GcArgs;
use super::{ExitStatus, GlobalSettings, runtime};

pub fn gc(global: &GlobalSettings, args: &GcArgs) -> anyhow::Result<ExitStatus> {
    let validate = &global.config.config.validate;
    let Some(registry) = validate.registry.clone().filter(|registry| !registry.trim().is_empty()) else {
        return Err(UsageError::new("`gc` removes the swarm backend's job images, and no registry is set")
            .with_hint("set `validate.registry` to the swarm's registry; the local backend makes no job images")
            .into());
    };
    let options = SwarmOptions { registry, constraints: validate.swarm_constraints.clone() };
    let data_dir_label =
        fs_err::canonicalize(&global.data_dir).unwrap_or_else(|_| global.data_dir.clone()).display().to_string();
    let collected = runtime()?.block_on(async {
        let swarm = SwarmBackend::connect(options).await?;
        let selection = Selection::OlderThan(args.older_than);
        anyhow::Ok(swarm.remove_job_images(&selection, args.dry_run, &data_dir_label).await)
    })?;
    let age = humantime::format_duration(args.older_than);
    std::io::stdout().lock().write_all(render(&collected, args.dry_run, &age.to_string()).as_bytes())?;
    let mut stderr = std::io::stderr().lock();
    for problem in &collected.problems {
        writeln!(stderr, "error: {problem}")?;
    }
    Ok(if collected.problems.is_empty() { ExitStatus::Success } else { ExitStatus::Failure })
}

/// One line per place: how many job images went (or would go), and which.
fn render(collected: &Collected, dry_run: bool, age: &str) -> String {
    let verb = if dry_run { "would remove" } else { "removed" };
    let mut out = String::new();
    let mut place = |name: &str, images: &[String]| {
        let _ = writeln!(out, "{name}: {verb} {} job image(s) older than {age}", images.len());
        for image in images {
            let _ = writeln!(out, "  {image}");
        }
    };
    place("registry", &collected.registry);
    for (node, images) in &collected.nodes {
        place(&format!("node {node}"), images);
    }
    if !collected.builder.is_empty() {
        place("builder", &collected.builder);
    }
    out
}
