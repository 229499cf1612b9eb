//! A real headless browser for the tests of web pages: Debian's chromium, driven
//! through its chromedriver over WebDriver (fantoccini). `scripts/setup-browser.sh`
//! installs both where they are missing (as `scripts/setup.sh` installs Docker); where
//! neither is there nor can be installed, [`Browser::start`] says so and the test skips.
//!
//! One driver and one browser per test process, in a fresh profile, at 1280x800; the
//! driver runs in its own process group, which is killed at the end (the browser
//! with it), even when the test fails.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::{Client, ClientBuilder, Locator};

use super::project_root;

/// The flags that make chromium work here: no sandbox (root in a container), no GPU,
/// nothing fetched from the network by the browser itself.
const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,800",
];

pub struct Browser {
    pub client: Client,
    _driver: Driver,
    _profile: tempfile::TempDir,
}

/// The chromedriver process; killed with its process group when dropped.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        // The driver's process group: the driver and the browser it started.
        let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", self.0.id())]).status();
        let _ = self.0.wait();
    }
}

/// The chromedriver to use: on PATH, after `scripts/setup-browser.sh` where missing.
fn chromedriver() -> Option<PathBuf> {
    let find = || {
        std::env::var_os("PATH")
            .into_iter()
            .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
            .map(|dir| dir.join("chromedriver"))
            .find(|candidate| candidate.is_file())
    };
    if let Some(found) = find() {
        return Some(found);
    }
    let setup = Command::new("bash").arg(project_root().join("scripts/setup-browser.sh")).status();
    if !setup.is_ok_and(|status| status.success()) {
        return None;
    }
    find()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Browser {
    /// A browser session, or `None` (with the reason printed) where no browser can be had.
    pub async fn start() -> Option<Browser> {
        let Some(driver_path) = chromedriver() else {
            eprintln!(
                "skipped: no chromium/chromedriver, and scripts/setup-browser.sh could not install them \
                 (`apt-get install chromium chromium-driver` as root)"
            );
            return None;
        };
        let port = free_port();
        let mut command = Command::new(&driver_path);
        command.arg(format!("--port={port}")).stdout(Stdio::null()).stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let driver = Driver(command.spawn().expect("chromedriver starts"));
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not listen on port {port} within 20 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        let profile = tempfile::tempdir().unwrap();
        let mut arguments: Vec<String> = CHROMIUM_FLAGS.iter().map(ToString::to_string).collect();
        arguments.push(format!("--user-data-dir={}", profile.path().display()));
        let mut options = serde_json::json!({ "args": arguments });
        for binary in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
            if std::path::Path::new(binary).exists() {
                options["binary"] = binary.into();
                break;
            }
        }
        let capabilities = serde_json::json!({ "browserName": "chrome", "goog:chromeOptions": options });
        let serde_json::Value::Object(capabilities) = capabilities else { unreachable!() };
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("a chromium session through chromedriver");
        Some(Browser { client, _driver: driver, _profile: profile })
    }

    /// Presses keys in the page, as a person does: each character (or a
    /// `fantoccini::key::Key` as char) down then up.
    pub async fn press(&self, keys: &str) {
        let mut actions = KeyActions::new("keyboard".to_string());
        for key in keys.chars() {
            actions = actions.then(KeyAction::Down { value: key }).then(KeyAction::Up { value: key });
        }
        self.client.perform_actions(actions).await.expect("keys pressed");
    }

    /// Evaluates a JavaScript expression in the page.
    pub async fn eval(&self, expression: &str) -> serde_json::Value {
        self.client.execute(&format!("return ({expression});"), Vec::new()).await.expect("script runs")
    }

    /// Waits until a JavaScript expression is true in the page; fails with `what` and
    /// the page's text after 10 s.
    pub async fn wait_for(&self, what: &str, expression: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if self.eval(&format!("Boolean({expression})")).await == serde_json::Value::Bool(true) {
                return;
            }
            if Instant::now() > deadline {
                let text = self.eval("document.body.innerText").await;
                panic!("timed out waiting for {what} ({expression}); the page says:\n{}", text.as_str().unwrap_or(""));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The text of the first element matching a CSS selector.
    pub async fn text(&self, css: &str) -> String {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|_| panic!("no `{css}` on the page"))
            .text()
            .await
            .unwrap()
    }

    pub async fn close(self) {
        let _ = self.client.clone().close().await;
    }
}
