//! C against a real Docker engine: a synthetic autotools project (a test program and a
//! test script that reads a data file, as jq's tests do) validated end to end, and
//! published Multi-SWE-bench rows of jqlang/jq re-validated from a local mirror
//! (skipped, saying so, when `SWE_HARVEST_MIRRORS` has none).

use swe_harvest::model::Candidate;

use crate::support::published::{PublishedRow, published_rows};
use crate::support::python_project::{Project, Scenario};
use crate::support::workspace::Workspace;
use crate::support::{base_images_missing, names};

/// Looks for a library (Oniguruma, as jq does), which the image gets from Debian.
const CONFIGURE_AC: &str = "AC_INIT([calc], [1.0])\nAM_INIT_AUTOMAKE([foreign subdir-objects])\n\
                            AM_MAINTAINER_MODE([disable])\nAC_PROG_CC\nAC_CHECK_LIB([onig], [onig_version])\n\
                            AC_CONFIG_FILES([Makefile])\nAC_OUTPUT\n";
const MAKEFILE_AM: &str = "bin_PROGRAMS = calc\ncalc_SOURCES = src/main.c src/calc.c src/calc.h\n\
                           check_PROGRAMS = tests/test_add\ntests_test_add_SOURCES = tests/test_add.c src/calc.c src/calc.h\n\
                           TEST_EXTENSIONS = .sh\nSH_LOG_COMPILER = $(SHELL)\n\
                           TESTS = tests/test_add tests/clitest.sh\nEXTRA_DIST = $(TESTS)\n";
/// The gold patch of the second task adds a test to `TESTS`, with the operation it tests.
const MAKEFILE_AM_WITH_MUL: &str = "bin_PROGRAMS = calc\ncalc_SOURCES = src/main.c src/calc.c src/calc.h\n\
                           check_PROGRAMS = tests/test_add\ntests_test_add_SOURCES = tests/test_add.c src/calc.c src/calc.h\n\
                           TEST_EXTENSIONS = .sh\nSH_LOG_COMPILER = $(SHELL)\n\
                           TESTS = tests/test_add tests/clitest.sh tests/multest.sh\nEXTRA_DIST = $(TESTS)\n";
const CALC_H: &str = "int add(int a, int b);\nint mul(int a, int b);\n";
const BUGGY_CALC: &str = "#include \"calc.h\"\nint add(int a, int b) { return b < 0 ? a - b : a + b; }\nint mul(int a, int b) { return 0; }\n";
const FIXED_CALC: &str =
    "#include \"calc.h\"\nint add(int a, int b) { return a + b; }\nint mul(int a, int b) { return 0; }\n";
const FIXED_MUL: &str = "#include \"calc.h\"\nint add(int a, int b) { return b < 0 ? a - b : a + b; }\nint mul(int a, int b) { return a * b; }\n";
const MAIN_C: &str = "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include \"calc.h\"\n\
                      int main(int argc, char **argv) {\n  if (argc != 4) return 2;\n  int a = atoi(argv[2]), b = atoi(argv[3]);\n\
                      printf(\"%d\\n\", strcmp(argv[1], \"mul\") == 0 ? mul(a, b) : add(a, b));\n  return 0;\n}\n";
const TEST_ADD_C: &str = "#include \"../src/calc.h\"\nint main(void) { return add(1, 2) == 3 ? 0 : 1; }\n";
const TEST_ADD_MORE_C: &str =
    "#include \"../src/calc.h\"\nint main(void) { return add(1, 2) == 3 && add(0, 0) == 0 ? 0 : 1; }\n";
/// The test script (run by the shell: `SH_LOG_COMPILER`): every line of its data
/// file is `OP A B EXPECTED`.
const CLITEST: &str = "#!/bin/sh\nfail=0\nwhile read -r op a b want; do\n  got=$(./calc \"$op\" \"$a\" \"$b\")\n  \
                       [ \"$got\" = \"$want\" ] || { echo \"$op $a $b: $got, not $want\"; fail=1; }\ndone < \"${srcdir:-.}/tests/cli.test\"\nexit $fail\n";
const CLI_TEST: &str = "add 1 2 3\n";
const CLI_TEST_NEGATIVE: &str = "add 1 2 3\nadd 1 -1 0\n";
const MULTEST: &str = "#!/bin/sh\n[ \"$(./calc mul 2 3)\" = 6 ]\n";

pub(crate) fn autotools_project() -> Project {
    Project::of_files(&[
        ("configure.ac", CONFIGURE_AC),
        ("Makefile.am", MAKEFILE_AM),
        ("src/calc.h", CALC_H),
        ("src/calc.c", BUGGY_CALC),
        ("src/main.c", MAIN_C),
        ("tests/test_add.c", TEST_ADD_C),
        ("tests/clitest.sh", CLITEST),
        ("tests/cli.test", CLI_TEST),
    ])
}

/// The fix for negative numbers: the data file of the script and the source of the
/// program change, so both tests run.
fn negative_candidate(project: &Project) -> Candidate {
    project.candidate(
        1,
        &Scenario::new("negative")
            .gold("src/calc.c", FIXED_CALC)
            .test("tests/cli.test", CLI_TEST_NEGATIVE)
            .test("tests/test_add.c", TEST_ADD_MORE_C),
    )
}

#[test]
fn an_autotools_project_gets_fail_to_pass_by_automake_test_name_and_a_test_the_gold_patch_adds_to_tests() {
    let Some(workspace) = Workspace::with_base_images("c", &["gcc12"]) else { return };
    let project = autotools_project();
    let behaviour = negative_candidate(&project);
    // A new test script, which only the gold patch's Makefile.am runs.
    let new_test = project.candidate(
        2,
        &Scenario::new("mul")
            .gold("src/calc.c", FIXED_MUL)
            .gold("Makefile.am", MAKEFILE_AM_WITH_MUL)
            .test("tests/multest.sh", MULTEST),
    );
    workspace.seeded(&project, &[behaviour, new_test]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "2"]);

    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["tests/clitest.sh"]), "{}", workspace.run_log("acme__calc-1"));
    assert_eq!(task.pass_to_pass, names(&["tests/test_add"]), "{}", workspace.run_log("acme__calc-1"));
    assert!(task.image.as_deref().is_some_and(|image| image.starts_with("swe-harvest/env.acme__calc:")));
    let pre = workspace.run_log("acme__calc-1");
    assert!(pre.contains("add 1 -1: 2, not 0"), "the failure's own words are in the pre run: {pre}");
    let runs = workspace.runs("acme__calc-1");
    assert!(!runs.is_empty());
    for run in runs {
        let selection = run.test_selection.unwrap_or_default();
        assert!(
            selection.starts_with("automake tests selected by the touched files: "),
            "{:?} run: {selection}",
            run.phase
        );
    }
    // The library the build looks for is installed in the image (asked of the image,
    // which an earlier run may have built: its build log is then not in this data dir).
    let image = task.image.clone().unwrap();
    let installed = std::process::Command::new("docker")
        .args(["run", "--rm", "--network", "none", "--entrypoint", "dpkg", &image, "-s", "libonig-dev"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&installed.stdout).contains("Status: install ok installed"),
        "libonig-dev is installed in {image}: {}",
        String::from_utf8_lossy(&installed.stderr)
    );

    // Before the gold patch the new script is not in TESTS: absent, then passing.
    let task = workspace.task("acme__calc-2");
    assert_eq!(task.fail_to_pass, names(&["tests/multest.sh"]), "{}", workspace.run_log("acme__calc-2"));
    assert!(workspace.containers().is_empty());

    // Probe in the same environment: mutants of the fix, killed by its tests.
    crate::probe::assert_some_mutant_killed(&crate::probe::probed(&workspace, "acme__calc-1", "3"));
}

/// The published Multi-SWE-bench rows of jqlang/jq whose fail-to-pass test is
/// `tests/jqtest` (PR 2839, a data file the script reads) and `tests/uritest` (PR
/// 3161, a script its gold patch adds to `TESTS`), re-validated with `validate
/// --input`: every published fail-to-pass test (f2p and n2p) must be in our
/// FAIL_TO_PASS.
#[test]
fn published_jq_rows_recover_their_fail_to_pass_tests() {
    let jq = |number| PublishedRow::new("c__jqlang__jq.jsonl", "jqlang", "jq", number);
    let Some((mirrors, chosen)) = published_rows("c", &["gcc12"], &[jq(2839), jq(3161)]) else { return };
    let workspace = Workspace::with_docker();
    let run =
        workspace.validate_published(&mirrors, &chosen, &["--runs", "1", "--workers", "2", "--compare"]).succeeded();
    let rows = run.written();
    assert_eq!(rows.len(), 2);
    for row in rows {
        let ours: Vec<String> = serde_json::from_str(row["FAIL_TO_PASS"].as_str().unwrap()).unwrap();
        let mut published: Vec<&String> = row["f2p_tests"].as_object().unwrap().keys().collect();
        published.extend(row["n2p_tests"].as_object().unwrap().keys());
        assert!(!published.is_empty());
        for test in published {
            assert!(ours.contains(test), "{test} missing from {ours:?}; diagnosis: {}", row["diagnosis"]);
        }
    }
}

/// The synthetic task of a failing test script and a passing test program, released
/// with an instance image and graded by SWE-bench's own harness (`parse_log_jq`, which
/// reads automake's `PASS: ID` lines): gold resolves it, an empty prediction does not.
#[test]
fn swebench_harness_resolves_gold_and_rejects_empty_for_an_autotools_task() {
    if base_images_missing("c", &["gcc12"]) {
        return;
    }
    let project = autotools_project();
    let script = crate::runners::graded_alone(&project, negative_candidate(&project), "parse_log_jq", "c");
    assert!(script.contains("make check -- \"$@\""), "{script}");
}

const CMAKE_LISTS: &str = "cmake_minimum_required(VERSION 3.13)\nproject(calc C)\nenable_testing()\n\
                           add_library(calc src/calc.c)\nadd_executable(test_add tests/test_add.c)\n\
                           target_link_libraries(test_add calc)\nadd_executable(test_mul tests/test_mul.c)\n\
                           target_link_libraries(test_mul calc)\nadd_test(NAME add COMMAND test_add)\n\
                           add_test(NAME mul COMMAND test_mul)\nadd_test(NAME untouched COMMAND ${CMAKE_COMMAND} -E true)\n";
const TEST_ADD_NEGATIVE_C: &str =
    "#include \"../src/calc.h\"\nint main(void) { return add(1, 2) == 3 && add(1, -1) == 0 ? 0 : 1; }\n";
const TEST_MUL_C: &str = "#include \"../src/calc.h\"\nint main(void) { return mul(2, 0) == 0 ? 0 : 1; }\n";
const TEST_MUL_MORE_C: &str =
    "#include \"../src/calc.h\"\nint main(void) { return mul(2, 0) == 0 && mul(0, 5) == 0 ? 0 : 1; }\n";

/// A CMake project that registers its tests only when its own option is on (as
/// nlohmann/json's `JSON_BuildTests`, fmt's `FMT_TEST`, Catch2's developer build): the
/// configure step turns it on, so CTest has tests to run.
///
/// Its developers' warnings-as-errors option is turned off (`mul`'s unused parameters
/// are an error with it: a newer compiler's new warnings, as Catch2-1422's), and a test
/// program that does not compile at the environment commit (old code that a newer
/// compiler's library rejects, as nlohmann/json-807's) does not fail the image.
#[test]
fn a_cmake_project_gets_its_test_option_on_its_warnings_as_errors_off_and_builds_around_a_broken_target() {
    let Some(workspace) = Workspace::with_base_images("c", &["gcc12"]) else { return };
    let lists = "cmake_minimum_required(VERSION 3.13)\nproject(calc C)\n\
                 option(CALC_BUILD_TESTS \"Build the tests\" OFF)\noption(CALC_ENABLE_WERROR \"Warnings are errors\" ON)\n\
                 if(CALC_ENABLE_WERROR)\n  add_compile_options(-Wall -Wextra -Werror)\nendif()\nadd_library(calc src/calc.c)\n\
                 if(CALC_BUILD_TESTS)\n  enable_testing()\n  add_executable(test_add tests/test_add.c)\n\
                 \x20 target_link_libraries(test_add calc)\n  add_test(NAME add COMMAND test_add)\n\
                 \x20 add_executable(legacy tests/legacy.c)\n  add_test(NAME legacy COMMAND legacy)\nendif()\n";
    let log =
        validated_add_fix_beside(&workspace, lists, &[("tests/legacy.c", "int main(void) { return undeclared; }\n")]);
    assert_eq!(workspace.task("acme__calc-1").fail_to_pass, names(&["add"]), "{log}");
    assert!(workspace.containers().is_empty());
}

/// A CMake project of `lists` with its `add` test, whose task fixes `add` for negative
/// numbers, validated once: the task's run log.
fn validated_add_fix(workspace: &Workspace, lists: &str) -> String {
    validated_add_fix_beside(workspace, lists, &[])
}

/// [`validated_add_fix`] with more files in the project.
fn validated_add_fix_beside(workspace: &Workspace, lists: &str, more: &[(&str, &str)]) -> String {
    let mut files = vec![
        ("CMakeLists.txt", lists),
        ("src/calc.h", CALC_H),
        ("src/calc.c", BUGGY_CALC),
        ("tests/test_add.c", TEST_ADD_C),
    ];
    files.extend_from_slice(more);
    let project = Project::of_files(&files);
    let candidate = project.candidate(
        1,
        &Scenario::new("negative").gold("src/calc.c", FIXED_CALC).test("tests/test_add.c", TEST_ADD_NEGATIVE_C),
    );
    workspace.seeded(&project, &[candidate]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    workspace.run_log("acme__calc-1")
}

/// A CMake project whose tests require a fixture that downloads their data (as
/// nlohmann/json's `download_test_data`, a `git clone` of its test data): offline its
/// setup fails, and CTest runs none of the tests that require it. They run once more
/// without the fixture's setup, so a test that does not read the data gets its result.
#[test]
fn a_ctest_fixture_that_downloads_offline_does_not_keep_its_tests_from_running() {
    let Some(workspace) = Workspace::with_base_images("c", &["gcc12"]) else { return };
    let lists = "cmake_minimum_required(VERSION 3.13)\nproject(calc C)\nenable_testing()\n\
                 add_library(calc src/calc.c)\nadd_executable(test_add tests/test_add.c)\n\
                 target_link_libraries(test_add calc)\nadd_test(NAME add COMMAND test_add)\n\
                 add_test(NAME download_test_data COMMAND git clone https://example.invalid/calc-data.git data)\n\
                 set_tests_properties(download_test_data PROPERTIES FIXTURES_SETUP TEST_DATA)\n\
                 set_tests_properties(add PROPERTIES FIXTURES_REQUIRED TEST_DATA)\n";
    let log = validated_add_fix(&workspace, lists);
    assert!(log.contains("the fixture setup test(s) download_test_data failed"), "{log}");
    assert_eq!(workspace.task("acme__calc-1").fail_to_pass, names(&["add"]), "{log}");
    assert!(workspace.containers().is_empty());
}

/// The same fixture, with a second test that reads what the setup would have cloned:
/// run again without the setup it fails, before the fix and after it, and the task
/// says why (nlohmann/json's data tests, once reported "fails after the gold patch
/// here too" with no word of the network): the setup's own words name the missing
/// network, so it and the test that needed its data need the network, and are never
/// labelled, while `add`, which passed without the data, is.
#[test]
fn a_ctest_fixture_that_could_not_clone_its_data_offline_and_the_tests_it_failed_need_the_network() {
    let Some(workspace) = Workspace::with_base_images("c", &["gcc12"]) else { return };
    let lists = "cmake_minimum_required(VERSION 3.13)\nproject(calc C)\nenable_testing()\n\
                 add_library(calc src/calc.c)\nadd_executable(test_add tests/test_add.c)\n\
                 target_link_libraries(test_add calc)\nadd_test(NAME add COMMAND test_add)\n\
                 add_test(NAME add_data COMMAND test_add data/cases.txt)\n\
                 add_test(NAME download_test_data COMMAND git clone https://example.invalid/calc-data.git data)\n\
                 set_tests_properties(download_test_data PROPERTIES FIXTURES_SETUP TEST_DATA)\n\
                 set_tests_properties(add add_data PROPERTIES FIXTURES_REQUIRED TEST_DATA)\n";
    // Given a data file, the program fails when it cannot open it.
    let reads_data = |checks: &str| {
        format!(
            "#include <stdio.h>\n#include \"../src/calc.h\"\nint main(int argc, char **argv) {{\n  \
             if (argc > 1 && !fopen(argv[1], \"r\")) {{ perror(argv[1]); return 3; }}\n  return {checks} ? 0 : 1;\n}}\n"
        )
    };
    let project = Project::of_files(&[
        ("CMakeLists.txt", lists),
        ("src/calc.h", CALC_H),
        ("src/calc.c", BUGGY_CALC),
        ("tests/test_add.c", &reads_data("add(1, 2) == 3")),
    ]);
    let candidate = project.candidate(
        1,
        &Scenario::new("negative")
            .gold("src/calc.c", FIXED_CALC)
            .test("tests/test_add.c", &reads_data("add(1, 2) == 3 && add(1, -1) == 0")),
    );
    workspace.seeded(&project, &[candidate]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let log = workspace.run_log("acme__calc-1");
    assert!(log.contains("swe-harvest: fixture setup download_test_data: fatal: unable to access"), "{log}");
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["add"]), "{log}");
    assert_eq!(task.needs_network, names(&["add_data", "download_test_data"]), "{log}");
    assert!(workspace.containers().is_empty());
}

/// A CMake project: CTest's tests whose programs' sources the test patch touches run
/// (one fails before the fix, one passes throughout), the untouched one does not.
#[test]
fn a_cmake_project_gets_fail_to_pass_by_ctest_name_for_the_tests_of_the_touched_sources() {
    let Some(workspace) = Workspace::with_base_images("c", &["gcc12"]) else { return };
    let project = Project::of_files(&[
        ("CMakeLists.txt", CMAKE_LISTS),
        ("src/calc.h", CALC_H),
        ("src/calc.c", BUGGY_CALC),
        ("tests/test_add.c", TEST_ADD_C),
        ("tests/test_mul.c", TEST_MUL_C),
    ]);
    let candidate = project.candidate(
        1,
        &Scenario::new("negative")
            .gold("src/calc.c", FIXED_CALC)
            .test("tests/test_add.c", TEST_ADD_NEGATIVE_C)
            .test("tests/test_mul.c", TEST_MUL_MORE_C),
    );
    workspace.seeded(&project, &[candidate]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let log = workspace.run_log("acme__calc-1");
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["add"]), "{log}");
    assert_eq!(task.pass_to_pass, names(&["mul"]), "{log}");
    assert!(workspace.containers().is_empty());
}

/// A CMake project whose CTest names are not its files' names (fmt's `ostream-test`,
/// Catch2's `RunTests` of `SelfTest`): the touched source is mapped to the executable
/// that compiles it by CMake's file API, so only that executable's test runs. Before
/// the fix that executable does not build (the test calls what the gold patch adds):
/// its old build is removed instead of run, so its test has no result there and is
/// FAIL_TO_PASS, listed as such.
#[test]
fn a_cmake_test_is_found_by_the_target_that_compiles_the_touched_source_and_never_runs_stale() {
    let Some(workspace) = Workspace::with_base_images("c", &["gcc12"]) else { return };
    let lists = "cmake_minimum_required(VERSION 3.13)\nproject(calc C)\nenable_testing()\n\
                 add_library(calc src/calc.c)\nadd_executable(unit_tests tests/check_add.c)\n\
                 target_link_libraries(unit_tests calc)\nadd_executable(other_tests tests/check_other.c)\n\
                 target_link_libraries(other_tests calc)\nadd_test(NAME calc-suite COMMAND unit_tests)\n\
                 add_test(NAME other COMMAND other_tests)\n";
    let project = Project::of_files(&[
        ("CMakeLists.txt", lists),
        ("src/calc.h", CALC_H),
        ("src/calc.c", BUGGY_CALC),
        ("tests/check_add.c", TEST_ADD_C),
        ("tests/check_other.c", &format!("#ifdef CALC_VERSION\n#error {NOT_REBUILT}\n#endif\n{TEST_MUL_C}")),
    ]);
    // The test uses a constant that only the gold patch's header defines: before it
    // the test does not compile, so the linker never runs to replace the old build.
    let with_version = format!("{CALC_H}#define CALC_VERSION 2\n");
    let uses_version =
        "#include \"../src/calc.h\"\nint main(void) { return add(1, 2) == 3 && CALC_VERSION == 2 ? 0 : 1; }\n";
    let candidate = project.candidate(
        1,
        &Scenario::new("version").gold("src/calc.h", &with_version).test("tests/check_add.c", uses_version),
    );
    workspace.seeded(&project, &[candidate]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let log = workspace.run_log("acme__calc-1");
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["calc-suite"]), "{log}");
    assert!(task.pass_to_pass.is_empty(), "the other executable's test does not run: {log}");
    assert_eq!(task.fail_to_pass_no_result_before, names(&["calc-suite"]));
    assert!(log.contains("unit_tests did not build with the touched tests/check_add.c"), "{log}");
    assert!(log.contains("targets that compile the touched files (unit_tests)"), "{log}");
    // Only that target is rebuilt: the other one, which no longer compiles with the
    // gold patch's header, is never built for the task.
    assert!(log.contains("building the targets that compile the touched files: unit_tests"), "{log}");
    // Which tests ran, and why, is kept with each run (and a row's diagnosis).
    for run in workspace.runs("acme__calc-1") {
        assert_eq!(
            run.test_selection.as_deref(),
            Some(
                "CTest tests that run the executables of the targets that compile the touched files (unit_tests): calc-suite"
            ),
            "{:?} run: {log}",
            run.phase
        );
    }
    assert!(!log.contains(NOT_REBUILT), "{log}");
    assert!(workspace.containers().is_empty());
}

/// What the untouched target of the test above says when it is compiled with the gold
/// patch's header.
const NOT_REBUILT: &str = "other_tests is rebuilt although no touched file is its";

/// A CMake project whose CTest runs one GoogleTest program (as c-ares's `arestest`):
/// the task's ids are the GoogleTest cases that the program's output reports, not the
/// one CTest test, as Multi-SWE-bench publishes them.
#[test]
fn a_googletest_program_that_ctest_runs_as_one_test_gives_its_cases() {
    let lists = "cmake_minimum_required(VERSION 3.13)\nproject(calc C CXX)\nfind_package(GTest REQUIRED)\n\
                 enable_testing()\nadd_library(calc src/calc.c)\nadd_executable(unit_tests tests/calc_test.cc)\n\
                 target_link_libraries(unit_tests calc GTest::gtest GTest::gtest_main)\n\
                 add_test(NAME unit COMMAND unit_tests)\n";
    assert_googletest_cases_are_the_ids(&[("CMakeLists.txt", lists)], ["PASS: Add.Small", "FAIL: Add.Negative"]);
}

/// A CMake project whose CTest runs one doctest program (as nlohmann/json's
/// `test-udt_cpp11`), with Debian's doctest (`find_package(doctest)`): the task's ids
/// are the program's subcases as SWE-bench's doctest parser names them (`add >
/// negative`), read from one more run of the program with `--reporters=xml` (doctest
/// prints passing cases only when asked), not the one CTest test.
#[test]
fn a_doctest_program_that_ctest_runs_as_one_test_gives_its_subcases() {
    let Some(workspace) = Workspace::with_base_images("c", &["gcc12"]) else { return };
    let lists = "cmake_minimum_required(VERSION 3.13)\nproject(calc C CXX)\nfind_package(doctest REQUIRED)\n\
                 enable_testing()\nadd_library(calc src/calc.c)\nadd_executable(unit_tests tests/calc_test.cpp)\n\
                 target_link_libraries(unit_tests calc doctest::doctest)\n\
                 add_test(NAME unit COMMAND unit_tests --no-skip)\n";
    let cases = |more: &str| {
        format!(
            "#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN\n#include <doctest/doctest.h>\n\
             extern \"C\" {{\n#include \"../src/calc.h\"\n}}\n\
             TEST_CASE(\"add\") {{\n  SUBCASE(\"small\") {{ CHECK(add(1, 2) == 3); }}\n{more}}}\n"
        )
    };
    let project = Project::of_files(&[
        ("CMakeLists.txt", lists),
        ("src/calc.h", CALC_H),
        ("src/calc.c", BUGGY_CALC),
        ("tests/calc_test.cpp", &cases("")),
    ]);
    let candidate = project.candidate(
        1,
        &Scenario::new("negative")
            .gold("src/calc.c", FIXED_CALC)
            .test("tests/calc_test.cpp", &cases("  SUBCASE(\"negative\") { CHECK(add(1, -1) == 0); }\n")),
    );
    workspace.seeded(&project, &[candidate]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let log = workspace.run_log("acme__calc-1");
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["add > negative"]), "{log}");
    assert_eq!(task.pass_to_pass, names(&["add > small"]), "the program's test gives way to its cases: {log}");
    let lines: Vec<&str> = log.lines().skip_while(|line| *line != "swe-harvest results:").skip(1).take(2).collect();
    assert_eq!(lines, ["PASS: add > small", "FAIL: add > negative"], "what SWE-bench's harness reads: {log}");
    assert!(log.contains("running the doctest programs of CTest's tests once more for their cases"), "{log}");
    assert!(workspace.containers().is_empty());
}

/// The same under automake (as c-ares's `test/arestest`, a GoogleTest program in
/// `TESTS`): the program's cases, read from its `.log`, are the task's ids.
#[test]
fn a_googletest_program_in_automakes_tests_gives_its_cases() {
    let configure = "AC_INIT([calc], [1.0])\nAM_INIT_AUTOMAKE([foreign subdir-objects])\nAC_PROG_CC\nAC_PROG_CXX\n\
                     AC_CHECK_LIB([gtest], [main])\nAC_CONFIG_FILES([Makefile])\nAC_OUTPUT\n";
    let makefile = "check_PROGRAMS = tests/calc_test\ntests_calc_test_SOURCES = tests/calc_test.cc src/calc.c src/calc.h\n\
                    tests_calc_test_LDADD = -lgtest_main -lgtest -lpthread\nTESTS = tests/calc_test\n";
    assert_googletest_cases_are_the_ids(
        &[("configure.ac", configure), ("Makefile.am", makefile)],
        ["FAIL: Add.Negative", "PASS: Add.Small"],
    );
}

/// A plain Makefile whose `check` runs a test program's target and a target that runs
/// the project's own harness (as zstd's `tests/cli-tests/run.py`: every script of its
/// folders, one `PASS: basic/help.sh` line each), and a target that always fails.
const PLAIN_MAKEFILE: &str = "CC ?= cc\n\
    calc: src/main.c src/calc.c src/calc.h\n\t$(CC) -o calc src/main.c src/calc.c\n\
    tests/test_add: tests/test_add.c src/calc.c src/calc.h\n\t$(CC) -o tests/test_add tests/test_add.c src/calc.c\n\
    .PHONY: check test-unit test-cli test-slow clean\n\
    check: test-unit test-cli test-slow\n\
    test-unit: tests/test_add\n\t./tests/test_add\n\
    test-cli: ZSTD = ./calc\n\
    test-cli: calc\n\tsh tests/cli/run.sh\n\
    test-slow:\n\t@echo 'a suite that fails whatever the patch'; false\n\
    clean:\n\trm -f calc tests/test_add\n";
/// The harness: runs every script of the folders beside it from the project's root.
const CLI_HARNESS: &str = "#!/bin/sh\nhere=$(cd \"$(dirname \"$0\")\" && pwd)\nfail=0\n\
    for test in \"$here\"/*/*.sh; do\n  name=${test#\"$here\"/}\n  \
    if sh \"$test\"; then echo \"PASS: $name\"; else echo \"FAIL: $name\"; fail=1; fi\ndone\nexit $fail\n";

/// A plain Makefile project (no automake, no CMake): the test patch adds a script that
/// the project's harness runs and changes a test program's source. The targets that
/// run them are chosen (the harness above the script's folder, the program built from
/// the source), not `make check` whole, whose third target fails whatever the patch;
/// the harness's own ids are the task's, the program's target gives one result by its
/// exit code.
#[test]
fn a_plain_makefile_project_runs_the_targets_of_its_touched_files_and_reads_its_harness_ids() {
    let Some(workspace) = Workspace::with_base_images("c", &["gcc12"]) else { return };
    let project = Project::of_files(&[
        ("Makefile", PLAIN_MAKEFILE),
        ("src/calc.h", CALC_H),
        ("src/calc.c", BUGGY_CALC),
        ("src/main.c", MAIN_C),
        ("tests/test_add.c", TEST_ADD_C),
        ("tests/cli/run.sh", CLI_HARNESS),
        ("tests/cli/basic/add.sh", "[ \"$(./calc add 1 2)\" = 3 ]\n"),
    ]);
    let candidate = project.candidate(
        1,
        &Scenario::new("negative")
            .gold("src/calc.c", FIXED_CALC)
            .test("tests/cli/negative/add.sh", "[ \"$(./calc add 1 -1)\" = 0 ]\n")
            .test("tests/test_add.c", TEST_ADD_NEGATIVE_C),
    );
    workspace.seeded(&project, &[candidate]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let log = workspace.run_log("acme__calc-1");
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["make-test-unit", "negative/add.sh"]), "{log}");
    assert_eq!(task.pass_to_pass, names(&["basic/add.sh"]), "{log}");
    let lines: Vec<&str> = log.lines().skip_while(|line| *line != "swe-harvest results:").skip(1).take(3).collect();
    assert_eq!(lines, ["PASS: basic/add.sh", "FAIL: make-test-unit", "FAIL: negative/add.sh"], "{log}");
    let runs = workspace.runs("acme__calc-1");
    assert!(!runs.is_empty());
    for run in runs {
        assert_eq!(
            run.test_selection.as_deref(),
            Some("make targets that run the touched files: test-unit, test-cli"),
            "{:?} run",
            run.phase
        );
    }
    assert!(workspace.containers().is_empty());
}

/// A plain Makefile whose objects depend on their `.c` files only, as zstd's
/// tests/Makefile: the gold patch changes a header alone, which an object of the warm
/// build includes. Unless the objects are built again, the fixed program links the old
/// one and the task has no fail-to-pass test.
const STALE_HEADER_MAKEFILE: &str = "CC ?= cc\n\
    OBJS = src/calc.o src/bias.o\n\
    all: $(OBJS)\n\
    src/calc.o: src/calc.c\n\t$(CC) -c -o src/calc.o src/calc.c\n\
    src/bias.o: src/bias.c\n\t$(CC) -c -o src/bias.o src/bias.c\n\
    tests/test_add: tests/test_add.c $(OBJS)\n\t$(CC) -o tests/test_add tests/test_add.c $(OBJS)\n\
    .PHONY: all check test-unit\n\
    check: test-unit\n\
    test-unit: tests/test_add\n\t./tests/test_add\n";

#[test]
fn a_header_a_patch_changes_rebuilds_the_objects_a_plain_makefile_does_not_know_include_it() {
    let Some(workspace) = Workspace::with_base_images("c", &["gcc12"]) else { return };
    let project = Project::of_files(&[
        ("Makefile", STALE_HEADER_MAKEFILE),
        ("src/calc.h", "#define BIAS 1\nint add(int a, int b);\nint bias(void);\n"),
        ("src/bias.c", "#include \"calc.h\"\nint bias(void) { return BIAS; }\n"),
        ("src/calc.c", "#include \"calc.h\"\nint add(int a, int b) { return a + b + bias(); }\n"),
        ("tests/test_add.c", "#include \"../src/calc.h\"\nint main(void) { return add(2, 2) > 0 ? 0 : 1; }\n"),
    ]);
    let candidate = project.candidate(
        1,
        &Scenario::new("bias").gold("src/calc.h", "#define BIAS 0\nint add(int a, int b);\nint bias(void);\n").test(
            "tests/test_add.c",
            "#include \"../src/calc.h\"\nint main(void) { return add(1, 2) == 3 ? 0 : 1; }\n",
        ),
    );
    workspace.seeded(&project, &[candidate]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let log = workspace.run_log("acme__calc-1");
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["make-test-unit"]), "{log}");
    assert!(
        log.contains(
            "swe-harvest: src/calc.h changed since the build (a plain Makefile may not know which objects include it)"
        ),
        "{log}"
    );
}

/// A project with Redis's shape: the top Makefile hands every target to `src/`
/// (`.DEFAULT`), whose `test` runs `./runtest`, a Tcl harness (`tests/test_helper.tcl`)
/// that runs the units given with `--single` and prints `[ok]: NAME (N ms)` /
/// `[err]: NAME in FILE` per test. An untouched unit fails whatever the patch.
fn tcl_harness_project() -> Project {
    const TOP: &str = "# the real stuff is at src/Makefile\ndefault: all\n\n.DEFAULT:\n\tcd src && $(MAKE) $@\n";
    const SRC: &str = "all: calc\ncalc: calc.c\n\t$(CC) -o calc calc.c\ntest: calc\n\t@(cd ..; ./runtest)\n";
    const CALC: &str = "#include <stdio.h>\n#include <stdlib.h>\nint main(int argc, char **argv) {\n\
        \x20 long a = atol(argv[1]), b = atol(argv[2]);\n  printf(\"%ld\\n\", b < 0 ? a - b : a + b);\n  return 0;\n}\n";
    const RUNTEST: &str = "#!/bin/sh\nTCLSH=\"\"\nfor VERSION in 8.5 8.6 8.7; do\n\
        \x20 TCL=`which tclsh$VERSION 2>/dev/null` && TCLSH=$TCL\ndone\n\
        if [ -z $TCLSH ]; then echo \"You need tcl 8.5 or newer\"; exit 1; fi\n$TCLSH tests/test_helper.tcl \"${@}\"\n";
    // As Redis's: a test that raises stops the run (`[exception]`) unless `--durable`.
    const HELPER: &str = "set units {}\nset failed 0\nset durable 0\n\
        for {set i 0} {$i < [llength $argv]} {incr i} {\n\
        \x20 if {[lindex $argv $i] eq \"--single\"} { incr i; lappend units [lindex $argv $i] }\n\
        \x20 if {[lindex $argv $i] eq \"--durable\"} { set durable 1 }\n}\n\
        if {[llength $units] == 0} { set units {unit/calc unit/other} }\n\
        proc test {name code expected} {\n\
        \x20 set start [clock milliseconds]\n\
        \x20 set raised [catch {uplevel 1 $code} result]\n\
        \x20 if {$raised && !$::durable} { puts \"\\[exception\\]: Executing test client: $result\"; exit 1 }\n\
        \x20 if {$raised || $result ne $expected} {\n\
        \x20   puts \"\\[err\\]: $name in $::current\"\n    puts \"Expected '$expected', got '$result'\"\n    incr ::failed\n\
        \x20 } else {\n    puts \"\\[ok\\]: $name ([expr {[clock milliseconds] - $start}] ms)\"\n  }\n}\n\
        foreach unit $units { set ::current tests/$unit.tcl; source $::current }\nexit [expr {$failed > 0}]\n";
    Project::of_files(&[
        ("Makefile", TOP),
        ("src/Makefile", SRC),
        ("src/calc.c", CALC),
        ("runtest", RUNTEST),
        ("tests/test_helper.tcl", HELPER),
        ("tests/unit/calc.tcl", "test {adds small numbers} { exec src/calc 1 2 } 3\n"),
        ("tests/unit/other.tcl", "test {fails whatever the patch} { expr 1 } 2\n"),
    ])
}

/// The fix for negative numbers, with a test of it in the unit `unit/calc`.
fn tcl_negative_candidate(project: &Project) -> Candidate {
    let fixed = "#include <stdio.h>\n#include <stdlib.h>\nint main(int argc, char **argv) {\n\
        \x20 printf(\"%ld\\n\", atol(argv[1]) + atol(argv[2]));\n  return 0;\n}\n";
    project.candidate(
        1,
        &Scenario::new("negative").gold("src/calc.c", fixed).test(
            "tests/unit/calc.tcl",
            "test {adds a negative number} { set r [exec src/calc 2 -1]; if {$r != 1} { error \"got $r\" }; set r } 1\n\
             test {adds small numbers} { exec src/calc 1 2 } 3\n",
        ),
    )
}

/// Redis's and Valkey's shape (Tcl harness behind a delegating Makefile): inference
/// finds the test target in `src/` and installs Tcl; the touched unit runs alone
/// (`--single unit/calc`), and the harness's test names, spaces and all, are the ids.
/// The new test raises before the fix (redis-13115's shape): with `--durable` the
/// harness reports it and goes on, so the test after it keeps its result.
#[test]
fn a_tcl_harness_behind_a_delegating_makefile_runs_the_touched_units_by_test_name() {
    let Some(workspace) = Workspace::with_base_images("c", &["gcc12"]) else { return };
    let project = tcl_harness_project();
    workspace.seeded(&project, &[tcl_negative_candidate(&project)]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let log = workspace.run_log("acme__calc-1");
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["adds a negative number"]), "{log}");
    assert_eq!(task.pass_to_pass, names(&["adds small numbers"]), "{log}");
    for run in workspace.runs("acme__calc-1") {
        assert_eq!(run.test_selection.as_deref(), Some("Tcl harness units of the touched files: unit/calc"));
    }
    assert!(workspace.containers().is_empty());
}

/// The same task graded by SWE-bench's own harness (`parse_log_jq` reads `PASS: NAME`,
/// spaces and all): gold resolves it, an empty prediction does not.
#[test]
fn swebench_harness_resolves_gold_and_rejects_empty_for_a_tcl_harness_task() {
    if base_images_missing("c", &["gcc12"]) {
        return;
    }
    let project = tcl_harness_project();
    crate::runners::graded_alone(&project, tcl_negative_candidate(&project), "parse_log_jq", "c");
}

/// Validates, with the build files `build`, the fix of `add` for negative numbers
/// whose test patch adds the GoogleTest case `Add.Negative` beside `Add.Small` in the
/// one program `tests/calc_test.cc`: the cases are the labels, and the helper prints
/// them (`printed`, in its order), which is what SWE-bench's harness reads.
fn assert_googletest_cases_are_the_ids(build: &[(&str, &str)], printed: [&str; 2]) {
    let Some(workspace) = Workspace::with_base_images("c", &["gcc12"]) else { return };
    let cases = |more: &str| {
        format!(
            "extern \"C\" {{\n#include \"../src/calc.h\"\n}}\n#include <gtest/gtest.h>\n\
             TEST(Add, Small) {{ EXPECT_EQ(add(1, 2), 3); }}\n{more}"
        )
    };
    let base = cases("");
    let mut files = build.to_vec();
    files.extend([("src/calc.h", CALC_H), ("src/calc.c", BUGGY_CALC), ("tests/calc_test.cc", base.as_str())]);
    let project = Project::of_files(&files);
    let candidate = project.candidate(
        1,
        &Scenario::new("negative")
            .gold("src/calc.c", FIXED_CALC)
            .test("tests/calc_test.cc", &cases("TEST(Add, Negative) { EXPECT_EQ(add(1, -1), 0); }\n")),
    );
    workspace.seeded(&project, &[candidate]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let log = workspace.run_log("acme__calc-1");
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["Add.Negative"]), "{log}");
    assert_eq!(task.pass_to_pass, names(&["Add.Small"]), "the program's test gives way to its cases: {log}");
    let lines: Vec<&str> = log.lines().skip_while(|line| *line != "swe-harvest results:").skip(1).take(2).collect();
    assert_eq!(lines, printed, "{log}");
    assert!(workspace.containers().is_empty());
}

/// micropython's shape, small: no build file at the root (a `pyproject.toml` that
/// configures linters, which Python would claim), the program built in a folder by
/// `ports/unix/Makefile`, whose `test` rule runs the harness `tests/run-tests.py` over
/// it; a feature of the port's settings builds a git submodule's source, which a mirror
/// lacks. The harness prints micropython's lines: `pass  basics/add.py`, `FAIL  ...`,
/// `skip  ...`, comparing each test's output with its `.exp` file.
fn folder_harness_project() -> Project {
    const PORT_MAKEFILE: &str = "TOP = ../..\nBUILD ?= build-standard\n-include mpconfigport.mk\n\
        include $(TOP)/extmod/extmod.mk\nPROG = calc\nABS_PROG = $(abspath $(BUILD)/$(PROG))\n\
        SRC = $(TOP)/src/calc.c main.c $(SRC_EXTMOD)\nall: $(BUILD)/$(PROG)\n\
        $(BUILD)/$(PROG): $(SRC) $(TOP)/src/calc.h\n\tmkdir -p $(BUILD)\n\t$(CC) $(CFLAGS_EXTMOD) -I$(TOP)/src -o $@ $(SRC)\n\
        .PHONY: all test\ntest: $(BUILD)/$(PROG) $(TOP)/tests/run-tests.py\n\
        \tcd $(TOP)/tests && MICROPY_MICROPYTHON=$(ABS_PROG) python3 ./run-tests.py\n";
    const EXTMOD_MK: &str = "ifeq ($(MICROPY_PY_FANCY),1)\nGIT_SUBMODULES += lib/fancy\n\
        SRC_EXTMOD += $(TOP)/lib/fancy/fancy.c\nCFLAGS_EXTMOD += -DFANCY=1\nendif\n";
    const MAIN_C: &str = "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include \"calc.h\"\n\
        int main(int argc, char **argv) {\n  char op[16]; long a, b;\n  FILE *f = fopen(argv[1], \"r\");\n\
        \x20 while (fscanf(f, \"%15s\", op) == 1) {\n    if (strcmp(op, \"skip\") == 0) { puts(\"SKIP\"); return 0; }\n\
        \x20   if (fscanf(f, \"%ld %ld\", &a, &b) != 2) return 1;\n    printf(\"%d\\n\", add((int)a, (int)b));\n  }\n  return 0;\n}\n";
    const RUN_TESTS: &str = "#! /usr/bin/env python3\nimport glob, os, subprocess, sys\n\
        prog = os.environ[\"MICROPY_MICROPYTHON\"]\ntests = sys.argv[1:] or sorted(glob.glob(\"basics/*.py\"))\n\
        print(\"platform=linux\")\nfailed, passed = [], 0\nfor test in tests:\n\
        \x20   out = subprocess.run([prog, test], capture_output=True).stdout\n\
        \x20   if out == b\"SKIP\\n\":\n        print(\"skip \", test)\n        continue\n\
        \x20   with open(test + \".exp\", \"rb\") as f:\n        exp = f.read()\n\
        \x20   if out == exp:\n        print(\"pass \", test, \"\")\n        passed += 1\n\
        \x20   else:\n        print(\"FAIL \", test, \"\")\n        failed.append(test)\n\
        print(\"{} tests performed\".format(len(tests)))\nprint(\"{} tests passed\".format(passed))\n\
        if failed:\n    print(\"{} tests failed: {}\".format(len(failed), \" \".join(failed)))\n    sys.exit(1)\n";
    Project::of_files(&[
        ("pyproject.toml", "[tool.ruff]\nline-length = 99\n"),
        (".gitmodules", "[submodule \"lib/fancy\"]\n\tpath = lib/fancy\n\turl = https://example.invalid/fancy.git\n"),
        ("ports/unix/Makefile", PORT_MAKEFILE),
        ("ports/unix/mpconfigport.mk", "MICROPY_PY_FANCY = 1\n"),
        ("ports/unix/main.c", MAIN_C),
        ("extmod/extmod.mk", EXTMOD_MK),
        ("src/calc.h", CALC_H),
        ("src/calc.c", BUGGY_CALC),
        ("tests/run-tests.py", RUN_TESTS),
        ("tests/basics/add.py", "add 1 2\n"),
        ("tests/basics/add.py.exp", "3\n"),
        ("tests/basics/broken.py", "add 1 1\n"),
        ("tests/basics/broken.py.exp", "3\n"),
        ("tests/basics/later.py", "skip\n"),
    ])
}

/// A harness over a build in a folder (micropython's shape): the project is C's, not
/// Python's; the port builds offline with the feature that needs the submodule turned
/// off (`MICROPY_PY_FANCY=0`, read from the guard in `extmod.mk`); the harness runs the
/// touched tests alone (a touched `.exp` is its test's), and its per-test lines are the
/// ids, as it prints them.
#[test]
fn a_harness_over_a_build_in_a_folder_runs_the_touched_tests_by_the_names_it_prints() {
    let Some(workspace) = Workspace::with_base_images("c", &["gcc12"]) else { return };
    let project = folder_harness_project();
    let candidate = project.candidate(
        1,
        &Scenario::new("negative")
            .gold("src/calc.c", FIXED_CALC)
            .test("tests/basics/neg.py", "add 1 -1\n")
            .test("tests/basics/neg.py.exp", "0\n")
            .test("tests/basics/add.py.exp", "3\n5\n")
            .test("tests/basics/add.py", "add 1 2\nadd 2 3\n"),
    );
    workspace.seeded(&project, &[candidate]);
    workspace.validated_showing_log("acme__calc-1", &["--runs", "1"]);
    let log = workspace.run_log("acme__calc-1");
    let task = workspace.task("acme__calc-1");
    assert_eq!(task.fail_to_pass, names(&["basics/neg.py"]), "{log}");
    assert_eq!(task.pass_to_pass, names(&["basics/add.py"]), "{log}");
    assert!(log.contains("MICROPY_PY_FANCY=0"), "the build turns the submodule's feature off: {log}");
    let lines: Vec<&str> = log.lines().skip_while(|line| *line != "swe-harvest results:").skip(1).take(2).collect();
    assert_eq!(lines, ["PASS: basics/add.py", "FAIL: basics/neg.py"], "{log}");
    for run in workspace.runs("acme__calc-1") {
        assert_eq!(
            run.test_selection.as_deref(),
            Some("harness tests selected by the touched files: basics/add.py basics/neg.py"),
            "{:?} run",
            run.phase
        );
    }
    assert!(workspace.containers().is_empty());
}
