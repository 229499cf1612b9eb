//! `discover`: searches repositories, leaves out those of reference datasets,
//! stores the rest, prints them on stdout (one `owner/name` per line) and, with
//! `--out`, writes them as a TOML repository list.

use std::collections::BTreeSet;
use std::io::Write;

use swe_harvest::discover::{self, DiscoverOptions};

use super::args::DiscoverArgs;
use super::crawl::{github_client, github_settings, open_store, runtime};
use super::{ExitStatus, GlobalSettings};

pub fn discover(settings: &GlobalSettings, args: &DiscoverArgs) -> anyhow::Result<ExitStatus> {
    let github = github_settings(settings, args.api_url.as_ref());
    let mut exclude = BTreeSet::new();
    for path in &args.exclude_dataset {
        exclude.extend(discover::dataset_repositories(path)?);
    }
    let options = DiscoverOptions {
        language: args.language.clone(),
        min_stars: args.min_stars,
        limit: args.limit,
        pushed_after: args.pushed_after,
        license: args.license.clone(),
        exclude,
    };
    let mut store = open_store(settings)?;
    let summary = runtime()?.block_on(async {
        let (client, reporter) = github_client(&github)?;
        let summary = discover::run(&client, &mut store, &options, reporter.as_ref()).await?;
        anyhow::Ok(summary)
    })?;
    if let Some(path) = &args.out {
        let text = discover::repository_list_toml(&summary);
        let temporary = path.with_extension("toml.partial");
        fs_err::write(&temporary, text)?;
        fs_err::rename(&temporary, path)?;
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
    Ok(ExitStatus::Success)
}
