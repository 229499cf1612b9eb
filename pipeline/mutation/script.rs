//! The container script of one task's mutants: one container installs the
//! repository at its base commit (offline, as validate's runs do), applies the test
//! patch, checks that the gold patch still applies, then for each mutant applies it,
//! runs the touched test files under probe's time limit, and puts the files the gold
//! patch touches back as they were. Each step is marked with the run's random token,
//! so the code under test cannot forge a result.
//!
//! Why one container for all mutants: the install, the container's start and a
//! compiled language's build cache are paid once per task, not once per mutant.
//! Why the files are put back rather than the mutant reversed: a mutant's tests may
//! change the tree, and copies of the gold patch's files taken before the first
//! mutant restore them whatever happened (`/testbed` is a copy of the commit, not a
//! git work tree). The copies come back with a new time, so a build that goes by
//! times (make, cargo) rebuilds them. Python writes no bytecode here: a mutant that
//! changes neither a file's size nor (within the second) its time would otherwise run
//! the previous mutant's cached code. A mutant is applied strictly (`git apply`, with
//! blanks ignored at most): a fuzzy `patch` could put its edit somewhere else.

use std::time::Duration;

use crate::ecosystem::Ecosystem;
use crate::sandbox::script;

/// The step that checks the gold patch against the base commit.
pub const GOLD_CHECK: &str = "gold_check";

/// The name of mutant `index`'s apply step and test phase (and its report).
pub fn apply_step(index: usize) -> String {
    format!("apply-{index}")
}

pub fn test_phase(index: usize) -> String {
    format!("mutant-{index}")
}

/// Where mutant `index`'s patch goes under `/swe-harvest/`.
pub fn patch_file(index: usize) -> String {
    format!("mutants/{index}.patch")
}

/// What the script needs to know.
pub struct ProbeScript<'a> {
    /// Install the repository first (an environment image); an instance image has it
    /// installed in `/testbed` already.
    pub install: bool,
    pub version: &'a str,
    pub test_command: &'a str,
    pub test_files: &'a [String],
    /// The files the gold patch changes that exist at the base commit, and those it
    /// creates: what is put back after each mutant.
    pub existing_files: &'a [String],
    pub created_files: &'a [String],
    /// The indices of the mutants this container runs.
    pub mutants: &'a [usize],
    pub timeout: Duration,
}

impl ProbeScript<'_> {
    pub fn render(&self, ecosystem: &dyn Ecosystem) -> String {
        let invocation = ecosystem.test_invocation(
            self.test_command,
            r#"/swe-harvest/out/"$phase".xml"#,
            &script::shell_words(self.test_files),
        );
        let mut calls = String::new();
        for index in self.mutants {
            calls.push_str(&format!("probe_mutant {index}\n"));
        }
        format!(
            r#"{preamble}export PYTHONDONTWRITEBYTECODE=1
# A step that must succeed before the next one: marked, and the run ends when it fails.
step() {{
    phase="$1"
    shift
    mark "$phase" begin
    "$@" 2>&1
    code=$?
    mark "$phase" "end $code"
    [ "$code" -eq 0 ] || exit 0
}}
{put_back}
apply_mutant() {{ git apply --verbose "$1" || git apply --verbose --ignore-whitespace "$1"; }}
probe_mutant() {{
    phase="apply-$1"
    mark "$phase" begin
    apply_mutant "/swe-harvest/mutants/$1.patch" 2>&1
    code=$?
    mark "$phase" "end $code"
    if [ "$code" -eq 0 ]; then
        phase="mutant-$1"
        mark "$phase" begin
        start=$(date +%s.%N)
        timeout -k 5 {timeout} {invocation} 2>&1
        code=$?
        end=$(date +%s.%N)
        cleanup
        mark "$phase" "end $code"
        echo "@@swe-harvest $token $phase-seconds $start $end"
    fi
    put_back
}}
{install}step test_patch apply_patch /swe-harvest/test.patch
# The gold patch must still apply (strictly, or as validate's runs apply it).
check_gold() {{ git apply --check /swe-harvest/gold.patch || git apply --check --ignore-whitespace /swe-harvest/gold.patch; }}
step {GOLD_CHECK} check_gold
save_originals
{calls}mark done begin
mark done "end 0"
"#,
            preamble = script::preamble("pipeline/mutation/script.rs", &ecosystem.script_setup(self.version)),
            timeout = self.timeout.as_secs().max(1),
            put_back = put_back_commands(self.existing_files, self.created_files),
            install = if self.install { "step install install_repository\n" } else { "" },
        )
    }
}

/// The shell functions that keep the gold patch's files as the base commit (with the
/// test patch) has them, `save_originals`, and put them back, `put_back`: the changed
/// files copied back, the created ones removed.
fn put_back_commands(existing_files: &[String], created_files: &[String]) -> String {
    format!(
        r#"originals=()
changed_files=({existing})
created_files=({created})
save_originals() {{
    pristine="$(mktemp -d)"
    for file in "${{changed_files[@]}}"; do
        [ -f "$file" ] || continue
        mkdir -p "$pristine/$(dirname "$file")" && cp "$file" "$pristine/$file" && originals+=("$file")
    done
}}
put_back() {{
    for file in "${{originals[@]}}"; do cp "$pristine/$file" "$file"; done
    for file in "${{created_files[@]}}"; do rm -rf -- "$file"; done
}}"#,
        existing = script::shell_words(existing_files),
        created = script::shell_words(created_files),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecosystem::for_tests::Pytest;

    #[test]
    fn each_mutant_is_applied_run_under_the_limit_and_put_back() {
        let script = ProbeScript {
            install: true,
            version: "1.0",
            test_command: "pytest -rA",
            test_files: &["tests/test_a.py".into()],
            existing_files: &["src/a.py".into()],
            created_files: &["src/new file.py".into()],
            mutants: &[0, 3],
            timeout: Duration::from_secs(90),
        }
        .render(&Pytest);
        assert!(script.contains("probe_mutant 0\nprobe_mutant 3\n"), "{script}");
        assert!(
            script.contains("timeout -k 5 90 pytest -rA --junitxml=/swe-harvest/out/\"$phase\".xml tests/test_a.py")
        );
        assert!(script.contains("changed_files=(src/a.py)"));
        assert!(script.contains("created_files=('src/new file.py')"));
        assert!(script.contains("save_originals\nprobe_mutant 0\n"));
        assert!(script.contains("step gold_check check_gold"));
        assert!(script.contains("export PYTHONDONTWRITEBYTECODE=1"));
        assert!(script.contains("step install install_repository\nstep test_patch"));
    }

    #[test]
    fn the_put_back_restores_the_gold_patchs_files_whatever_a_mutant_did() {
        // A copy of a commit, as `/testbed` is: no git work tree.
        let dir = tempfile::tempdir().unwrap();
        fs_err::create_dir_all(dir.path().join("src")).unwrap();
        fs_err::write(dir.path().join("src/a.py"), "x = 1\n").unwrap();
        // The test patch's change stays; the mutant's edit and new file go.
        fs_err::write(dir.path().join("test_a.py"), "patched\n").unwrap();
        let commands = put_back_commands(&["src/a.py".into()], &["src/b.py".into()]);
        let script = format!(
            "{commands}\nsave_originals\necho 'x = 2' > src/a.py\necho new > src/b.py\nput_back\n\
             echo 'x = 3' > src/a.py\nput_back\n"
        );
        let output = crate::sandbox::script::run_bash_in(dir.path(), &script);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert_eq!(fs_err::read_to_string(dir.path().join("src/a.py")).unwrap(), "x = 1\n");
        assert_eq!(fs_err::read_to_string(dir.path().join("test_a.py")).unwrap(), "patched\n");
        assert!(!dir.path().join("src/b.py").exists());
    }
}
