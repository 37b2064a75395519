//! The daemon: the loop that keeps the kernel's table as the
//! configuration and the servers' health say ([`Agent`]), driven through
//! its [`Handle`]; how it reaches the kernel ([`Connector`]); its HTTP
//! endpoint, logs, systemd notifications and signals.
//!
//! An engine: it reads no flag and knows nothing of fleet mode. The
//! command layer ([`crate::cli`]) fills its options and composes it with
//! fleet mode (`crate::fleet`, `ipvs-agent run --etcd`).

mod agent;
mod agent_owns;
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
mod owned;
mod panics;
mod reloading;
mod retiring;
mod signals;
mod startup;
mod syncing;

pub use agent::Agent;
pub use connect::{ClientFuture, Connector};
pub use control::{AgentState, Handle, ServerState, SyncSummary};
pub use file_watch::{watch_file, FileVersion};
pub use http::{endpoint_limits, serve, IDLE_TIMEOUT, MAX_CONNECTIONS, REQUEST_TIMEOUT};
pub(crate) use limits::raise_open_files_limit;
pub use logging::{init_logging, LogFormat};
pub use notify::Notifier;
pub use options::AgentOptions;
pub use panics::abort_on_panic;
pub use signals::{forward_signals, Signals, FORCED_EXIT};
