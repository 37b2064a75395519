//! The syncs: one in flight at a time, a change during it triggers one
//! more (coalesced), a failed or incomplete one is retried after a backoff
//! (1 s, doubling up to the resync period), and the syncer's scope widened
//! by a reload until one complete sync has removed what the reload took
//! out; while servers drain, their services are read back every
//! [`DRAIN_POLL`] (or every resync period, if shorter) to delete them once
//! their connections are gone or their drain has run its longest. With
//! an ownership record (`daemon/owned.rs`), the services a sync may create
//! are claimed before it starts, and the scope holds those recorded.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use ipvsnl::sync::{PlanOptions, Report, Syncer, Table};
use ipvsnl::AsyncClient;
use tokio::time::Instant;

use crate::daemon::connect::Connector;
use crate::daemon::owned::Owned;

/// The first pause after a failed sync.
pub(crate) const MIN_BACKOFF: Duration = Duration::from_secs(1);

/// The longest pause between tries to record the services a sync would
/// create (a state directory that cannot be written).
const CLAIM_BACKOFF_MAX: Duration = Duration::from_secs(60);

/// How often a drain is looked at: a cached sync, which reads back the
/// services with servers draining (their connection counts) before it
/// plans. It listed the whole table before (about 0.65 s of kernel time
/// for 10,000 services x 5 under icount); the period stays.
pub(crate) const DRAIN_POLL: Duration = Duration::from_secs(5);

/// A sync that ended.
pub(crate) struct Done {
    syncer: Syncer,
    client: Option<AsyncClient>,
    /// The report, or why the sync could not list (or connect).
    pub(crate) result: Result<Report, ipvsnl::Error>,
    /// How long it took.
    pub(crate) took: Duration,
    /// Whether it listed the kernel's table.
    pub(crate) listed: bool,
    /// The configuration generation it synced.
    generation: u64,
}

type InFlight = Pin<Box<dyn Future<Output = Done> + Send>>;

/// The sync side of the loop.
pub(crate) struct Syncing {
    connector: Connector,
    /// The options the syncer has, or gets when it is back (the scope
    /// without the services recorded: `owned` adds them).
    options: PlanOptions,
    /// The ownership record.
    owned: Owned,
    syncer: Option<Syncer>,
    client: Option<AsyncClient>,
    in_flight: Option<InFlight>,
    /// The desired table changed since the last sync started.
    dirty: bool,
    /// The next sync lists the kernel's table (a resync, a retry).
    list_next: bool,
    retry_at: Option<Instant>,
    /// When to list again to see how the drains are going (`None`: no
    /// server drains).
    drain_check_at: Option<Instant>,
    backoff: Duration,
    /// Options to set once the syncer is back from a sync in flight.
    pending: Option<PlanOptions>,
    /// Options to set after a complete sync of this configuration
    /// generation or a later one (a reload's scope, narrowed).
    narrow: Option<(u64, PlanOptions)>,
}

impl Syncing {
    pub(crate) fn new(
        connector: Connector,
        options: PlanOptions,
        client: AsyncClient,
        owned: Owned,
    ) -> Self {
        Syncing {
            connector,
            syncer: Some(Syncer::new(owned.scope(options.clone()))),
            options,
            owned,
            client: Some(client),
            in_flight: None,
            dirty: true,
            list_next: true,
            retry_at: None,
            drain_check_at: None,
            backoff: MIN_BACKOFF,
            pending: None,
            narrow: None,
        }
    }

    /// Lists the kernel's table as the syncer sees it (the services in its
    /// scope with their destinations, the others without), on its client:
    /// what the agent adopts at start, before any sync.
    pub(crate) async fn list(&mut self) -> Result<Table, ipvsnl::Error> {
        let (Some(syncer), Some(client)) = (self.syncer.as_ref(), self.client.as_mut()) else {
            return Ok(Table::new());
        };
        syncer.list_async(client).await
    }

    /// The desired table changed (`list`: the next sync reads the
    /// kernel's table back).
    pub(crate) fn request(&mut self, list: bool) {
        self.dirty = true;
        self.list_next |= list;
    }

    /// Whether a sync is in flight.
    pub(crate) fn busy(&self) -> bool {
        self.in_flight.is_some()
    }

    /// Whether a sync should start now.
    pub(crate) fn due(&self, now: Instant) -> bool {
        self.in_flight.is_none()
            && (self.dirty && self.retry_at.map_or(true, |t| now >= t)
                || self.drain_check_at.is_some_and(|t| now >= t))
    }

    /// When a sync waiting out its backoff, or a look at the drains, is
    /// due.
    pub(crate) fn wake(&self) -> Option<Instant> {
        if self.in_flight.is_some() {
            return None;
        }
        let retry = match (self.dirty, self.retry_at) {
            (true, Some(t)) => Some(t),
            _ => None,
        };
        retry.into_iter().chain(self.drain_check_at).min()
    }

    /// The keys the ownership record holds.
    pub(crate) fn recorded(&self) -> std::collections::BTreeSet<ipvsnl::ServiceKey> {
        self.owned.keys()
    }

    /// The table the syncer last left, if it is back and kept a view.
    pub(crate) fn view(&self) -> Option<&Table> {
        self.syncer.as_ref().and_then(Syncer::cached)
    }

    /// Starts a sync to `desired` (of configuration `generation`), once
    /// its services are claimed in the ownership record (a claim that
    /// fails is retried at the backoff, the sync not started: a service
    /// it created could leak).
    pub(crate) fn start(&mut self, desired: Table, generation: u64) {
        if self.syncer.is_none() {
            return;
        }
        if let Err(e) = self.owned.claim(&desired) {
            tracing::error!(error = %e, "sync not started: its services cannot be recorded");
            let now = Instant::now();
            self.retry_at = Some(now + self.backoff);
            self.backoff = (self.backoff * 2).min(CLAIM_BACKOFF_MAX);
            self.dirty = true;
            return;
        }
        let Some(mut syncer) = self.syncer.take() else {
            return;
        };
        // A look at the drains reads the connection counts of the
        // services with servers draining: a cached sync reads those back
        // (not the whole table) before it plans.
        self.drain_check_at = None;
        let listed = std::mem::take(&mut self.list_next);
        self.dirty = false;
        let client = self.client.take();
        let connector = self.connector.clone();
        self.in_flight = Some(Box::pin(async move {
            let started = Instant::now();
            let connected = match client {
                Some(c) => Ok(c),
                None => connector.connect().await,
            };
            let (result, client) = match connected {
                Ok(mut c) => {
                    let r = if listed {
                        syncer.sync_async(&mut c, &desired).await
                    } else {
                        syncer.sync_cached_async(&mut c, &desired).await
                    };
                    (r, Some(c))
                }
                Err(e) => (Err(e), None),
            };
            Done {
                syncer,
                client,
                result,
                took: started.elapsed(),
                listed,
                generation,
            }
        }));
    }

    /// The sync in flight's end (pending while none is).
    pub(crate) async fn wait(&mut self) -> Done {
        match self.in_flight.as_mut() {
            Some(f) => f.await,
            None => std::future::pending().await,
        }
    }

    /// Takes back what a sync ended with, and says when to try again:
    /// after a failure (the client is dropped: the next sync opens
    /// another) or an incomplete report, once the backoff has passed, the
    /// kernel's table listed; after a complete sync, the backoff starts
    /// again from its least, a reload's widened scope is narrowed, and,
    /// while servers drain, a look at them is due in [`DRAIN_POLL`].
    pub(crate) fn finish(&mut self, done: Done, now: Instant, resync: Duration) {
        self.in_flight = None;
        let mut syncer = done.syncer;
        if self.owned.after(&syncer) && self.pending.is_none() {
            syncer.set_options(self.owned.scope(self.options.clone()));
        }
        if let Some(p) = self.pending.take() {
            syncer.set_options(self.owned.scope(p));
        }
        let complete = matches!(&done.result, Ok(r) if r.is_complete());
        self.client = if done.result.is_ok() {
            done.client
        } else {
            None
        };
        // Only a complete sync schedules a look at the drains: after any
        // other, the retry lists (and sees the drains) at the backoff,
        // which a poll every DRAIN_POLL would otherwise cut short.
        self.drain_check_at = if complete && !syncer.draining().is_empty() {
            Some(now + resync.min(DRAIN_POLL))
        } else {
            None
        };
        if complete {
            self.backoff = MIN_BACKOFF;
            self.retry_at = None;
            if let Some((generation, options)) = self.narrow.take() {
                if done.generation >= generation {
                    self.options = options.clone();
                    syncer.set_options(self.owned.scope(options));
                } else {
                    self.narrow = Some((generation, options));
                }
            }
        } else {
            self.retry_at = Some(now + self.backoff);
            self.backoff = (self.backoff * 2).min(resync.max(MIN_BACKOFF));
            self.request(true);
        }
        self.syncer = Some(syncer);
    }

    /// Sets the syncer's options (now, or when the sync in flight ends).
    pub(crate) fn set_options(&mut self, options: PlanOptions) {
        self.options = options.clone();
        match self.syncer.as_mut() {
            Some(s) => s.set_options(self.owned.scope(options)),
            None => self.pending = Some(options),
        }
    }

    /// After a reload of configuration `generation`: `wide` (the old and
    /// the new services) until a complete sync of it, then `narrow`.
    pub(crate) fn widen(&mut self, wide: PlanOptions, narrow: PlanOptions, generation: u64) {
        self.set_options(wide);
        self.narrow = Some((generation, narrow));
    }

    /// Waits for the sync in flight, at most `bound` (then drops it: the
    /// client stays usable, the syncer is lost and a new one is made).
    pub(crate) async fn settle(&mut self, bound: Duration, resync: Duration) {
        if self.in_flight.is_none() {
            return;
        }
        match tokio::time::timeout(bound, self.wait()).await {
            Ok(done) => self.finish(done, Instant::now(), resync),
            Err(_) => {
                self.in_flight = None;
                self.pending = None;
                self.syncer = Some(Syncer::new(self.owned.scope(self.options.clone())));
            }
        }
    }

    /// Removes every service of the syncer's scope from the kernel (the
    /// agent's own, at exit, those recorded too): deleted at once, no
    /// drain.
    pub(crate) async fn remove_all(&mut self) -> Result<Report, ipvsnl::Error> {
        let scope = self.owned.scope(self.options.clone()).scope;
        let mut syncer = Syncer::new(PlanOptions::new(scope));
        let mut client = match self.client.take() {
            Some(c) => c,
            None => self.connector.connect().await?,
        };
        let report = syncer.sync_async(&mut client, &Table::new()).await;
        self.owned.after(&syncer);
        report
    }
}
