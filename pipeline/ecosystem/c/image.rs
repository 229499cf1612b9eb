//! C's environment images, the test helper, and the setup of every container script.
//!
//! The environment: the `-dev` packages inference named, each installed when Debian
//! has it (the others are named in the build log and skipped: they are guesses from
//! library names, see [`super::infer`]); then, as the unprivileged user, the
//! repository at the environment commit is built in `/testbed` by the spec's install
//! steps (written to `/home/harvest/c-warm/build.sh` and run from there), and the
//! built tree is kept in the image as the **warm tree** (`/home/harvest/c-warm/tree`,
//! with the list of the commit's own files, `sources`), times included.
//!
//! Every run starts from it ([`WARM_SYNC_SCRIPT`]): the checkout's files that differ
//! from the warm tree's are put over it with the current time, the environment
//! commit's files the checkout lacks are removed, so `make` (or `cmake --build`)
//! rebuilds what changed and nothing else; a patched `Makefile.am` or
//! `configure.ac` reruns automake and configure through automake's own rebuild
//! rules. Decision: not ccache, which would still run `autoreconf` and `configure`
//! (most of jq's 60 s build) in every container. Nothing is fetched while tests run:
//! the image build is the only step with the network (Debian packages only).

use crate::ecosystem::dockerfile::{Dockerfile, install_steps};
use crate::sandbox::images::{EnvironmentRequest, ImageSettings};
use crate::sandbox::script::shell_quote;

/// Where the warm tree, its file list and the build script live in the image.
pub const WARM: &str = "/home/harvest/c-warm";
/// Where every container script writes the helpers (run by `bash`: `/tmp` is not
/// executable in containers).
pub const C_TEST_HELPER: &str = "/tmp/swe-harvest-c-test";
const WARM_SYNC: &str = "/tmp/swe-harvest-c-warm-sync";

/// The environment of every step, build and run.
pub const C_ENV: &str = "HOME=/home/harvest";

/// Puts the warm tree under the checkout (see the module doc).
pub const WARM_SYNC_SCRIPT: &str = include_str!("warm-sync.sh");
/// Runs the tests (see the script's header): automake's harness, CTest, or a make target.
pub const C_TEST_HELPER_SCRIPT: &str = include_str!("test-helper.sh");

/// The Dockerfile of an environment image on `base`.
pub fn environment_dockerfile(request: &EnvironmentRequest, base: &str, _settings: &ImageSettings) -> String {
    let spec = &request.spec;
    let mut dockerfile = Dockerfile::new("a C environment image (see pipeline/ecosystem/c/image.rs)", base);
    dockerfile.system_packages(spec, "");
    dockerfile.unprivileged_user(&format!("{WARM} /testbed /swe-harvest/out"), "");
    dockerfile.enter_testbed(C_ENV);
    let install = install_steps(spec);
    // Built and moved to the warm tree in one layer, so the image holds the tree once.
    // One quoted word per step (a Dockerfile line holds no newline); steps with a
    // newline of their own are joined by `;`.
    let mut script = vec!["cd /testbed".to_string()];
    script.extend(install.iter().map(|step| step.replace('\n', "; ")));
    let script: Vec<String> = script.iter().map(|step| shell_quote(step)).collect();
    dockerfile.push(format!(
        "RUN find . -mindepth 1 ! -type d | sed 's:^\\./::' > {WARM}/sources \
         && printf '%s\\n' {} > {WARM}/build.sh && bash -e {WARM}/build.sh \
         && cp -a /testbed {WARM}/tree && find /testbed -mindepth 1 -delete",
        script.join(" ")
    ));
    dockerfile.finish(request, "")
}

/// Shell text that writes both helpers.
fn write_helpers() -> String {
    format!(
        "cat > {C_TEST_HELPER} <<'SWE_HARVEST_C_TEST'\n{C_TEST_HELPER_SCRIPT}SWE_HARVEST_C_TEST\n\
         cat > {WARM_SYNC} <<'SWE_HARVEST_C_WARM'\n{WARM_SYNC_SCRIPT}SWE_HARVEST_C_WARM"
    )
}

/// Every container script's setup: the environment, the helpers, and an install that
/// puts the warm build under the checkout.
pub fn script_setup(_version: &str) -> String {
    format!("export {C_ENV}\n{}\ninstall_repository() {{ bash {WARM_SYNC}; }}", write_helpers())
}

/// The lines SWE-bench's `eval_script` runs first: the environment, then the helpers
/// (the instance image is installed already; the helper rebuilds what the patches change).
pub fn harness_setup(_version: &str) -> Vec<String> {
    vec![format!("export {C_ENV}"), write_helpers()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EnvironmentSpec;
    use crate::sandbox::images::fixtures::{self, settings};

    #[test]
    fn the_image_installs_the_packages_debian_has_builds_once_and_keeps_the_warm_tree() {
        let request = fixtures::request(EnvironmentSpec {
            ecosystem: "c".into(),
            runtime: "gcc12".into(),
            system_packages: vec!["libonig-dev".into()],
            install: vec!["./configure".into(), "make".into()],
            test_command: "make check".into(),
            ..Default::default()
        });
        let text = environment_dockerfile(&request, "swe-harvest/base:gcc12", &settings(None));
        let apt = text.lines().find(|line| line.contains("apt-get install")).unwrap();
        assert!(apt.contains("apt-cache show") && apt.contains("libonig-dev"), "{apt}");
        let build = text.lines().find(|line| line.contains("build.sh")).unwrap();
        assert!(build.contains("'cd /testbed' ./configure make >"), "the steps, in order: {build}");
        let user = text.lines().position(|line| line.starts_with("USER 1000")).unwrap();
        let built = text.lines().position(|line| line.contains("build.sh")).unwrap();
        assert!(user < built, "the repository's build runs unprivileged: {text}");
        assert!(text.contains(&format!("cp -a /testbed {WARM}/tree")), "{text}");
    }

    /// A plain Makefile's target whose recipe leaves a process holding the output it
    /// inherited (a server a test started): the helper gives the target's result when
    /// make exits, without waiting for that process.
    #[test]
    fn a_process_a_make_target_leaves_behind_does_not_hold_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let done = dir.path().join("done");
        let makefile = format!("check:\n\t(sleep 20; touch {}) &\n\t@echo 'the suite ran'\n\t@false\n", done.display());
        fs_err::write(dir.path().join("Makefile"), makefile).unwrap();
        let helper = dir.path().join("helper.sh");
        fs_err::write(&helper, C_TEST_HELPER_SCRIPT).unwrap();
        let output = std::process::Command::new("bash")
            .arg(&helper)
            .arg(dir.path().join("report"))
            .args(["make", "check", "--"])
            .current_dir(dir.path())
            .env("SWE_HARVEST_SOURCES_STAMP", dir.path().join("stamp"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
        assert!(!done.exists(), "the helper waited for the process the target left: {text}");
        assert!(text.contains("the suite ran"), "the target's output, shown: {text}");
        assert!(text.contains("swe-harvest results:\nFAIL: make-check"), "the target's result: {text}");
        assert_ne!(output.status.code(), Some(0), "make's status: {text}");
    }

    /// SWE-bench's harness on an instance image: no warm sync, so no stamp; a header
    /// newer than the oldest object (a patch changed it after the image's build) makes
    /// the helper touch every source, and a plain Makefile that knows no header builds
    /// the stale object again.
    #[test]
    fn a_header_newer_than_the_objects_rebuilds_them_without_the_warm_syncs_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = dir.path().join(path);
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(path, text).unwrap();
        };
        write(
            "Makefile",
            "src/bias.o: src/bias.c\n\tcc -c -o src/bias.o src/bias.c\n\
             tests/test_bias: tests/test_bias.c src/bias.o\n\tcc -o tests/test_bias tests/test_bias.c src/bias.o\n\
             test-bias: tests/test_bias\n\t./tests/test_bias\n",
        );
        write("src/bias.h", "#define BIAS 1\nint bias(void);\n");
        write("src/bias.c", "#include \"bias.h\"\nint bias(void) { return BIAS; }\n");
        write("tests/test_bias.c", "#include \"../src/bias.h\"\nint main(void) { return bias() == 0 ? 0 : 1; }\n");
        let built = std::process::Command::new("make").arg("tests/test_bias").current_dir(dir.path()).output().unwrap();
        assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
        write("src/bias.h", "#define BIAS 0\nint bias(void);\n");
        let helper = dir.path().join("helper.sh");
        fs_err::write(&helper, C_TEST_HELPER_SCRIPT).unwrap();
        let stamp = dir.path().join("stamp");
        let output = std::process::Command::new("bash")
            .arg(&helper)
            .arg(dir.path().join("report"))
            .args(["make", "test-bias", "--", "tests/test_bias.c"])
            .current_dir(dir.path())
            .env("SWE_HARVEST_SOURCES_STAMP", &stamp)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
        assert!(text.contains("swe-harvest: src/bias.h changed since the build"), "{text}");
        // (The results file is the helper's fixed path in /tmp: on this host another
        // test's run may add its own lines.)
        let results = text.split("swe-harvest results:\n").nth(1).unwrap_or_default();
        assert!(results.lines().any(|line| line == "PASS: make-test-bias"), "the object built again: {text}");
        assert!(stamp.exists(), "the next run compares with the stamp: {text}");
    }

    /// The warm sync run in two temporary folders: what changed comes in newer than
    /// every build output, what did not keeps the warm tree's time, the build outputs
    /// come along, a file the checkout lacks goes, `.git` stays, and the test helper's
    /// stamp lies between the build and what changed.
    #[test]
    fn the_warm_sync_keeps_the_build_and_takes_what_changed_with_the_current_time() {
        use std::time::{Duration, SystemTime};
        let root = tempfile::tempdir().unwrap();
        let (warm, testbed) = (root.path().join("warm"), root.path().join("testbed"));
        let old = SystemTime::now() - Duration::from_secs(7200);
        let built = SystemTime::now() - Duration::from_secs(3600);
        let write = |path: &std::path::Path, text: &str, time: SystemTime| {
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(path, text).unwrap();
            fs_err::File::options().write(true).open(path).unwrap().set_modified(time).unwrap();
        };
        let tree = warm.join("tree");
        write(&tree.join("src/a.c"), "int a;\n", old);
        write(&tree.join("src/same.c"), "int s;\n", old);
        write(&tree.join("src/gone.c"), "int g;\n", old);
        write(&tree.join("src/a.o"), "object", built);
        fs_err::write(warm.join("sources"), "src/a.c\nsrc/same.c\nsrc/gone.c\n").unwrap();
        write(&testbed.join("src/a.c"), "int a = 1;\n", old);
        write(&testbed.join("src/same.c"), "int s;\n", old + Duration::from_secs(60));
        write(&testbed.join("src/new.c"), "int n;\n", old);
        write(&testbed.join(".git/HEAD"), "ref\n", old);
        let output = std::process::Command::new("bash")
            .arg("-c")
            .arg(WARM_SYNC_SCRIPT)
            .env("SWE_HARVEST_C_WARM", &warm)
            .env("SWE_HARVEST_TESTBED", &testbed)
            .env("SWE_HARVEST_SOURCES_STAMP", root.path().join("stamp"))
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{said}");
        assert!(said.contains("2 files differ from it, 1 removed"), "{said}");
        let modified = |path: &str| fs_err::metadata(testbed.join(path)).unwrap().modified().unwrap();
        assert_eq!(fs_err::read_to_string(testbed.join("src/a.c")).unwrap(), "int a = 1;\n");
        assert!(modified("src/a.c") > built, "a changed source is newer than the build's outputs");
        assert!(modified("src/new.c") > built);
        assert_eq!(modified("src/same.c"), old, "an unchanged source keeps the warm tree's time");
        assert_eq!(modified("src/a.o"), built, "the build's outputs come along as they were");
        assert!(!testbed.join("src/gone.c").exists(), "a file the checkout lacks is removed");
        assert!(testbed.join(".git/HEAD").exists());
        let stamp = fs_err::metadata(root.path().join("stamp")).unwrap().modified().unwrap();
        assert!(
            built < stamp && stamp <= modified("src/a.c"),
            "the helper's stamp: newer than the build, not newer than what changed"
        );
    }
}
