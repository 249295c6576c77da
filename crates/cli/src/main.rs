//! The `tether` binary: the command line with the capabilities tether ships.

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    tether_cli::main_with(|run| run)
}
