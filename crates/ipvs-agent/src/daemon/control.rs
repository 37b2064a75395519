//! Driving a running agent: a [`Handle`] reloads it, stops it, asks for
//! its state. The signals (SIGHUP, SIGTERM) call it; tests call it
//! directly.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use ipvsnl::sync::DestinationId;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::check::Health;
use crate::config::Config;
use crate::daemon::metrics::Metrics;

/// What the loop is asked.
#[derive(Debug)]
pub(crate) enum Command {
    /// Read the configuration file again; answers whether it was applied.
    Reload(oneshot::Sender<bool>),
    /// Apply a configuration given whole (a fleet's generation), as a
    /// reload applies a file; answered once applied.
    Apply(Box<Config>, oneshot::Sender<()>),
    /// Stop; `remove`: remove the agent's services first (`None`: as the
    /// options say). Answered when the loop has stopped.
    Stop(Option<bool>),
    /// The loop's state now.
    State(oneshot::Sender<AgentState>),
}

/// What the loop and the HTTP endpoint share.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub(crate) metrics: Mutex<Metrics>,
}

impl Shared {
    /// The metrics, even if a panic poisoned their lock.
    pub(crate) fn metrics(&self) -> std::sync::MutexGuard<'_, Metrics> {
        self.metrics.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One real server as the loop sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerState {
    /// Its service's key, address and port.
    pub id: DestinationId,
    /// Healthy or not.
    pub health: Health,
    /// When it last changed state (`None`: not since the agent started or
    /// the server was added).
    pub changed: Option<Instant>,
}

impl ServerState {
    /// Its address and port.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::new(self.id.1, self.id.2)
    }
}

/// What the last sync did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SyncSummary {
    /// When it ended.
    pub finished: Instant,
    /// Requests it sent.
    pub requests: usize,
    /// Whether every request was applied (`false` also for a sync that
    /// failed to list the table).
    pub complete: bool,
    /// Whether it listed the kernel's table (a resync, the first sync, a
    /// retry) rather than planning from its view.
    pub listed: bool,
}

/// A snapshot of the running agent.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentState {
    /// The configuration in force.
    pub config: Arc<Config>,
    /// Every real server, in the configuration's order.
    pub servers: Vec<ServerState>,
    /// Whether every service is synced at start (`daemon/startup.rs`).
    pub ready: bool,
    /// Syncs ended so far.
    pub syncs: u64,
    /// The last one.
    pub last_sync: Option<SyncSummary>,
    /// Reloads refused so far (the file had errors).
    pub reload_errors: u64,
}

impl AgentState {
    /// The state of the server at `addr` (of any service).
    pub fn server(&self, addr: SocketAddr) -> Option<&ServerState> {
        self.servers.iter().find(|s| s.addr() == addr)
    }
}

/// Drives a running agent (cheap to clone).
#[derive(Debug, Clone)]
pub struct Handle {
    pub(crate) commands: mpsc::UnboundedSender<Command>,
    pub(crate) shared: Arc<Shared>,
}

impl Handle {
    /// Reloads the configuration file: `true` if it was applied, `false`
    /// if it had errors (the running configuration stays; the errors are
    /// logged and counted) or the agent has stopped.
    pub async fn reload(&self) -> bool {
        let (tx, rx) = oneshot::channel();
        if self.commands.send(Command::Reload(tx)).is_err() {
            return false;
        }
        rx.await.unwrap_or(false)
    }

    /// Applies `config`, validated already, as a reload applies a file: a
    /// diff, kept servers keep their check state and connections. What a
    /// fleet's `Source` delivers goes in here. The work is in proportion
    /// to the services it adds, removes or changes (the others are only
    /// compared, by key and value). `false` if the agent has stopped.
    pub async fn apply(&self, config: Config) -> bool {
        let (tx, rx) = oneshot::channel();
        if self
            .commands
            .send(Command::Apply(Box::new(config), tx))
            .is_err()
        {
            return false;
        }
        rx.await.is_ok()
    }

    /// Asks the agent to stop, removing its services or not as its options
    /// say. The agent's `run` returns when it has.
    pub fn stop(&self) {
        let _ = self.commands.send(Command::Stop(None));
    }

    /// Asks the agent to stop; `remove`: remove its own services from the
    /// kernel first.
    pub fn stop_removing(&self, remove: bool) {
        let _ = self.commands.send(Command::Stop(Some(remove)));
    }

    /// The agent's state, or `None` once it has stopped.
    pub async fn state(&self) -> Option<AgentState> {
        let (tx, rx) = oneshot::channel();
        self.commands.send(Command::State(tx)).ok()?;
        rx.await.ok()
    }

    /// Whether the loop answers (what `/healthz` says).
    pub async fn alive(&self) -> bool {
        self.state().await.is_some()
    }

    /// Whether every service is synced at start (what `/ready` says).
    pub fn ready(&self) -> bool {
        self.shared.metrics().is_ready()
    }

    /// The agent's own metrics in the Prometheus text format.
    pub fn metrics_text(&self) -> String {
        self.shared.metrics().render()
    }
}
