//! The commands layer: `ipvs-agent`'s command line. It reads the flags of
//! `check`, `publish` and `run`, fills the engines' plain option structs
//! and calls them: the daemon ([`crate::daemon`]) and fleet mode
//! (`crate::fleet`, with the `fleet` feature) read no flag, and neither
//! imports the other; what joins them (a daemon following etcd, the
//! election beside the agent) is composed here.
//!
//! Contract: exit status 0 on success, 1 on an error the command reports
//! (a file's errors each at its line and column), 2 on a usage error
//! (said on stderr after the command's name, nothing started).

mod check;
#[cfg(feature = "fleet")]
mod publish;
mod run;
mod run_options;
mod runtime;
mod usage;

use std::process::ExitCode;
use std::sync::Arc;

use crate::probe::Prober;

use check::check;
#[cfg(feature = "fleet")]
pub use publish::parse_publish;
#[cfg(feature = "fleet")]
use publish::publish_args;
pub use run::run_args;
pub use run_options::{RunOptions, DEFAULT_LISTEN};
pub use usage::UsageError;
use usage::USAGE;

/// Runs the command the arguments (after the program's name) say, the
/// servers of `run` checked by the prober `prober` makes (called only
/// for `run`: a real one reads the system's certificates); its exit
/// status.
pub fn main(args: &[&str], prober: impl FnOnce() -> Arc<dyn Prober>) -> ExitCode {
    match args {
        ["check", file] => check(std::path::Path::new(file)),
        ["publish", rest @ ..] => publish(rest),
        ["run", rest @ ..] => run_args(rest, prober()),
        ["-h" | "--help"] => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        ["-V" | "--version"] => {
            println!("ipvs-agent {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

#[cfg(feature = "fleet")]
fn publish(args: &[&str]) -> ExitCode {
    publish_args(args)
}

#[cfg(not(feature = "fleet"))]
fn publish(_args: &[&str]) -> ExitCode {
    eprintln!("ipvs-agent publish: this build has no fleet mode (build with the `fleet` feature)");
    ExitCode::from(2)
}
