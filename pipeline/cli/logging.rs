//! Logs (`tracing`) and progress (`indicatif`) on stderr, arranged so that log lines
//! never tear a progress bar: every log write suspends the bars while it prints.
//! Progress bars are drawn only on a terminal; elsewhere progress becomes plain log
//! lines at a steady pace.

use std::io::{IsTerminal, Write};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

use swe_harvest::env_vars;
use swe_harvest::progress::Reporter;

fn bars() -> &'static MultiProgress {
    static BARS: OnceLock<MultiProgress> = OnceLock::new();
    BARS.get_or_init(|| {
        if std::io::stderr().is_terminal() {
            MultiProgress::with_draw_target(ProgressDrawTarget::stderr())
        } else {
            MultiProgress::with_draw_target(ProgressDrawTarget::hidden())
        }
    })
}

/// Sets up logging: `RUST_LOG` when set, else `info` (`-v` debug, `-vv` trace, `-q` errors only).
pub fn init(verbose: u8, quiet: bool) {
    let level = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "info",
        (false, 1) => "debug",
        (false, _) => "trace",
    };
    let filter = std::env::var(env_vars::RUST_LOG)
        .ok()
        .and_then(|value| EnvFilter::try_new(value).ok())
        .unwrap_or_else(|| EnvFilter::new(format!("warn,swe_harvest={level}")));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(SuspendingStderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .try_init();
}

/// A writer that prints whole log lines with the progress bars suspended.
struct SuspendingStderr;

impl<'a> MakeWriter<'a> for SuspendingStderr {
    type Writer = LineWriter;
    fn make_writer(&'a self) -> Self::Writer {
        LineWriter(Vec::new())
    }
}

struct LineWriter(Vec<u8>);

impl Write for LineWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LineWriter {
    fn drop(&mut self) {
        let buffer = std::mem::take(&mut self.0);
        bars().suspend(|| {
            let _ = std::io::stderr().lock().write_all(&buffer);
        });
    }
}

/// Progress as a bar on a terminal, or as a log line every few seconds elsewhere.
pub struct CliReporter {
    state: Mutex<ReporterState>,
    terminal: bool,
}

struct ReporterState {
    bar: Option<ProgressBar>,
    label: String,
    total: Option<u64>,
    done: u64,
    started: Instant,
    last_line: Instant,
}

/// How often plain progress lines are logged when stderr is not a terminal.
const LINE_INTERVAL: Duration = Duration::from_secs(10);

impl CliReporter {
    pub fn new() -> CliReporter {
        let now = Instant::now();
        CliReporter {
            state: Mutex::new(ReporterState {
                bar: None,
                label: String::new(),
                total: None,
                done: 0,
                started: now,
                last_line: now,
            }),
            terminal: std::io::stderr().is_terminal(),
        }
    }
}

impl ReporterState {
    fn line(&self) -> String {
        let elapsed = self.started.elapsed().as_secs_f64().max(0.001);
        let rate = self.done as f64 / elapsed;
        match self.total {
            Some(total) if rate > 0.0 && total >= self.done => {
                let eta = (total - self.done) as f64 / rate;
                format!("{}: {}/{} ({rate:.1}/s, ETA {eta:.0}s)", self.label, self.done, total)
            }
            Some(total) => format!("{}: {}/{}", self.label, self.done, total),
            None => format!("{}: {} ({rate:.1}/s)", self.label, self.done),
        }
    }
}

impl Reporter for CliReporter {
    fn start(&self, label: &str, total: Option<u64>) {
        let mut state = self.state.lock().unwrap();
        if let Some(bar) = state.bar.take() {
            bar.finish_and_clear();
        }
        state.label = label.to_string();
        state.total = total;
        state.done = 0;
        state.started = Instant::now();
        state.last_line = Instant::now();
        if self.terminal {
            let bar = match total {
                Some(total) => ProgressBar::new(total).with_style(
                    ProgressStyle::with_template("{spinner} {prefix} [{bar:30}] {pos}/{len} {per_sec} ETA {eta} {msg}")
                        .expect("valid template")
                        .progress_chars("=> "),
                ),
                None => ProgressBar::new_spinner().with_style(
                    ProgressStyle::with_template("{spinner} {prefix} {pos} {per_sec} {msg}").expect("valid template"),
                ),
            };
            bar.set_prefix(label.to_string());
            bar.enable_steady_tick(Duration::from_millis(120));
            state.bar = Some(bars().add(bar));
        }
    }

    fn advance(&self, delta: u64) {
        let mut state = self.state.lock().unwrap();
        state.done += delta;
        if let Some(bar) = &state.bar {
            bar.inc(delta);
        } else if state.last_line.elapsed() >= LINE_INTERVAL {
            state.last_line = Instant::now();
            tracing::info!("{}", state.line());
        }
    }

    fn message(&self, message: &str) {
        let state = self.state.lock().unwrap();
        match &state.bar {
            Some(bar) => bar.set_message(message.to_string()),
            None => tracing::info!("{}: {message}", state.label),
        }
    }

    fn finish(&self) {
        let mut state = self.state.lock().unwrap();
        if let Some(bar) = state.bar.take() {
            bar.finish_and_clear();
        }
        if !state.label.is_empty() {
            tracing::info!("{} in {:.1}s", state.line(), state.started.elapsed().as_secs_f64());
        }
    }
}
