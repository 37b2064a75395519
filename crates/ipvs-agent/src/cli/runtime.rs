//! The tokio runtime of the agent's commands (`run`, `publish`): one
//! thread, with I/O and timers; a failure to build it is said on stderr
//! and is exit status 1.

use std::process::ExitCode;

use tokio::runtime::Runtime;

/// A current-thread runtime with I/O and timers, or the exit status of a
/// command that could not build one (after saying why on stderr).
pub(super) fn command_runtime() -> Result<Runtime, ExitCode> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("ipvs-agent: cannot start the runtime: {e}");
            ExitCode::from(1)
        })
}
