//! How the daemon gets its IPVS client: the current network namespace,
//! another one by path (`--netns PATH`), or whatever a test hands it (a
//! client of an emulated kernel).

use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use ipvsnl::AsyncClient;

/// A client being opened.
pub type ClientFuture = Pin<Box<dyn Future<Output = Result<AsyncClient, ipvsnl::Error>> + Send>>;

/// Makes the daemon's IPVS clients: one for its syncs, one for the
/// exporter's listings, and a new one after a sync whose client failed.
///
/// ```
/// let c = ipvs_agent::daemon::Connector::current();
/// assert_eq!(c.to_string(), "the current network namespace");
/// let c = ipvs_agent::daemon::Connector::netns("/run/netns/lb");
/// assert_eq!(c.to_string(), "network namespace /run/netns/lb");
/// ```
#[derive(Clone)]
pub struct Connector {
    open: Arc<dyn Fn() -> ClientFuture + Send + Sync>,
    what: String,
}

impl Connector {
    /// Clients of the calling thread's network namespace.
    pub fn current() -> Self {
        Connector::new("the current network namespace", || {
            Box::pin(async { AsyncClient::new() })
        })
    }

    /// Clients of the network namespace whose file is at `path`
    /// (`/run/netns/NAME`, `/proc/PID/ns/net`).
    pub fn netns(path: impl Into<PathBuf>) -> Self {
        let path: PathBuf = path.into();
        let what = format!("network namespace {}", path.display());
        Connector::new(what, move || {
            let path = path.clone();
            Box::pin(async move { AsyncClient::in_namespace(path).await })
        })
    }

    /// Clients made by `open` (a test's: a client of an emulated kernel);
    /// `what` names them in logs.
    pub fn new(
        what: impl Into<String>,
        open: impl Fn() -> ClientFuture + Send + Sync + 'static,
    ) -> Self {
        Connector {
            open: Arc::new(open),
            what: what.into(),
        }
    }

    /// Opens a client.
    pub fn connect(&self) -> ClientFuture {
        (self.open)()
    }
}

impl fmt::Display for Connector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.what)
    }
}

impl fmt::Debug for Connector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connector")
            .field("what", &self.what)
            .finish_non_exhaustive()
    }
}
