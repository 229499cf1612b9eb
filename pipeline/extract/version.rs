//! A candidate's `version` (`major.minor`): from the nearest release tag reachable
//! from base_commit, else from the package's version string at base_commit.
//!
//! Tags: a regex with two groups (major, minor), by default `^v?(\d+)\.(\d+)` with an
//! optional `release-`/`version-` style prefix; per repository `version_tag_pattern`.
//! "Nearest" is the tagged ancestor with the newest commit date (the first that a
//! newest-first walk meets, which is what `git describe` finds on linear histories),
//! memoized over the history so that a repository's PRs walk each commit once.
//! Files: per repository `version_file`, else `pyproject.toml`, `setup.cfg`,
//! `setup.py`, then `__init__.py` / `__pkginfo__.py` / `_version.py` / `version.py` /
//! `__version__.py` of the top-level packages (also under `src/`). Per repository,
//! `version_source = "file"` tries the files first (projects whose version string
//! names the coming release, as SWE-bench's astroid and marshmallow rows do).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::OnceLock;

use git2::Oid;
use regex::Regex;

use crate::ecosystem::repo_config::VersionSource;
use crate::git::Mirror;

/// The version when neither a tag nor a file gives one.
pub const UNKNOWN_VERSION: &str = "0.0";

pub const DEFAULT_TAG_PATTERN: &str = r"^(?:[A-Za-z_-]*[-_])?v?(\d+)\.(\d+)(?:[.\-+_a-zA-Z0-9]*)$";

/// `major.minor` from a tag name, under a pattern with two groups.
pub fn version_from_tag(pattern: &Regex, tag: &str) -> Option<String> {
    let captures = pattern.captures(tag)?;
    let major: u64 = captures.get(1)?.as_str().parse().ok()?;
    let minor: u64 = captures.get(2)?.as_str().parse().ok()?;
    Some(format!("{major}.{minor}"))
}

fn version_assignment() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    PATTERN.get_or_init(|| {
        Regex::new(r#"(?m)^\s*(?:__version__|version|VERSION|__VERSION__)\s*(?::\s*str\s*)?[=:]\s*(?:version\s*=\s*)?['"]v?(\d+)\.(\d+)"#)
            .expect("valid pattern")
    })
}

/// `major.minor` from the text of a version file (`__version__ = "1.2.3"`,
/// `version = 1.2` in setup.cfg, `version="1.2"` in setup.py, ...).
pub fn version_from_text(text: &str) -> Option<String> {
    let captures = version_assignment().captures(text).or_else(|| {
        // setup.cfg writes versions without quotes.
        static BARE: OnceLock<Regex> = OnceLock::new();
        BARE.get_or_init(|| Regex::new(r"(?m)^\s*version\s*=\s*(\d+)\.(\d+)").expect("valid pattern")).captures(text)
    })?;
    let major: u64 = captures[1].parse().ok()?;
    let minor: u64 = captures[2].parse().ok()?;
    Some(format!("{major}.{minor}"))
}

/// Finds versions in one mirror, caching tag lookups across PRs.
pub struct VersionFinder {
    tags_by_commit: HashMap<Oid, String>,
    /// Per commit: the newest version-tagged ancestor (commit time, commit).
    nearest: RefCell<HashMap<Oid, Option<(i64, Oid)>>>,
    version_file: Option<String>,
    source: VersionSource,
}

impl VersionFinder {
    pub fn new(
        mirror: &Mirror,
        tag_pattern: &Regex,
        version_file: Option<String>,
        source: VersionSource,
    ) -> VersionFinder {
        let mut tags_by_commit: HashMap<Oid, (String, Vec<u64>)> = HashMap::new();
        for (name, commit) in mirror.tags().unwrap_or_default() {
            let Some(version) = version_from_tag(tag_pattern, &name) else { continue };
            // Of two version tags on one commit, the higher wins.
            let key: Vec<u64> = version.split('.').filter_map(|part| part.parse().ok()).collect();
            let entry = tags_by_commit.entry(commit).or_insert_with(|| (version.clone(), key.clone()));
            if key > entry.1 {
                *entry = (version, key);
            }
        }
        VersionFinder {
            tags_by_commit: tags_by_commit.into_iter().map(|(commit, (version, _))| (commit, version)).collect(),
            version_file,
            source,
            nearest: RefCell::new(HashMap::new()),
        }
    }

    /// The version at `base_commit`, and where it came from (`tag` or a file path).
    pub fn version_at(&self, mirror: &Mirror, base_commit: Oid) -> (String, String) {
        let found = match self.source {
            VersionSource::Tag => self.by_tags(mirror, base_commit).or_else(|| self.by_files(mirror, base_commit)),
            VersionSource::File => self.by_files(mirror, base_commit).or_else(|| self.by_tags(mirror, base_commit)),
        };
        found.unwrap_or_else(|| (UNKNOWN_VERSION.to_string(), "unknown".into()))
    }

    fn by_tags(&self, mirror: &Mirror, base_commit: Oid) -> Option<(String, String)> {
        if self.tags_by_commit.is_empty() {
            return None;
        }
        let tagged = self.newest_tagged_ancestor(mirror, base_commit)?;
        self.tags_by_commit.get(&tagged).map(|version| (version.clone(), "tag".into()))
    }

    /// The version-tagged ancestor of `start` (itself included) with the newest commit
    /// time: the first tagged commit that a newest-first walk would meet. Memoized
    /// over the history, so that all PRs of a repository together walk each commit
    /// once: best(c) = c when c is tagged, else the newest of best(parent).
    fn newest_tagged_ancestor(&self, mirror: &Mirror, start: Oid) -> Option<Oid> {
        let mut memo = self.nearest.borrow_mut();
        let mut stack = vec![start];
        while let Some(&commit) = stack.last() {
            if memo.contains_key(&commit) {
                stack.pop();
                continue;
            }
            let Ok(parsed) = mirror.repository().find_commit(commit) else {
                memo.insert(commit, None);
                stack.pop();
                continue;
            };
            if self.tags_by_commit.contains_key(&commit) {
                memo.insert(commit, Some((parsed.time().seconds(), commit)));
                stack.pop();
                continue;
            }
            let pending: Vec<Oid> = parsed.parent_ids().filter(|parent| !memo.contains_key(parent)).collect();
            if !pending.is_empty() {
                stack.extend(pending);
                continue;
            }
            let best = parsed.parent_ids().filter_map(|parent| memo.get(&parent).copied().flatten()).max();
            memo.insert(commit, best);
            stack.pop();
        }
        memo.get(&start).copied().flatten().map(|(_, commit)| commit)
    }

    fn by_files(&self, mirror: &Mirror, base_commit: Oid) -> Option<(String, String)> {
        self.version_files(mirror, base_commit).into_iter().find_map(|path| {
            let content = mirror.file_at(base_commit, &path)?;
            version_from_text(&String::from_utf8_lossy(&content)).map(|version| (version, path))
        })
    }

    fn version_files(&self, mirror: &Mirror, commit: Oid) -> Vec<String> {
        if let Some(file) = &self.version_file {
            return vec![file.clone()];
        }
        let mut files: Vec<String> = ["pyproject.toml", "setup.cfg", "setup.py"].map(String::from).to_vec();
        let mut packages: Vec<String> = mirror
            .entries_under(commit, "")
            .into_iter()
            .filter(|name| {
                !name.starts_with('.')
                    && !name.contains('.')
                    && !matches!(name.as_str(), "tests" | "test" | "docs" | "doc" | "src")
            })
            .collect();
        // `src/` layouts: look one level down.
        packages.extend(
            mirror
                .entries_under(commit, "src")
                .into_iter()
                .filter(|name| !name.contains('.'))
                .map(|name| format!("src/{name}")),
        );
        for package in packages {
            for file in ["__init__.py", "__pkginfo__.py", "_version.py", "version.py", "__version__.py"] {
                files.push(format!("{package}/{file}"));
            }
        }
        files
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_from_tag_names() {
        let pattern = Regex::new(DEFAULT_TAG_PATTERN).unwrap();
        for (tag, expected) in [
            ("v1.2.3", Some("1.2")),
            ("1.2", Some("1.2")),
            ("0.13.0rc1", Some("0.13")),
            ("v2.0.0-beta.1", Some("2.0")),
            ("release-3.4.1", Some("3.4")),
            ("astroid-2.12.13", Some("2.12")),
            ("pydicom-1.4", Some("1.4")),
            ("10.01.5", Some("10.1")),
            ("latest", None),
            ("nightly-2021", None),
            ("v1", None),
        ] {
            assert_eq!(version_from_tag(&pattern, tag).as_deref(), expected, "{tag}");
        }
        let custom = Regex::new(r"^rel_(\d+)_(\d+)").unwrap();
        assert_eq!(version_from_tag(&custom, "rel_1_4_0").as_deref(), Some("1.4"));
    }

    #[test]
    fn versions_from_files() {
        for (text, expected) in [
            ("__version__ = \"1.4.2\"\n", Some("1.4")),
            ("__version__ = '0.6.0a1'", Some("0.6")),
            ("[metadata]\nname = x\nversion = 2.3.1\n", Some("2.3")),
            ("[project]\nname = \"x\"\nversion = \"4.10.0\"\n", Some("4.10")),
            ("setup(\n    name='x',\n    version='1.0.dev0',\n)", Some("1.0")),
            ("VERSION = \"3.1\"", Some("3.1")),
            ("__version__: str = \"5.2.0\"", Some("5.2")),
            ("dynamic = [\"version\"]", None),
            ("# no version here", None),
        ] {
            assert_eq!(version_from_text(text).as_deref(), expected, "{text:?}");
        }
    }
}
