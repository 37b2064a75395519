//! `ipvs-doctor`: tells whether this host (or a network namespace) can use
//! IPVS, and what to do when it cannot.
//!
//! Exit status: 0 usable with the required schedulers, 1 not usable, 2 bad
//! arguments. Run with `-h` for the options.

use std::io::Write;
use std::process::ExitCode;

use ipvsnl_doctor::cli::{parse_args, Cli, USAGE};

fn main() -> ExitCode {
    let (options, json) = match parse_args(std::env::args_os().skip(1)) {
        Ok(Cli::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Cli::Run { options, json }) => (options, json),
        Ok(_) => return ExitCode::from(2),
        Err(err) => {
            eprintln!("ipvs-doctor: {err}");
            eprintln!("Try 'ipvs-doctor --help' for the options.");
            return ExitCode::from(2);
        }
    };
    let report = ipvsnl_doctor::diagnose(&options);
    let text = if json {
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
