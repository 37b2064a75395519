//! [`Source`]: the configurations a running agent follows. It reads the
//! complete generation, then watches `current` from the next revision; on
//! a change it reads the new generation at the flip's revision. After a
//! disconnect it resumes the watch from the revision it has (nothing is
//! read again when nothing changed); after a compaction took that revision
//! away it reads the whole state again.
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

use std::time::Duration;

use etcd_client::{EventType, WatchOptions, WatchStream};

use crate::fleet::connect::Etcd;
use crate::fleet::current::Current;
use crate::fleet::errors::FleetError;
use crate::fleet::layout::Layout;
use crate::fleet::read::{read_current, read_generation, Snapshot};
use crate::fleet::values::ParseCache;

/// The longest wait between two tries after errors.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// What a [`Source`] has done, for logs, metrics and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SourceStats {
    /// Reads of the whole state at the latest revision: at the start and
    /// after each compaction.
    pub full_reads: u64,
    /// Generations read (each checked against `current`).
    pub generations_read: u64,
    /// Watches created (the first, then one per resume or reread).
    pub watches: u64,
    /// Watches resumed after a disconnect from the revision held.
    pub resumes: u64,
    /// Watches canceled because etcd compacted the revision they wanted.
    pub compactions: u64,
}

/// The configurations published under a prefix, one complete generation
/// at a time.
pub struct Source {
    etcd: Etcd,
    layout: Layout,
    /// The store's revision up to which everything was seen.
    revision: i64,
    /// `current`'s mod revision when last read (0: none yet).
    current_revision: i64,
    /// The whole state is to be read (at the start, after a compaction).
    reread: bool,
    stream: Option<WatchStream>,
    /// Whether etcd answered on the stream (its creation at least).
    answered: bool,
    /// A flip seen on the watch whose generation is not read yet.
    pending: Option<(Current, i64)>,
    /// The last generation's services, parsed.
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
            pending: None,
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
    /// may be skipped: the latest counts). Waits while nothing changes.
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
            if let Some((current, at)) = self.pending.clone() {
                let read =
                    read_generation(&self.etcd, &self.layout, &current, at, &mut self.cache).await;
                match read {
                    Ok(config) => {
                        self.pending = None;
                        self.stats.generations_read += 1;
                        self.current_revision = at;
                        self.revision = self.revision.max(at);
                        return Ok(self.snapshot(current.generation, config, at));
                    }
                    Err(FleetError::Compacted { .. }) => {
                        self.pending = None;
                        self.reread = true;
                    }
                    Err(e) if e.is_transient() => return Err(e),
                    Err(e) => {
                        // A bad generation is skipped: the next publish
                        // replaces it.
                        self.pending = None;
                        self.revision = self.revision.max(at);
                        return Err(e);
                    }
                }
            }
            if self.reread {
                if let Some(s) = self.read_all().await? {
                    return Ok(s);
                }
            }
            let stream = match self.stream.as_mut() {
                Some(s) => s,
                None => {
                    let options = WatchOptions::new()
                        .with_start_revision(self.revision + 1)
                        .with_progress_notify();
                    let mut client = self.etcd.client();
                    let key = self.layout.current();
                    let s = self
                        .etcd
                        .call("watch `current`", client.watch(key, Some(options)))
                        .await?;
                    if self.stats.watches > 0 && !self.reread {
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
                    continue;
                }
                Ok(None) | Err(_) => {
                    // Lost before any answer: an error, so that the next
                    // try waits its backoff.
                    self.stream = None;
                    return Err(FleetError::Unreachable {
                        endpoints: self.etcd.endpoints().to_string(),
                        operation: "watch `current`",
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
                    continue;
                }
                return Err(FleetError::Etcd {
                    operation: "watch `current`",
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
                continue;
            }
            for event in events {
                let Some(kv) = event.kv() else { continue };
                self.revision = self.revision.max(kv.mod_revision());
                if event.event_type() == EventType::Delete {
                    tracing::warn!(
                        key = %self.layout.current(),
                        "`current` deleted: the running configuration stays"
                    );
                    self.pending = None;
                    continue;
                }
                let text = String::from_utf8_lossy(kv.value());
                match Current::parse(&text) {
                    Ok(c) => self.pending = Some((c, kv.mod_revision())),
                    Err(message) => {
                        self.pending = None;
                        return Err(FleetError::BadCurrent {
                            key: self.layout.current(),
                            message,
                        });
                    }
                }
            }
        }
    }

    /// Reads the whole state at the latest revision; `Some` when it is a
    /// generation not delivered yet.
    async fn read_all(&mut self) -> Result<Option<Snapshot>, FleetError> {
        let (found, at) = read_current(&self.etcd, &self.layout, None).await?;
        self.stats.full_reads += 1;
        self.stream = None;
        let Some((current, current_revision)) = found else {
            tracing::info!(prefix = %self.layout.prefix, "nothing published yet: waiting");
            self.reread = false;
            self.revision = at;
            return Ok(None);
        };
        if current_revision == self.current_revision {
            // The same generation as before the compaction.
            self.reread = false;
            self.revision = at;
            return Ok(None);
        }
        let config =
            read_generation(&self.etcd, &self.layout, &current, at, &mut self.cache).await?;
        self.stats.generations_read += 1;
        self.reread = false;
        self.revision = at;
        self.current_revision = current_revision;
        Ok(Some(self.snapshot(current.generation, config, at)))
    }

    fn snapshot(&self, generation: u64, config: crate::config::Config, at: i64) -> Snapshot {
        Snapshot::new(generation, config, at, self.current_revision)
    }
}
