//! Conformance with published SWE-bench rows (`../shared/groundtruth/*.jsonl`): for
//! every row whose repository has a mirror with PR refs under `$SWE_HARVEST_MIRRORS`
//! (in any layout that validate reads, [`swe_harvest::git::mirror_in`]), the
//! three-dot diff split in SWE-bench compatibility mode must equal the row's `patch`
//! and `test_patch` byte for byte. Skips, saying so, when no mirror is there.

use std::path::{Path, PathBuf};

use swe_harvest::ecosystem::repo_config::{Compat, VersionSource};
use swe_harvest::extract::{TestPathRule, split_files, version};
use swe_harvest::git::Mirror;
use swe_harvest::model::TaskRow;

use crate::support::shared_groundtruth;

/// Where a repository's mirror is under `root`: the pipeline's own lookup
/// (`SWE_HARVEST_MIRRORS`'s layouts), so that the tests find what validate finds.
pub fn find_mirror(root: &Path, owner: &str, name: &str) -> Option<PathBuf> {
    let repo: swe_harvest::model::RepoSlug = format!("{owner}/{name}").parse().ok()?;
    swe_harvest::git::mirror_in(root, &repo)
}

/// Every published row of the shared ground truth; `None` (the test skips, saying
/// so) when the clone has no `../shared/groundtruth` next to it.
pub fn groundtruth_rows() -> Option<Vec<TaskRow>> {
    let folder = shared_groundtruth("")?;
    let mut files: Vec<PathBuf> = fs_err::read_dir(&folder)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut rows = Vec::new();
    for file in files {
        let text = fs_err::read_to_string(&file).unwrap();
        for (index, line) in text.lines().enumerate().filter(|(_, line)| !line.trim().is_empty()) {
            let row: TaskRow =
                serde_json::from_str(line).unwrap_or_else(|error| panic!("{}:{}: {error}", file.display(), index + 1));
            rows.push(row);
        }
    }
    Some(rows)
}

fn first_difference(ours: &str, theirs: &str) -> String {
    for (index, (a, b)) in ours.lines().zip(theirs.lines()).enumerate() {
        if a != b {
            return format!("line {}: ours {a:?}, theirs {b:?}", index + 1);
        }
    }
    format!("lengths differ: ours {} lines, theirs {} lines", ours.lines().count(), theirs.lines().count())
}

#[test]
fn compat_extract_reproduces_swebench_patches_byte_for_byte() {
    let Some(root) = std::env::var_os(swe_harvest::env_vars::SWE_HARVEST_MIRRORS).map(PathBuf::from) else {
        eprintln!(
            "SKIPPED: set SWE_HARVEST_MIRRORS to a folder of bare mirrors with refs/pull/*/head to run the conformance test"
        );
        return;
    };
    let Some(rows) = groundtruth_rows() else { return };
    assert!(!rows.is_empty(), "no ground-truth rows found under ../shared/groundtruth");
    let rule = TestPathRule::new(Compat::Swebench, &[]).unwrap();
    let (mut checked, mut matched, mut skipped) = (0, 0, Vec::new());
    let (mut versions_by_tag, mut versions_by_file) = (0, 0);
    let tag_pattern = regex::Regex::new(version::DEFAULT_TAG_PATTERN).unwrap();
    let mut failures = Vec::new();
    for row in &rows {
        let (owner, name) = row.repo.split_once('/').unwrap();
        let Some(path) = find_mirror(&root, owner, name) else {
            skipped.push(row.instance_id.clone());
            continue;
        };
        let mirror = Mirror::open(&path).unwrap();
        let number: u64 = row.instance_id.rsplit('-').next().unwrap().parse().unwrap();
        let Some(head) = mirror.pull_head(number) else {
            skipped.push(format!("{} (no refs/pull/{number}/head)", row.instance_id));
            continue;
        };
        checked += 1;
        let base = mirror.commit_id(&row.base_commit).expect("the base commit is in the mirror");
        let merge_base = mirror.merge_base(base, head).expect("a merge base");
        let files = mirror.three_dot_diff(merge_base, head).unwrap();
        let split = split_files(&files, &rule);
        // Versions are reported, not asserted: SWE-bench's come from several sources.
        for (source, count) in
            [(VersionSource::Tag, &mut versions_by_tag), (VersionSource::File, &mut versions_by_file)]
        {
            let finder = version::VersionFinder::new(&mirror, &tag_pattern, None, source);
            if finder.version_at(&mirror, base).0 == row.version {
                *count += 1;
            }
        }
        let patch_ok = split.patch == row.patch;
        let test_ok = split.test_patch == row.test_patch;
        if patch_ok && test_ok {
            matched += 1;
        } else {
            let mut message = format!("{}:", row.instance_id);
            if !patch_ok {
                message += &format!(" patch differs ({})", first_difference(&split.patch, &row.patch));
            }
            if !test_ok {
                message += &format!(" test_patch differs ({})", first_difference(&split.test_patch, &row.test_patch));
            }
            failures.push(message);
        }
    }
    eprintln!(
        "conformance: {matched} rows matched / {checked} rows checked; {} rows without a mirror: {skipped:?}",
        skipped.len()
    );
    eprintln!(
        "versions equal to the rows': {versions_by_tag} / {checked} with tags first (the default), {versions_by_file} / {checked} with version files first"
    );
    if checked == 0 {
        eprintln!("SKIPPED: no mirror of a ground-truth repository under {}", root.display());
        return;
    }
    assert!(failures.is_empty(), "{} of {checked} rows differ:\n{}", failures.len(), failures.join("\n"));
}
