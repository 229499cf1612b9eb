//! Integration tests: one binary (ripgrep's habit), one module per concern.

mod support;

mod bench;
mod cli;
mod crawl;
mod dataset;
mod discover;
mod release;
mod conformance;
mod extract;
mod git_diff;
mod mirror;
mod store;
mod validate;
