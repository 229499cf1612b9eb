//! `discover`: searches repositories, leaves out those of reference datasets,
//! stores the rest, prints them on stdout (one `owner/name` per line) and, with
//! `--out`, writes them as a TOML repository list.

use std::io::Write;

use swe_harvest::discover::{self, DiscoverFlags, DiscoverSettings, RepositorySearch};

use super::args::DiscoverArgs;
use super::crawl::github_client;
use super::{ExitStatus, GlobalSettings, WhenMissing, runtime};

pub fn discover(global: &GlobalSettings, args: &DiscoverArgs) -> anyhow::Result<ExitStatus> {
    let flags = DiscoverFlags {
        search: RepositorySearch {
            language: args.language.clone(),
            min_stars: args.min_stars,
            limit: args.limit,
            pushed_after: args.pushed_after,
            license: args.license.clone(),
        },
        exclude_datasets: args.exclude_dataset.clone(),
        api_url: args.api_url.clone(),
    };
    let settings = DiscoverSettings::resolve(&global.config.config.github, &flags)?;
    let mut store = global.open_store(WhenMissing::Create)?;
    let summary = runtime()?.block_on(async {
        let (client, reporter) = github_client(&settings.github)?;
        let summary = discover::run(&client, &mut store, &settings.options, reporter.as_ref()).await?;
        anyhow::Ok(summary)
    })?;
    if let Some(path) = &args.out {
        discover::write_repository_list(path, &summary)?;
    }
    let mut stdout = std::io::stdout().lock();
    for found in &summary.found {
        writeln!(stdout, "{}", found.repo)?;
    }
    drop(stdout);
    let mut stderr = std::io::stderr().lock();
    writeln!(
        stderr,
        "found {} repositories for `{}`{}{}",
        summary.found.len(),
        summary.query,
        if summary.excluded.is_empty() {
            String::new()
        } else {
            format!(", left out {} found in reference datasets", summary.excluded.len())
        },
        args.out.as_ref().map(|path| format!("; wrote {}", path.display())).unwrap_or_default(),
    )?;
    if summary.capped {
        writeln!(
            stderr,
            "warning: the search API's cap of 1,000 results per query stopped the search before --limit: more \
             repositories than that share one star count\nhint: raise --min-stars, or narrow with --pushed-after or \
             --license"
        )?;
    }
    Ok(ExitStatus::Success)
}
