//! Integration tests: one binary (ripgrep's habit), one module per concern.

mod support;

mod bench;
mod cli;
mod conformance;
mod crawl;
mod dataset;
mod demo;
mod discover;
mod extract;
mod git_diff;
mod mirror;
mod release;
mod store;
mod swt;
mod validate;
