//! Integration tests: one binary (ripgrep's habit), one module per concern.

mod support;

mod cli;
mod crawl;
mod dataset;
mod discover;
mod release;
mod conformance;
mod git_diff;
mod store;
mod validate;
