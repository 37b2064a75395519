//! The commands layer: `ipvs-agent`'s command line. It reads the flags of
//! `check`, `import`, `publish` and `run` (clap's derive, one definition: `--help`
//! per command, `--version`, errors with suggestions, and the
//! packagers' man page and completions from [`command`]), fills the
//! engines' plain option structs and calls them: the daemon
//! ([`crate::daemon`]) and fleet mode (`crate::fleet`, with the `fleet`
//! feature) read no flag, and neither imports the other; what joins them
//! (a daemon following etcd, the election beside the agent) is composed
//! here.
//!
//! Contract: exit status 0 on success (and for `--help`, `--version`), 1
//! on an error the command reports (a file's errors each at its line and
//! column), 2 on a usage error (said on stderr, nothing started).

mod args;
mod check;
mod import;
#[cfg(feature = "fleet")]
mod publish;
mod run;
mod run_options;
mod runtime;
mod state;
mod usage;

use std::process::ExitCode;
use std::sync::Arc;

use crate::probe::Prober;

pub use args::{command, DEFAULT_LISTEN};
use args::{parse, AgentCommand};
use check::check;
#[cfg(feature = "fleet")]
pub use publish::parse_publish;
pub use run_options::RunOptions;
pub use usage::UsageError;

/// Runs the command the arguments (after the program's name) say, the
/// servers of `run` checked by the prober `prober` makes (called only
/// for `run`: a real one reads the system's certificates); its exit
/// status.
pub fn main(args: &[&str], prober: impl FnOnce() -> Arc<dyn Prober>) -> ExitCode {
    let cli = match parse(args) {
        Ok(cli) => cli,
        Err(e) => {
            // `--help` and `--version` on stdout (0), errors on stderr (2).
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    match cli.command {
        AgentCommand::Check { file } => check(&file),
        AgentCommand::Import(args::ImportFrom::Keepalived(flags)) => import::keepalived(&flags),
        AgentCommand::Publish(flags) => publish(flags),
        AgentCommand::Run(flags) => run::run(*flags, prober),
    }
}

#[cfg(feature = "fleet")]
fn publish(flags: args::PublishFlags) -> ExitCode {
    publish::publish(flags)
}

#[cfg(not(feature = "fleet"))]
fn publish(_flags: args::PublishFlags) -> ExitCode {
    eprintln!("ipvs-agent publish: this build has no fleet mode (build with the `fleet` feature)");
    ExitCode::from(2)
}
