//! `github-sim`: the GitHub API simulator on its own, for the offline demo and the
//! crawl benchmark. Prints its URL on stdout and serves until killed.
//!
//! ```text
//! github-sim [--fixtures DIR] [--generate OWNER/NAME:MERGED_PRS[:ISSUES:COMMENTS]]...
//!            [--port N] [--faults FILE.json] [--delay-ms N] [--save DIR] [--schema FILE]
//! ```
//! `--generate OWNER/NAME:MERGED_PRS` makes a repository of the shape of real histories
//! (`GenerateSpec::real_shape`); with `:ISSUES:COMMENTS`, one of those counts, a tenth
//! as many closed-unmerged PRs as merged ones, and 80% of merged PRs fixing an issue.
//! `--schema` validates GraphQL queries against that schema file instead of the shared
//! copy of GitHub's (`../shared/github/schema.graphql`, when it is there).
//! `--faults` takes a JSON list of faults, e.g.
//! `[{"path_contains": "/pulls", "kind": {"type": "status", "status": 502}, "times": 2}]`.

#![allow(dead_code)]
// A command: it prints its URL and its statistics.
#![allow(clippy::disallowed_macros)]

#[path = "mod.rs"]
mod github_sim;

use std::io::Write;
use std::time::Duration;

use github_sim::{Fault, Fixtures, GenerateSpec, GithubSchema, GithubSim};

fn usage(problem: &str) -> ! {
    eprintln!("error: {problem}");
    eprintln!(
        "usage: github-sim [--fixtures DIR] [--generate OWNER/NAME:MERGED_PRS[:ISSUES:COMMENTS]]... [--port N] \
         [--faults FILE.json] [--delay-ms N] [--save DIR] [--schema FILE]"
    );
    std::process::exit(2);
}

fn main() {
    let mut fixtures = Fixtures::default();
    let mut port = 0u16;
    let mut faults: Vec<Fault> = Vec::new();
    let mut delay = Duration::ZERO;
    let mut save = None;
    let mut schema = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage(&format!("{arg} needs a value")));
        match arg.as_str() {
            "--fixtures" => {
                let dir = value();
                let loaded = Fixtures::load(std::path::Path::new(&dir))
                    .unwrap_or_else(|error| usage(&format!("cannot read fixtures `{dir}`: {error}")));
                fixtures.repos.extend(loaded.repos);
                fixtures.search_repositories.extend(loaded.search_repositories);
            }
            "--generate" => {
                let spec = value();
                let parts: Vec<&str> = spec.split(':').collect();
                let numbers: Vec<usize> = parts.iter().skip(1).filter_map(|part| part.parse().ok()).collect();
                let generate_spec = match numbers.as_slice() {
                    [merged] if parts.len() == 2 => GenerateSpec::real_shape(*merged),
                    [merged, issues, comments] if parts.len() == 4 => GenerateSpec::new(*merged, *issues, *comments),
                    _ => usage(&format!("--generate `{spec}`: expected OWNER/NAME:MERGED_PRS[:ISSUES:COMMENTS]")),
                };
                if !parts[0].contains('/') {
                    usage(&format!("--generate `{spec}`: expected OWNER/NAME:MERGED_PRS[:ISSUES:COMMENTS]"));
                }
                let repo = github_sim::generate(parts[0], &generate_spec);
                fixtures.repos.insert(parts[0].to_string(), repo);
            }
            "--port" => port = value().parse().unwrap_or_else(|_| usage("--port takes a number")),
            "--delay-ms" => {
                delay = Duration::from_millis(value().parse().unwrap_or_else(|_| usage("--delay-ms takes a number")))
            }
            "--faults" => {
                let path = value();
                let text = fs_err::read_to_string(&path)
                    .unwrap_or_else(|error| usage(&format!("cannot read `{path}`: {error}")));
                faults = serde_json::from_str(&text)
                    .unwrap_or_else(|error| usage(&format!("`{path}` is not a JSON list of faults: {error}")));
            }
            "--save" => save = Some(value()),
            "--schema" => {
                let path = value();
                let loaded = GithubSchema::load(std::path::Path::new(&path)).unwrap_or_else(|problem| usage(&problem));
                schema = Some(std::sync::Arc::new(loaded));
            }
            "-h" | "--help" => usage("help requested"),
            other => usage(&format!("unknown argument `{other}`")),
        }
    }
    if let Some(dir) = save {
        fixtures.save(std::path::Path::new(&dir)).unwrap_or_else(|error| usage(&format!("cannot save: {error}")));
    }
    let sim = GithubSim::start_on(fixtures, port).unwrap_or_else(|error| usage(&format!("cannot listen: {error}")));
    if let Some(schema) = schema {
        sim.set_schema(schema);
    }
    for fault in faults {
        sim.add_fault(fault);
    }
    sim.set_delay(delay);
    println!("{}", sim.url());
    let _ = std::io::stdout().flush();
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}
