//! Mutation of a gold patch, shared by the stages that need wrong fixes (probe, which
//! runs them against a task's own tests; evaluate, which runs them against generated
//! tests): how mutants are made ([`make`]), the container script that runs a task's
//! mutants ([`script`]) and how one mutant's run is judged ([`judge`]). It knows no
//! store and no stage.
//!
//! Wrong fixes derived from a gold patch, and only from it: each operator edits one
//! thing the gold patch adds or changes (a hunk left out, a line reverted, a
//! condition negated or one of its clauses dropped, a boundary moved, a literal
//! replaced, a statement dropped, a return emptied), and the mutant is the edited
//! patch, a diff against the base commit. Pure and deterministic: the same patch
//! gives the same mutants in the same order, whatever the machine.
//!
//! What is never made: an edit of a comment, a docstring, a blank line or a file
//! that is not code (docs, data, configuration), since none changes what tests can
//! see; an edit that leaves the patch as it was; a mutant that another one already
//! is. Lines the scanner cannot read with confidence (a statement over several lines,
//! text inside a literal) are left alone.
//!
//! How mutants are chosen when there are more than `probe.mutants`
//! ([`choose`]): the operators take turns in a fixed order (the ones whose survivors
//! are most often real wrong fixes first: a hunk left out, a line reverted, a
//! condition negated, a return emptied, a statement dropped, a boundary moved, a
//! clause dropped, an argument dropped, a literal replaced), no operator takes more than a
//! quarter of the budget (two at least), and within an operator the picks spread over
//! the patch (first, middle, quarters, ...) rather than taking its first lines.

pub mod judge;
pub mod patch;
pub mod script;
mod shape;
pub mod syntax;

use std::collections::BTreeSet;

use crate::model::probe::{Mutant, MutationOperator};
use patch::{Hunk, Patch};
use syntax::Language;

/// What [`make`] found: the chosen mutants, and how many the operators could make.
#[derive(Debug, Clone)]
pub struct Made {
    pub mutants: Vec<Mutant>,
    pub candidates: usize,
}

/// The order in which operators take turns when mutants are chosen.
pub const TURN_ORDER: [MutationOperator; 9] = [
    MutationOperator::OmitHunk,
    MutationOperator::RevertLine,
    MutationOperator::NegateCondition,
    MutationOperator::ReturnDefault,
    MutationOperator::DropStatement,
    MutationOperator::MoveBoundary,
    MutationOperator::DropCondition,
    MutationOperator::DropArgument,
    MutationOperator::ReplaceLiteral,
];

/// One edit of the gold patch, not yet rendered.
#[derive(Debug, Clone)]
struct Draft {
    operator: MutationOperator,
    file: usize,
    hunk: usize,
    /// The line the edit is about (for a left-out hunk, its first changed line).
    line: usize,
    edit: Edit,
    change: String,
}

#[derive(Debug, Clone)]
enum Edit {
    /// The hunk is left out.
    OmitHunk,
    /// The added line's text becomes this.
    Replace(String),
    /// The added line is dropped.
    Drop,
    /// The removed line stays (becomes context).
    Keep,
}

/// The files a gold patch changes as they are at its base commit, by path: what tells
/// a docstring or an import list that a hunk starts inside from code. A file not at
/// hand (no mirror) is read from its hunks alone.
pub type FilesBefore = std::collections::BTreeMap<String, String>;

/// The mutants of `gold_patch`, at most `cap` of them (see the module's text), read
/// with the files it changes as they were before it (`before`; empty when there is no
/// mirror).
pub fn make(gold_patch: &str, test_patch: &str, cap: usize, before: &FilesBefore) -> Made {
    let patch = Patch::parse(gold_patch);
    let tested = shape::TestWords::of(test_patch);
    let drafts = drafts(&patch, before, &tested);
    let candidates = drafts.len();
    Made { mutants: choose(&patch, drafts, cap, before, &tested), candidates }
}

/// The files `gold_patch` changes, read from the mirror at `base_commit` (blocking git
/// work): those the mirror lacks, or all when it cannot be opened, are left out, and
/// their hunks are read alone.
pub fn files_before(mirror: &std::path::Path, base_commit: &str, gold_patch: &str) -> FilesBefore {
    let Ok(mirror) = crate::git::Mirror::open(mirror) else { return FilesBefore::new() };
    Patch::parse(gold_patch)
        .files
        .iter()
        .filter(|file| !file.created && Language::of_path(&file.path).is_some())
        .filter_map(|file| {
            let text = mirror.read_text(base_commit, &file.path).ok().flatten()?;
            Some((file.path.clone(), text))
        })
        .collect()
}

/// Where a hunk of `file` starts, from the file before the patch when it is at hand.
fn start_of(file: &patch::PatchFile, hunk: &Hunk, language: Language, before: &FilesBefore) -> shape::Start {
    match before.get(&file.path) {
        Some(text) if !file.created => shape::Start::of(text, hunk.old_start, language),
        _ => shape::Start::default(),
    }
}

/// Every edit the operators can make, in patch order.
fn drafts(patch: &Patch, before: &FilesBefore, tested: &shape::TestWords) -> Vec<Draft> {
    let mut drafts = Vec::new();
    let meaningful: Vec<(usize, usize)> = patch
        .files
        .iter()
        .enumerate()
        .filter(|(_, file)| !file.opaque && Language::of_path(&file.path).is_some())
        .flat_map(|(file_index, file)| {
            let language = Language::of_path(&file.path).expect("filtered");
            file.hunks
                .iter()
                .enumerate()
                .filter(move |(_, hunk)| {
                    hunk_changes_code(hunk, language, &start_of(file, hunk, language, before), tested)
                })
                .map(move |(hunk_index, _)| (file_index, hunk_index))
        })
        .collect();
    let hunk_count: usize = patch.files.iter().map(|file| file.hunks.len()).sum();
    for (file_index, file) in patch.files.iter().enumerate() {
        let Some(language) = Language::of_path(&file.path) else { continue };
        if file.opaque {
            continue;
        }
        for (hunk_index, hunk) in file.hunks.iter().enumerate() {
            if !meaningful.contains(&(file_index, hunk_index)) {
                continue;
            }
            let first_changed = hunk.lines.iter().position(|line| line.added() || line.removed()).unwrap_or(0);
            // A hunk of a new file is the whole file: leaving it out breaks every
            // import of it, which says nothing about the tests.
            if meaningful.len() >= 2
                && !file.created
                && !defines_what_stays(patch, &meaningful, (file_index, hunk_index), tested)
            {
                let ordinal = patch.files[..file_index].iter().map(|file| file.hunks.len()).sum::<usize>() + hunk_index;
                drafts.push(Draft {
                    operator: MutationOperator::OmitHunk,
                    file: file_index,
                    hunk: hunk_index,
                    line: first_changed,
                    edit: Edit::OmitHunk,
                    change: format!("the fix's {} hunk (of {hunk_count}) is left out", ordinal_word(ordinal + 1)),
                });
            }
            let lines = shape::HunkLines::of(hunk, language, &start_of(file, hunk, language, before));
            for draft in shape::line_drafts(&lines, hunk, language, tested) {
                drafts.push(Draft { file: file_index, hunk: hunk_index, ..draft });
            }
        }
    }
    drafts
}

/// Whether the hunk at `at` adds a definition (a function, type or class) whose name
/// the other code hunks or the tests use: leaving it out only stops the build (Go's
/// `undefined: newTimingWheelWithClock`), a stillborn mutant that takes a place of
/// the budget.
fn defines_what_stays(
    patch: &Patch,
    meaningful: &[(usize, usize)],
    at: (usize, usize),
    tested: &shape::TestWords,
) -> bool {
    let added = |(file, hunk): (usize, usize)| {
        patch.files[file].hunks[hunk].lines.iter().filter(|line| line.added()).map(|line| line.text.as_str())
    };
    let defined: Vec<String> = added(at).filter_map(shape::defined_name).collect();
    if defined.is_empty() {
        return false;
    }
    let word = shape::regex_once(r"[A-Za-z_][A-Za-z0-9_]*");
    let used_elsewhere: BTreeSet<&str> = meaningful
        .iter()
        .filter(|&&other| other != at)
        .flat_map(|&other| added(other).flat_map(|line| word.find_iter(line).map(|found| found.as_str())))
        .collect();
    defined.iter().any(|name| used_elsewhere.contains(name.as_str()) || tested.contains(name))
}

/// Whether a hunk adds or removes a line that is code (not blank, comment, docs or
/// an import).
/// A hunk that only wraps the same statements in a `with` that quiets warnings, or
/// splits them over lines, changes no code either.
fn hunk_changes_code(hunk: &Hunk, language: Language, start: &shape::Start, tested: &shape::TestWords) -> bool {
    let lines = shape::HunkLines::of(hunk, language, start);
    let added = lines.changed_statements(hunk, true, language, tested);
    let removed = lines.changed_statements(hunk, false, language, tested);
    (!added.is_empty() || !removed.is_empty()) && added != removed
}

/// Whether a patch changes a line of code in a code file.
fn changes_code(patch: &str, before: &FilesBefore, tested: &shape::TestWords) -> bool {
    Patch::parse(patch).files.iter().any(|file| {
        file.opaque
            || Language::of_path(&file.path).is_some_and(|language| {
                file.hunks
                    .iter()
                    .any(|hunk| hunk_changes_code(hunk, language, &start_of(file, hunk, language, before), tested))
            })
    })
}

fn ordinal_word(n: usize) -> String {
    const WORDS: [&str; 10] =
        ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"];
    WORDS.get(n.wrapping_sub(1)).map_or_else(|| format!("{n}th"), |word| (*word).to_string())
}

/// Chooses at most `cap` drafts (operators in [`TURN_ORDER`], each spreading its
/// picks over the patch), renders them, and leaves out no-ops and duplicates.
fn choose(
    patch: &Patch,
    drafts: Vec<Draft>,
    cap: usize,
    before: &FilesBefore,
    tested: &shape::TestWords,
) -> Vec<Mutant> {
    let gold = patch.render();
    let mut queues: Vec<std::collections::VecDeque<Draft>> = TURN_ORDER
        .iter()
        .map(|operator| {
            let of_operator: Vec<Draft> = drafts.iter().filter(|draft| draft.operator == *operator).cloned().collect();
            spread(of_operator).into()
        })
        .collect();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut ids: BTreeSet<String> = BTreeSet::new();
    let mut chosen = Vec::new();
    // No operator takes more than a quarter of the budget (at least two): ten string
    // literals of one list would otherwise be a task's whole probe.
    let share = cap.div_ceil(4).max(2);
    let mut taken = vec![0usize; queues.len()];
    while chosen.len() < cap && queues.iter().zip(&taken).any(|(queue, taken)| !queue.is_empty() && *taken < share) {
        for (queue, taken) in queues.iter_mut().zip(taken.iter_mut()) {
            if chosen.len() >= cap {
                break;
            }
            if *taken >= share {
                queue.clear();
                continue;
            }
            // An operator whose next draft is a no-op or a duplicate takes its next one.
            while let Some(draft) = queue.pop_front() {
                let rendered = render(patch, &draft);
                // No change at all is not a wrong fix: validation's run before the gold
                // patch already is that one.
                if rendered == gold || !changes_code(&rendered, before, tested) || !seen.insert(rendered.clone()) {
                    continue;
                }
                chosen.push(mutant_of(patch, &draft, rendered, &mut ids));
                *taken += 1;
                break;
            }
        }
    }
    chosen
}

/// The drafts of one operator in an order that spreads over the patch: the first,
/// the middle, the quarters, and so on (indices by their reversed bits).
fn spread(drafts: Vec<Draft>) -> Vec<Draft> {
    let count = drafts.len();
    if count <= 2 {
        return drafts;
    }
    let bits = usize::BITS - (count - 1).leading_zeros();
    let mut order: Vec<usize> = (0..1usize << bits).map(|i| i.reverse_bits() >> (usize::BITS - bits)).collect();
    order.retain(|&index| index < count);
    let mut slots: Vec<Option<Draft>> = drafts.into_iter().map(Some).collect();
    order.into_iter().filter_map(|index| slots[index].take()).collect()
}

fn render(patch: &Patch, draft: &Draft) -> String {
    let mut edited = patch.clone();
    let hunks = &mut edited.files[draft.file].hunks;
    match &draft.edit {
        Edit::OmitHunk => {
            hunks.remove(draft.hunk);
        }
        Edit::Replace(text) => hunks[draft.hunk].lines[draft.line].text = text.clone(),
        Edit::Drop => {
            hunks[draft.hunk].lines.remove(draft.line);
        }
        Edit::Keep => hunks[draft.hunk].lines[draft.line].marker = ' ',
    }
    edited.render()
}

fn mutant_of(patch: &Patch, draft: &Draft, rendered: String, ids: &mut BTreeSet<String>) -> Mutant {
    let file = &patch.files[draft.file];
    let hunk = &file.hunks[draft.hunk];
    // A removed line has no number in the fixed file: it gets the next line's.
    let line = hunk.new_line_of(draft.line);
    let base = format!("{}:{}:{line}", draft.operator, file.path);
    let mut id = base.clone();
    let mut n = 2;
    while !ids.insert(id.clone()) {
        id = format!("{base}:{n}");
        n += 1;
    }
    let language = Language::of_path(&file.path).expect("only code files get drafts");
    Mutant {
        id,
        operator: draft.operator,
        file: file.path.clone(),
        line,
        function: shape::function_at(hunk, draft.line, language),
        change: draft.change.clone(),
        patch: rendered,
    }
}

#[cfg(test)]
mod tests;
