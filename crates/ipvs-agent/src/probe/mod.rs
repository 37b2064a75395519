//! The checkers' I/O: one check of one real server, bounded by the
//! check's timeout, as a [`Prober`] runs it.
//!
//! The daemon holds one `Prober` and hands it every check that is due; a
//! test hands the daemon its own (a scripted one) to drive health without
//! servers. [`NetProber`] is the real one: every check kind over the
//! network (or as a command), one file here per mechanism.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use crate::check::Outcome;
use crate::config::HealthCheck;

mod body;
mod command;
mod dns;
mod failure;
mod http;
mod http_body;
mod http_head;
mod lingering;
mod net;
mod tcp;
mod tls;

pub use net::NetProber;
/// The store of trusted certificates [`NetProber::with_root_certificates`]
/// takes (rustls's).
pub use rustls::RootCertStore;

/// A check under way: it resolves to the check's [`Outcome`].
pub type ProbeFuture = Pin<Box<dyn Future<Output = Outcome> + Send + 'static>>;

/// What runs health checks.
pub trait Prober: Send + Sync + 'static {
    /// Starts one check of the real server at `server` (its address and
    /// its port; a check's own `port`, where it has one, is probed
    /// instead). The future resolves within `check.timeout` (plus the
    /// runtime's timer granularity): a check that has no answer by then is
    /// [`Failure::Timeout`](crate::check::Failure::Timeout), and whatever it
    /// opened (sockets, a child process) is closed or killed. The daemon
    /// does not time the future again: a prober must keep this bound.
    fn probe(&self, server: SocketAddr, check: Arc<HealthCheck>) -> ProbeFuture;

    /// Starts one check as [`probe`](Prober::probe) does, but unbounded:
    /// the caller times it (`check.timeout` from its first poll) and drops
    /// it when that has passed, which must close whatever it opened.
    /// `None` where this prober times a check itself (a command, which it
    /// kills and reaps first): the caller calls `probe` then.
    ///
    /// The daemon asks this first: its own deadlines cost it no timer of
    /// the runtime a check (benches/AGENT.md). `None` by default.
    fn probe_untimed(&self, server: SocketAddr, check: &Arc<HealthCheck>) -> Option<ProbeFuture> {
        let _ = (server, check);
        None
    }
}
