//! Where a scrape's listing comes from: the [`Source`] trait, and
//! [`ClientSource`], the kernel's table through `ipvsnl`.

use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ipvsnl::{AsyncClient, ServiceEntry, Stats};
use tokio::sync::Mutex;

/// What one scrape read: the table and, when they could be read, the
/// totals.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Snapshot {
    /// Every service with its destinations.
    pub table: Vec<ServiceEntry>,
    /// The namespace's totals; an error when they could not be read (the
    /// table is still served; the error is logged).
    pub totals: Result<Stats, ScrapeError>,
}

impl Snapshot {
    /// A snapshot of `table` and `totals`.
    ///
    /// ```
    /// use ipvsnl::Stats;
    /// use ipvsnl_exporter::{ScrapeError, Snapshot};
    /// let s = Snapshot::new(vec![], Err(ScrapeError::new("no /proc")));
    /// assert!(s.table.is_empty() && s.totals.is_err());
    /// let s = Snapshot::new(vec![], Ok(Stats::new().with_conns(1)));
    /// assert_eq!(s.totals.unwrap().conns, 1);
    /// ```
    pub fn new(table: Vec<ServiceEntry>, totals: Result<Stats, ScrapeError>) -> Self {
        Snapshot { table, totals }
    }
}

/// Why a listing (or the totals) failed, as text for the log line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScrapeError {
    /// What went wrong.
    pub message: String,
}

impl ScrapeError {
    /// An error saying `message`.
    pub fn new(message: impl fmt::Display) -> Self {
        ScrapeError {
            message: message.to_string(),
        }
    }
}

impl fmt::Display for ScrapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScrapeError {}

impl From<ipvsnl::Error> for ScrapeError {
    fn from(e: ipvsnl::Error) -> Self {
        ScrapeError::new(e)
    }
}

/// A source of listings: one call per scrape.
///
/// Tests give the server a fake one; the binary gives it [`ClientSource`].
pub trait Source: Send + Sync + 'static {
    /// One listing of the table and the totals. An `Err` is a failed
    /// scrape: the exporter answers `<namespace>_up 0`.
    fn scrape(&self) -> impl Future<Output = Result<Snapshot, ScrapeError>> + Send;
}

/// The kernel's IPVS table through an [`ipvsnl::AsyncClient`] on the
/// server's runtime: one listing (a service dump, then a destination dump
/// per service, on the client's one socket) and the totals per scrape.
///
/// The client is made on the first scrape (and again after a failed one),
/// so an exporter started before `ip_vs` is loaded serves `up 0` until it
/// is, then the table. Scrapes that arrive together take turns on the one
/// client.
#[derive(Debug, Clone)]
pub struct ClientSource {
    netns: Option<PathBuf>,
    client: Arc<Mutex<Option<AsyncClient>>>,
}

impl ClientSource {
    /// A source listing the caller's network namespace, or the one of
    /// `netns` (`/var/run/netns/NAME`, `/proc/PID/ns/net`). No socket is
    /// opened yet; see [`ClientSource::connect`].
    pub fn new(netns: Option<&Path>) -> Self {
        ClientSource {
            netns: netns.map(Path::to_path_buf),
            client: Arc::new(Mutex::new(None)),
        }
    }

    /// Opens the client now, to fail early (a namespace that does not
    /// exist, no permission) rather than at the first scrape. Inside the
    /// runtime that will serve the scrapes.
    pub async fn connect(&self) -> Result<(), ipvsnl::Error> {
        let client = open(self.netns.as_deref()).await?;
        *self.client.lock().await = Some(client);
        Ok(())
    }
}

async fn open(netns: Option<&Path>) -> Result<AsyncClient, ipvsnl::Error> {
    match netns {
        Some(path) => AsyncClient::in_namespace(path).await,
        None => AsyncClient::new(),
    }
}

impl Source for ClientSource {
    async fn scrape(&self) -> Result<Snapshot, ScrapeError> {
        let mut guard = self.client.lock().await;
        let client = match guard.as_mut() {
            Some(c) => c,
            None => guard.insert(open(self.netns.as_deref()).await?),
        };
        let table = match client.table().await {
            Ok(t) => t,
            Err(e) => {
                // A fresh client (and socket) for the next scrape.
                *guard = None;
                return Err(e.into());
            }
        };
        let totals = client.totals().await.map_err(ScrapeError::from);
        Ok(Snapshot { table, totals })
    }
}
