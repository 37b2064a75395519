//! `ipvs-doctor`: tells whether this host (or a network namespace) can use
//! IPVS, and what to do when it cannot.
//!
//! Exit status: 0 usable with the required schedulers, 1 not usable, 2 bad
//! arguments (clap's usage error). Run with `--help` for the options.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use ipvsnl_doctor::cli::Args;

fn main() -> ExitCode {
    // `--help` and `--version` print and exit 0; a bad command line prints
    // what is wrong and exits 2.
    let args = Args::parse();
    let report = ipvsnl_doctor::diagnose(&args.options());
    let text = if args.json {
        report.to_json()
    } else {
        report.to_string()
    };
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (ipvs-doctor | head) must not turn into a panic.
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    if report.usable() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
