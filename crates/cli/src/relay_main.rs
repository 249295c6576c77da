//! The `tether-relay` binary, which `tether serve` becomes once a warm host runs its session.

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    tether_relay::main_with_args(std::env::args_os().skip(1))
}
