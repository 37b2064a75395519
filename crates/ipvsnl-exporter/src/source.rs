//! Where a scrape's listing comes from: the [`Source`] trait, and
//! [`ClientSource`], the kernel's table through `ipvsnl`.

use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ipvsnl::{Client, ServiceEntry, Stats};

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

/// The kernel's IPVS table through a blocking [`ipvsnl::Client`], run on
/// tokio's blocking pool.
///
/// The client is made on the first scrape (and again after a failed one),
/// so an exporter started before `ip_vs` is loaded serves `up 0` until it
/// is, then the table.
// switched to AsyncClient when it lands
#[derive(Debug, Clone)]
pub struct ClientSource {
    netns: Option<PathBuf>,
    client: Arc<Mutex<Option<Client>>>,
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
    /// exist, no permission) rather than at the first scrape. Blocking.
    pub fn connect(&self) -> Result<(), ipvsnl::Error> {
        let client = open(self.netns.as_deref())?;
        *lock(&self.client) = Some(client);
        Ok(())
    }
}

fn open(netns: Option<&Path>) -> Result<Client, ipvsnl::Error> {
    match netns {
        Some(path) => Client::in_namespace(path),
        None => Client::new(),
    }
}

/// The lock, even if a scrape panicked while holding it (the client is
/// then dropped and made again).
fn lock(m: &Mutex<Option<Client>>) -> std::sync::MutexGuard<'_, Option<Client>> {
    m.lock().unwrap_or_else(|poisoned| {
        let mut guard = poisoned.into_inner();
        *guard = None;
        guard
    })
}

fn scrape_blocking(
    netns: Option<&Path>,
    slot: &Mutex<Option<Client>>,
) -> Result<Snapshot, ScrapeError> {
    let mut guard = lock(slot);
    let client = match guard.as_mut() {
        Some(c) => c,
        None => guard.insert(open(netns)?),
    };
    let table = match client.table() {
        Ok(t) => t,
        Err(e) => {
            // A fresh client (and socket) for the next scrape.
            *guard = None;
            return Err(e.into());
        }
    };
    let totals = client.totals().map_err(ScrapeError::from);
    Ok(Snapshot { table, totals })
}

impl Source for ClientSource {
    fn scrape(&self) -> impl Future<Output = Result<Snapshot, ScrapeError>> + Send {
        let this = self.clone();
        async move {
            let work = move || scrape_blocking(this.netns.as_deref(), &this.client);
            match tokio::task::spawn_blocking(work).await {
                Ok(result) => result,
                Err(e) => Err(ScrapeError::new(format!("the listing task failed: {e}"))),
            }
        }
    }
}
