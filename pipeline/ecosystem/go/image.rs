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

/// The helper that runs `go test` on the packages of the given test files: its
/// arguments are the JSON report's path, the test command's words, `--`, then the
/// files. It writes the JSON events to the report and the `-v` lines (results and
/// build errors) to its output. The packages are those that exist (a test patch may
/// delete a package's last file).
pub const GO_TEST_HELPER_SCRIPT: &str = r#"#!/bin/bash
report="$1"; shift
command=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do command+=("$1"); shift; done
[ "$#" -gt 0 ] && shift
packages=()
for file in "$@"; do
    case "/$file" in
        */testdata/*) dir="${file%%testdata/*}"; dir="${dir%/}" ;;
        */*/*) dir="${file%/*}" ;;
        *) dir="" ;;
    esac
    [ -n "$dir" ] || dir=.
    [ -d "$dir" ] || continue
    package="./$dir"; [ "$dir" = . ] && package=.
    case " ${packages[*]} " in *" $package "*) ;; *) packages+=("$package") ;; esac
done
if [ "${#packages[@]}" -eq 0 ]; then
    echo "swe-harvest: none of the packages of the touched test files exists"
    : > "$report"
    exit 0
fi
echo "swe-harvest: go test of ${packages[*]}"
"${command[@]}" "${packages[@]}" > "$report"
code=$?
# The lines of `go test -v` that say what happened, from the JSON events' output.
sed -n 's/.*"Action":"output".*"Output":"\(.*\)"}$/\1/p' "$report" \
    | sed 's/\\n$//; s/\\t/\t/g; s/\\"/"/g' \
    | grep -E '^ *--- (PASS|FAIL|SKIP)|^(ok|FAIL|PASS)\b|^panic:|\.go:[0-9]+:' || true
exit $code
"#;

/// Every container script's setup: the offline environment and the test helper.
pub fn script_setup(_version: &str) -> String {
    format!(
        "export {GO_ENV} {OFFLINE_ENV}\ncat > {GO_TEST_HELPER} <<'SWE_HARVEST_GO_TEST'\n{GO_TEST_HELPER_SCRIPT}SWE_HARVEST_GO_TEST\nchmod +x {GO_TEST_HELPER}\ninstall_repository() {{ echo \"Go: nothing to install; modules and build cache are in the image\"; }}"
    )
}

/// The lines SWE-bench's `eval_script` runs first.
pub fn harness_setup(_version: &str) -> Vec<String> {
    vec![format!("export {GO_ENV} {OFFLINE_ENV}")]
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::sandbox::images::fixtures::{self, settings};

    fn request() -> EnvironmentRequest {
        fixtures::request_for("go", "go1.24", &["go mod download"], "go test -json -count=1")
    }

    #[test]
    fn modules_are_downloaded_through_the_proxy_with_the_ca_and_the_cache_is_warmed_offline() {
        let text = environment_dockerfile(&request(), "swe-harvest/base:go1.24", &settings(Some(b"CA")));
        let download = fixtures::step_line(&text, "go mod download", &["SSL_CERT_FILE", "GOPROXY"]);
        assert!(download.contains("GOPROXY=https://proxy.golang.org "), "{download}");
        assert!(download.contains("SSL_CERT_FILE=/etc/swe-harvest/ca.crt"), "{download}");
        assert!(!text.contains("rm -rf /home/harvest/.cache"), "the warm cache stays: {text}");
        // The Go proxy is its own setting: a PyPI mirror does not touch it.
        let mirrored = fixtures::mirrored(|registries| {
            registries.go_proxy = "https://goproxy.example.com".into();
            registries.pypi_index = "https://pypi.example.com/simple".into();
        });
        let text = environment_dockerfile(&request(), "swe-harvest/base:go1.24", &mirrored);
        assert!(text.contains("GOPROXY=https://goproxy.example.com "), "{text}");
        assert!(!text.contains("pypi.example.com"), "{text}");
    }

    /// The helper run with a fake `go` that prints its arguments.
    fn helper_packages(dirs: &[&str], files: &[&str]) -> String {
        let dir = tempfile::tempdir().unwrap();
        for sub in dirs {
            fs_err::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let helper = dir.path().join("helper.sh");
        fs_err::write(&helper, GO_TEST_HELPER_SCRIPT).unwrap();
        let output = std::process::Command::new("bash")
            .arg(&helper)
            .arg(dir.path().join("report.json"))
            .args(["echo", "go", "test", "--"])
            .args(files)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        fs_err::read_to_string(dir.path().join("report.json")).unwrap().trim().to_string()
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
        assert_eq!(helper_packages(&[], &["gone/z_test.go"]), "", "no package left: nothing runs");
    }
}
