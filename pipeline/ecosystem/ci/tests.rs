//! The readers on small CI files of each kind, written here.

use super::*;

fn read(list: &[(&str, &str)]) -> CiEvidence {
    let files: RepoFiles = list.iter().map(|(path, text)| (path.to_string(), text.to_string())).collect();
    CiEvidence::read(&files)
}

fn versions(evidence: &CiEvidence, language: Language) -> Vec<String> {
    evidence.versions(language, false).into_iter().map(|(version, _)| version.to_string()).collect()
}

const GITHUB: &str = r#"
name: CI
on: [push, pull_request]
env:
  CARGO_TERM_COLOR: always
  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}
jobs:
  test:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
        python-version: ["3.8", 3.10]
        include:
          - python-version: "3.12"
            experimental: true
    env:
      PYTHONHASHSEED: 0
      API_KEY: abc
    services:
      postgres:
        image: postgres:14
        env:
          POSTGRES_PASSWORD: postgres
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python-version }}
      - uses: some-org/mystery-action@v2
      - name: Install
        run: |
          sudo apt-get update
          sudo apt-get install -y --no-install-recommends libgdal-dev \
            gfortran
          pip install -e .[test]
      - name: Test
        env:
          MPLBACKEND: agg
        run: pytest -p no:cacheprovider tests --python ${{ matrix.python-version }}
      - name: Upload
        run: echo ${{ inputs.target }}
  lint:
    runs-on: ubuntu-latest
    env:
      LINT_ONLY: 1
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version: "3.13"
      - run: ruff check .
  rust:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        toolchain: [stable, 1.70.0]
    container: rust:1.75-slim
    steps:
      - uses: dtolnay/rust-toolchain@master
        with:
          toolchain: ${{ matrix.toolchain }}
      - uses: dtolnay/rust-toolchain@1.63
      - run: cargo test --features ${{ inputs.features }}
      - run: RUSTFLAGS="--cfg tokio_unstable" cargo test --all-features
  reuse:
    uses: ./.github/workflows/reusable.yml
"#;

#[test]
fn a_github_workflow_gives_its_matrix_runtimes_variables_packages_services_and_test_commands() {
    let evidence = read(&[(".github/workflows/ci.yml", GITHUB)]);
    // The matrix's values (its `include:` entry too), through setup-python and the axis;
    // the lint job's 3.13 is there, but not as a test job's.
    assert_eq!(versions(&evidence, Language::Python), vec!["3.8", "3.10", "3.12", "3.13"]);
    let tested: Vec<&str> = evidence.versions(Language::Python, true).into_iter().map(|(version, _)| version).collect();
    assert_eq!(tested, vec!["3.8", "3.10", "3.12"]);
    let (_, first) = evidence.versions(Language::Python, true)[0];
    assert_eq!(first.origin.to_string(), "`.github/workflows/ci.yml` job `test`");
    assert_eq!(versions(&evidence, Language::Rust), vec!["stable", "1.70.0", "1.63", "1.75"]);
    // Test commands, with the matrix expanded; the line with an unknown expression is
    // left out with a note, and so is the test command that has one.
    let commands: Vec<&str> = evidence.test_commands().collect();
    assert_eq!(
        commands,
        vec![
            "pytest -p no:cacheprovider tests --python 3.8",
            "pytest -p no:cacheprovider tests --python 3.10",
            "pytest -p no:cacheprovider tests --python 3.12",
            "RUSTFLAGS=\"--cfg tokio_unstable\" cargo test --all-features",
        ]
    );
    assert!(
        evidence.ignored.iter().any(|note| note.contains("`cargo test --features ${{ inputs.features }}`")),
        "{:?}",
        evidence.ignored
    );
    // Variables of test jobs only; secrets and keys never.
    let env: Vec<(&str, &str)> = evidence.env.iter().map(|var| (var.name.as_str(), var.value.as_str())).collect();
    assert!(env.contains(&("CARGO_TERM_COLOR", "always")), "{env:?}");
    assert!(env.contains(&("PYTHONHASHSEED", "0")), "{env:?}");
    assert!(env.contains(&("MPLBACKEND", "agg")), "{env:?}");
    assert!(env.contains(&("RUSTFLAGS", "--cfg tokio_unstable")), "{env:?}");
    assert!(!env.iter().any(|(name, _)| ["GITHUB_TOKEN", "API_KEY", "LINT_ONLY"].contains(name)), "{env:?}");
    assert_eq!(evidence.env_var("RUSTFLAGS").unwrap().origin.job, "rust");
    let packages: Vec<&str> = evidence.packages.iter().map(|package| package.name.as_str()).collect();
    assert_eq!(packages, vec!["libgdal-dev", "gfortran"]);
    assert_eq!(evidence.services.len(), 1);
    assert_eq!((evidence.services[0].name.as_str(), evidence.services[0].image.as_str()), ("postgres", "postgres:14"));
    let notes = evidence.notes();
    assert!(notes[0].contains("`postgres` (image `postgres:14`)"), "{notes:?}");
    assert!(notes.iter().any(|note| note.contains("`some-org/mystery-action`")), "{notes:?}");
    assert!(notes.iter().any(|note| note.contains("`./.github/workflows/reusable.yml`")), "{notes:?}");
    assert!(!notes.iter().any(|note| note.contains("actions/checkout")), "a known action is no news: {notes:?}");
}

#[test]
fn a_file_that_does_not_parse_is_left_out_with_a_note_and_the_others_are_read() {
    let evidence = read(&[
        (".github/workflows/broken.yml", "jobs:\n  test:\n    steps: [\n      - run: pytest\n"),
        (".github/workflows/ok.yaml", "jobs:\n  t:\n    steps:\n      - run: go test -tags integration ./...\n"),
        (".github/workflows/sub/nested.yml", "jobs: {t: {steps: [{run: pytest}]}}"),
    ]);
    assert_eq!(evidence.test_commands().collect::<Vec<_>>(), vec!["go test -tags integration ./..."]);
    assert_eq!(evidence.ignored.len(), 1, "{:?}", evidence.ignored);
    assert!(
        evidence.ignored[0].starts_with("`.github/workflows/broken.yml` is not YAML that parses"),
        "{:?}",
        evidence.ignored
    );
    // Duplicate keys are an error of YAML too.
    let duplicate = read(&[(".travis.yml", "script: pytest\nscript: tox\n")]);
    assert!(duplicate.ignored[0].contains("`.travis.yml` is not YAML that parses"), "{:?}", duplicate.ignored);
    assert!(!reads(".github/workflows/sub/nested.yml") && reads(".github/workflows/ci.yaml"));
}

#[test]
fn an_unknown_action_is_named_once_and_nothing_else_is_taken_from_it() {
    let evidence = read(&[(
        ".github/workflows/ci.yml",
        "jobs:\n  a:\n    steps:\n      - uses: acme/setup-everything@v1\n        with:\n          python-version: '3.9'\n      - run: pytest\n  \
         b:\n    steps:\n      - uses: acme/setup-everything@v2\n      - uses: ./.github/actions/build\n      - run: make check\n",
    )]);
    assert!(versions(&evidence, Language::Python).is_empty(), "an unknown action's inputs mean nothing here");
    let unknown: Vec<&String> = evidence.ignored.iter().filter(|note| note.contains("acme/setup-everything")).collect();
    assert_eq!(unknown.len(), 1, "{:?}", evidence.ignored);
    assert!(evidence.ignored.iter().any(|note| note.contains("local action `./.github/actions/build`")));
    assert_eq!(evidence.test_commands().count(), 2);
    // Many unknown actions: eight named, the rest counted.
    let steps: String = (0..10).map(|index| format!("      - uses: acme/a{index}@v1\n")).collect();
    let many = read(&[(".github/workflows/ci.yml", &format!("jobs:\n  a:\n    steps:\n{steps}"))]);
    assert!(many.ignored[0].ends_with("`acme/a7`, 2 more"), "{:?}", many.ignored);
}

#[test]
fn travis_gives_its_runtime_keys_env_addons_services_and_phases() {
    let travis = r#"
language: python
python:
  - "3.6"
  - 3.7
services:
  - postgresql
  - redis-server
addons:
  apt:
    packages:
      - libhdf5-dev
env:
  global:
    - NUMPY="1.17" CFLAGS=-O0
    - secure: "abc=="
  matrix:
    - DB=postgres
    - DB=sqlite
before_install:
  - sudo apt-get install -y gettext
script: python -m pytest -p no:cacheprovider
jobs:
  include:
    - name: "Node side"
      language: node_js
      node_js: 12
      script: npm run test:unit
    - jdk: openjdk11
      script: ./mvnw verify -Pci
"#;
    let evidence = read(&[(".travis.yml", travis)]);
    assert_eq!(versions(&evidence, Language::Python), vec!["3.6", "3.7"]);
    assert_eq!(versions(&evidence, Language::Node), vec!["12"]);
    assert_eq!(versions(&evidence, Language::Java), vec!["11"]);
    let commands: Vec<&str> = evidence.test_commands().collect();
    assert_eq!(commands, vec!["python -m pytest -p no:cacheprovider", "npm run test:unit", "./mvnw verify -Pci"]);
    assert_eq!(evidence.steps_of(shell::Runner::Node).next().unwrap().origin.job, "Node side");
    assert_eq!(evidence.env_var("CFLAGS").unwrap().value, "-O0");
    assert_eq!(evidence.env_var("NUMPY").unwrap().value, "1.17");
    assert_eq!(evidence.env_var("DB").unwrap().value, "postgres", "the matrix's first entry stands for it");
    let packages: Vec<&str> = evidence.packages.iter().map(|package| package.name.as_str()).collect();
    assert_eq!(packages, vec!["libhdf5-dev", "gettext"]);
    let services: Vec<&str> = evidence.services.iter().map(|service| service.name.as_str()).collect();
    assert_eq!(services, vec!["postgresql", "redis-server"]);
    // A language's default script, when the file gives none.
    let rust = read(&[(".travis.yml", "language: rust\nrust: [1.40.0, stable]\n")]);
    assert_eq!(rust.test_commands().collect::<Vec<_>>(), vec!["cargo test --verbose"]);
    assert_eq!(versions(&rust, Language::Rust), vec!["1.40.0", "stable"]);
}

#[test]
fn gitlab_jobs_take_their_templates_defaults_images_services_and_matrix() {
    let gitlab = r#"
include:
  - template: Security/SAST.gitlab-ci.yml
variables:
  GO_VERSION: "1.21"
  CGO_ENABLED: "0"
default:
  before_script:
    - apt-get update && apt-get install -y libpcap-dev
.test-template: &test
  stage: test
  services:
    - name: redis:7
      alias: cache
  script:
    - go test -tags netgo ./...
stages: [build, test]
build:
  image: golang:$GO_VERSION
  script: go build ./...
test:
  <<: *test
  image: golang:${GO_VERSION}-bookworm
unit:
  extends: .test-template
  image: golang:$GO
  parallel:
    matrix:
      - GO: ["1.20", "1.22"]
"#;
    let evidence = read(&[(".gitlab-ci.yml", gitlab)]);
    let go: Vec<(String, bool)> = evidence
        .runtimes
        .iter()
        .map(|runtime| (format!("{} {}", runtime.origin.job, runtime.version), runtime.test_job))
        .collect();
    assert_eq!(
        go,
        vec![
            ("build 1.21".to_string(), false),
            ("test 1.21".to_string(), true),
            ("unit 1.20".to_string(), true),
            ("unit 1.22".to_string(), true),
        ]
    );
    assert_eq!(
        evidence.test_commands().collect::<Vec<_>>(),
        vec!["go test -tags netgo ./...", "go test -tags netgo ./..."]
    );
    assert_eq!(evidence.env_var("CGO_ENABLED").unwrap().value, "0");
    assert_eq!(evidence.packages.iter().map(|package| package.name.as_str()).collect::<Vec<_>>(), vec!["libpcap-dev"]);
    assert_eq!(evidence.services[0].name, "redis");
    assert!(
        evidence.ignored.iter().any(|note| note.contains("`Security/SAST.gitlab-ci.yml`")),
        "{:?}",
        evidence.ignored
    );
}

#[test]
fn azure_pipelines_give_their_tasks_matrix_macros_and_scripts() {
    let azure = r#"
trigger: [main]
variables:
  MAVEN_OPTS: -Xmx3g
jobs:
  - job: Linux
    pool:
      vmImage: ubuntu-latest
    strategy:
      matrix:
        jdk11:
          java.version: '11'
        jdk17:
          java.version: '17'
    steps:
      - task: JavaToolInstaller@0
        inputs:
          versionSpec: $(java.version)
          jdkArchitectureOption: x64
      - task: Maven@3
        inputs:
          goals: verify
          options: -B -Pstrict -Dmaven.javadoc.skip=true
      - script: make -j$(nproc) check
      - template: steps/publish.yml
      - task: PublishTestResults@2
      - task: SomethingElse@1
  - job: Node
    steps:
      - task: NodeTool@0
        inputs:
          versionSpec: 18.x
      - bash: npm ci && npm run test:ci
"#;
    let evidence = read(&[("azure-pipelines.yml", azure)]);
    assert_eq!(versions(&evidence, Language::Java), vec!["11", "17"]);
    assert_eq!(versions(&evidence, Language::Node), vec!["18.x"]);
    assert_eq!(
        evidence.test_commands().collect::<Vec<_>>(),
        vec!["mvn -B -Pstrict -Dmaven.javadoc.skip=true verify", "make -j$(nproc) check", "npm ci && npm run test:ci"]
    );
    assert_eq!(evidence.env_var("MAVEN_OPTS").unwrap().value, "-Xmx3g");
    assert!(evidence.ignored.iter().any(|note| note.contains("`steps/publish.yml`")), "{:?}", evidence.ignored);
    assert!(evidence.ignored.iter().any(|note| note.contains("`SomethingElse@1`")), "{:?}", evidence.ignored);
    assert!(!evidence.ignored.iter().any(|note| note.contains("PublishTestResults")), "{:?}", evidence.ignored);
}

#[test]
fn circleci_jobs_run_in_their_first_image_with_the_others_as_services() {
    let circleci = r#"
version: 2.1
executors:
  node:
    docker:
      - image: cimg/node:18.17
commands:
  install-deps:
    steps:
      - run: sudo apt-get install -y libvips-dev
jobs:
  test:
    parameters:
      python:
        type: string
        default: "3.9"
    docker:
      - image: cimg/python:<< parameters.python >>
        environment:
          DATABASE_URL: postgres://localhost/test
      - image: cimg/postgres:14.2
    environment:
      NODE_OPTIONS: --max-old-space-size=4096
    steps:
      - checkout
      - install-deps
      - run:
          name: Test
          command: |
            python -m pytest tests
      - python/save-cache
  web:
    executor: node
    steps:
      - run: npm test
workflows:
  main:
    jobs:
      - test:
          matrix:
            parameters:
              python: ["3.10", "3.11"]
      - web
"#;
    let evidence = read(&[(".circleci/config.yml", circleci)]);
    assert_eq!(versions(&evidence, Language::Python), vec!["3.10", "3.11"]);
    assert_eq!(versions(&evidence, Language::Node), vec!["18.17"]);
    assert_eq!(evidence.test_commands().collect::<Vec<_>>(), vec!["python -m pytest tests", "npm test"]);
    assert_eq!(evidence.services[0].name, "postgres");
    assert_eq!(evidence.services[0].image, "cimg/postgres:14.2");
    assert_eq!(evidence.packages[0].name, "libvips-dev");
    assert_eq!(evidence.env_var("NODE_OPTIONS").unwrap().value, "--max-old-space-size=4096");
    assert!(evidence.ignored.iter().any(|note| note.contains("`python/save-cache`")), "{:?}", evidence.ignored);
    let old = read(&[(".circleci/config.yml", "machine: true\ntest:\n  override:\n    - make test\n")]);
    assert!(old.ignored[0].contains("version `` is not read"), "{:?}", old.ignored);
}

#[test]
fn an_expression_whose_value_is_itself_one_is_left_out_not_followed() {
    let workflow = "env:\n  PATH: ${{ env.PATH }}:/opt/bin\n  FLAGS: --cfg x\njobs:\n  t:\n    env:\n      \
                    LOOP: ${{ env.LOOP }}\n    steps:\n      - run: cargo test ${{ env.LOOP }}\n      \
                    - run: RUSTFLAGS=\"${{ env.FLAGS }}\" cargo test\n";
    let evidence = read(&[(".github/workflows/ci.yml", workflow)]);
    assert_eq!(evidence.test_commands().collect::<Vec<_>>(), vec!["RUSTFLAGS=\"--cfg x\" cargo test"]);
    assert!(evidence.env_var("LOOP").is_none() && evidence.env_var("PATH").is_none(), "{:?}", evidence.env);
    assert_eq!(evidence.env_var("RUSTFLAGS").unwrap().value, "--cfg x");
}

#[test]
fn container_images_name_runtimes_by_their_tags() {
    let cases = [
        ("golang:1.21", Some((Language::Go, "1.21"))),
        ("python:3.9-slim-bullseye", Some((Language::Python, "3.9"))),
        ("rust:1.70", Some((Language::Rust, "1.70"))),
        ("node:18", Some((Language::Node, "18"))),
        ("docker.io/library/node:20-alpine", Some((Language::Node, "20"))),
        ("maven:3-eclipse-temurin-17", Some((Language::Java, "17"))),
        ("maven:3.8-openjdk-11", Some((Language::Java, "11"))),
        ("gradle:7.6-jdk17", Some((Language::Java, "17"))),
        ("eclipse-temurin:21-jdk", Some((Language::Java, "21"))),
        ("cimg/openjdk:17.0", Some((Language::Java, "17.0"))),
        ("gcc:10", Some((Language::Gcc, "10"))),
        ("gcc:12.2.0-bookworm", Some((Language::Gcc, "12"))),
        ("python:latest", None),
        ("ubuntu:22.04", None),
        ("localhost:5000/python", None),
    ];
    for (image, expected) in cases {
        let found = image_runtime(image);
        assert_eq!(found.as_ref().map(|(language, version)| (*language, version.as_str())), expected, "{image}");
    }
}

#[test]
fn ci_narrows_a_runtime_to_what_it_tests() {
    let available = [18, 20, 22];
    let distance = |a: u32, b: u32| u64::from(a.abs_diff(b));
    assert_eq!(narrow(18, &[], &available, distance), 18, "no evidence");
    assert_eq!(narrow(18, &[16, 18], &available, distance), 18, "CI tests the usual choice");
    assert_eq!(narrow(18, &[20, 22], &available, distance), 20, "the nearest CI tests");
    assert_eq!(narrow(18, &[21, 23], &available, distance), 22, "every one newer: the oldest at least CI's oldest");
    assert_eq!(narrow(22, &[14, 16], &[16, 18, 22], distance), 16, "every one older: the newest at most CI's newest");
    assert_eq!(narrow(18, &[10, 12], &available, distance), 18, "nothing that old: the usual choice");
    assert_eq!(narrow(20, &[18, 22], &[20], distance), 20, "CI on either side");
}

#[test]
fn what_is_recorded_is_capped() {
    let mut spec = EnvironmentSpec::default();
    let evidence =
        CiEvidence { ignored: (0..20).map(|index| format!("note {index}")).collect(), ..CiEvidence::default() };
    evidence.record(&mut spec, vec!["decided".to_string()]);
    assert_eq!(spec.ci.len(), MOST_NOTES);
    assert_eq!(spec.ci[0], "decided");
    assert_eq!(spec.ci.last().unwrap(), "and 10 more notes of CI");
}

#[test]
fn jobs_and_steps_for_windows_or_macos_only_are_not_read() {
    let workflow = r#"
on: push
jobs:
  mingw:
    runs-on: windows-latest
    steps:
      - run: cmake -DSIMDJSON_BUILD_STATIC=ON -B build && ctest --test-dir build -L acceptance
  xcode:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [macos-12, macos-13]
    steps:
      - run: cmake -DJSON_FastTests=ON -B build
  linux:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
    steps:
      - if: runner.os == 'Windows'
        run: ctest --test-dir build --exclude-regex test-unicode
      - run: ctest --test-dir build -L unit
"#;
    let evidence = read(&[(".github/workflows/ci.yml", workflow)]);
    let commands: Vec<&str> = evidence.test_commands().collect();
    assert_eq!(commands, vec!["ctest --test-dir build -L unit"], "{evidence:?}");
    let notes = evidence.notes().join("\n");
    assert!(notes.contains("job `mingw` runs on windows-latest only, not read"), "{notes}");
    assert!(notes.contains("job `xcode` runs on macos-12, macos-13 only, not read"), "{notes}");
}

#[test]
fn travis_and_azure_jobs_for_macos_or_windows_only_are_not_read() {
    let travis = r#"
language: c
os: linux
script: make check
jobs:
  include:
    - name: mac
      os: osx
      script: make test-mac
"#;
    let azure = r#"
jobs:
  - job: windows
    pool:
      vmImage: windows-2019
    steps:
      - script: ctest -C Release -E slow
  - job: linux
    pool:
      vmImage: ubuntu-latest
    steps:
      - script: ctest -L unit
"#;
    let evidence = read(&[(".travis.yml", travis), ("azure-pipelines.yml", azure)]);
    let commands: Vec<&str> = evidence.test_commands().collect();
    assert!(commands.contains(&"make check") && commands.contains(&"ctest -L unit"), "{commands:?}");
    assert!(!commands.iter().any(|command| command.contains("test-mac") || command.contains("slow")), "{commands:?}");
    let notes = evidence.notes().join("\n");
    assert!(notes.contains("job `mac` runs on osx only, not read"), "{notes}");
    assert!(notes.contains("job `windows` runs on windows-2019 only, not read"), "{notes}");
}

/// GCC's versions come from a matrix axis named after it (bare numbers too) or after
/// the compiler (only values that name GCC with a version), the `gcc` image, a job's
/// `CC`/`CXX`, and the `g++-N` packages it installs; clang and a bare `gcc` name none.
#[test]
fn gcc_versions_come_from_matrix_axes_images_compiler_variables_and_packages() {
    let workflow = r#"
on: [push]
jobs:
  linux:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        gcc: [9, 10]
    steps:
      - run: sudo apt-get install -y g++-${{ matrix.gcc }}
      - run: ctest --output-on-failure
  compilers:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        compiler: [gcc-10, clang-12, gcc]
    steps:
      - run: ctest
  image:
    runs-on: ubuntu-latest
    container: gcc:11.2
    steps:
      - run: make check
  variables:
    runs-on: ubuntu-latest
    env:
      CC: gcc-12
      CXX: clang++-14
    steps:
      - run: make test
  configs:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        config: [{cc: gcc-7}, {cc: clang}]
    env:
      CC: ${{ matrix.config.cc }}
    steps:
      - run: make test
"#;
    let travis = "language: cpp\naddons:\n  apt:\n    packages: [gcc-multilib]\nenv: CC=gcc-5\n\
                  install: sudo apt-get install -y g++-6\nscript: make test\n";
    let evidence = read(&[(".github/workflows/ci.yml", workflow), (".travis.yml", travis)]);
    let mut found = versions(&evidence, Language::Gcc);
    found.sort_by_key(|version| version.parse::<u32>().unwrap());
    assert_eq!(found, ["5", "6", "7", "9", "10", "11", "12"], "{:?}", evidence.runtimes);
    let how = |version: &str| {
        let runtimes = evidence.runtimes.iter().filter(|runtime| runtime.language == Language::Gcc);
        runtimes.filter(|runtime| runtime.version == version).map(|runtime| runtime.how.clone()).collect::<Vec<_>>()
    };
    // Once a job: the axis says it first.
    assert_eq!(how("9"), ["matrix axis `gcc`"]);
    assert!(how("10").contains(&"matrix axis `compiler`".to_string()), "{:?}", how("10"));
    assert_eq!(how("11"), ["image `gcc:11.2`"]);
    assert_eq!(how("12"), ["`CC`"]);
    assert_eq!(how("7"), ["`CC`"]);
    assert_eq!(how("5"), ["`CC`"]);
    assert_eq!(how("6"), ["package `g++-6`"]);

    assert_eq!(gcc_version("g++-9", false).as_deref(), Some("9"));
    assert_eq!(gcc_version("gcc10", false).as_deref(), Some("10"));
    assert_eq!(gcc_version("/usr/bin/gcc-10.2", false).as_deref(), Some("10"));
    assert_eq!(gcc_version("10", false), None, "a bare number only under a GCC axis");
    assert_eq!(gcc_version("10", true).as_deref(), Some("10"));
    assert_eq!(gcc_version("gcc", true), None);
    assert_eq!(gcc_version("clang-12", true), None);
    assert_eq!(gcc_version("gcc-arm-none-eabi", false), None);
}

/// CI's packages that are no test's need: its compilers and tools, and its machine's
/// own administration (nlohmann/json's CircleCI installs `sudo` and `astyle`).
#[test]
fn the_ci_machines_own_tools_are_not_taken_and_a_library_is() {
    for unwanted in ["sudo", "astyle", "gcc-10", "g++-9", "valgrind", "cmake", "software-properties-common"] {
        assert!(super::unwanted_package(unwanted), "{unwanted}");
    }
    for wanted in ["libxml2-dev", "libstdc++-8-dev", "gettext", "libgit2-dev", "sqlite3"] {
        assert!(!super::unwanted_package(wanted), "{wanted}");
    }
}
