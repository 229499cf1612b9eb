//! `validate`: candidates from the store (or SWE-bench rows from `--input`) through
//! containers to labels. Resolves the settings (`ValidateSettings::resolve`), runs
//! the stage, prints the summary on stderr; with `--input`, writes the rows back with
//! fresh labels and a diagnosis (`validate::rows`), and with `--compare` prints per
//! row on stdout how the fresh labels differ from the row's own. With `--plan`, only
//! the environment each task would start from ([`super::validate_plan`]).

use std::fmt::Write as _;
use std::io::Write;

use anyhow::Context as _;

use swe_harvest::model::drop_reason::most_frequent_first;
use swe_harvest::validate::rows::{self, InputRow};
use swe_harvest::validate::{self, Summary, ValidateFlags, ValidateSettings, Work};

use super::args::{ValidateArgs, ValidateOptions};
use super::logging::CliReporter;
use super::{ExitStatus, GlobalSettings, WhenMissing, runtime};

/// The command line's values for the library.
fn flags(options: &ValidateOptions) -> ValidateFlags {
    ValidateFlags { workers: options.workers, runs: options.runs, coverage: options.coverage }
}

/// The backend of the runs: `--backend`, else `validate.backend`; with what it needs.
pub(super) fn backend_of(
    global: &GlobalSettings,
    flag: Option<super::args::BackendArg>,
) -> (swe_harvest::sandbox::BackendKind, swe_harvest::sandbox::BackendOptions) {
    let validate = &global.config.config.validate;
    let kind = flag.map(super::args::BackendArg::kind).unwrap_or(validate.backend);
    let options = swe_harvest::sandbox::BackendOptions {
        registry: validate.registry.clone(),
        swarm_constraints: validate.swarm_constraints.clone(),
    };
    (kind, options)
}

/// The workers of a run on `backend`: `computed` (from `--workers`, the config or this
/// machine), or the backend's capacity when neither `--workers` nor
/// `validate.workers` names a count (a swarm runs as many jobs as its nodes hold).
pub(super) async fn workers_on(
    backend: &dyn swe_harvest::sandbox::Backend,
    global: &GlobalSettings,
    flag: Option<usize>,
    computed: usize,
    limits: swe_harvest::sandbox::Limits,
) -> usize {
    let named = flag.is_some_and(|workers| workers > 0) || global.config.config.validate.workers != 0;
    if named {
        return computed;
    }
    backend.capacity(limits).await.unwrap_or(computed)
}

pub fn validate(global: &GlobalSettings, args: &ValidateArgs) -> anyhow::Result<ExitStatus> {
    if args.plan {
        return super::validate_plan::plan(global, args);
    }
    let mut settings = ValidateSettings::resolve(
        global.data_dir.clone(),
        &global.config.config.validate,
        global.config.repos_dir.clone(),
        &flags(&args.options),
    )?;
    let rows: Option<Vec<InputRow>> = args.input.as_deref().map(rows::read_rows).transpose()?;
    let work = match &rows {
        Some(rows) => Work::Rows(rows.iter().map(|row| row.candidate.clone()).collect()),
        None => Work::Store { repos: args.repos.clone(), instances: args.instances.clone() },
    };
    let store = global.open_store(WhenMissing::Create)?;
    let runtime = runtime()?;
    let reporter = CliReporter::new();
    let summary = runtime.block_on(async {
        let (kind, options) = backend_of(global, args.options.backend);
        let backend = swe_harvest::sandbox::connect_with(kind, &options).await?;
        settings.workers =
            workers_on(backend.as_ref(), global, args.options.workers, settings.workers, settings.limits).await;
        validate::run(&settings, backend, store, work, &reporter).await
    })?;

    if let (Some(rows), Some(out)) = (&rows, &args.out) {
        rows::write_rows(out, rows, &summary)?;
        if args.compare {
            std::io::stdout().lock().write_all(rows::compare(rows, &summary).as_bytes())?;
        }
    }
    eprint!("{}", render_summary(&summary, settings.workers, settings.runs));
    if args.write_config {
        let written = validate::learned::write(&settings.repos_dir, &summary)
            .with_context(|| format!("Failed to write learned environments into `{}`", settings.repos_dir.display()))?;
        for config in &written {
            eprintln!(
                "  learned environments: {} new entries for {} (versions {}) in {}",
                config.entries,
                config.repo,
                config.versions.join(", "),
                config.path.display()
            );
        }
        if written.is_empty() {
            eprintln!(
                "  learned environments: nothing new to write (no inferred environment worked, or every version is configured)"
            );
        }
    }
    // Drops that mean the machinery failed, not the task, make the exit code 1; so does
    // a run whose every task was lost to its environment (`Summary::failed`).
    let failed = summary.failed() || summary.dropped.keys().any(|reason| reason.is_failure());
    Ok(if failed { ExitStatus::Failure } else { ExitStatus::Success })
}

fn render_summary(summary: &Summary, workers: usize, runs: u32) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "validate: {} selected, {} already finished, {} labelled, {} dropped in {:.1}s ({workers} workers, {runs} runs each)",
        summary.selected,
        summary.skipped_finished,
        summary.labelled,
        summary.dropped.values().sum::<usize>(),
        summary.elapsed_secs
    );
    for (reason, count) in most_frequent_first(&summary.dropped) {
        let _ = writeln!(text, "  dropped {reason}: {count}");
    }
    let _ = writeln!(
        text,
        "  environment images: {} built{}, {} reused",
        summary.images_built,
        if summary.image_build_secs.is_empty() {
            String::new()
        } else {
            let times: Vec<String> = summary.image_build_secs.iter().map(|secs| format!("{secs:.0}s")).collect();
            format!(" ({})", times.join(", "))
        },
        summary.images_reused
    );
    if !summary.environments_by_rung.is_empty() {
        let rungs: Vec<String> =
            summary.environments_by_rung.iter().map(|(rung, count)| format!("{count} {rung}")).collect();
        let _ = writeln!(text, "  environments by ladder rung: {}", rungs.join(", "));
    }
    for outcome in &summary.outcomes {
        if outcome.test_secs > 0.0 || outcome.coverage_secs > 0.0 || outcome.build_secs > 0.0 {
            let coverage = if outcome.coverage_secs > 0.0 {
                format!(", {:.1}s in the coverage run", outcome.coverage_secs)
            } else {
                String::new()
            };
            // The rest of the total is overhead: inference, the environment check,
            // containers' start and removal, copying the repository in, the store.
            let _ = writeln!(
                text,
                "  {}: {:.1}s in containers' tests{coverage}, {:.1}s building images, {:.1}s in total",
                outcome.instance_id, outcome.test_secs, outcome.build_secs, outcome.total_secs
            );
        }
    }
    if summary.needs_network_tests > 0 {
        let _ = writeln!(
            text,
            "  needs the network: {} tests in {} tasks failed because the network is off; never labelled (`needs_network` of each task)",
            summary.needs_network_tests, summary.tasks_needing_network
        );
    }
    if summary.coverage_measured + summary.coverage_failed > 0 {
        let _ = writeln!(
            text,
            "  coverage: {} measured, {} failed (logs: logs/validate/<instance>/coverage.log)",
            summary.coverage_measured, summary.coverage_failed
        );
    }
    for (language, tasks) in &summary.coverage_unsupported {
        let _ = writeln!(
            text,
            "  coverage: not measured for {tasks} {language} task(s): {language} cannot measure change coverage (only Python can)"
        );
    }
    if summary.all_lost_to_environment() {
        let _ = writeln!(
            text,
            "  every task was lost to its environment (exit code 1): see each drop's detail (`swe-harvest status`) and the build logs in <data-dir>/logs/build/"
        );
    }
    if summary.interrupted {
        let _ = writeln!(text, "  interrupted: run `validate` again to resume");
    }
    text
}
