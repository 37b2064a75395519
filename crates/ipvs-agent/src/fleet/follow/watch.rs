//! [`Source`]: the configurations a running agent follows. It reads the
//! complete generation, then watches `current` and the entries (one
//! range, [`Layout::watched`]) from the next revision. The watch brings the
//! keys and values a publish puts and deletes, then its flip of `current`:
//! the watcher adds up the change (the count and the digest of the keys,
//! in time proportional to the change), parses only the values put, and
//! so reads nothing from etcd for a new generation. A change that does
//! not add up (a watch started mid-publish, say) is read whole at the
//! flip's revision. After a disconnect it resumes the watch from the
//! revision it has (nothing is read again when nothing changed); after a
//! compaction took that revision away it reads the whole state again.
//!
//! To wire it into the daemon, a loop calls [`Source::next`] and hands each
//! configuration to the agent as a SIGHUP reload would (validated already,
//! applied as a diff); an error leaves the running configuration in place:
//!
//! ```no_run
//! # async fn f() -> Result<(), ipvs_agent::fleet::FleetError> {
//! use ipvs_agent::fleet::Source;
//! let mut source = Source::connect(&["http://127.0.0.1:2379".to_string()], "/ipvs-agent").await?;
//! loop {
//!     match source.next().await {
//!         Ok(snapshot) => println!("generation {}: {} services",
//!                                  snapshot.generation, snapshot.config.services.len()),
//!         Err(e) => eprintln!("{e}: the running configuration stays"),
//!     }
//! }
//! # }
//! ```

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::Duration;

use etcd_client::{EventType, WatchOptions, WatchStream};

use crate::config::Config;
use crate::fleet::errors::FleetError;
use crate::fleet::store::current::{Current, KeySum};
use crate::fleet::store::etcd::Etcd;
use crate::fleet::store::layout::{check, Layout, SERVICES};
use crate::fleet::store::read::{
    read_current, read_entries, read_generation, Snapshot, MAX_MESSAGE,
};
use crate::fleet::store::values::{parse_keys, ParseCache};

/// The longest wait between two tries after errors.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// What a [`Source`] has done, for logs, metrics and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SourceStats {
    /// Reads of the whole state at the latest revision: at the start and
    /// after each compaction.
    pub full_reads: u64,
    /// Generations delivered (each checked against `current`), read
    /// whole or added up from a watch.
    pub generations_read: u64,
    /// Generations added up from the watch alone (nothing read).
    pub from_watch: u64,
    /// Flips whose change did not add up, read whole at their revision.
    pub read_whole: u64,
    /// Watches created (the first, then one per resume or reread).
    pub watches: u64,
    /// Watches resumed after a disconnect from the revision held.
    pub resumes: u64,
    /// Watches canceled because etcd compacted the revision they wanted.
    pub compactions: u64,
}

/// One event of the watch, not processed yet.
#[derive(Debug, Clone)]
enum Change {
    /// `current` written, at its revision.
    Flip(Vec<u8>, i64),
    /// `current` deleted.
    Unflipped,
    /// An entry put (its key relative to `PREFIX/entries/`) with its value.
    Put(String, Vec<u8>),
    /// An entry deleted.
    Deleted(String),
}

/// What processing a change came to.
enum Outcome {
    /// Nothing to deliver.
    Nothing,
    /// A new generation.
    Deliver(Snapshot),
}

/// The configurations published under a prefix, one complete generation
/// at a time.
pub struct Source {
    etcd: Etcd,
    layout: Layout,
    /// The store's revision up to which every event was received (each is
    /// processed or in `backlog`).
    revision: i64,
    /// `current`'s mod revision of the generation last delivered (0: none).
    current_revision: i64,
    /// The whole state is to be read (at the start, after a compaction).
    reread: bool,
    stream: Option<WatchStream>,
    /// Whether etcd answered on the stream (its creation at least).
    answered: bool,
    /// The stream was lost: the next one resumes it.
    lost: bool,
    /// Events received, in order, not processed yet.
    backlog: VecDeque<Change>,
    /// The entries' keys as of the last change processed.
    keys: BTreeSet<String>,
    /// Their digest and their services.
    sum: KeySum,
    services: usize,
    /// The values put since the last generation delivered, by key.
    fresh: HashMap<String, Vec<u8>>,
    /// The values parsed, by key.
    cache: ParseCache,
    failures: u32,
    /// When the next try may start, after an error.
    retry_at: Option<tokio::time::Instant>,
    stats: SourceStats,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("etcd", &self.etcd)
            .field("prefix", &self.layout.prefix)
            .field("revision", &self.revision)
            .field("stats", &self.stats)
            .finish()
    }
}

impl Source {
    /// The configurations under `prefix` of the cluster `etcd` reaches.
    pub fn new(etcd: Etcd, prefix: &str) -> Self {
        Source {
            etcd,
            layout: Layout::new(prefix),
            revision: 0,
            current_revision: 0,
            reread: true,
            stream: None,
            answered: false,
            lost: false,
            backlog: VecDeque::new(),
            keys: BTreeSet::new(),
            sum: KeySum::default(),
            services: 0,
            fresh: HashMap::new(),
            cache: ParseCache::new(),
            failures: 0,
            retry_at: None,
            stats: SourceStats::default(),
        }
    }

    /// [`Source::new`] on a new client of `endpoints`.
    pub async fn connect(endpoints: &[String], prefix: &str) -> Result<Self, FleetError> {
        Ok(Source::new(Etcd::connect(endpoints).await?, prefix))
    }

    /// What it has done so far.
    pub fn stats(&self) -> SourceStats {
        self.stats
    }

    /// The store's revision up to which it has seen every change.
    pub fn revision(&self) -> i64 {
        self.revision
    }

    /// The next complete configuration: the current one on the first call,
    /// then each newly published one (generations published in between
    /// may be skipped when they come in one read). Waits while nothing
    /// changes.
    ///
    /// An error (etcd unreachable; a generation incomplete or with a value
    /// that does not parse) leaves the source where it was: the next call
    /// tries again, after a backoff that grows to [`MAX_BACKOFF`]; a bad
    /// generation is skipped. Cancel-safe: a call dropped midway loses
    /// nothing.
    pub async fn next(&mut self) -> Result<Snapshot, FleetError> {
        if let Some(at) = self.retry_at {
            // An instant, not a duration: a call dropped while it waits
            // does not make the next wait again from the start.
            tokio::time::sleep_until(at).await;
        }
        match self.step().await {
            Ok(s) => {
                self.failures = 0;
                self.retry_at = None;
                Ok(s)
            }
            Err(e) => {
                self.failures = self.failures.saturating_add(1);
                let ms = 50u64 << self.failures.min(7);
                let wait = Duration::from_millis(ms).min(MAX_BACKOFF);
                self.retry_at = Some(tokio::time::Instant::now() + wait);
                Err(e)
            }
        }
    }

    async fn step(&mut self) -> Result<Snapshot, FleetError> {
        loop {
            // The change stays first in the backlog until processed: a
            // call dropped midway processes it again.
            while let Some(change) = self.backlog.front().cloned() {
                let outcome = self.process(change).await;
                if !matches!(&outcome, Err(e) if e.is_transient()) {
                    self.backlog.pop_front();
                }
                if let Outcome::Deliver(s) = outcome? {
                    return Ok(s);
                }
            }
            if self.reread {
                if let Some(s) = self.read_all().await? {
                    return Ok(s);
                }
            }
            self.receive().await?;
        }
    }

    /// One change of the watch, in order.
    async fn process(&mut self, change: Change) -> Result<Outcome, FleetError> {
        match change {
            Change::Put(k, v) => {
                if self.keys.insert(k.clone()) {
                    self.sum.add(&k);
                    self.services += usize::from(k.starts_with(SERVICES));
                    self.fresh.insert(k, v);
                }
                Ok(Outcome::Nothing)
            }
            Change::Deleted(k) => {
                if self.keys.remove(&k) {
                    self.sum.remove(&k);
                    self.services -= usize::from(k.starts_with(SERVICES));
                    self.fresh.remove(&k);
                }
                Ok(Outcome::Nothing)
            }
            Change::Unflipped => {
                tracing::warn!(
                    key = %self.layout.current(),
                    "`current` deleted: the running configuration stays"
                );
                Ok(Outcome::Nothing)
            }
            Change::Flip(text, at) => {
                let text = String::from_utf8_lossy(&text);
                let current = Current::parse(&text).map_err(|message| FleetError::BadCurrent {
                    key: self.layout.current(),
                    message,
                })?;
                self.flip(current, at).await.map(Outcome::Deliver)
            }
        }
    }

    /// The generation `current` names, flipped at revision `at`, every
    /// change before it processed: added up from the watch, or read whole
    /// at `at` when it does not add up.
    async fn flip(&mut self, current: Current, at: i64) -> Result<Snapshot, FleetError> {
        if check(&current, self.services, &self.sum.to_text()).is_ok() {
            // Each key's value is one put since the last generation (in
            // `fresh`) or one of that generation's (in the cache): looked
            // up only for the keys put, the others taken from the cache.
            // Should a value be neither (which a parse that fails says,
            // leaving the cache as it was), the generation is read whole.
            let mut put: Vec<(&String, &Vec<u8>)> = self.fresh.iter().collect();
            put.sort_unstable_by(|a, b| a.0.cmp(b.0));
            let mut put = put.into_iter().peekable();
            // Both in key order: a walk, no key hashed.
            let keys = self.keys.iter().map(|k| {
                while put.next_if(|(p, _)| p.as_str() < k.as_str()).is_some() {}
                let value = put.next_if(|(p, _)| *p == k).map(|(_, v)| v.as_slice());
                (k.as_str(), value)
            });
            match parse_keys(&self.layout.entries(), keys, &mut self.cache) {
                Ok(config) => {
                    self.fresh.clear();
                    self.stats.from_watch += 1;
                    return Ok(self.delivered(current.generation, config, at, at));
                }
                Err(e) if self.all_known() => return Err(e),
                Err(_) => {}
            }
        }
        self.stats.read_whole += 1;
        let g = read_generation(&self.etcd, &self.layout, &current, at, at, &mut self.cache)
            .await
            .inspect_err(|e| {
                if matches!(e, FleetError::Compacted { .. }) {
                    self.reread = true;
                    self.backlog.clear();
                    self.stream = None;
                }
            })?;
        self.hold(g.keys);
        Ok(self.delivered(current.generation, g.config, at, at))
    }

    /// Whether every key's value is at hand: put since the last
    /// generation, or parsed in the cache.
    fn all_known(&self) -> bool {
        self.keys
            .iter()
            .all(|k| self.fresh.contains_key(k) || self.cache.contains(k))
    }

    /// The entries' keys are `keys` (their values parsed in the cache).
    fn hold(&mut self, keys: Vec<String>) {
        self.sum = KeySum::default();
        for k in &keys {
            self.sum.add(k);
        }
        self.services = keys.iter().filter(|k| k.starts_with(SERVICES)).count();
        self.keys = keys.into_iter().collect();
        self.fresh.clear();
    }

    fn delivered(&mut self, generation: u64, config: Config, at: i64, flip: i64) -> Snapshot {
        self.stats.generations_read += 1;
        self.current_revision = flip;
        Snapshot::new(generation, config, at, flip)
    }

    /// The next response of the watch (created first if there is none),
    /// its events appended to the backlog.
    async fn receive(&mut self) -> Result<(), FleetError> {
        let stream = match self.stream.as_mut() {
            Some(s) => s,
            None => {
                let (start, end) = self.layout.watched();
                let options = WatchOptions::new()
                    .with_range(end)
                    .with_start_revision(self.revision + 1)
                    .with_progress_notify();
                let mut client = self
                    .etcd
                    .client()
                    .watch_client()
                    .max_decoding_message_size(MAX_MESSAGE);
                let s = self
                    .etcd
                    .call(
                        "watch the desired state",
                        client.watch(start, Some(options)),
                    )
                    .await?;
                if std::mem::take(&mut self.lost) {
                    self.stats.resumes += 1;
                }
                self.stats.watches += 1;
                self.answered = false;
                self.stream.insert(s)
            }
        };
        let response = match stream.message().await {
            Ok(Some(r)) => r,
            Ok(None) | Err(_) if self.answered => {
                // The connection is gone: resume from the revision held.
                tracing::warn!(
                    etcd = self.etcd.endpoints(),
                    revision = self.revision,
                    "etcd watch lost, resuming"
                );
                self.stream = None;
                self.lost = true;
                return Ok(());
            }
            Ok(None) | Err(_) => {
                // Lost before any answer: an error, so that the next try
                // waits its backoff.
                self.stream = None;
                return Err(FleetError::Unreachable {
                    endpoints: self.etcd.endpoints().to_string(),
                    operation: "watch the desired state",
                    message: "the watch ended before etcd answered".to_string(),
                });
            }
        };
        self.answered = true;
        if response.canceled() {
            self.stream = None;
            if response.compact_revision() > 0 {
                tracing::warn!(
                    revision = self.revision,
                    compacted = response.compact_revision(),
                    "etcd compacted the revision watched from: reading the whole state again"
                );
                self.stats.compactions += 1;
                self.reread = true;
                return Ok(());
            }
            return Err(FleetError::Etcd {
                operation: "watch the desired state",
                message: format!("watch canceled: {}", response.cancel_reason()),
            });
        }
        let events = response.events();
        if events.is_empty() {
            if !response.created() {
                // A progress notification: nothing before it is missed.
                if let Some(h) = response.header() {
                    self.revision = self.revision.max(h.revision());
                }
            }
            return Ok(());
        }
        let (current, entries) = (self.layout.current(), self.layout.entries());
        for event in events {
            let Some(kv) = event.kv() else { continue };
            self.revision = self.revision.max(kv.mod_revision());
            let key = String::from_utf8_lossy(kv.key());
            let put = event.event_type() == EventType::Put;
            let change = if key == current {
                if put {
                    Change::Flip(kv.value().to_vec(), kv.mod_revision())
                } else {
                    Change::Unflipped
                }
            } else if let Some(k) = key.strip_prefix(&entries) {
                if put {
                    Change::Put(k.to_string(), kv.value().to_vec())
                } else {
                    Change::Deleted(k.to_string())
                }
            } else {
                continue;
            };
            self.backlog.push_back(change);
        }
        Ok(())
    }

    /// Reads the whole state at the latest revision (or at `current`'s,
    /// when entries were written since); `Some` when it is a generation
    /// not delivered yet.
    async fn read_all(&mut self) -> Result<Option<Snapshot>, FleetError> {
        let (found, at) = read_current(&self.etcd, &self.layout, None).await?;
        self.stats.full_reads += 1;
        self.stream = None;
        self.lost = false;
        self.backlog.clear();
        let Some((current, flip)) = found else {
            tracing::info!(prefix = %self.layout.prefix, "nothing published yet: waiting");
            // What a first publish wrote so far, as the watch would have.
            let entries = read_entries(&self.etcd, &self.layout, at).await?;
            self.hold(entries.iter().map(|(k, _)| k.clone()).collect());
            self.fresh = entries.into_iter().collect();
            self.reread = false;
            self.revision = at;
            return Ok(None);
        };
        let g = read_generation(
            &self.etcd,
            &self.layout,
            &current,
            flip,
            at,
            &mut self.cache,
        )
        .await?;
        self.hold(g.keys);
        self.reread = false;
        self.revision = g.revision;
        if flip == self.current_revision {
            // The same generation as before the compaction.
            return Ok(None);
        }
        Ok(Some(self.delivered(
            current.generation,
            g.config,
            g.revision,
            flip,
        )))
    }
}
