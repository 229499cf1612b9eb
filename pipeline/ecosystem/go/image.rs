//! Go's environment images and the setup of every container script.
//!
//! The environment: the repository at the environment commit, its modules
//! downloaded into the module cache (`go mod download`, through the Go module proxy of
//! `validate.registries.go_proxy`,
//! with the extra CA bundle as `SSL_CERT_FILE` in that step only), then the build
//! cache warmed by compiling every package of the module and their dependencies
//! (`go build ./...`, the inferred spec's second install step, so that a
//! per-repository config can leave it out), both owned by the unprivileged user. Dependencies only tests
//! import are compiled by the first run that needs them (decision: `go vet ./...`
//! would compile them too, but on a module of go-zero's size it takes minutes that
//! an image serving one `--input` row never wins back). Nothing is fetched while tests run:
//! containers set `GOPROXY=off`, `GOFLAGS=-mod=readonly`, `GOTOOLCHAIN=local` and
//! have no network.

use crate::ecosystem::dockerfile::Dockerfile;
use crate::sandbox::images::{CA_PATH, EnvironmentRequest, ImageSettings};
use crate::sandbox::script::shell_quote;

/// Where every container script writes the test helper (`/tmp` is writable there,
/// though not executable: the helper is run by `bash`).
pub const GO_TEST_HELPER: &str = "/tmp/swe-harvest-go-test";

/// The environment of every step, build and run: caches in the user's home, and the
/// test binaries built there too (`GOTMPDIR`): containers mount `/tmp` without exec.
const GO_ENV: &str = "HOME=/home/harvest GOPATH=/home/harvest/go GOCACHE=/home/harvest/.cache/go-build \
                      GOTMPDIR=/home/harvest/go-tmp GOTOOLCHAIN=local";

/// The variables of run time: no module fetches of any kind.
const OFFLINE_ENV: &str = "GOPROXY=off GOFLAGS=-mod=readonly GOSUMDB=off";

/// The Dockerfile of an environment image on `base`.
pub fn environment_dockerfile(request: &EnvironmentRequest, base: &str, settings: &ImageSettings) -> String {
    let spec = &request.spec;
    let mut network_env = vec![format!("GOPROXY={}", shell_quote(&settings.registries.go_proxy))];
    network_env.push("GOFLAGS=-mod=mod".to_string());
    if settings.extra_ca.is_some() {
        network_env.push(format!("SSL_CERT_FILE={CA_PATH}"));
        network_env.push(format!("GIT_SSL_CAINFO={CA_PATH}"));
    }
    let network_env = format!("export {}; ", network_env.join(" "));
    let mut dockerfile = Dockerfile::new("a Go environment image (see pipeline/ecosystem/go/image.rs)", base);
    dockerfile.system_packages(spec, "");
    dockerfile
        .unprivileged_user("/home/harvest/go /home/harvest/go-tmp /home/harvest/.cache /testbed /swe-harvest/out", "");
    dockerfile.extra_ca(settings);
    dockerfile.enter_testbed(GO_ENV);
    let mut modules_added = Vec::new();
    if !spec.extra_packages.is_empty() {
        // Modules the task's patches require (a gold patch's new dependency): `go get`
        // adds them to the environment commit's module graph (that go.mod is thrown
        // away with /testbed below), and `go mod download` fetches the whole new graph.
        let modules: Vec<String> = spec.extra_packages.iter().map(|module| shell_quote(module)).collect();
        modules_added.push(format!("go get {} && go mod download", modules.join(" ")));
    }
    dockerfile.install(spec, modules_added, &network_env, "");
    dockerfile.empty_testbed();
    dockerfile.finish(request, "")
}

/// The shell function that names the package reading a test's data file outside
/// `testdata/`: the nearest folder at or above it that holds `_test.go` files, else
/// the module root. The test helper and SWE-bench's eval script both define it.
pub const PACKAGE_OF_DATA_FUNCTION: &str = r#"swe_harvest_go_package_of() {
    local dir
    dir="$(dirname "$1")"
    while [ "$dir" != . ] && ! compgen -G "$dir/*_test.go" > /dev/null; do
        dir="$(dirname "$dir")"
    done
    if [ "$dir" = . ]; then echo .; else echo "./$dir"; fi
}"#;

/// The test helper script, with [`PACKAGE_OF_DATA_FUNCTION`] in it.
pub fn test_helper_script() -> String {
    GO_TEST_HELPER_SCRIPT.replace("{PACKAGE_OF_DATA_FUNCTION}", PACKAGE_OF_DATA_FUNCTION)
}

/// The helper that runs `go test` on the packages of the given test files: its
/// arguments are the JSON report's path, the test command's words, `--`, then the
/// files. It writes the JSON events to the report and the `-v` lines (results and
/// build errors) to its output. The packages are those that exist (a test patch may
/// delete a package's last file).
///
/// Two passes (decision, 2026-11-27): first the tests the test patch adds or changes
/// (read from the job's `/swe-harvest/test.patch` when there: a `func Test...` line it
/// adds or removes, or a changed line inside one), by name, with `-timeout 5m`; then
/// the whole packages with `-timeout 2m`, for PASS_TO_PASS. A package with one slow
/// test (grpc-go's `./test` runs for tens of minutes) then still gives the labels
/// that matter, and a task costs minutes. The report names the tests of the first
/// pass ([`ASKED_FOR`]) and where the second begins ([`WHOLE_PACKAGES`]): the
/// second pass's results of those tests are not read, and a test it did not reach
/// says nothing of it. A command that sets its own `-timeout` keeps it in both.
///
/// The script as written; [`test_helper_script`] gives it with its function.
const GO_TEST_HELPER_SCRIPT: &str = r##"#!/bin/bash
report="$1"; shift
command=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do command+=("$1"); shift; done
[ "$#" -gt 0 ] && shift
packages=()
{PACKAGE_OF_DATA_FUNCTION}
for file in "$@"; do
    case "/$file" in
        */testdata/*) dir="${file%%testdata/*}"; dir="${dir%/}" ;;
        *.go) case "/$file" in */*/*) dir="${file%/*}" ;; *) dir="" ;; esac ;;
        *) dir="$(swe_harvest_go_package_of "$file")"; dir="${dir#./}" ;;
    esac
    [ -n "$dir" ] || dir=.
    [ -d "$dir" ] || continue
    package="./$dir"; [ "$dir" = . ] && package=.
    case " ${packages[*]} " in *" $package "*) ;; *) packages+=("$package") ;; esac
done
: > "$report"
if [ "${#packages[@]}" -eq 0 ]; then
    echo "swe-harvest: none of the packages of the touched test files exists"
    exit 0
fi
# The top-level tests the test patch adds or changes.
touched_tests() {
    local patch="${SWE_HARVEST_TEST_PATCH:-/swe-harvest/test.patch}"
    [ -f "$patch" ] || return 0
    awk '
        function test_name(text) { sub(/^[ +-]?func /, "", text); sub(/\(.*/, "", text); return text }
        /^diff --git / { go = ($NF ~ /_test\.go$/); context = ""; next }
        !go || /^(\+\+\+|---) / { next }
        /^@@/ {
            context = ""
            if (match($0, /@@ func Test[A-Za-z0-9_]*\(/)) context = substr($0, RSTART + 8, RLENGTH - 9)
            next
        }
        /^[ +-]func / {
            name = test_name($0)
            context = (name ~ /^Test[A-Za-z0-9_]*$/) ? name : ""
        }
        # A blank line changes no test; a closing brace at the margin ends the function.
        /^[+-]/ && context != "" && $0 !~ /^[+-][[:space:]]*$/ { print context }
        /^[ +-]}/ { context = "" }
    ' "$patch" | sort -u | paste -sd ' ' -
}
has_timeout=0
for word in "${command[@]}"; do case "$word" in -timeout|-timeout=*|-test.timeout*) has_timeout=1 ;; esac; done
timeout_of() { [ "$has_timeout" = 1 ] || echo "-timeout=$1"; }
output_lines() {
    # The lines of `go test -v` that say what happened, from the JSON events' output.
    sed -n 's/.*"Action":"output".*"Output":"\(.*\)"}$/\1/p' "$1" \
        | sed 's/\\n$//; s/\\t/\t/g; s/\\"/"/g' \
        | grep -E '^ *--- (PASS|FAIL|SKIP)|^(ok|FAIL|PASS)\b|^panic:|\.go:[0-9]+:' || true
}
code=0
names="$(touched_tests)"
if [ -n "$names" ]; then
    echo "# swe-harvest asked for: $names" >> "$report"
    pattern="^($(echo $names | tr ' ' '|'))\$"
    echo "swe-harvest: go test of the touched tests ($names) in ${packages[*]}"
    "${command[@]}" $(timeout_of 5m) -run "$pattern" "${packages[@]}" > "$report.touched"
    code=$?
    output_lines "$report.touched"
    cat "$report.touched" >> "$report"; rm -f "$report.touched"
fi
echo "# swe-harvest whole packages" >> "$report"
echo "swe-harvest: go test of ${packages[*]}"
"${command[@]}" $(timeout_of 2m) "${packages[@]}" > "$report.whole"
whole=$?
output_lines "$report.whole"
cat "$report.whole" >> "$report"; rm -f "$report.whole"
[ "$code" -ne 0 ] || code=$whole
exit $code
"##;

/// Every container script's setup: the offline environment and the test helper.
pub fn script_setup(_version: &str) -> String {
    format!(
        "export {GO_ENV} {OFFLINE_ENV}\ncat > {GO_TEST_HELPER} <<'SWE_HARVEST_GO_TEST'\n{script}SWE_HARVEST_GO_TEST\nchmod +x {GO_TEST_HELPER}\ninstall_repository() {{ echo \"Go: nothing to install; modules and build cache are in the image\"; }}",
        script = test_helper_script()
    )
}

/// The lines SWE-bench's `eval_script` runs first.
pub fn harness_setup(_version: &str) -> Vec<String> {
    vec![format!("export {GO_ENV} {OFFLINE_ENV}"), PACKAGE_OF_DATA_FUNCTION.to_string()]
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::sandbox::images::fixtures::{self, settings};

    /// The Dockerfile of the tests' one request, built with `settings`.
    fn dockerfile(settings: &ImageSettings) -> String {
        let request = fixtures::request_for("go", "go1.24", &["go mod download"], "go test -json -count=1");
        environment_dockerfile(&request, "swe-harvest/base:go1.24", settings)
    }

    #[test]
    fn modules_are_downloaded_through_the_proxy_with_the_ca_and_the_cache_is_warmed_offline() {
        let text = dockerfile(&settings(Some(b"CA")));
        let download = fixtures::step_line(&text, "go mod download", &["SSL_CERT_FILE", "GOPROXY"]);
        assert!(download.contains("GOPROXY=https://proxy.golang.org "), "{download}");
        assert!(download.contains("SSL_CERT_FILE=/etc/swe-harvest/ca.crt"), "{download}");
        assert!(!text.contains("rm -rf /home/harvest/.cache"), "the warm cache stays: {text}");
        // The Go proxy is its own setting: a PyPI mirror does not touch it.
        let mirrored = fixtures::mirrored(|registries| {
            registries.go_proxy = "https://goproxy.example.com".into();
            registries.pypi_index = "https://pypi.example.com/simple".into();
        });
        let text = dockerfile(&mirrored);
        assert!(text.contains("GOPROXY=https://goproxy.example.com "), "{text}");
        assert!(!text.contains("pypi.example.com"), "{text}");
    }

    /// The helper's report, run with a fake `go` that prints its arguments, on `patch`,
    /// in a folder holding `dirs`: folders, or files where they end in `.go`.
    fn helper_report(dirs: &[&str], files: &[&str], patch: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        for sub in dirs {
            let path = dir.path().join(sub);
            if sub.ends_with(".go") {
                fs_err::create_dir_all(path.parent().unwrap()).unwrap();
                fs_err::write(path, "package x\n").unwrap();
            } else {
                fs_err::create_dir_all(path).unwrap();
            }
        }
        let helper = dir.path().join("helper.sh");
        fs_err::write(&helper, test_helper_script()).unwrap();
        fs_err::write(dir.path().join("test.patch"), patch).unwrap();
        let output = std::process::Command::new("bash")
            .arg(&helper)
            .arg(dir.path().join("report.json"))
            .args(["echo", "go", "test", "--"])
            .args(files)
            .current_dir(dir.path())
            .env("SWE_HARVEST_TEST_PATCH", dir.path().join("test.patch"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        fs_err::read_to_string(dir.path().join("report.json")).unwrap().trim().to_string()
    }

    /// The packages the helper's whole-package pass runs, with no test patch.
    fn helper_packages(dirs: &[&str], files: &[&str]) -> String {
        let report = helper_report(dirs, files, "");
        report.lines().last().unwrap_or_default().replace("go test -timeout=2m", "go test").trim().to_string()
    }

    #[test]
    fn the_touched_tests_run_first_by_name_then_the_whole_packages() {
        let patch = "diff --git a/calc/calc_test.go b/calc/calc_test.go\n--- a/calc/calc_test.go\n+++ b/calc/calc_test.go\n\
                     @@ -5,6 +5,6 @@ func TestAdd(t *testing.T) {\n-\tif Add(1, 2) != 4 {\n+\tif Add(1, 2) != 3 {\n\
                     @@ -20,3 +20,12 @@ func TestSub(t *testing.T) {\n }\n func helper() int {\n-\treturn 1\n+\treturn 2\n }\n\
                     +\n+func TestNew(t *testing.T) {\n+\tt.Run(\"case\", func(t *testing.T) {})\n+}\n\
                     @@ -40,3 +49,8 @@ func TestLater(t *testing.T) {\n \t}\n }\n+\n+func TestLast(t *testing.T) {\n+}\n\
                     diff --git a/calc/calc.go b/calc/calc.go\n@@ -1,3 +1,3 @@ func TestNotATest() {\n-x\n+y\n";
        let report = helper_report(&["calc"], &["calc/calc_test.go"], patch);
        let lines: Vec<&str> = report.lines().collect();
        assert_eq!(
            lines,
            [
                "# swe-harvest asked for: TestAdd TestLast TestNew",
                "go test -timeout=5m -run ^(TestAdd|TestLast|TestNew)$ ./calc",
                "# swe-harvest whole packages",
                "go test -timeout=2m ./calc",
            ],
            "{report}"
        );
        assert!(lines[0].starts_with(super::super::results::ASKED_FOR.trim_end()));
        assert_eq!(lines[2], super::super::results::WHOLE_PACKAGES);
    }

    #[test]
    fn the_helper_tests_each_existing_package_of_the_touched_files_once() {
        assert_eq!(
            helper_packages(
                &["core/a", "core/testdata"],
                &["core/a/x_test.go", "core/a/y_test.go", "main_test.go", "core/testdata/in.json", "gone/z_test.go"]
            ),
            "go test ./core/a . ./core"
        );
        assert_eq!(helper_report(&[], &["gone/z_test.go"], ""), "", "no package left: nothing runs");
    }

    /// caddy's adapter tests (caddyserver/caddy-6288 of SWE-bench Multilingual): the
    /// test patch touches only a data file, read by a test of a folder above it.
    #[test]
    fn a_data_file_outside_testdata_selects_the_nearest_package_above_it_with_tests() {
        let tree = ["caddytest/integration/caddyfile_adapt", "caddytest/integration/caddyfile_test.go", "root_test.go"];
        assert_eq!(
            helper_packages(&tree, &["caddytest/integration/caddyfile_adapt/quotes.caddyfiletest"]),
            "go test ./caddytest/integration"
        );
        assert_eq!(helper_packages(&["docs/examples"], &["docs/examples/a.txt"]), "go test .", "none above: the root");
    }
}
