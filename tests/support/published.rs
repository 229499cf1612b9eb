//! Published rows of real repositories (Multi-SWE-bench's, in the shared ground truth)
//! for tests that re-validate them from local mirrors: what every such test checks
//! before it may run, and says when it skips (no `SWE_HARVEST_MIRRORS`, a mirror
//! missing, the language's base images not made, no shared ground truth).

use std::ffi::OsString;
use std::path::Path;

use super::{base_images_missing, shared_groundtruth};

/// One published row to re-validate: the ground-truth file it is in
/// (`multi-swe-bench/<file>`), its repository, and its pull request's number.
pub struct PublishedRow<'a> {
    pub file: &'a str,
    pub owner: &'a str,
    pub name: &'a str,
    pub number: u64,
}

impl<'a> PublishedRow<'a> {
    pub fn new(file: &'a str, owner: &'a str, name: &'a str, number: u64) -> PublishedRow<'a> {
        PublishedRow { file, owner, name, number }
    }
}

/// The mirrors folder and the chosen rows as JSON lines, or `None` after saying why
/// the test skips. `images` are the base images of `language` the rows need.
pub fn published_rows(language: &str, images: &[&str], chosen: &[PublishedRow]) -> Option<(OsString, Vec<String>)> {
    let Some(mirrors) = std::env::var_os("SWE_HARVEST_MIRRORS") else {
        let mut repos: Vec<String> = chosen.iter().map(|row| format!("{}+{}/repo", row.owner, row.name)).collect();
        repos.dedup();
        eprintln!("skipped: SWE_HARVEST_MIRRORS is not set (a folder with {})", repos.join(" and "));
        return None;
    };
    for row in chosen {
        if crate::conformance::find_mirror(Path::new(&mirrors), row.owner, row.name).is_none() {
            eprintln!("skipped: no mirror of {}/{} under {}", row.owner, row.name, mirrors.to_string_lossy());
            return None;
        }
    }
    if base_images_missing(language, images) {
        return None;
    }
    let mut lines = Vec::new();
    for row in chosen {
        let text = fs_err::read_to_string(shared_groundtruth(&format!("multi-swe-bench/{}", row.file))?).unwrap();
        let number = format!("\"number\": {},", row.number);
        let found: Vec<&str> = text.lines().filter(|line| line.contains(&number)).collect();
        assert_eq!(found.len(), 1, "the row of {}/{}#{} is in {}", row.owner, row.name, row.number, row.file);
        lines.push(found[0].to_string());
    }
    Some((mirrors, lines))
}
