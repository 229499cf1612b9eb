//! Languages beyond Python against a real Docker engine: a synthetic Go module (no
//! third-party dependencies, so no registry is needed), a synthetic npm project
//! (Mocha from the npm registry while its image is built), a synthetic Maven project
//! and a synthetic Rust crate (one small dependency from crates.io, vendored while its
//! image is built) validated end to end, their released tasks graded by SWE-bench's
//! own harness, and published Multi-SWE-bench rows of real Go, JavaScript, TypeScript,
//! Java and Rust repositories re-validated from local mirrors (skipped, saying so, when
//! `SWE_HARVEST_MIRRORS` has none).

use swe_harvest::model::{Candidate, Task};
use swe_harvest::store::Store;

use crate::conformance::find_mirror;
use crate::runners::{graded_alone, graded_by_swebench};
use crate::support::published::{PublishedRow, published_rows};
use crate::support::python_project::{Project, Scenario};
use crate::support::workspace::{Workspace, row_of};
use crate::support::{base_images_missing, names, shared_groundtruth, stderr, stdout};

const GO_MOD: &str = "module example.com/calc\n\ngo 1.19\n";
const BUGGY_ADD: &str = "package calc\n\n// Add adds, but subtracts a negative b.\nfunc Add(a, b int) int {\n\tif b < 0 {\n\t\treturn a - b\n\t}\n\treturn a + b\n}\n";
const FIXED_ADD: &str = "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n";
const FIXED_ADD_AND_MUL: &str = "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\n// Mul multiplies.\nfunc Mul(a, b int) int {\n\treturn a * b\n}\n";
const BASE_TESTS: &str = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"1+2\")\n\t}\n}\n";
/// The base test plus one that fails before the fix, with a subtest.
const TESTS_WITH_REGRESSION: &str = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"1+2\")\n\t}\n}\n\nfunc TestAddNegative(t *testing.T) {\n\tt.Run(\"minus one\", func(t *testing.T) {\n\t\tif Add(1, -1) != 0 {\n\t\t\tt.Fatal(\"1+-1\")\n\t\t}\n\t})\n}\n";
/// A new test of a function that only the gold patch adds: before it, the package's
/// tests do not compile.
const MUL_TEST: &str = "package calc\n\nimport \"testing\"\n\nfunc TestMul(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n\t\tt.Fatal(\"2*3\")\n\t}\n}\n";

fn go_project() -> Project {
    Project::of_files(&[("go.mod", GO_MOD), ("calc/calc.go", BUGGY_ADD), ("calc/calc_test.go", BASE_TESTS)])
}

/// go-cmp, the one third-party module of the Go tests (from the Go module proxy).
const GO_CMP_SUM: &str = "github.com/google/go-cmp v0.6.0 h1:ofyhxvXcZhMsU5ulbFiLKl/XBFqE1GSq7atu8tAmTRI=\n\
                          github.com/google/go-cmp v0.6.0/go.mod h1:17dUlkBOakJ0+DkrSSNjCkIjxS6bF9zb3elmeNGIjoY=\n";

fn go_mod_requiring_go_cmp() -> String {
    format!("{GO_MOD}\nrequire github.com/google/go-cmp v0.6.0\n")
}

/// The Go module with go-cmp required at its base commit: its environment downloads
/// the module (the build network benchmark's Go project).
pub(crate) fn go_project_with_a_module() -> Project {
    Project::of_files(&[
        ("go.mod", &go_mod_requiring_go_cmp()),
        ("go.sum", GO_CMP_SUM),
        ("calc/calc.go", BUGGY_ADD),
        ("calc/calc_test.go", BASE_TESTS),
    ])
}

/// The Go module and its candidate 1, whose gold patch fixes `Add` and whose test
/// patch adds a failing test with a subtest.
fn go_behaviour_candidate() -> (Project, Candidate) {
    let project = go_project();
    let behaviour = project.candidate(
        1,
        &Scenario::new("negative").gold("calc/calc.go", FIXED_ADD).test("calc/calc_test.go", TESTS_WITH_REGRESSION),
    );
    (project, behaviour)
}

#[test]
fn a_go_module_gets_fail_to_pass_by_test_name_and_a_compile_failure_fails_the_packages_tests() {
    let Some(workspace) = Workspace::with_base_images("go", &["go1.19"]) else { return };
    let (project, behaviour) = go_behaviour_candidate();
    let compile = project
        .candidate(2, &Scenario::new("mul").gold("calc/calc.go", FIXED_ADD_AND_MUL).test("calc/mul_test.go", MUL_TEST));
    workspace.seeded(&project, &[behaviour, compile]);
    // With --coverage, which Go cannot measure: said in the summary, never "0 of 0".
    let output = workspace.validated_showing_log("acme__calc-1", &["--runs", "2", "--coverage"]);
    let summary = stderr(&output);
    assert!(
        summary.contains("coverage: not measured for 2 go task(s): go cannot measure change coverage"),
        "{summary}"
    );
    assert!(!summary.contains("0 of 0"), "{summary}");

    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["TestAddNegative", "TestAddNegative/minus_one"]));
    assert_eq!(task.pass_to_pass, names(&["TestAdd"]));
    assert!(task.image.as_deref().is_some_and(|image| image.starts_with("swe-harvest/env.acme__calc:")));

    // Before the gold patch the package does not compile: every test of it fails
    // (is missing) there, and the compiler's message is in the pre run's log.
    let task = workspace.task("acme__calc-2");
    assert_eq!(task.fail_to_pass, names(&["TestAdd", "TestMul"]));
    assert!(task.pass_to_pass.is_empty(), "{:?}", task.pass_to_pass);
    let pre = workspace.run_log("acme__calc-2");
    assert!(pre.contains("undefined: Mul"), "{pre}");
    assert!(workspace.containers().is_empty());

    // Probe in the same environment: `Mul`'s emptied return is killed by its test; the
    // fix of `Add` only removes code, and keeping its `return a - b` is killed too.
    crate::probe::assert_some_mutant_killed(&crate::probe::probed(&workspace, "acme__calc-2", "4"));
    crate::probe::assert_some_mutant_killed(&crate::probe::probed(&workspace, "acme__calc-1", "4"));
}

/// CI evidence end to end: the tests of a file that only builds with the tag
/// `integration` are compiled out of a plain `go test`; the module's workflow runs
/// `go test -tags integration`, so inference gives the test command that tag, the
/// task gets its FAIL_TO_PASS test, and the stored environment says it came from CI
/// (and names the service the workflow starts, which nothing runs here).
#[test]
fn a_go_test_file_behind_the_build_tag_of_the_projects_ci_runs_with_that_tag() {
    let Some(workspace) = Workspace::with_base_images("go", &["go1.19"]) else { return };
    let workflow = "on: push\njobs:\n  integration:\n    runs-on: ubuntu-latest\n    services:\n      redis:\n        \
                    image: redis:7\n    steps:\n      - uses: actions/checkout@v4\n      - uses: actions/setup-go@v5\n        \
                    with:\n          go-version: '1.19'\n      - run: go test -race -tags integration ./...\n";
    let gated = |body: &str| format!("//go:build integration\n\n{body}");
    let project = Project::of_files(&[
        ("go.mod", GO_MOD),
        (".github/workflows/ci.yml", workflow),
        ("calc/calc.go", BUGGY_ADD),
        ("calc/calc_test.go", &gated(BASE_TESTS)),
    ]);
    let candidate = project.candidate(
        1,
        &Scenario::new("negative")
            .gold("calc/calc.go", FIXED_ADD)
            .test("calc/calc_test.go", &gated(TESTS_WITH_REGRESSION)),
    );
    workspace.seeded(&project, &[candidate]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["TestAddNegative", "TestAddNegative/minus_one"]));
    assert_eq!(task.pass_to_pass, names(&["TestAdd"]));
    let spec = environment_of(&workspace, task.image.as_deref().unwrap());
    assert_eq!(spec.test_command, "go test -tags integration -json -count=1");
    assert!(spec.ci[0].starts_with("build tags `integration` from CI's `go test`"), "{:?}", spec.ci);
    assert!(spec.ci.iter().any(|line| line.contains("the service `redis` (image `redis:7`)")), "{:?}", spec.ci);
}

/// Every language's image installs the Debian packages that Debian has and names the
/// others in its build log, as C's did first: before, one name Debian lacks (a CI
/// file's package of another distribution) failed the install of all of them. A Go
/// module whose config asks for `tree` and for a package Debian lacks: its image
/// builds with `tree`, the log names the other, and the task is labelled.
#[test]
fn a_debian_package_that_debian_lacks_is_skipped_and_named_in_a_go_images_build_log() {
    let Some(workspace) = Workspace::with_base_images("go", &["go1.19"]) else { return };
    // A name of its own each time: the engine's cache has no such install step, so it
    // runs now and its output is in the log.
    let nonce = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let lacking = format!("swe-harvest-no-such-package-{nonce}");
    let config = workspace.with_repo_config(&format!(
        "[[environment]]\nversions = [\"*\"]\nsystem_packages = [\"tree\", \"{lacking}\"]\n"
    ));
    let (project, behaviour) = go_behaviour_candidate();
    workspace.seeded(&project, &[behaviour]);
    let output = workspace.validate_with_env(&[("SWE_HARVEST_CONFIG", config.to_str().unwrap())], &["--runs", "1"]);
    let build = workspace.build_logs();
    assert!(output.status.success(), "validate failed:\n{}\n{build}", stderr(&output));
    assert!(build.contains(&format!("swe-harvest: Debian has no package {lacking}; skipped")), "{build}");
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["TestAddNegative", "TestAddNegative/minus_one"]), "{build}");
    let image = task.image.expect("the task's environment image");
    let tree = std::process::Command::new("docker")
        .args(["run", "--rm", "--network", "none", &image, "tree", "--version"])
        .output()
        .expect("docker runs");
    assert!(tree.status.success(), "the package Debian has is installed: {}\n{build}", stderr(&tree));
    assert!(workspace.containers().is_empty());
    // An image of this run alone (its name is new each time): not kept for the next.
    let _ = std::process::Command::new("docker").args(["image", "rm", &image]).output();
}

/// A module whose `go` directive is newer than every Go image on the engine
/// (gin-gonic/gin's `go 1.25` where Debian's 1.24 was the newest): tried on the newest,
/// which refuses it, and dropped as `runtime_unavailable`. A runtime that
/// `validate.base_images` names and that would meet the directive, but whose image is
/// not on the engine, is named in the hint with how to get it. Here `go 1.99` and a
/// `go1.99` image of the user's that no one makes: with `go 1.25`, the optional
/// `go1.27` image would meet it where scripts/setup.sh has made it, so the test would
/// depend on this engine's optional images.
#[test]
fn a_module_newer_than_every_go_image_names_the_configured_runtime_that_would_meet_it() {
    let Some(workspace) = Workspace::with_base_images("go", &["go1.24"]) else { return };
    let project = Project::of_files(&[
        ("go.mod", "module example.com/calc\n\ngo 1.99\n"),
        ("calc/calc.go", BUGGY_ADD),
        ("calc/calc_test.go", BASE_TESTS),
    ]);
    let candidate = project.candidate(
        7,
        &Scenario::new("negative").gold("calc/calc.go", FIXED_ADD).test("calc/calc_test.go", TESTS_WITH_REGRESSION),
    );
    workspace.seeded(&project, std::slice::from_ref(&candidate));
    let images = "{ \"go1.24\" = \"swe-harvest/base:go1.24\", \"go1.99\" = \"swe-harvest-test/never-made-go:1.99\" }";
    let output = workspace.validate_with_env(&[("SWE_HARVEST_VALIDATE__BASE_IMAGES", images)], &["--runs", "1"]);
    assert_eq!(output.status.code(), Some(1), "lost to its environment: {}", stderr(&output));
    let (reason, detail) = workspace.dropped(&candidate.instance_id);
    assert_eq!(reason, "runtime_unavailable", "{detail}");
    assert!(detail.contains("needs runtime go1.99 (go.mod's `go 1.99` directive)"), "{detail}");
    assert!(detail.contains("tried on runtime go1.2"), "the newest Go there is: {detail}");
    assert!(
        detail.contains(
            "validate.base_images.\"go1.99\" meets it, but its image `swe-harvest-test/never-made-go:1.99` is not on the engine: pull or build it"
        ),
        "{detail}"
    );
    assert!(workspace.containers().is_empty());
}

/// A package with a slow test beside the fast ones (grpc-go's `./test`): its whole
/// run hits the timeout (here the command's own, 10 s, to keep the suite fast) before
/// and after the fix, before it reaches the test the test patch adds. The touched
/// tests run first by name, so the task still gets its labels; the test the whole
/// pass never reached says nothing, and the slow one fails both times.
#[test]
fn a_go_package_with_a_slow_test_still_labels_the_tests_the_test_patch_touches() {
    let Some(workspace) = Workspace::with_base_images("go", &["go1.19"]) else { return };
    let slow = "package calc\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\n\
                func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"1+2\")\n\t}\n}\n\n\
                func TestSlow(t *testing.T) {\n\ttime.Sleep(time.Hour)\n}\n\n\
                func TestLater(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"2+2\")\n\t}\n}\n";
    let with_regression = format!(
        "{slow}\nfunc TestAddNegative(t *testing.T) {{\n\tif Add(1, -1) != 0 {{\n\t\tt.Fatal(\"1+-1\")\n\t}}\n}}\n"
    );
    let project = Project::of_files(&[("go.mod", GO_MOD), ("calc/calc.go", BUGGY_ADD), ("calc/calc_test.go", slow)]);
    let candidate = project.candidate(
        3,
        &Scenario::new("slow").gold("calc/calc.go", FIXED_ADD).test("calc/calc_test.go", &with_regression),
    );
    let config = workspace.with_repo_config(
        "[[environment]]\nversions = [\"*\"]\ntest_command = \"go test -json -count=1 -timeout=10s\"\n",
    );
    workspace.seeded(&project, std::slice::from_ref(&candidate));
    let output = workspace.validate_with_env(&[("SWE_HARVEST_CONFIG", config.to_str().unwrap())], &["--runs", "1"]);
    assert!(output.status.success(), "validate failed:\n{}\n{}", stderr(&output), workspace.run_log("acme__calc-3"));
    let task = workspace.task("acme__calc-3");
    assert_eq!(task.fail_to_pass, names(&["TestAddNegative"]), "{}", workspace.run_log("acme__calc-3"));
    assert_eq!(task.pass_to_pass, names(&["TestAdd"]));
    let log = workspace.run_log("acme__calc-3");
    assert!(log.contains("panic: test timed out after 10s"), "{log}");
    assert!(workspace.containers().is_empty());
}

#[test]
fn a_module_that_the_gold_patch_requires_is_in_the_tasks_module_cache() {
    let Some(workspace) = Workspace::with_base_images("go", &["go1.19"]) else { return };
    let project = go_project();
    // The fix compares with go-cmp, which the environment commit does not require:
    // without it in the module cache nothing compiles after the fix (go-zero-964).
    let fixed = "package calc\n\nimport \"github.com/google/go-cmp/cmp\"\n\n// Add adds.\nfunc Add(a, b int) int {\n\
                 \tif cmp.Equal(b, 0) {\n\t\treturn a\n\t}\n\treturn a + b\n}\n";
    let candidate = project.candidate(
        3,
        &Scenario::new("new-module")
            .gold("calc/calc.go", fixed)
            .gold("go.mod", &go_mod_requiring_go_cmp())
            .gold("go.sum", GO_CMP_SUM)
            .test("calc/calc_test.go", TESTS_WITH_REGRESSION),
    );
    workspace.seeded(&project, &[candidate]);
    let output = workspace.validate(&["--runs", "1"]);
    assert!(output.status.success(), "validate failed:\n{}", stderr(&output));
    let task = workspace.task("acme__calc-3");
    assert_eq!(task.fail_to_pass, names(&["TestAddNegative", "TestAddNegative/minus_one"]));
    assert_eq!(task.pass_to_pass, names(&["TestAdd"]));
    assert!(workspace.containers().is_empty());
}

/// SWE-bench's own harness (`swebench` 5.x) grades a released Go task unchanged: its
/// eval script runs `go test -v` on the touched packages, whose `--- PASS` lines
/// `parse_log_gotest` reads; gold resolves it, an empty prediction not.
#[test]
fn swebench_harness_resolves_gold_and_rejects_empty_for_a_go_task() {
    if base_images_missing("go", &["go1.19"]) {
        return;
    }
    let (project, behaviour) = go_behaviour_candidate();
    let script = graded_alone(&project, behaviour, "parse_log_gotest", "go");
    assert!(script.contains("go test -count=1 -v ./calc"), "{script}");
}

/// A test that reads its cases from `calc/cases/*.txt`, one subtest per file: a folder
/// that is not `testdata/`, as caddy's adapter tests read
/// `caddytest/integration/caddyfile_adapt/*.caddyfiletest`.
const CASES_TEST: &str = "package calc\n\nimport (\n\t\"os\"\n\t\"path/filepath\"\n\t\"strconv\"\n\t\"strings\"\n\t\"testing\"\n)\n\n\
    func TestCases(t *testing.T) {\n\tfiles, _ := filepath.Glob(\"cases/*.txt\")\n\tfor _, file := range files {\n\t\tfile := file\n\
    \t\tt.Run(filepath.Base(file), func(t *testing.T) {\n\t\t\ttext, err := os.ReadFile(file)\n\t\t\tif err != nil {\n\t\t\t\tt.Fatal(err)\n\t\t\t}\n\
    \t\t\tf := strings.Fields(string(text))\n\t\t\ta, _ := strconv.Atoi(f[0])\n\t\t\tb, _ := strconv.Atoi(f[1])\n\t\t\twant, _ := strconv.Atoi(f[2])\n\
    \t\t\tif Add(a, b) != want {\n\t\t\t\tt.Fatalf(\"%d+%d\", a, b)\n\t\t\t}\n\t\t})\n\t}\n}\n";

/// A Go task whose test patch adds only a data file, outside `testdata/`: validate runs
/// the package above it that has tests (before, the task was dropped `no_test_files`),
/// and SWE-bench's harness, whose eval script finds that package in the tree, grades
/// the released task: gold resolves it, an empty prediction does not.
#[test]
fn a_go_test_patch_of_a_data_file_runs_the_package_that_reads_it() {
    if base_images_missing("go", &["go1.19"]) {
        return;
    }
    let project = Project::of_files(&[
        ("go.mod", GO_MOD),
        ("calc/calc.go", BUGGY_ADD),
        ("calc/calc_test.go", CASES_TEST),
        ("calc/cases/basic.txt", "1 2 3\n"),
    ]);
    let candidate = project.candidate(
        1,
        &Scenario::new("negative").gold("calc/calc.go", FIXED_ADD).test("calc/cases/negative.txt", "1 -1 0\n"),
    );
    let workspace = Workspace::with_docker();
    crate::support::validated_once(&workspace.harvest, &project, &[candidate]);
    let row = graded_by_swebench(&workspace.harvest, "acme__calc-1", "parse_log_gotest");
    let list = |key: &str| -> Vec<String> { serde_json::from_str(row[key].as_str().unwrap()).unwrap() };
    assert_eq!(list("FAIL_TO_PASS"), names(&["TestCases", "TestCases/negative.txt"]), "{row:#}");
    assert_eq!(list("PASS_TO_PASS"), names(&["TestCases/basic.txt"]), "{row:#}");
    let script = row["eval_script"].as_str().unwrap();
    assert!(script.contains("\"$(swe_harvest_go_package_of calc/cases/negative.txt)\""), "{script}");
    assert!(workspace.containers().is_empty());
}

/// The published Multi-SWE-bench rows of zeromicro/go-zero whose published
/// fail-to-pass tests (f2p + n2p) are few, re-validated with `validate --input`:
/// every published one must be in our FAIL_TO_PASS.
#[test]
fn published_go_rows_recover_their_fail_to_pass_tests() {
    // PR 1969: one published fail-to-pass test, in one package.
    let chosen = [PublishedRow::new("go__zeromicro__go-zero.jsonl", "zeromicro", "go-zero", 1969)];
    let Some((mirrors, rows)) = published_rows("go", &["go1.19"], &chosen) else { return };
    let workspace = Workspace::with_docker();
    let run = workspace.validate_published(&mirrors, &rows, &["--runs", "1", "--compare"]).succeeded();
    let row = run.row();
    let ours: Vec<String> = serde_json::from_str(row["FAIL_TO_PASS"].as_str().unwrap()).unwrap();
    let published: Vec<&String> = row["f2p_tests"].as_object().unwrap().keys().collect();
    assert!(!published.is_empty());
    for test in published {
        assert!(ours.contains(test), "{test} missing from {ours:?}; diagnosis: {}", row["diagnosis"]);
    }
}

const PACKAGE_JSON: &str = r#"{
  "name": "calc",
  "version": "1.0.0",
  "private": true,
  "scripts": {"lint": "echo lint", "test": "npm run lint && mocha 'test/**/*.test.js' --timeout 5000 --exit"},
  "devDependencies": {"mocha": "^10.2.0"}
}
"#;
pub(crate) const BUGGY_ADD_JS: &str = "exports.add = (a, b) => (b < 0 ? a - b : a + b);\n";
pub(crate) const FIXED_ADD_JS: &str = "exports.add = (a, b) => a + b;\n";
/// A test of a server on `localhost`: the name resolves in the sandbox (no network, but
/// a loopback and an /etc/hosts).
const LOCALHOST_TEST_JS: &str = "\ndescribe('server', () => {\n  it('answers on localhost', (done) => {\n    const server = require('http').createServer((_, response) => response.end('ok'));\n    server.listen(0, () => {\n      require('http').get(`http://localhost:${server.address().port}/`, (response) => {\n        response.resume();\n        response.on('end', () => server.close(done));\n      }).on('error', done);\n    });\n  });\n});\n";
pub(crate) const BASE_TESTS_JS: &str = "const assert = require('assert');\nconst { add } = require('../lib/calc');\n\ndescribe('add', () => {\n  it('adds small numbers', () => assert.strictEqual(add(1, 2), 3));\n});\n";
/// The base test plus one that fails before the fix.
const TESTS_WITH_REGRESSION_JS: &str = "const assert = require('assert');\nconst { add } = require('../lib/calc');\n\ndescribe('add', () => {\n  it('adds small numbers', () => assert.strictEqual(add(1, 2), 3));\n  describe('negative', () => {\n    it('adds a negative number', () => assert.strictEqual(add(1, -1), 0));\n  });\n});\n";
const MUL_JS: &str = "exports.mul = (a, b) => a * b;\n";
/// A new test file of a module that only the gold patch adds: before it, the file
/// does not load.
const MUL_TEST_JS: &str = "const assert = require('assert');\nconst { mul } = require('../lib/mul');\n\ndescribe('mul', () => {\n  it('multiplies', () => assert.strictEqual(mul(2, 3), 6));\n});\n";

/// The Mocha project with these base tests.
pub(crate) fn npm_project(base_tests: &str) -> Project {
    Project::of_files(&[
        ("package.json", PACKAGE_JSON),
        (".nvmrc", "18\n"),
        ("lib/calc.js", BUGGY_ADD_JS),
        ("test/calc.test.js", base_tests),
    ])
}

/// A Node task whose gold patch adds a dependency to `package.json` that its new test
/// imports (axios-5316's `formdata-node`, SWE-bench Multilingual): the environment,
/// built at the base commit, installs it too (before, the test failed to load before
/// and after the fix, and the task was dropped).
#[test]
fn a_dependency_the_gold_patch_adds_to_package_json_is_in_the_tasks_environment() {
    let Some(workspace) = Workspace::with_base_images("node", &["node18"]) else { return };
    let project = npm_project(BASE_TESTS_JS);
    let with_left_pad = PACKAGE_JSON.replace(r#""mocha": "^10.2.0""#, r#""left-pad": "^1.3.0", "mocha": "^10.2.0""#);
    let padded_test = "const assert = require('assert');\nconst leftPad = require('left-pad');\nconst { add } = require('../lib/calc');\n\n\
                       describe('pad', () => {\n  it('pads a sum', () => assert.strictEqual(leftPad(add(1, -1), 2, '0'), '00'));\n});\n";
    let candidate = project.candidate(
        1,
        &Scenario::new("pad")
            .gold("lib/calc.js", FIXED_ADD_JS)
            .gold("package.json", &with_left_pad)
            .test("test/pad.test.js", padded_test),
    );
    workspace.seeded(&project, &[candidate]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let task = workspace.task("acme__calc-1");
    assert_eq!(
        task.fail_to_pass,
        names(&["test/pad.test.js > pad > pads a sum"]),
        "{}",
        workspace.run_log("acme__calc-1")
    );
    let image = task.image.clone().unwrap_or_default();
    let installed = std::process::Command::new("docker")
        .args(["run", "--rm", "--network", "none", &image, "sh", "-c", "ls node_modules"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&installed.stdout).contains("left-pad"), "{installed:?}");
    assert!(workspace.containers().is_empty());
}

/// A Mocha project without a lockfile (`npm install --before=<date>` installs Mocha
/// from the npm registry while the image is built), `.nvmrc` asking for Node 18.
#[test]
fn an_npm_project_gets_fail_to_pass_by_file_describe_title_and_a_file_that_fails_to_load_fails_its_tests() {
    let Some(workspace) = Workspace::with_base_images("node", &["node18"]) else { return };
    let base_tests = format!("{BASE_TESTS_JS}{LOCALHOST_TEST_JS}");
    let tests_with_regression = format!("{TESTS_WITH_REGRESSION_JS}{LOCALHOST_TEST_JS}");
    let project = npm_project(&base_tests);
    let behaviour = project.candidate(
        1,
        &Scenario::new("negative").gold("lib/calc.js", FIXED_ADD_JS).test("test/calc.test.js", &tests_with_regression),
    );
    let load =
        project.candidate(2, &Scenario::new("mul").gold("lib/mul.js", MUL_JS).test("test/mul.test.js", MUL_TEST_JS));
    workspace.seeded(&project, &[behaviour, load]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "2"]);

    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["test/calc.test.js > add > negative > adds a negative number"]));
    assert_eq!(
        task.pass_to_pass,
        names(&["test/calc.test.js > add > adds small numbers", "test/calc.test.js > server > answers on localhost"])
    );
    // The runner of the `test` script, past `npm run lint`, without its glob.
    assert!(
        workspace.run_log("acme__calc-1").contains("swe-harvest: mocha of test/calc.test.js"),
        "{}",
        workspace.run_log("acme__calc-1")
    );
    let image = task.image.clone().unwrap_or_default();
    assert!(image.starts_with("swe-harvest/env.acme__calc:"), "{image}");
    // `.nvmrc` asked for Node 18; Mocha was installed into the image, not at test time.
    let node = std::process::Command::new("docker")
        .args(["run", "--rm", "--network", "none", &image, "sh", "-c", "node --version && ls node_modules/.bin"])
        .output()
        .unwrap();
    let node = String::from_utf8_lossy(&node.stdout);
    assert!(node.starts_with("v18.") && node.contains("mocha"), "{node}");

    // Before the gold patch the new test file does not load: its test is missing
    // there (a failure), and Mocha's message is in the pre run's log.
    let task = workspace.task("acme__calc-2");
    assert_eq!(task.fail_to_pass, names(&["test/mul.test.js > mul > multiplies"]));
    assert!(task.pass_to_pass.is_empty(), "{:?}", task.pass_to_pass);
    let pre = workspace.run_log("acme__calc-2");
    assert!(pre.contains("Cannot find module '../lib/mul'"), "{pre}");
    assert!(workspace.containers().is_empty());

    // Probe in the same environment: mutants of both fixes, killed by their tests.
    crate::probe::assert_some_mutant_killed(&crate::probe::probed(&workspace, "acme__calc-1", "4"));
    crate::probe::assert_some_mutant_killed(&crate::probe::probed(&workspace, "acme__calc-2", "4"));
}

/// Tests of dates (dayjs's shape): one depends on the machine's time zone (local
/// midnight is UTC midnight only in UTC), one on the full time zone data of Node's
/// ICU (Seoul's offset). Of three runs the last is in another time zone: the first
/// test disagrees there, so it is reported as depending on the time zone (also as
/// the cause of a published FAIL_TO_PASS test missed), never labelled; the second
/// passes in every run.
#[test]
fn a_node_test_that_depends_on_the_time_zone_is_reported_as_such() {
    let Some(workspace) = Workspace::with_base_images("node", &["node18"]) else { return };
    let dates = "\ndescribe('dates', () => {\n\
                 \x20 it('starts the year at midnight UTC', () => assert.strictEqual(new Date(2020, 0, 1).toISOString(), '2020-01-01T00:00:00.000Z'));\n\
                 \x20 it('shows Seoul time', () => assert.strictEqual(new Date(Date.UTC(2020, 0, 1)).toLocaleString('en-US', { timeZone: 'Asia/Seoul', hour12: false }), '1/1/2020, 09:00:00'));\n\
                 });\n";
    let project = npm_project(&format!("{BASE_TESTS_JS}{dates}"));
    let candidate = project.candidate(
        1,
        &Scenario::new("negative")
            .gold("lib/calc.js", FIXED_ADD_JS)
            .test("test/calc.test.js", &format!("{TESTS_WITH_REGRESSION_JS}{dates}")),
    );
    project.mirror_into(workspace.data_dir());
    let midnight = "test/calc.test.js > dates > starts the year at midnight UTC";
    let negative = "test/calc.test.js > add > negative > adds a negative number";
    let row = row_of(&candidate, &[negative, midnight], &[]);
    let run = workspace.validate_rows("rows", &[row], &[], &["--compare", "--runs", "3"]).succeeded();
    let written = run.written();
    assert_eq!(written[0]["FAIL_TO_PASS"], serde_json::to_string(&[negative]).unwrap(), "{}", written[0]["diagnosis"]);
    let pass_to_pass: Vec<String> = serde_json::from_str(written[0]["PASS_TO_PASS"].as_str().unwrap()).unwrap();
    assert!(pass_to_pass.contains(&"test/calc.test.js > dates > shows Seoul time".to_string()), "{pass_to_pass:?}");
    assert_eq!(written[0]["diagnosis"]["time_zone_dependent"], serde_json::json!([midnight]));
    let compare = stdout(&run.output);
    assert!(compare.contains("(depends on the time zone here"), "{compare}");
    assert!(workspace.containers().is_empty());
}

/// An npm workspace whose package has a Jest config of its own (Kong/insomnia's
/// shape): the root's test script runs every workspace's, and Jest sits in the
/// root's `node_modules`. The package's tests need its config (its `setupFiles`
/// define the unit they print): run from the root with Jest's defaults every test
/// fails before and after the fix, so the task was dropped; run from the package's
/// folder, the regression test is FAIL_TO_PASS.
#[test]
fn a_workspace_package_with_its_own_jest_config_runs_its_tests_from_its_folder() {
    let Some(workspace) = Workspace::with_base_images("node", &["node18"]) else { return };
    let root = r#"{"name": "mono", "private": true, "workspaces": ["packages/length"],
  "scripts": {"test": "npm run test --workspaces --if-present"}, "devDependencies": {"jest": "^29.7.0"}}
"#;
    let package = r#"{"name": "length", "version": "1.0.0", "scripts": {"test": "jest"}}
"#;
    let tests = "const { show } = require('../lib/show');\n\
                 test('shows a length in the unit', () => expect(show(2)).toBe('2 cm'));\n";
    let regression = format!("{tests}test('shows zero', () => expect(show(0)).toBe('0 cm'));\n");
    let project = Project::of_files(&[
        ("package.json", root),
        (".nvmrc", "18\n"),
        ("packages/length/package.json", package),
        ("packages/length/jest.config.js", "module.exports = { setupFiles: ['<rootDir>/setup.js'] };\n"),
        ("packages/length/setup.js", "global.UNIT = 'cm';\n"),
        ("packages/length/lib/show.js", "exports.show = (n) => (n ? `${n} ${global.UNIT}` : '');\n"),
        ("packages/length/test/show.test.js", tests),
    ]);
    let fix = Scenario::new("zero")
        .gold("packages/length/lib/show.js", "exports.show = (n) => `${n} ${global.UNIT}`;\n")
        .test("packages/length/test/show.test.js", &regression);
    workspace.seeded(&project, &[project.candidate(1, &fix)]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["packages/length/test/show.test.js > shows zero"]));
    // The file's own id: it declared its tests in every run.
    assert_eq!(
        task.pass_to_pass,
        names(&["packages/length/test/show.test.js", "packages/length/test/show.test.js > shows a length in the unit"])
    );
    let log = workspace.run_log("acme__calc-1");
    assert!(log.contains("swe-harvest: jest from packages/length"), "{log}");
    assert!(workspace.containers().is_empty());
}

/// A Jest project whose test patch puts an `expect` in a `describe` body, outside any
/// test (iamkun/dayjs-2369's shape, whose published row names the file): before the
/// fix it throws while Jest declares the tests (jasmine2, Jest's runner before 27:
/// "add › encountered a declaration exception"; circus: the suite fails to run), after
/// it nothing fails. No test of the file fails before and passes after, so the task
/// was dropped `no_fail_to_pass`; the file's own id fails before and passes after, in
/// our runs and in what SWE-bench's harness reads from the eval script.
#[test]
fn an_expect_in_a_describe_body_makes_the_files_own_id_fail_to_pass() {
    let Some(workspace) = Workspace::with_base_images("node", &["node18"]) else { return };
    let package = r#"{"name": "calc", "version": "1.0.0", "private": true, "scripts": {"test": "jest"},
  "devDependencies": {"jest": "^29.7.0", "jest-jasmine2": "^29.7.0"}, "jest": {"testRunner": "jest-jasmine2"}}
"#;
    let tests = |body: &str| {
        format!(
            "const {{ add }} = require('../lib/calc');\ndescribe('add', () => {{\n  it('adds', () => {{ expect(add(1, 2)).toBe(3); }});\n{body}}});\n"
        )
    };
    let project = Project::of_files(&[
        ("package.json", package),
        (".nvmrc", "18\n"),
        ("lib/calc.js", "exports.add = (a, b) => (b < 0 ? a : a + b);\n"),
        ("test/calc.test.js", &tests("")),
    ]);
    let fix = Scenario::new("negative")
        .gold("lib/calc.js", "exports.add = (a, b) => a + b;\n")
        .test("test/calc.test.js", &tests("  expect(add(1, -1)).toBe(0);\n"));
    workspace.seeded(&project, &[project.candidate(1, &fix)]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["test/calc.test.js"]));
    assert_eq!(task.pass_to_pass, names(&["test/calc.test.js > add > adds"]));
    // SWE-bench's own harness grades the file's id as we do: gold resolves the task,
    // an empty prediction does not.
    graded_by_swebench(&workspace.harvest, "acme__calc-1", "parse_log_jest_json");
    assert!(workspace.containers().is_empty());
}

/// A project whose tests import what its build makes (immutable-js's `dist/`): the
/// test script builds first (`npm run build && mocha`), and `dist/` is never in the
/// repository. Each run builds from the patched sources, so the regression test is
/// FAIL_TO_PASS; without the build no test loaded, before or after.
#[test]
fn a_test_script_that_builds_before_its_runner_builds_in_every_run() {
    let Some(workspace) = Workspace::with_base_images("node", &["node18"]) else { return };
    let package = r#"{"name": "calc", "version": "1.0.0", "private": true,
  "scripts": {"build": "node build.js", "lint": "echo lint", "test": "npm run lint && npm run build && mocha --exit"},
  "devDependencies": {"mocha": "^10.2.0"}}
"#;
    let build = "const fs = require('fs');\nfs.mkdirSync('dist', { recursive: true });\n\
                 fs.copyFileSync('lib/calc.js', 'dist/calc.js');\n";
    let tests = |extra: &str| mocha_add_tests("../dist/calc", extra);
    let project = Project::of_files(&[
        ("package.json", package),
        (".nvmrc", "18\n"),
        (".gitignore", "dist/\n"),
        ("build.js", build),
        ("lib/calc.js", BUGGY_ADD_JS),
        ("test/calc.test.js", &tests("")),
    ]);
    let fix =
        Scenario::new("negative").gold("lib/calc.js", FIXED_ADD_JS).test("test/calc.test.js", &tests(NEGATIVE_CASE_JS));
    let spec = labelled_negative_mocha_task(&workspace, &project, fix);
    assert_eq!(spec.test_command, "npm run build && mocha --exit");
    let log = workspace.run_log("acme__calc-1");
    assert_eq!(log.matches("swe-harvest: before the tests: npm run build").count(), 2, "{log}");
    assert!(workspace.containers().is_empty());
}

/// Tests that leave a server listening (axios' adapter tests of 2022, which its Grunt
/// task ran and Grunt ended): Mocha 4 and later wait for it once the tests are done,
/// so each run held until its timeout and the task was dropped `timeout`; the helper
/// gives Mocha `--exit` when the project's command says neither `--exit` nor
/// `--no-exit`.
#[test]
fn mocha_tests_that_leave_a_server_listening_end_with_their_tests() {
    let Some(workspace) = Workspace::with_base_images("node", &["node18"]) else { return };
    let (project, fix) = mocha_calc_project(
        "mocha",
        "const http = require('http');\nhttp.createServer((request, response) => response.end('ok')).listen(0);\n",
    );
    workspace.seeded(&project, &[project.candidate(1, &fix)]);
    let output = workspace.validate_with_env(
        &[("SWE_HARVEST_VALIDATE__RUN_TIMEOUT_SECS", "60"), ("SWE_HARVEST_VALIDATE__CHECK_TIMEOUT_SECS", "60")],
        &["--runs", "1"],
    );
    assert!(output.status.success(), "validate failed:\n{}", stderr(&output));
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["test/calc.test.js > add > adds a negative number"]));
    assert_eq!(task.pass_to_pass, names(&["test/calc.test.js > add > adds small numbers"]));
    assert_eq!(environment_of(&workspace, task.image.as_deref().unwrap()).test_command, "mocha");
    assert!(workspace.containers().is_empty());
}

/// Tests whose tool hashes with md4 (webpack 4, as Karma ran it for preact-2896), which
/// Node 18's OpenSSL 3 refuses: no test loads, and the ladder's `legacy-openssl` rung
/// runs them with OpenSSL's legacy provider (dropped `environment_unusable` before).
#[test]
fn tests_whose_tool_hashes_with_md4_get_openssls_legacy_provider() {
    let Some(workspace) = Workspace::with_base_images("node", &["node18"]) else { return };
    let (project, fix) =
        mocha_calc_project("mocha --exit", "require('crypto').createHash('md4').update('bundle').digest('hex');\n");
    let spec = labelled_negative_mocha_task(&workspace, &project, fix);
    assert_eq!(spec.rung.as_str(), "legacy-openssl", "{spec:?}");
    assert_eq!(spec.test_command, "export NODE_OPTIONS=--openssl-legacy-provider && mocha --exit");
    assert!(workspace.containers().is_empty());
}

/// A project of 2024 whose dev dependencies' peers conflict (dayjs of 2020-2021:
/// `rollup-plugin-babel` asks for a newer `rollup` than the project pins; here
/// `react-dom` 16 beside `react` 17): npm 10 refuses the tree (`ERESOLVE`), which npm
/// 6 installed with a warning, and the ladder's `legacy-peer-deps` rung installs it
/// so (dropped `environment_build_failed` before).
#[test]
fn dev_dependencies_whose_peers_conflict_install_as_npm_6_did() {
    let Some(workspace) = Workspace::with_base_images("node", &["node18"]) else { return };
    let package = r#"{"name": "calc", "version": "1.0.0", "private": true,
  "scripts": {"test": "mocha --exit"},
  "devDependencies": {"mocha": "^10.2.0", "react": "17.0.2", "react-dom": "16.14.0"}}
"#;
    let tests = |extra: &str| mocha_add_tests("../lib/calc", extra);
    let project = Project::of_files(&[
        ("package.json", package),
        (".nvmrc", "18\n"),
        ("lib/calc.js", BUGGY_ADD_JS),
        ("test/calc.test.js", &tests("")),
    ]);
    let fix =
        Scenario::new("negative").gold("lib/calc.js", FIXED_ADD_JS).test("test/calc.test.js", &tests(NEGATIVE_CASE_JS));
    let spec = labelled_negative_mocha_task(&workspace, &project, fix);
    assert_eq!(spec.rung.as_str(), "legacy-peer-deps", "{spec:?}");
    assert!(
        spec.install.iter().any(|step| step.contains("npm install --no-audit --no-fund --legacy-peer-deps")),
        "{spec:?}"
    );
    assert!(workspace.containers().is_empty());
}

/// A Node 18 project whose `test` script is `script`, with `lib/calc.js`'s buggy `add`
/// and Mocha tests of it that begin with `prelude`; and the fix that adds
/// [`NEGATIVE_CASE_JS`].
fn mocha_calc_project(script: &str, prelude: &str) -> (Project, Scenario) {
    let package = format!(
        "{{\"name\": \"calc\", \"version\": \"1.0.0\", \"private\": true,\n  \"scripts\": {{\"test\": \"{script}\"}},\n  \
         \"devDependencies\": {{\"mocha\": \"^10.2.0\"}}}}\n"
    );
    let tests = |extra: &str| prelude.to_string() + &mocha_add_tests("../lib/calc", extra);
    let project = Project::of_files(&[
        ("package.json", &package),
        (".nvmrc", "18\n"),
        ("lib/calc.js", BUGGY_ADD_JS),
        ("test/calc.test.js", &tests("")),
    ]);
    let fix =
        Scenario::new("negative").gold("lib/calc.js", FIXED_ADD_JS).test("test/calc.test.js", &tests(NEGATIVE_CASE_JS));
    (project, fix)
}

/// Mocha tests of `add` from `module` (`adds small numbers`), with `extra` cases.
fn mocha_add_tests(module: &str, extra: &str) -> String {
    format!(
        "const assert = require('assert');\nconst {{ add }} = require('{module}');\n\
         describe('add', () => {{\n  it('adds small numbers', () => assert.strictEqual(add(1, 2), 3));\n{extra}}});\n"
    )
}

/// The case of [`mocha_add_tests`] that fails before the fix.
const NEGATIVE_CASE_JS: &str = "  it('adds a negative number', () => assert.strictEqual(add(1, -1), 0));\n";

/// Validates the project's one candidate, `fix` (which adds [`NEGATIVE_CASE_JS`] to
/// `test/calc.test.js`), checks its labels, and returns its environment's spec.
fn labelled_negative_mocha_task(
    workspace: &Workspace,
    project: &Project,
    fix: Scenario,
) -> swe_harvest::model::EnvironmentSpec {
    workspace.seeded(project, &[project.candidate(1, &fix)]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["test/calc.test.js > add > adds a negative number"]));
    assert_eq!(task.pass_to_pass, names(&["test/calc.test.js > add > adds small numbers"]));
    environment_of(workspace, task.image.as_deref().unwrap())
}

/// A workspace whose tests load a package's built output (babel's shape: tests import
/// `@babel/parser`, linked to `packages/babel-parser`, whose `main` is `lib/`, which
/// `make build` makes) while its test script does not build: the first run cannot
/// load the module, and the ladder builds before the tests (`build-first`), in every
/// run, from the patched sources.
#[test]
fn tests_that_load_a_build_output_their_script_does_not_build_get_the_build_first() {
    let Some(workspace) = Workspace::with_base_images("node", &["node18"]) else { return };
    let package = r#"{"name": "acme", "version": "1.0.0", "private": true, "workspaces": ["packages/*"],
  "scripts": {"build": "node build.js", "test": "make test"},
  "devDependencies": {"mocha": "^10.2.0"}}
"#;
    let member = r#"{"name": "@acme/calc", "version": "1.0.0", "main": "lib/index.js"}
"#;
    let build = "const fs = require('fs');\nfs.mkdirSync('packages/calc/lib', { recursive: true });\n\
                 fs.copyFileSync('packages/calc/src/index.js', 'packages/calc/lib/index.js');\n";
    let tests = |extra: &str| mocha_add_tests("@acme/calc", extra);
    let project = Project::of_files(&[
        ("package.json", package),
        (".nvmrc", "18\n"),
        (".gitignore", "lib/\n"),
        ("build.js", build),
        ("packages/calc/package.json", member),
        ("packages/calc/src/index.js", BUGGY_ADD_JS),
        ("test/calc.test.js", &tests("")),
    ]);
    let fix = Scenario::new("negative")
        .gold("packages/calc/src/index.js", FIXED_ADD_JS)
        .test("test/calc.test.js", &tests(NEGATIVE_CASE_JS));
    let spec = labelled_negative_mocha_task(&workspace, &project, fix);
    assert_eq!(spec.rung.as_str(), "build-first", "{spec:?}");
    assert!(spec.test_command.starts_with("npm run build && "), "{spec:?}");
    let log = workspace.run_log("acme__calc-1");
    assert_eq!(log.matches("swe-harvest: before the tests: npm run build").count(), 2, "{log}");
    assert!(workspace.containers().is_empty());
}

/// A project whose tests run in a browser through Karma (preact's shape): the image
/// holds Debian's Chromium, Karma runs headless with our config in place of the
/// project's, narrowed to the touched test file (the other file's tests are not run),
/// and each test is named by its titles (a browser knows no file); SWE-bench's harness
/// grades the released task (gold resolves it, an empty prediction not). Before Karma
/// was known, Mocha ran the file in Node, where `window` does not exist.
#[test]
fn a_karma_project_runs_its_touched_tests_in_headless_chromium() {
    let Some(workspace) = Workspace::with_base_images("node", &["node18"]) else { return };
    let package = r#"{"name": "calc", "version": "1.0.0", "private": true,
  "scripts": {"test": "karma start karma.conf.js --single-run"},
  "devDependencies": {"karma": "^6.4.3", "karma-mocha": "^2.0.1", "karma-chrome-launcher": "^3.2.0", "mocha": "^10.2.0"}}
"#;
    let config = "module.exports = function (config) {\n  config.set({ frameworks: ['mocha'], browsers: ['Chrome'],\n    \
                  files: ['lib/calc.js', 'test/setup.js', 'test/**/*.test.js'] });\n};\n";
    let check =
        "function check(actual, expected) { if (actual !== expected) throw new Error(actual + ' != ' + expected); }\n";
    let tests = |extra: &str| {
        format!(
            "describe('add', function () {{\n  it('adds small numbers', function () {{ check(window.add(1, 2), 3); }});\n{extra}}});\n"
        )
    };
    let project = Project::of_files(&[
        ("package.json", package),
        (".nvmrc", "18\n"),
        ("karma.conf.js", config),
        ("lib/calc.js", "window.add = function (a, b) { return b < 0 ? a : a + b; };\n"),
        ("test/setup.js", check),
        ("test/calc.test.js", &tests("")),
        ("test/other.test.js", "describe('other', function () { it('is not run', function () {}); });\n"),
    ]);
    let fix = Scenario::new("negative").gold("lib/calc.js", "window.add = function (a, b) { return a + b; };\n").test(
        "test/calc.test.js",
        &tests("  it('adds a negative number', function () { check(window.add(1, -1), 0); });\n"),
    );
    workspace.seeded(&project, &[project.candidate(1, &fix)]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["add > adds a negative number"]));
    assert_eq!(task.pass_to_pass, names(&["add > adds small numbers"]));
    let environment = environment_of(&workspace, task.image.as_deref().unwrap());
    assert_eq!(environment.system_packages, vec!["chromium".to_string()]);
    let log = workspace.run_log("acme__calc-1");
    assert!(log.contains("swe-harvest: Karma narrowed to 1 touched test file(s)"), "{log}");
    // SWE-bench's own harness grades the released task unchanged: the eval script's
    // helper prints `[PASSED] id` lines from our Karma reporter's report.
    let row = graded_by_swebench(&workspace.harvest, "acme__calc-1", "parse_log_jest_json");
    assert!(row["eval_script"].as_str().unwrap().contains("--print karma"), "{row:#}");
    assert!(workspace.containers().is_empty());
}

/// Validates the Mocha project's task with the project dated `date` and made of `files`,
/// checks its label, and returns the environment it was labelled in.
fn labelled_mocha_environment(
    workspace: &Workspace,
    date: &str,
    files: &[(&str, &str)],
) -> swe_harvest::model::EnvironmentSpec {
    let project = Project::dated_of_files(date, files);
    let behaviour = negative_mocha_candidate(&project);
    workspace.seeded(&project, &[behaviour]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["test/calc.test.js > add > negative > adds a negative number"]));
    environment_of(workspace, task.image.as_deref().unwrap())
}

/// The environment spec the store holds for the environment image `image`.
fn environment_of(workspace: &Workspace, image: &str) -> swe_harvest::model::EnvironmentSpec {
    let store = Store::open_in(workspace.data_dir()).unwrap();
    swe_harvest::store::validation::environment_spec_for_image(store.connection(), image).unwrap().unwrap()
}

/// The Mocha project's files at its base commit: no lockfile, `.nvmrc` asking for Node 18.
const MOCHA_FILES: [(&str, &str); 4] = [
    ("package.json", PACKAGE_JSON),
    (".nvmrc", "18\n"),
    ("lib/calc.js", BUGGY_ADD_JS),
    ("test/calc.test.js", BASE_TESTS_JS),
];

/// The Mocha project's task: `add` fixed for negative numbers, with a test of it.
fn negative_mocha_candidate(project: &Project) -> Candidate {
    project.candidate(
        1,
        &Scenario::new("negative")
            .gold("lib/calc.js", FIXED_ADD_JS)
            .test("test/calc.test.js", TESTS_WITH_REGRESSION_JS),
    )
}

/// A project whose task is dated before the versions its `package.json` asks for (as
/// when the registry's version times are missing or not the publish times): the
/// date-bounded install finds no Mocha 10 "with a date before" 2015, and the ladder
/// installs without the date bound (`relaxed-packages`), where the task is labelled.
#[test]
fn an_npm_install_refused_by_its_date_bound_is_tried_again_without_it() {
    let Some(workspace) = Workspace::with_base_images("node", &["node18"]) else { return };
    let spec = labelled_mocha_environment(&workspace, "2015-01-01T12:00:00+00:00", &MOCHA_FILES);
    assert_eq!(spec.rung.as_str(), "relaxed-packages", "{spec:?}");
    assert!(spec.install.iter().all(|step| !step.contains("--before")), "{:?}", spec.install);
    assert!(workspace.containers().is_empty());
}

/// A project of 2019 whose dependencies' peer dependencies conflict (react-dom 16 asks
/// for react 16; the project pins react 15), as old projects' often do: npm 6, the
/// npm of its date, installed it with a warning, npm 7 and later refuse it
/// (`ERESOLVE`) on every rung. Installed with `--legacy-peer-deps`, as of its date, the
/// task is labelled.
#[test]
fn an_npm_project_of_before_npm_7_installs_despite_conflicting_peer_dependencies() {
    let Some(workspace) = Workspace::with_base_images("node", &["node18"]) else { return };
    let package = PACKAGE_JSON.replace(
        r#""devDependencies": {"mocha": "^10.2.0"}"#,
        r#""dependencies": {"react": "15.6.2", "react-dom": "16.14.0"}, "devDependencies": {"mocha": "^10.2.0"}"#,
    );
    let mut files = MOCHA_FILES;
    files[0] = ("package.json", &package);
    let spec = labelled_mocha_environment(&workspace, "2019-06-01T12:00:00+00:00", &files);
    assert!(spec.install.iter().any(|step| step.contains("--legacy-peer-deps")), "{:?}", spec.install);
    assert!(workspace.containers().is_empty());
}

/// A dependency whose install script fails (as a native addon's build does when it
/// needs what builds cannot reach) beside one whose install script makes the file its
/// users load, which the tests need (as esbuild's fetches its binary): after the
/// install without scripts, each package's own scripts run alone, so the failing one
/// costs only itself and the task is labelled.
#[test]
fn a_dependency_whose_install_script_fails_costs_no_other_package_its_scripts() {
    let Some(workspace) = Workspace::with_base_images("node", &["node18"]) else { return };
    let package = PACKAGE_JSON
        .replace(
            r#""devDependencies": {"mocha": "^10.2.0"}"#,
            r#""dependencies": {"bad-addon": "file:deps/bad", "needs-setup": "file:deps/good"}, "devDependencies": {"mocha": "^10.2.0"}"#,
        )
        .replace("mocha 'test/**/*.test.js'", "mocha --require ./test/setup.js 'test/**/*.test.js'");
    let bad = r#"{"name": "bad-addon", "version": "1.0.0", "scripts": {"install": "echo cannot build the addon >&2; exit 1"}}"#;
    let good = r#"{"name": "needs-setup", "version": "1.0.0", "main": "made.js",
  "scripts": {"postinstall": "node -e \"require('fs').writeFileSync('made.js', 'module.exports = 42;')\""}}"#;
    let files = [
        ("package.json", package.as_str()),
        // Local dependencies installed as packages are, not linked.
        (".npmrc", "install-links=true\n"),
        ("deps/bad/package.json", bad),
        ("deps/good/package.json", good),
        ("test/setup.js", "if (require('needs-setup') !== 42) throw new Error('needs-setup was not set up');\n"),
        (".nvmrc", "18\n"),
        ("lib/calc.js", BUGGY_ADD_JS),
        ("test/calc.test.js", BASE_TESTS_JS),
    ];
    let project = Project::dated_of_files("2023-06-01T12:00:00+00:00", &files);
    workspace.seeded(&project, &[negative_mocha_candidate(&project)]);
    // Labelled: `test/setup.js` found what needs-setup's script made, and the install
    // did not fail on bad-addon's.
    let output = workspace.validate(&["--runs", "1"]);
    assert!(output.status.success(), "{}\n{}", stderr(&output), workspace.run_log("acme__calc-1"));
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["test/calc.test.js > add > negative > adds a negative number"]));
    assert!(workspace.containers().is_empty());
}

/// SWE-bench's own harness (`swebench` 5.x) grades a released Mocha task unchanged:
/// its eval script runs the helper, which prints `[PASSED] id` / `[FAILED] id` from
/// the report for `parse_log_jest_json`; gold resolves it, an empty prediction not.
#[test]
fn swebench_harness_resolves_gold_and_rejects_empty_for_a_mocha_task() {
    if base_images_missing("node", &["node18"]) {
        return;
    }
    let project = Project::of_files(&MOCHA_FILES);
    let behaviour = negative_mocha_candidate(&project);
    let script = graded_alone(&project, behaviour, "parse_log_jest_json", "javascript");
    assert!(
        script.contains(
            "--print mocha /tmp/swe-harvest-node-report.json mocha --timeout 5000 --exit -- test/calc.test.js"
        ),
        "{script}"
    );
}

/// Published Multi-SWE-bench rows of real JavaScript and TypeScript repositories,
/// re-validated with `validate --input`: every published fail-to-pass test (f2p +
/// n2p, in their parsers' names: the title alone for axios's Mocha, `file:title` and
/// the file for darkreader's Jest) must be among ours, compared in their form.
#[test]
fn published_javascript_and_typescript_rows_recover_their_fail_to_pass_tests() {
    let chosen = [
        PublishedRow::new("js__axios__axios.jsonl", "axios", "axios", 5661),
        PublishedRow::new("ts__darkreader__darkreader.jsonl", "darkreader", "darkreader", 7241),
    ];
    let Some((mirrors, rows)) = published_rows("node", &["node18"], &chosen) else { return };
    let workspace = Workspace::with_docker();
    let run = workspace.validate_published(&mirrors, &rows, &["--runs", "1", "--compare"]).succeeded();
    for row in run.written() {
        let diagnosis = &row["diagnosis"];
        assert_eq!(diagnosis["status"], "labelled", "{}: {diagnosis}", row["instance_id"]);
        let published: Vec<&String> = ["f2p_tests", "n2p_tests"]
            .iter()
            .filter_map(|key| row[key].as_object())
            .flat_map(|tests| tests.keys())
            .collect();
        assert!(!published.is_empty());
        let missed = diagnosis["published_fail_to_pass"]["missed"].as_object().unwrap();
        assert!(
            missed.is_empty(),
            "{}: published {published:?}, missed {missed:?}; ours {}",
            row["instance_id"],
            row["FAIL_TO_PASS"]
        );
        let ours: Vec<String> = serde_json::from_str(row["FAIL_TO_PASS"].as_str().unwrap()).unwrap();
        // `file > ... > title`, or a file's own id (its declaration failed before the fix).
        let file_or_test = |id: &String| {
            id.contains(" > ")
                || [".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".tsx"].iter().any(|ext| id.ends_with(ext))
        };
        assert!(ours.iter().all(file_or_test), "our ids are file > ... > title or a file: {ours:?}");
    }
}

const POM: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.acme</groupId>
  <artifactId>calc</artifactId>
  <version>1.0-SNAPSHOT</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>junit</groupId>
      <artifactId>junit</artifactId>
      <version>4.13.2</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.11.0</version>
      </plugin>
      <plugin>
        <artifactId>maven-surefire-plugin</artifactId>
        <version>3.2.5</version>
      </plugin>
    </plugins>
  </build>
</project>
"#;
const JAVA_BUGGY_ADD: &str = "package com.acme.calc;\n\npublic class Calc {\n    /** Adds, but subtracts a negative b. */\n    public static int add(int a, int b) {\n        if (b < 0) {\n            return a - b;\n        }\n        return a + b;\n    }\n}\n";
const JAVA_FIXED_ADD: &str = "package com.acme.calc;\n\npublic class Calc {\n    public static int add(int a, int b) {\n        return a + b;\n    }\n}\n";
const JAVA_FIXED_ADD_AND_MUL: &str = "package com.acme.calc;\n\npublic class Calc {\n    public static int add(int a, int b) {\n        return a + b;\n    }\n\n    public static int mul(int a, int b) {\n        return a * b;\n    }\n}\n";
const CALC_TEST: &str = "package com.acme.calc;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic class CalcTest {\n    @Test\n    public void adds() {\n        assertEquals(3, Calc.add(1, 2));\n    }\n}\n";
/// The existing class with one more test that passes before and after the fix.
const CALC_TEST_MORE: &str = "package com.acme.calc;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic class CalcTest {\n    @Test\n    public void adds() {\n        assertEquals(3, Calc.add(1, 2));\n    }\n\n    @Test\n    public void addsZero() {\n        assertEquals(1, Calc.add(1, 0));\n    }\n}\n";
/// A new class whose test fails before the fix.
const NEGATIVE_TEST: &str = "package com.acme.calc;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic class NegativeTest {\n    @Test\n    public void addsNegatives() {\n        assertEquals(0, Calc.add(1, -1));\n    }\n}\n";
/// A new class that calls what only the gold patch adds: before it, the module's
/// tests do not compile.
const JAVA_MUL_TEST: &str = "package com.acme.calc;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic class MulTest {\n    @Test\n    public void multiplies() {\n        assertEquals(6, Calc.mul(2, 3));\n    }\n}\n";

/// Candidate 1 of a Java project: the fix of `add`, with a new class that fails before
/// it (`NegativeTest`) and one more passing test in the existing class.
fn java_negative_candidate(project: &Project) -> Candidate {
    project.candidate(
        1,
        &Scenario::new("negative")
            .gold("src/main/java/com/acme/calc/Calc.java", JAVA_FIXED_ADD)
            .test("src/test/java/com/acme/calc/CalcTest.java", CALC_TEST_MORE)
            .test("src/test/java/com/acme/calc/NegativeTest.java", NEGATIVE_TEST),
    )
}

/// Candidate 2 of a Java project: `mul` and a new class that does not compile before it.
fn java_mul_candidate(project: &Project) -> Candidate {
    project.candidate(
        2,
        &Scenario::new("mul")
            .gold("src/main/java/com/acme/calc/Calc.java", JAVA_FIXED_ADD_AND_MUL)
            .test("src/test/java/com/acme/calc/MulTest.java", JAVA_MUL_TEST),
    )
}

/// The ids of [`java_negative_candidate`]'s labels: the new class's method fails before
/// the fix; the existing class's two pass before and after.
const NEGATIVE_METHOD: &str = "com.acme.calc.NegativeTest#addsNegatives";
const CALC_METHODS: [&str; 2] = ["com.acme.calc.CalcTest#adds", "com.acme.calc.CalcTest#addsZero"];

/// [`java_negative_candidate`]'s task, asserted to be labelled by method.
fn java_negative_task_labelled(workspace: &Workspace) -> Task {
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&[NEGATIVE_METHOD]), "{}", workspace.run_log("acme__calc-1"));
    assert_eq!(task.pass_to_pass, names(&CALC_METHODS));
    task
}

pub(crate) fn maven_project() -> Project {
    Project::of_files(&[
        ("pom.xml", POM),
        ("src/main/java/com/acme/calc/Calc.java", JAVA_BUGGY_ADD),
        ("src/test/java/com/acme/calc/CalcTest.java", CALC_TEST),
    ])
}

#[test]
fn a_maven_project_gets_fail_to_pass_by_test_method_and_a_compile_failure_fails_the_new_class() {
    let Some(workspace) = Workspace::with_base_images("java", &["jdk17"]) else { return };
    let project = maven_project();
    let behaviour = java_negative_candidate(&project);
    let compile = java_mul_candidate(&project);
    workspace.seeded(&project, &[behaviour, compile]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "2"]);

    let task = java_negative_task_labelled(&workspace);
    assert!(task.image.as_deref().is_some_and(|image| image.starts_with("swe-harvest/env.acme__calc:")));

    // Before the gold patch the test class does not compile: it is missing from the
    // pre run, and the compiler's message is in that run's log.
    let task = workspace.task("acme__calc-2");
    assert_eq!(task.fail_to_pass, names(&["com.acme.calc.MulTest#multiplies"]));
    assert!(task.pass_to_pass.is_empty(), "{:?}", task.pass_to_pass);
    let pre = workspace.run_log("acme__calc-2");
    assert!(pre.contains("cannot find symbol"), "{pre}");
    assert!(workspace.containers().is_empty());

    // Probe in the same environment: `mul`'s return emptied is killed by its test.
    crate::probe::assert_some_mutant_killed(&crate::probe::probed(&workspace, "acme__calc-2", "3"));
}

/// A reactor of three modules, as apache/dubbo's: `calc` (the calculator), `bundle`
/// (no sources: the shade of `calc`, which it names as an optional dependency, so not
/// a transitive one) and `tool`, which compiles against `bundle`. Before `package`,
/// Maven's reactor hands `tool` the empty `target/classes` of `bundle`.
fn shaded_reactor_project() -> Project {
    let module = |artifact: &str, body: &str| {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n  \
             <modelVersion>4.0.0</modelVersion>\n  <parent><groupId>com.acme</groupId><artifactId>calc-parent</artifactId>\
             <version>1.0-SNAPSHOT</version></parent>\n  <artifactId>{artifact}</artifactId>\n{body}</project>\n"
        )
    };
    let root = POM
        .replace("<artifactId>calc</artifactId>", "<artifactId>calc-parent</artifactId>\n  <packaging>pom</packaging>\n  <modules><module>calc</module><module>bundle</module><module>tool</module></modules>")
        .replace("  <dependencies>", "  <dependencyManagement><dependencies>")
        .replace("  </dependencies>", "  </dependencies></dependencyManagement>");
    let junit = "  <dependencies><dependency><groupId>junit</groupId><artifactId>junit</artifactId></dependency></dependencies>\n";
    let bundle = "  <dependencies><dependency><groupId>com.acme</groupId><artifactId>calc</artifactId><version>1.0-SNAPSHOT</version><optional>true</optional></dependency></dependencies>\n  \
                  <build><plugins><plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-shade-plugin</artifactId><version>3.5.1</version>\
                  <executions><execution><phase>package</phase><goals><goal>shade</goal></goals>\
                  <configuration><createDependencyReducedPom>false</createDependencyReducedPom><artifactSet><includes><include>com.acme:calc</include></includes></artifactSet></configuration>\
                  </execution></executions></plugin></plugins></build>\n";
    let tool = "  <dependencies><dependency><groupId>com.acme</groupId><artifactId>bundle</artifactId><version>1.0-SNAPSHOT</version></dependency></dependencies>\n";
    let tool_source = "package com.acme.tool;\n\nimport com.acme.calc.Calc;\n\npublic class Tool {\n    public static int twice(int a) {\n        return Calc.add(a, a);\n    }\n}\n";
    Project::of_files(&[
        ("pom.xml", root.as_str()),
        ("calc/pom.xml", &module("calc", junit)),
        ("calc/src/main/java/com/acme/calc/Calc.java", JAVA_BUGGY_ADD),
        ("calc/src/test/java/com/acme/calc/CalcTest.java", CALC_TEST),
        ("bundle/pom.xml", &module("bundle", bundle)),
        ("tool/pom.xml", &module("tool", tool)),
        ("tool/src/main/java/com/acme/tool/Tool.java", tool_source),
    ])
}

/// A module that compiles only against a sibling's packaged jar (a shaded bundle, as
/// dubbo's `dubbo-native-plugin` against `dubbo`): `test-compile` fails on it, and
/// the environment is built with `package` instead, so the other modules' tasks are
/// labelled (apache/dubbo, 2026-11-28: its environment was dropped as
/// `environment_build_failed`).
#[test]
fn a_maven_module_that_compiles_against_a_shaded_sibling_gets_its_environment_by_package() {
    let Some(workspace) = Workspace::with_base_images("java", &["jdk17"]) else { return };
    let project = shaded_reactor_project();
    let candidate = project.candidate(
        1,
        &Scenario::new("negative")
            .gold("calc/src/main/java/com/acme/calc/Calc.java", JAVA_FIXED_ADD)
            .test("calc/src/test/java/com/acme/calc/NegativeTest.java", NEGATIVE_TEST),
    );
    workspace.seeded(&project, &[candidate]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&[NEGATIVE_METHOD]), "{}", workspace.run_log("acme__calc-1"));
    assert!(workspace.containers().is_empty());
}

/// The synthetic POM with JaCoCo's agent bound before `test` and Surefire's `argLine`
/// naming the property the agent sets (`@{argLine}`), as many builds do.
fn pom_with_jacoco() -> String {
    POM.replace(
        "      <plugin>\n        <artifactId>maven-surefire-plugin</artifactId>\n        <version>3.2.5</version>\n      </plugin>",
        "      <plugin>\n        <groupId>org.jacoco</groupId>\n        <artifactId>jacoco-maven-plugin</artifactId>\n        <version>0.8.11</version>\n        <executions><execution><goals><goal>prepare-agent</goal></goals></execution></executions>\n      </plugin>\n      <plugin>\n        <artifactId>maven-surefire-plugin</artifactId>\n        <version>3.2.5</version>\n        <configuration><argLine>@{argLine} -Dswe.harvest.marker=1</argLine></configuration>\n      </plugin>",
    )
}

/// Test runs skip the checks and reports bound before `test` (the test command's skip
/// properties, `pipeline/ecosystem/java/infer.rs`): with JaCoCo's agent turned off, a
/// Surefire `argLine` of `@{argLine}` must still resolve (JaCoCo sets it to empty when
/// skipped), or the forked JVM does not start and nothing is labelled.
#[test]
fn a_maven_build_with_jacoco_is_labelled_with_the_agent_skipped() {
    let Some(workspace) = Workspace::with_base_images("java", &["jdk17"]) else { return };
    let pom = pom_with_jacoco();
    assert!(pom.contains("jacoco-maven-plugin"), "the fixture POM changed: {pom}");
    let project = Project::of_files(&[
        ("pom.xml", pom.as_str()),
        ("src/main/java/com/acme/calc/Calc.java", JAVA_BUGGY_ADD),
        ("src/test/java/com/acme/calc/CalcTest.java", CALC_TEST),
    ]);
    let behaviour = java_negative_candidate(&project);
    workspace.seeded(&project, &[behaviour]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let log = workspace.run_log("acme__calc-1");
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&[NEGATIVE_METHOD]), "{log}");
    assert_eq!(task.pass_to_pass, names(&CALC_METHODS), "{log}");
    assert!(log.contains("Skipping JaCoCo execution"), "the agent ran: {log}");
    assert!(workspace.containers().is_empty());
}

/// The synthetic Maven task of a new failing class and an existing passing one,
/// released with an instance image and graded by SWE-bench's own harness
/// (`parse_log_maven`, one Maven run per class, its methods' verdicts printed from the
/// run's reports): gold resolves it, an empty prediction does not.
#[test]
fn swebench_harness_resolves_gold_and_rejects_empty_for_a_maven_task() {
    if base_images_missing("java", &["jdk17"]) {
        return;
    }
    let project = maven_project();
    let script = graded_alone(&project, java_negative_candidate(&project), "parse_log_maven", "java");
    assert!(script.contains("swe_harvest_maven_each mvn -B -o"), "{script}");
}

/// A Gradle build with no wrapper (so Debian's gradle 4.4.1 builds it) and JUnit 4
/// from Maven Central; the same sources and tests as the Maven project.
const BUILD_GRADLE: &str = "apply plugin: 'java'\n\nrepositories {\n    mavenCentral()\n}\n\ndependencies {\n    testCompile 'junit:junit:4.13.2'\n}\n";

fn gradle_project() -> Project {
    Project::of_files(&[
        ("settings.gradle", "rootProject.name = 'calc'\n"),
        ("build.gradle", BUILD_GRADLE),
        ("src/main/java/com/acme/calc/Calc.java", JAVA_BUGGY_ADD),
        ("src/test/java/com/acme/calc/CalcTest.java", CALC_TEST),
    ])
}

/// The Gradle project validated end to end: the environment image installs Debian's
/// gradle and resolves JUnit into its Gradle user home, the runs are offline, a new
/// failing class is FAIL_TO_PASS, the existing passing one PASS_TO_PASS, and a class
/// that does not compile before the fix fails (missing from the pre run) and is
/// FAIL_TO_PASS.
#[test]
fn a_gradle_project_gets_fail_to_pass_by_test_method_and_a_compile_failure_fails_the_new_class() {
    let Some(workspace) = Workspace::with_base_images("java", &["jdk17"]) else { return };
    let project = gradle_project();
    let behaviour = java_negative_candidate(&project);
    let compile = java_mul_candidate(&project);
    workspace.seeded(&project, &[behaviour, compile]);
    let output = workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    // The figures of docs/languages/java.md (image build time, each task's time in containers):
    // shown with `--no-capture`.
    eprintln!("{}", stderr(&output));

    let task = java_negative_task_labelled(&workspace);
    // Built with Debian's gradle on the JDK 17 image.
    let image = task.image.clone().unwrap_or_else(|| panic!("no image: {task:?}"));
    let history = std::process::Command::new("docker")
        .args(["history", "--no-trunc", "--format", "{{.CreatedBy}}", &image])
        .output()
        .unwrap();
    let history = String::from_utf8_lossy(&history.stdout);
    assert!(history.contains("for package in gradle; do"), "{history}");
    let javac = std::process::Command::new("docker")
        .args(["run", "--rm", "--network", "none", &image, "javac", "-version"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&javac.stdout).starts_with("javac 17"), "{javac:?}");
    let run = workspace.run_log("acme__calc-1");
    assert!(
        run.contains("swe-harvest: gradle :test --tests com.acme.calc.CalcTest --tests com.acme.calc.NegativeTest"),
        "one run of the root project's test task with both classes: {run}"
    );

    let task = workspace.task("acme__calc-2");
    assert_eq!(task.fail_to_pass, names(&["com.acme.calc.MulTest#multiplies"]));
    assert!(task.pass_to_pass.is_empty(), "{:?}", task.pass_to_pass);
    let pre = workspace.run_log("acme__calc-2");
    assert!(pre.contains("cannot find symbol") && pre.contains("compileTestJava"), "{pre}");
    assert!(workspace.containers().is_empty());
}

/// The synthetic Gradle task graded by SWE-bench's own harness (`parse_log_maven`,
/// one Gradle run per class, its methods' verdicts printed from the run's reports):
/// gold resolves it, an empty prediction does not.
#[test]
fn swebench_harness_resolves_gold_and_rejects_empty_for_a_gradle_task() {
    if base_images_missing("java", &["jdk17"]) {
        return;
    }
    let project = gradle_project();
    let script = graded_alone(&project, java_negative_candidate(&project), "parse_log_maven", "java");
    assert!(script.contains("swe_harvest_gradle_each gradle --offline"), "{script}");
}

/// Published Multi-SWE-bench Java rows re-validated with `validate --input`, one per
/// repository (those whose published fail-to-pass classes are `f2p`, not the `n2p`
/// of whole modules that did not run: see docs/languages/java.md): every published
/// fail-to-pass class must be in our FAIL_TO_PASS.
#[test]
fn published_java_rows_recover_their_fail_to_pass_classes() {
    let chosen = [
        PublishedRow::new("java__google__gson.jsonl", "google", "gson", 1555),
        PublishedRow::new("java__fasterxml__jackson-dataformat-xml.jsonl", "FasterXML", "jackson-dataformat-xml", 590),
    ];
    let Some((mirrors, rows)) = published_rows("java", &["jdk17"], &chosen) else { return };
    let workspace = Workspace::with_docker();
    let run = workspace.validate_published(&mirrors, &rows, &["--runs", "1", "--compare"]).succeeded();
    let rows = run.written();
    assert_eq!(rows.len(), chosen.len(), "{}", stderr(&run.output));
    for row in rows {
        let ours: Vec<String> = serde_json::from_str(row["FAIL_TO_PASS"].as_str().unwrap()).unwrap();
        // Ours are methods (`com.pkg.FooTest#bar`); Multi-SWE-bench's rows name classes.
        let classes: Vec<&str> = ours.iter().map(|id| id.split(['#', '$']).next().unwrap()).collect();
        let published: Vec<&String> = row["f2p_tests"].as_object().unwrap().keys().collect();
        assert!(!published.is_empty());
        for test in published {
            assert!(
                classes.contains(&test.as_str()),
                "{}: {test} missing from {ours:?}; diagnosis: {}",
                row["instance_id"],
                row["diagnosis"]
            );
        }
    }
}

const CARGO_TOML: &str =
    "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2018\"\n\n[dependencies]\ncfg-if = \"1\"\n";
/// `add` is wrong for negative numbers; the unit tests live in `src/tests.rs`.
const BUGGY_LIB: &str = "//! A calculator.\n\ncfg_if::cfg_if! {\n    if #[cfg(unix)] {\n        /// The platform's family.\n        pub fn platform() -> &'static str { \"unix\" }\n    } else {\n        /// The platform's family.\n        pub fn platform() -> &'static str { \"other\" }\n    }\n}\n\n/// Adds, but subtracts a negative `b`.\npub fn add(a: i32, b: i32) -> i32 {\n    if b < 0 { a - b } else { a + b }\n}\n\n#[cfg(test)]\nmod tests;\n";
const FIXED_LIB: &str = "//! A calculator.\n\ncfg_if::cfg_if! {\n    if #[cfg(unix)] {\n        /// The platform's family.\n        pub fn platform() -> &'static str { \"unix\" }\n    } else {\n        /// The platform's family.\n        pub fn platform() -> &'static str { \"other\" }\n    }\n}\n\n/// Adds.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests;\n";
const UNIT_TESTS: &str = "#[test]\nfn platform_is_unix() {\n    assert_eq!(super::platform(), \"unix\");\n}\n";
const UNIT_TESTS_WITH_REGRESSION: &str = "#[test]\nfn platform_is_unix() {\n    assert_eq!(super::platform(), \"unix\");\n}\n\n#[test]\nfn adds_negative_numbers() {\n    assert_eq!(super::add(2, -1), 1);\n}\n";
/// Integration tests: one that passes, one that panics as it should (an overflow).
const ADD_TESTS: &str = "#[test]\nfn add_small() {\n    assert_eq!(calc::add(1, 2), 3);\n}\n\n#[test]\n#[should_panic]\nfn add_overflows() {\n    calc::add(i32::MAX, 1);\n}\n";

fn add_tests_with(extra: &str) -> String {
    format!("{ADD_TESTS}\n{extra}")
}

/// The manifest and lockfile of a crate without dependencies (nothing to resolve or vendor).
const CALC_MANIFEST_ALONE: &str = "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2018\"\n";
const CALC_LOCK_ALONE: &str = "# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\n\
                               version = 3\n\n[[package]]\nname = \"calc\"\nversion = \"0.1.0\"\n";

/// `calc::add` with its bug, the fix, and the test that tells them apart.
const BUGGY_ADD_RS: &str = "/// Adds, but subtracts a negative `b`.\npub fn add(a: i32, b: i32) -> i32 {\n    if b < 0 { a - b } else { a + b }\n}\n";
const FIXED_ADD_RS: &str = "/// Adds.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
const ADD_NEGATIVE_RS: &str = "#[test]\nfn add_negative() {\n    assert_eq!(calc::add(1, -1), 0);\n}\n";

/// Validates the project's one candidate, `fix` (which adds `add_negative`), and
/// returns its task, checked to be labelled with that test.
fn labelled_add_fix(workspace: &Workspace, project: &Project, fix: Scenario) -> Task {
    workspace.seeded(project, &[project.candidate(1, &fix)]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["add_negative"]));
    task
}

/// The synthetic crate, dated 2021 (so Rust 1.63 runs it, with its dependency
/// resolved and vendored by 1.85's cargo), without a `Cargo.lock`, and its two
/// candidates: 1 fixes `add` (a new unit test in `src/tests.rs` and a new integration
/// test), 2 adds `mul` (a new test target that does not compile before it, and a new
/// passing test in the existing target).
pub(crate) fn rust_project() -> (Project, Vec<Candidate>) {
    let project = Project::dated_of_files(
        "2021-06-01T12:00:00+00:00",
        &[
            ("Cargo.toml", CARGO_TOML),
            ("src/lib.rs", BUGGY_LIB),
            ("src/tests.rs", UNIT_TESTS),
            ("tests/add.rs", ADD_TESTS),
        ],
    );
    let fix = project.candidate(
        1,
        &Scenario::new("negative").gold("src/lib.rs", FIXED_LIB).test("src/tests.rs", UNIT_TESTS_WITH_REGRESSION).test(
            "tests/add.rs",
            &add_tests_with("#[test]\nfn add_negative() {\n    assert_eq!(calc::add(1, -1), 0);\n}\n"),
        ),
    );
    let with_mul = format!("{FIXED_LIB}\n/// Multiplies.\npub fn mul(a: i32, b: i32) -> i32 {{\n    a * b\n}}\n");
    let feature = project.candidate(
        2,
        &Scenario::new("mul")
            .gold("src/lib.rs", &with_mul)
            .test("tests/mul.rs", "#[test]\nfn mul_small() {\n    assert_eq!(calc::mul(2, 3), 6);\n}\n")
            .test(
                "tests/add.rs",
                &add_tests_with("#[test]\nfn add_zero() {\n    assert_eq!(calc::add(0, 0), 0);\n}\n"),
            ),
    );
    (project, vec![fix, feature])
}

#[test]
fn a_rust_crate_gets_fail_to_pass_by_test_name_and_a_target_that_does_not_compile_fails_only_its_tests() {
    let Some(workspace) = Workspace::with_base_images("rust", &["rust1.63", "rust1.85"]) else { return };
    let (project, candidates) = rust_project();
    workspace.seeded(&project, &candidates);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "2"]);

    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["add_negative", "tests::adds_negative_numbers"]));
    assert_eq!(task.pass_to_pass, names(&["add_overflows", "add_small", "tests::platform_is_unix"]));
    assert!(task.image.as_deref().is_some_and(|image| image.starts_with("swe-harvest/env.acme__calc:")));
    let spec = environment_of(&workspace, task.image.as_deref().unwrap());
    assert_eq!((spec.ecosystem.as_str(), spec.runtime.as_str()), ("rust", "rust1.63"), "the toolchain of 2021");

    // `tests/mul.rs` does not compile before the gold patch: its test fails (is
    // missing) there, and the other target's tests still ran.
    let task = workspace.task("acme__calc-2");
    assert_eq!(task.fail_to_pass, names(&["mul_small"]));
    assert_eq!(task.pass_to_pass, names(&["add_overflows", "add_small", "add_zero"]));
    let pre = workspace.run_log("acme__calc-2");
    assert!(pre.contains("cannot find function `mul`"), "{pre}");
    assert!(workspace.containers().is_empty());

    // Probe in the same environment: mutants of the fix of `add`, killed by its tests.
    crate::probe::assert_some_mutant_killed(&crate::probe::probed(&workspace, "acme__calc-1", "3"));
}

/// A fix that adds a source file with an inline test module (bat's `src/vscreen.rs`
/// and its `vscreen::tests::*`): its test ran and passed after the fix, had no result
/// before it, and is still never labelled, since no other fix could pass it; the test
/// patch's own regression test is the task's.
#[test]
fn a_test_that_the_gold_patch_defines_in_an_inline_module_is_never_labelled() {
    let Some(workspace) = Workspace::with_base_images("rust", &["rust1.63", "rust1.85"]) else { return };
    let unit_tests = "#[test]\nfn adds_small() {\n    assert_eq!(super::add(1, 2), 3);\n}\n";
    let regression = "\n#[test]\nfn adds_negative_numbers() {\n    assert_eq!(super::add(2, -1), 1);\n}\n";
    let vscreen = "pub fn width() -> usize {\n    80\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    \
                   fn fits() {\n        assert_eq!(super::width(), 80);\n    }\n}\n";
    let project = Project::dated_of_files(
        "2021-06-01T12:00:00+00:00",
        &[
            ("Cargo.toml", CALC_MANIFEST_ALONE),
            ("Cargo.lock", CALC_LOCK_ALONE),
            ("src/lib.rs", &format!("{BUGGY_ADD_RS}\n#[cfg(test)]\nmod tests;\n")),
            ("src/tests.rs", unit_tests),
        ],
    );
    let fix = Scenario::new("negative")
        .gold("src/lib.rs", &format!("{FIXED_ADD_RS}\npub mod vscreen;\n\n#[cfg(test)]\nmod tests;\n"))
        .gold("src/vscreen.rs", vscreen)
        .test("src/tests.rs", &format!("{unit_tests}{regression}"));
    workspace.seeded(&project, &[project.candidate(1, &fix)]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["tests::adds_negative_numbers"]));
    assert_eq!(task.pass_to_pass, names(&["tests::adds_small"]));
    let after: String = workspace
        .runs("acme__calc-1")
        .iter()
        .filter(|run| run.phase == swe_harvest::model::RunPhase::Post)
        .map(|run| format!("{:?}", run.tests))
        .collect();
    assert!(after.contains("\"vscreen::tests::fits\": Passed"), "the fix's own test ran after it: {after}");
    assert!(workspace.containers().is_empty());
}

/// A crate whose build script asks pkg-config for zlib, whose headers the Rust images
/// do not hold: the check says the build lacks the library, the ladder adds Debian's
/// `zlib1g-dev` to the same environment (rung `system-tools`, from the Debian archive
/// through the build proxy), and the task is labelled there.
#[test]
fn a_crate_whose_build_lacks_a_system_library_gets_its_debian_package_from_the_ladder() {
    let Some(workspace) = Workspace::with_base_images("rust", &["rust1.63", "rust1.85"]) else { return };
    let cargo_toml = "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2018\"\nbuild = \"build.rs\"\n\n\
                      [build-dependencies]\npkg-config = \"0.3\"\n";
    let build_rs = "fn main() {\n    pkg_config::probe_library(\"zlib\").unwrap();\n}\n";
    let project = Project::dated_of_files(
        "2021-06-01T12:00:00+00:00",
        &[
            ("Cargo.toml", cargo_toml),
            ("build.rs", build_rs),
            ("src/lib.rs", BUGGY_ADD_RS),
            ("tests/add.rs", ADD_TESTS),
        ],
    );
    let fix = Scenario::new("negative").gold("src/lib.rs", FIXED_ADD_RS);
    let task = labelled_add_fix(&workspace, &project, fix.test("tests/add.rs", &add_tests_with(ADD_NEGATIVE_RS)));
    let spec = environment_of(&workspace, task.image.as_deref().unwrap());
    assert_eq!(spec.rung.as_str(), "system-tools", "{spec:?}");
    assert!(spec.system_packages.contains(&"zlib1g-dev".to_string()), "{spec:?}");
    assert!(workspace.containers().is_empty());
}

/// A test patch of a snapshot alone (astral-sh/ruff's shape: insta's
/// `src/<folder>/snapshots/<crate>__<module>__<name>.snap` and a fixture, the test
/// itself unchanged): it selects the unit tests of the library whose folder holds it.
/// The crate reads its snapshot as insta does not, but as a test patch sees it: a file
/// that the test compares with.
#[test]
fn a_test_patch_of_a_snapshot_alone_runs_the_unit_tests_beside_it() {
    let Some(workspace) = Workspace::with_base_images("rust", &["rust1.63", "rust1.85"]) else { return };
    let (manifest, lock) = (CALC_MANIFEST_ALONE, CALC_LOCK_ALONE);
    let snapshot_test = "\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn add_matches_its_snapshot() {\n        \
                         let expected = include_str!(\"snapshots/calc__tests__add.snap\");\n        \
                         assert_eq!(format!(\"{}\\n\", super::add(1, -1)), expected);\n    }\n}\n";
    let snapshot = "src/snapshots/calc__tests__add.snap";
    let project = Project::dated_of_files(
        "2021-06-01T12:00:00+00:00",
        &[
            ("Cargo.toml", manifest),
            ("Cargo.lock", lock),
            ("src/lib.rs", &format!("{BUGGY_ADD_RS}{snapshot_test}")),
            (snapshot, "2\n"),
        ],
    );
    let fix =
        Scenario::new("negative").gold("src/lib.rs", &format!("{FIXED_ADD_RS}{snapshot_test}")).test(snapshot, "0\n");
    workspace.seeded(&project, &[project.candidate(1, &fix)]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["tests::add_matches_its_snapshot"]));
    assert!(workspace.containers().is_empty());
}

/// Test modules of one integration target (uutils/coreutils' `tests/by-util/test_cp.rs`,
/// `mod test_cp` of `tests/tests.rs`, beside 3,000 tests of other utilities): a
/// touched module runs only its own tests (`-- test_add::`), not the whole target.
#[test]
fn a_touched_test_module_of_a_shared_target_runs_only_its_own_tests() {
    let Some(workspace) = Workspace::with_base_images("rust", &["rust1.63", "rust1.85"]) else { return };
    let (manifest, lock) = (CALC_MANIFEST_ALONE, CALC_LOCK_ALONE);
    let target = "#[path = \"by-util/test_add.rs\"]\nmod test_add;\n#[path = \"by-util/test_mul.rs\"]\nmod test_mul;\n";
    let add_tests =
        |extra: &str| format!("#[test]\nfn add_small() {{\n    assert_eq!(calc::add(1, 2), 3);\n}}\n{extra}");
    let project = Project::dated_of_files(
        "2021-06-01T12:00:00+00:00",
        &[
            ("Cargo.toml", manifest),
            ("Cargo.lock", lock),
            ("src/lib.rs", BUGGY_ADD_RS),
            ("tests/tests.rs", target),
            ("tests/by-util/test_add.rs", &add_tests("")),
            ("tests/by-util/test_mul.rs", "#[test]\nfn mul_small() {\n    assert_eq!(calc::add(2, 2), 4);\n}\n"),
        ],
    );
    let fix = Scenario::new("negative")
        .gold("src/lib.rs", FIXED_ADD_RS)
        .test("tests/by-util/test_add.rs", &add_tests(&format!("\n{ADD_NEGATIVE_RS}")));
    workspace.seeded(&project, &[project.candidate(1, &fix)]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["test_add::add_negative"]));
    assert_eq!(task.pass_to_pass, names(&["test_add::add_small"]), "test_mul's test is not run");
    let log = workspace.run_log("acme__calc-1");
    assert!(log.contains("only the tests of test_add::"), "{log}");
    assert!(workspace.containers().is_empty());
}

/// A gold patch that brings a new crate (sharkdp/bat-1402's `serial_test`): its
/// `Cargo.lock` names the release, the environment vendors it beside the environment
/// commit's crates, and the runs after the patch resolve offline.
#[test]
fn a_crate_that_the_gold_patch_adds_is_vendored_in_the_tasks_environment() {
    let Some(workspace) = Workspace::with_base_images("rust", &["rust1.63", "rust1.85"]) else { return };
    let (manifest, lock) = (CALC_MANIFEST_ALONE, CALC_LOCK_ALONE);
    let project = Project::dated_of_files(
        "2021-06-01T12:00:00+00:00",
        &[("Cargo.toml", manifest), ("Cargo.lock", lock), ("src/lib.rs", BUGGY_ADD_RS), ("tests/add.rs", ADD_TESTS)],
    );
    let fixed_lock = "# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\nversion = 3\n\n\
                      [[package]]\nname = \"calc\"\nversion = \"0.1.0\"\ndependencies = [\n \"cfg-if\",\n]\n\n\
                      [[package]]\nname = \"cfg-if\"\nversion = \"1.0.0\"\n\
                      source = \"registry+https://github.com/rust-lang/crates.io-index\"\n\
                      checksum = \"baf1de4339761588bc0619e3cbc0120ee582ebb74b53b4efbf79117bd2da40fd\"\n";
    let fixed_with_cfg_if = "cfg_if::cfg_if! {\n    if #[cfg(unix)] {\n        /// Adds.\n        pub fn add(a: i32, b: i32) -> i32 {\n            a + b\n        }\n    }\n}\n";
    let fix = Scenario::new("negative")
        .gold("Cargo.toml", &format!("{manifest}\n[dependencies]\ncfg-if = \"1.0.0\"\n"))
        .gold("Cargo.lock", fixed_lock)
        .gold("src/lib.rs", fixed_with_cfg_if);
    let task = labelled_add_fix(&workspace, &project, fix.test("tests/add.rs", &add_tests_with(ADD_NEGATIVE_RS)));
    let spec = environment_of(&workspace, task.image.as_deref().unwrap());
    assert_eq!(spec.extra_packages, ["cfg-if@1.0.0"], "{spec:?}");
    assert!(workspace.containers().is_empty());
}

/// A project without a `Cargo.lock` whose gold patch adds a requirement to its manifest
/// alone (tracing-1853's fix moves `opentelemetry` to 0.17): the environment resolves
/// it as of the task's date, vendors it, and the runs after the patch resolve offline.
#[test]
fn a_requirement_that_the_gold_patch_adds_to_a_manifest_without_a_lockfile_is_vendored() {
    let Some(workspace) = Workspace::with_base_images("rust", &["rust1.63", "rust1.85"]) else { return };
    // A manifest of its own, so that its environment is built now and the build logged.
    let nonce = format!("{:?}", std::time::SystemTime::now());
    let manifest = &format!("# {nonce}\n{CALC_MANIFEST_ALONE}");
    let project = Project::dated_of_files(
        "2021-06-01T12:00:00+00:00",
        &[("Cargo.toml", manifest), ("src/lib.rs", BUGGY_ADD_RS), ("tests/add.rs", ADD_TESTS)],
    );
    let fixed_with_cfg_if = "cfg_if::cfg_if! {\n    if #[cfg(unix)] {\n        /// Adds.\n        pub fn add(a: i32, b: i32) -> i32 {\n            a + b\n        }\n    }\n}\n";
    let fix = Scenario::new("negative")
        .gold("Cargo.toml", &format!("{manifest}\n[dependencies]\ncfg-if = \"1.0\"\n"))
        .gold("src/lib.rs", fixed_with_cfg_if);
    let task = labelled_add_fix(&workspace, &project, fix.test("tests/add.rs", &add_tests_with(ADD_NEGATIVE_RS)));
    let spec = environment_of(&workspace, task.image.as_deref().unwrap());
    assert_eq!(spec.extra_packages, ["cfg-if@^1.0"], "{spec:?}");
    let build = workspace.build_logs();
    assert!(
        build.contains("swe-harvest: 1 crates for the requirements that the task's patches add vendored (cfg-if@^1.0)"),
        "{build}"
    );
    assert!(workspace.containers().is_empty());
}

/// CI evidence end to end (tokio's `tokio_unstable`): tests inside a module that only
/// the project's own cfg compiles in (not a file's `#![cfg]`, which the helper reads
/// itself) run because the workflow's test job sets `RUSTFLAGS: --cfg calc_unstable`:
/// the test command and the warm-up build carry it, the task gets its FAIL_TO_PASS
/// test, and the stored environment says it came from CI.
#[test]
fn tests_under_the_cfg_of_the_rustflags_the_projects_ci_sets_run_with_it() {
    let Some(workspace) = Workspace::with_base_images("rust", &["rust1.63", "rust1.85"]) else { return };
    let workflow = "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    env:\n      RUSTFLAGS: -Dwarnings --cfg calc_unstable\n    \
                    steps:\n      - uses: actions/checkout@v4\n      - run: cargo test\n";
    let gated = |tests: &str| format!("{ADD_TESTS}\n#[cfg(calc_unstable)]\nmod unstable {{\n{tests}}}\n");
    let project = Project::dated_of_files(
        "2021-06-01T12:00:00+00:00",
        &[
            ("Cargo.toml", CALC_MANIFEST_ALONE),
            ("Cargo.lock", CALC_LOCK_ALONE),
            (".github/workflows/ci.yml", workflow),
            ("src/lib.rs", BUGGY_ADD_RS),
            ("tests/add.rs", &gated("")),
        ],
    );
    let fix = Scenario::new("negative").gold("src/lib.rs", FIXED_ADD_RS).test("tests/add.rs", &gated(ADD_NEGATIVE_RS));
    workspace.seeded(&project, &[project.candidate(1, &fix)]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["unstable::add_negative"]));
    let spec = environment_of(&workspace, task.image.as_deref().unwrap());
    assert_eq!(
        spec.test_command,
        "env 'RUSTFLAGS=--cap-lints=warn --cfg calc_unstable' cargo test --offline --no-fail-fast"
    );
    assert!(spec.ci.iter().any(|line| line.starts_with("`--cfg calc_unstable` in RUSTFLAGS")), "{:?}", spec.ci);
    assert!(workspace.containers().is_empty());
}

/// An integration test file compiled only under a feature of its crate and the
/// project's own cfg, its `#![cfg]` over several lines (tokio's rt_metrics.rs:
/// `feature = "full"`, `tokio_unstable`), which uses what another feature gives (tokio's
/// `#[tokio::test]`, from `macros`): its target runs with the feature and the cfg, then,
/// as that does not compile, with every feature; not with none of its tests.
#[test]
fn a_test_file_that_its_cfg_gates_on_a_feature_runs_with_that_feature() {
    let Some(workspace) = Workspace::with_base_images("rust", &["rust1.63", "rust1.85"]) else { return };
    let manifest =
        "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2018\"\n\n[features]\nfull = []\nextra = []\n";
    let with_extra = |lib: &str| {
        format!("{lib}\n/// What the tests need besides `full`.\n#[cfg(feature = \"extra\")]\npub fn extra() {{}}\n")
    };
    let gated = |tests: &str| {
        format!(
            "#![cfg(all(\n    feature = \"full\",\n    calc_unstable,\n    not(feature = \"nothing\")\n))]\n\n\
             const _: fn() = calc::extra;\n\n{tests}"
        )
    };
    let project = Project::dated_of_files(
        "2021-06-01T12:00:00+00:00",
        &[("Cargo.toml", manifest), ("src/lib.rs", &with_extra(BUGGY_ADD_RS)), ("tests/add.rs", &gated(ADD_TESTS))],
    );
    let fix = Scenario::new("negative").gold("src/lib.rs", &with_extra(FIXED_ADD_RS));
    let task =
        labelled_add_fix(&workspace, &project, fix.test("tests/add.rs", &gated(&add_tests_with(ADD_NEGATIVE_RS))));
    assert_eq!(task.pass_to_pass, names(&["add_overflows", "add_small"]));
    let log = workspace.run_log("acme__calc-1");
    assert!(log.contains("--test=add --features 'full' with RUSTFLAGS '--cfg calc_unstable'"), "{log}");
    assert!(log.contains("--test=add --all-features with RUSTFLAGS '--cfg calc_unstable'"), "{log}");
}

/// SWE-bench's own harness (`swebench` 5.x) grades a released Rust task unchanged: its
/// eval script writes the helper and runs it on the touched files, one `cargo test`
/// per target, and `parse_log_cargo` reads libtest's lines (the `#[should_panic]`
/// test's too, as the helper writes it); gold resolves it, an empty prediction not.
#[test]
fn swebench_harness_resolves_gold_and_rejects_empty_for_a_rust_task() {
    let Some(workspace) = Workspace::with_base_images("rust", &["rust1.63", "rust1.85"]) else { return };
    let (project, mut candidates) = rust_project();
    candidates.truncate(1);
    workspace.seeded(&project, &candidates).validated(&["--runs", "1"]);
    let task = workspace.task("acme__calc-1");
    assert!(task.pass_to_pass.contains(&"add_overflows".to_string()), "{:?}", task.pass_to_pass);
    let row = crate::runners::graded_by_swebench(&workspace.harvest, "acme__calc-1", "parse_log_cargo");
    assert_eq!(row["language"], "rust");
    let script = row["eval_script"].as_str().unwrap();
    assert!(
        script.contains(
            "bash /tmp/swe-harvest-cargo-test cargo test --offline --no-fail-fast -- src/tests.rs tests/add.rs"
        ),
        "{script}"
    );
    assert!(workspace.containers().is_empty());
}

/// The published Multi-SWE-bench rows of tokio-rs/bytes (5), serde-rs/serde (2) and
/// rayon-rs/rayon (2), re-validated with `validate --input` from the mirrors under
/// `SWE_HARVEST_MIRRORS` (a repository without a mirror is left out, saying so). Every
/// row must be labelled, every published `f2p` test must be in our FAIL_TO_PASS, and a
/// published fail-to-pass test (`f2p` or `n2p`) that we miss must be one that passed
/// in the published row's own run of the base commit and that passed before the fix
/// here or that we did not run: never one that failed after it, was flaky, needed the
/// network or was skipped. (Multi-SWE-bench runs `cargo test` over
/// the whole workspace, which stops at the first target that fails to compile or to
/// pass, so every later target's tests are `n2p` there; we run the touched targets
/// only, each on its own. docs/languages/rust.md has the measured figures.)
#[test]
fn published_rust_rows_recover_their_fail_to_pass_tests() {
    let Some(mirrors) = std::env::var_os("SWE_HARVEST_MIRRORS") else {
        eprintln!(
            "skipped: SWE_HARVEST_MIRRORS is not set (a folder with tokio-rs+bytes/repo, serde-rs+serde/repo, ...)"
        );
        return;
    };
    if base_images_missing("rust", &["rust1.63", "rust1.85"]) {
        return;
    }
    let mut lines: Vec<String> = Vec::new();
    for (owner, name) in [("tokio-rs", "bytes"), ("serde-rs", "serde"), ("rayon-rs", "rayon")] {
        if find_mirror(std::path::Path::new(&mirrors), owner, name).is_none() {
            eprintln!("left out: no mirror of {owner}/{name} under {}", mirrors.to_string_lossy());
            continue;
        }
        let Some(path) = shared_groundtruth(&format!("multi-swe-bench/rust__{owner}__{name}.jsonl")) else {
            continue;
        };
        let text = fs_err::read_to_string(&path).unwrap();
        lines.extend(text.lines().filter(|line| !line.trim().is_empty()).map(String::from));
    }
    if lines.is_empty() {
        eprintln!("skipped: no Rust row has a mirror");
        return;
    }
    let workspace = Workspace::with_docker();
    let run =
        workspace.validate_published(&mirrors, &lines, &["--runs", "1", "--workers", "2", "--compare"]).succeeded();
    let rows = run.written();
    assert_eq!(rows.len(), lines.len());
    // Every miss is a test of the published row's own base run that passed there.
    let allowed = [
        swe_harvest::validate::rows::BUILD_STOPPED,
        "passes before the gold patch here, as in the published row's own base run",
    ];
    for row in &rows {
        let id = row["instance_id"].as_str().unwrap();
        let diagnosis = &row["diagnosis"];
        assert_eq!(diagnosis["status"], "labelled", "{id}: {diagnosis:#}");
        let ours: Vec<String> = serde_json::from_str(row["FAIL_TO_PASS"].as_str().unwrap()).unwrap();
        let keys = |field: &str| -> Vec<String> { row[field].as_object().unwrap().keys().cloned().collect() };
        for test in keys("f2p_tests") {
            assert!(ours.contains(&test), "{id}: published f2p test {test} is not in {ours:?}");
        }
        let published: Vec<String> = keys("f2p_tests").into_iter().chain(keys("n2p_tests")).collect();
        let recovered = published.iter().filter(|test| ours.contains(test)).count();
        assert!(recovered > 0, "{id}: none of the published fail-to-pass tests is ours: {diagnosis:#}");
        if let Some(missed) = diagnosis["published_fail_to_pass"]["missed"].as_object() {
            for (test, cause) in missed {
                let cause = cause.as_str().unwrap_or_default();
                assert!(allowed.contains(&cause), "{id}: published {test} missed because it {cause}");
            }
        }
        eprintln!(
            "{id}: runtime {}, {recovered} of {} published fail-to-pass tests recovered, our FAIL_TO_PASS {}",
            diagnosis["runtime"],
            published.len(),
            ours.len()
        );
    }
    assert!(workspace.containers().is_empty());
}
