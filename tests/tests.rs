//! Integration tests: one binary (ripgrep's habit), one module per concern.

// Tests print why they skip, and benchmarks print their figures.
#![allow(clippy::disallowed_macros)]

// The tests run the `github-sim` and `demo-fixtures` binaries (feature `dev-tools`),
// which Cargo.toml's dev-dependency on this package turns on for every test build:
// should that line go, the suite says so here rather than skip them.
#[cfg(not(feature = "dev-tools"))]
compile_error!(
    "the integration tests need the `dev-tools` feature (the github-sim and demo-fixtures binaries): \
     run `cargo test --features dev-tools`, and see docs/development.md"
);

mod support;

mod bench;
mod cli;
mod cluster;
mod conformance;
mod crawl;
mod dataset;
mod demo;
mod discover;
mod egress;
mod egress_bench;
mod extract;
mod git_diff;
mod images;
mod language_c;
mod languages;
mod ledger;
mod mirror;
mod owner;
mod probe;
mod release;
mod review;
mod runners;
mod screen;
mod store;
mod swt;
mod validate;
