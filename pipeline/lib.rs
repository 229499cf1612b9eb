//! swe-harvest: builds SWE-bench style benchmark tasks from real GitHub history.
//!
//! The stages (`discover -> crawl -> mirror -> extract -> validate -> screen -> release`) each
//! read their inputs from the [`store`] and write their outputs to it, so each can be
//! killed and resumed. This crate is the library; the `swe-harvest` binary
//! (`pipeline/main.rs` and `pipeline/cli/`) is a thin command line over it and the
//! only place that prints for humans.

pub mod config;
pub mod crawl;
pub mod dataset;
pub mod discover;
pub mod ecosystem;
pub mod env_vars;
pub mod evaluate;
pub mod extract;
pub mod git;
pub mod github;
pub mod interrupt;
pub mod lock;
pub mod mirror;
pub mod model;
pub mod mutation;
pub mod probe;
pub mod process;
pub mod progress;
pub mod release;
pub mod report;
pub mod review;
pub mod sandbox;
pub mod screen;
pub mod secret;
pub mod settings;
mod spelled;
pub mod store;
pub mod swt;
pub mod task_rows;
pub mod validate;

/// Bad input from the person at the terminal (exit code 2), with advice.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct UsageError {
    pub message: String,
    pub hint: Option<String>,
}

impl UsageError {
    pub fn new(message: impl Into<String>) -> UsageError {
        UsageError { message: message.into(), hint: None }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> UsageError {
        self.hint = Some(hint.into());
        self
    }
}

/// An error and its causes on one line, `outer: inner: innermost`, for the
/// `detail` of a recorded drop or failure.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// The pipeline's version, recorded in releases.
pub const PIPELINE_VERSION: &str = env!("CARGO_PKG_VERSION");
