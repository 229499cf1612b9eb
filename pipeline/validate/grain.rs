//! Test ids at another grain than a published row's, for `validate --compare`
//! (docs/validation.md, "Ids at another grain", 2026-12-07). We label at the finest
//! grain the runner reports (a Java method, a Go subtest, a JS test under its file);
//! a published row may name a coarser id that holds ours (a class, a parent test, a
//! file: the ecosystem's [`crate::ecosystem::Ecosystem::published_parents`]), or a
//! finer one where we have only its parent (a run read from Maven's console names
//! classes).
//!
//! The rule: a published coarser id is all of our tests it holds together, as its
//! runner would have judged it: fail-to-pass when one of them is and none fails after
//! the gold patch (nor is flaky, nor needs the network), pass-to-pass when every one
//! of them (skips aside) is. A published finer id of which we have only the parent
//! (no id of ours under it) is found when that parent is fail-to-pass, and the
//! comparison says so. Pure over the labels; it knows no row format.

use std::collections::{BTreeMap, BTreeSet};

use crate::ecosystem::Ecosystem;
use crate::model::labels::Labels;

/// Our tests under one coarser id, by how they did.
#[derive(Debug, Default)]
struct Children {
    fail_to_pass: Vec<String>,
    pass_to_pass: Vec<String>,
    /// Failed after the gold patch (fail-to-fail, pass-to-fail), flaky, or failed for
    /// want of the network: the coarser id does not pass after it.
    not_passing_after: Vec<String>,
}

/// Which of [`Children`]'s lists a label puts a test in.
#[derive(Clone, Copy)]
enum Kind {
    FailToPass,
    PassToPass,
    NotPassingAfter,
}

/// Our labels seen from the coarser ids that hold them.
pub(super) struct Grain {
    ecosystem: Option<&'static dyn Ecosystem>,
    /// Each coarser id (normalised) and our tests under it.
    children: BTreeMap<String, Children>,
    /// Our fail-to-pass ids, normalised.
    fail_to_pass: BTreeSet<String>,
    normalize: fn(&str) -> String,
}

impl Grain {
    /// The grain view of `labels` (none: nothing is held), with the ecosystem's parents
    /// and the comparison's normalisation of ids.
    pub(super) fn new(
        labels: Option<&Labels>,
        ecosystem: Option<&'static dyn Ecosystem>,
        normalize: fn(&str) -> String,
    ) -> Grain {
        let mut grain = Grain { ecosystem, children: BTreeMap::new(), fail_to_pass: BTreeSet::new(), normalize };
        let Some(labels) = labels else { return grain };
        grain.fail_to_pass = labels.fail_to_pass.iter().map(|id| normalize(id)).collect();
        let lists = [
            (&labels.fail_to_pass, Kind::FailToPass),
            (&labels.pass_to_pass, Kind::PassToPass),
            (&labels.fail_to_fail, Kind::NotPassingAfter),
            (&labels.pass_to_fail, Kind::NotPassingAfter),
            (&labels.flaky, Kind::NotPassingAfter),
            (&labels.time_zone_dependent, Kind::NotPassingAfter),
            (&labels.needs_network, Kind::NotPassingAfter),
        ];
        for (list, kind) in lists {
            for id in list {
                for parent in grain.parents(id) {
                    let children = grain.children.entry(parent).or_default();
                    let bucket = match kind {
                        Kind::FailToPass => &mut children.fail_to_pass,
                        Kind::PassToPass => &mut children.pass_to_pass,
                        Kind::NotPassingAfter => &mut children.not_passing_after,
                    };
                    bucket.push(normalize(id));
                }
            }
        }
        grain
    }

    /// The coarser ids that hold `id`, normalised.
    fn parents(&self, id: &str) -> Vec<String> {
        self.ecosystem
            .map(|ecosystem| ecosystem.published_parents(id))
            .unwrap_or_default()
            .iter()
            .map(|parent| (self.normalize)(parent))
            .collect()
    }

    /// Whether a published id (normalised) holds tests of ours that are fail-to-pass
    /// together.
    pub(super) fn fail_to_pass_as_a_whole(&self, published: &str) -> bool {
        self.children
            .get(published)
            .is_some_and(|children| !children.fail_to_pass.is_empty() && children.not_passing_after.is_empty())
    }

    /// Whether a published id (normalised) holds tests of ours that are all pass-to-pass.
    pub(super) fn pass_to_pass_as_a_whole(&self, published: &str) -> bool {
        self.children.get(published).is_some_and(|children| {
            !children.pass_to_pass.is_empty()
                && children.fail_to_pass.is_empty()
                && children.not_passing_after.is_empty()
        })
    }

    /// Our fail-to-pass parent of a published finer id when we have only the parent:
    /// no test of ours under it (`com.pkg.FooTest` read from Maven's console for
    /// `com.pkg.FooTest#bar`, `TestX` for `TestX/case`).
    pub(super) fn found_by_parent(&self, published: &str) -> Option<String> {
        self.parents(published)
            .into_iter()
            .find(|parent| self.fail_to_pass.contains(parent) && !self.children.contains_key(parent))
    }

    /// The published list seen at other grains: its ids, and the coarser ids that hold
    /// them, for [`Grain::covered`].
    pub(super) fn around<'a>(&self, published: &'a BTreeSet<String>) -> Around<'a> {
        Around { published, their_parents: published.iter().flat_map(|test| self.parents(test)).collect() }
    }

    /// Whether an id of ours is covered by the published list at another grain: a
    /// published id holds it, or it holds a published id (our file's own id beside
    /// the published tests of that file).
    pub(super) fn covered(&self, ours: &str, around: &Around<'_>) -> bool {
        around.their_parents.contains(&(self.normalize)(ours))
            || self.parents(ours).iter().any(|parent| around.published.contains(parent))
    }

    /// Why a published coarser id is not fail-to-pass here although it holds tests of
    /// ours; `None` when it holds none.
    pub(super) fn why_not_fail_to_pass(&self, published: &str) -> Option<String> {
        let children = self.children.get(published)?;
        let mut parts = Vec::new();
        if !children.not_passing_after.is_empty() {
            parts.push(format!(
                "{} do not pass after the gold patch here ({})",
                children.not_passing_after.len(),
                sample(&children.not_passing_after)
            ));
        }
        if children.fail_to_pass.is_empty() {
            parts.push(format!("none fails before it ({} pass before and after)", children.pass_to_pass.len()));
        } else {
            parts.push(format!("{} fail to pass", children.fail_to_pass.len()));
        }
        Some(format!("{FINER_HERE}: {}", parts.join(", ")))
    }
}

/// A published list and the coarser ids that hold its tests.
pub(super) struct Around<'a> {
    published: &'a BTreeSet<String>,
    their_parents: BTreeSet<String>,
}

/// The start of the cause of a published coarser id whose tests here are not
/// fail-to-pass together.
pub const FINER_HERE: &str = "its tests here, at a finer grain, are not fail-to-pass together";

/// The first few ids of a list, for a message.
fn sample(ids: &[String]) -> String {
    let shown: Vec<&str> = ids.iter().take(3).map(String::as_str).collect();
    let more = if ids.len() > 3 { format!(", and {} more", ids.len() - 3) } else { String::new() };
    format!("{}{more}", shown.join(", "))
}
