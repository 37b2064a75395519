//! The daemon: the loop that keeps the kernel's table as the
//! configuration and the servers' health say ([`Agent`]), driven through
//! its [`Handle`]; how it reaches the kernel ([`Connector`]); its HTTP
//! endpoint, logs, systemd notifications, signals and command line.

mod agent;
mod changes;
mod checks;
mod connect;
mod control;
mod deadlines;
mod file_watch;
mod http;
mod limits;
mod logging;
mod metrics;
mod notify;
mod options;
mod run;
pub(crate) mod runtime;
mod signals;
mod syncing;

pub use agent::{Agent, AgentOptions};
pub use connect::{ClientFuture, Connector};
pub use control::{AgentState, Handle, ServerState, SyncSummary};
pub use file_watch::watch_file;
pub use http::{endpoint_limits, serve, IDLE_TIMEOUT, MAX_CONNECTIONS, REQUEST_TIMEOUT};
pub use logging::init_logging;
pub use notify::Notifier;
pub use options::{LogFormat, RunOptions, UsageError, DEFAULT_LISTEN};
pub use run::run_args;
pub use signals::forward_signals;
