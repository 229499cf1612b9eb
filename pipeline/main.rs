//! The `swe-harvest` binary; everything happens in [`cli`].

// The command line is the one place that prints for people (clippy.toml forbids it elsewhere).
#[allow(clippy::disallowed_macros)]
mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
