//! Integration tests: one binary (ripgrep's habit), one module per concern.

mod support;

mod cli;
mod dataset;
mod release;
mod store;
