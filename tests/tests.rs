//! Integration tests: one binary (ripgrep's habit), one module per concern.

// Tests print why they skip, and benchmarks print their figures.
#![allow(clippy::disallowed_macros)]

mod support;

mod bench;
mod cli;
mod cluster;
mod conformance;
mod crawl;
mod dataset;
mod demo;
mod discover;
mod extract;
mod git_diff;
mod language_c;
mod languages;
mod mirror;
mod owner;
mod release;
mod review;
mod runners;
mod screen;
mod store;
mod swt;
mod validate;
