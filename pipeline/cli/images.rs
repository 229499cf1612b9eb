//! `images plan`: the runtime catalogue's base images that scripts/setup.sh builds,
//! as a table for people, as JSON, or as tab-separated records that setup.sh reads
//! (`suite TAG SUITE PACKAGES CHECK EXPECT`, then `image TAG RUNTIME LANGUAGE SUITE
//! PACKAGES COMMAND CHECK EXPECT UPSTREAM UPSTREAM_PACKAGES`, `-` for an empty field).

use std::fmt::Write as _;
use std::io::Write;

use swe_harvest::ecosystem::runtimes::{self, Plan};

use super::ExitStatus;
use super::args::{ImagesCommand, ImagesPlanArgs};

pub fn images(command: &ImagesCommand) -> anyhow::Result<ExitStatus> {
    match command {
        ImagesCommand::Plan(args) => plan(args),
    }
}

fn plan(args: &ImagesPlanArgs) -> anyhow::Result<ExitStatus> {
    let plan = runtimes::plan(&args.language, &args.image)?;
    let text = if args.json {
        serde_json::to_string_pretty(&plan)? + "\n"
    } else if args.tsv {
        render_tsv(&plan)
    } else {
        render_table(&plan)
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitStatus::Success)
}

/// A field of a record: `-` when empty, so that the shell's `read` keeps the columns.
fn field(text: &str) -> &str {
    if text.is_empty() { "-" } else { text }
}

fn render_tsv(plan: &Plan) -> String {
    let mut out = String::new();
    for suite in &plan.suites {
        let fields = [
            "suite",
            &suite.tag,
            suite.suite.as_str(),
            &suite.packages.join(" "),
            &suite.check.command,
            &suite.check.expect,
        ];
        let _ = writeln!(out, "{}", fields.map(field).join("\t"));
    }
    for image in &plan.images {
        let upstream = image.upstream.as_ref();
        let fields = [
            "image",
            &image.tag,
            &image.runtime,
            image.language,
            image.suite.map_or("", |suite| suite.as_str()),
            &image.packages.join(" "),
            image.command,
            &image.check.command,
            &image.check.expect,
            upstream.map_or("", |upstream| upstream.image.as_str()),
            &upstream.map(|upstream| upstream.packages.join(" ")).unwrap_or_default(),
        ];
        let _ = writeln!(out, "{}", fields.map(field).join("\t"));
    }
    out
}

fn render_table(plan: &Plan) -> String {
    let mut out = String::from("Debian suites (one root file system each):\n");
    for suite in &plan.suites {
        let _ = writeln!(out, "  {:<16} {}", suite.tag, suite.packages.join(" "));
    }
    out.push_str("\nImages (a layer on their suite):\n");
    for image in &plan.images {
        let from = match (image.suite, &image.upstream) {
            (Some(suite), Some(upstream)) => format!("{}, or {}", runtimes::suite_tag(suite), upstream.image),
            (Some(suite), None) => runtimes::suite_tag(suite),
            (None, Some(upstream)) => format!("{} only", upstream.image),
            (None, None) => String::new(),
        };
        let _ = writeln!(out, "  {:<10} runtime {:<8} on {from}", image.tag, image.runtime);
        // Those of the suite's root file system are there already.
        let own: Vec<&str> = image
            .packages
            .iter()
            .map(String::as_str)
            .filter(|package| image.suite.is_none() || !runtimes::SUITE_PACKAGES.contains(package))
            .collect();
        let _ = writeln!(out, "      packages: {}", own.join(" "));
        let _ = writeln!(out, "      check:    {}  (output starts with `{}`)", image.check.command, image.check.expect);
    }
    out
}
