//! One round of the soak: a new desired table, a few syncs while the
//! churner runs (some through the tiny-buffer client, some from the
//! cached view, the view sometimes dropped first), then the quiet sync and
//! the check of the kernel's table against the desired one.

use std::time::Duration;

use ipvsnl::sync::{Report, Syncer, Table};
use ipvsnl::{Client, Error, Request, ServiceKey};

use crate::churn::Churner;
use crate::figures::{Figures, SyncKind};
use crate::rng::Rng;
use crate::tables::{self, is_ours, Universe};
use ipvsnl_test_support::table_diff::{differences, first, scoped};

/// At most this many differences are described per comparison.
const MAX_REPORTED: usize = 8;

/// Everything the rounds share.
pub(crate) struct Soak {
    pub(crate) rng: Rng,
    pub(crate) universe: Universe,
    pub(crate) seed: u64,
    /// The client of the quiet syncs and of the checks.
    pub(crate) normal: Client,
    /// The client whose socket receive buffer is tiny.
    pub(crate) tiny: Client,
    pub(crate) syncer: Syncer,
    pub(crate) desired: Table,
    pub(crate) churner: Option<Churner>,
    /// Whether the churner is paused now.
    pub(crate) paused: bool,
    pub(crate) figures: Figures,
}

/// The service a request is about (`None` for one about no service, such
/// as a flush: never ours to send).
fn request_key(r: &Request) -> Option<ServiceKey> {
    r.service_key()
}

impl Soak {
    /// One round: next desired table, up to five noisy syncs (the table
    /// mutated before some), the quiet sync checked.
    pub(crate) fn round(&mut self) {
        self.figures.rounds += 1;
        self.desired = if self.desired.is_empty() || self.rng.chance(0.15) {
            tables::fresh(&mut self.rng, &self.universe)
        } else {
            tables::mutate(&mut self.rng, &self.universe, &self.desired)
        };
        // The churner runs meanwhile: the longer this lasts, the staler a
        // cached view gets. The desired table moves on too, now and then.
        for _ in 0..self.rng.below(6) {
            if self.rng.chance(0.4) {
                self.desired = tables::mutate(&mut self.rng, &self.universe, &self.desired);
            }
            self.noisy_sync();
            std::thread::sleep(Duration::from_millis(self.rng.below(400)));
        }
        self.quiet_sync();
    }

    /// A sync while the churner runs, with the faults drawn at random.
    /// One in ten is the worst case for the tiny buffer: the churner
    /// deletes dozens of services behind the cached view, then every
    /// service is edited from that view (a batch of refusals, more than
    /// the buffer holds).
    fn noisy_sync(&mut self) {
        if self.rng.chance(0.1) && !self.paused && self.syncer.cached().is_some() {
            if let Some(c) = self.churner.as_mut() {
                if let Err(e) = c.burst() {
                    self.figures.churn_failures += 1;
                    self.figures.note(e);
                    self.churner = None;
                    return;
                }
            }
            self.figures.bursts += 1;
            self.desired = tables::reschedule_all(&mut self.rng, &self.universe, &self.desired);
            let result = self.syncer.sync_cached(&mut self.tiny, &self.desired);
            self.count(result, SyncKind::Noisy, true);
            return;
        }
        if self.rng.chance(0.2) {
            self.syncer.forget();
            self.figures.cache_drops += 1;
        }
        let tiny = self.rng.chance(0.35);
        let cached = self.rng.chance(0.5);
        let client = if tiny {
            &mut self.tiny
        } else {
            &mut self.normal
        };
        let result = if cached {
            self.syncer.sync_cached(client, &self.desired)
        } else {
            self.syncer.sync(client, &self.desired)
        };
        self.count(result, SyncKind::Noisy, tiny);
    }

    /// Counts a sync's outcome and checks its requests stayed in scope.
    fn count(
        &mut self,
        result: Result<Report, Error>,
        kind: SyncKind,
        tiny: bool,
    ) -> Option<Report> {
        match result {
            Ok(r) => {
                self.figures.report(&r, kind, tiny);
                for req in r.requests() {
                    if !request_key(req).is_some_and(|k| is_ours(&k)) {
                        self.figures.out_of_scope += 1;
                        let line = format!(
                            "seed {} round {}: request out of scope: {req}",
                            self.seed, self.figures.rounds
                        );
                        self.figures.note(line);
                    }
                }
                Some(r)
            }
            Err(e) => {
                self.figures.sync_error(&e, kind, tiny);
                if kind == SyncKind::Quiet {
                    self.figures.note(format!(
                        "seed {} round {}: quiet sync failed: {e}",
                        self.seed, self.figures.rounds
                    ));
                }
                None
            }
        }
    }

    /// Pauses the churner (if it is alive and running).
    pub(crate) fn pause(&mut self) {
        if self.paused {
            return;
        }
        if let Some(c) = self.churner.as_mut() {
            if let Err(e) = c.pause() {
                self.figures.churn_failures += 1;
                self.figures.note(e);
                self.churner = None;
            }
        }
        self.paused = true;
    }

    /// Lets the churner go on (if it was paused).
    pub(crate) fn resume(&mut self) {
        if !self.paused {
            return;
        }
        if let Some(c) = self.churner.as_mut() {
            if let Err(e) = c.resume() {
                self.figures.churn_failures += 1;
                self.figures.note(e);
                self.churner = None;
            }
        }
        self.paused = false;
    }

    /// The whole kernel table, listed by the normal client.
    fn kernel_table(&mut self) -> Result<Table, Error> {
        Ok(Table::from_entries(self.normal.table()?))
    }

    /// The churner paused: a listed sync through the normal client, then
    /// the kernel's table against the desired one, and the co-tenant's
    /// services against what they were before the sync.
    pub(crate) fn quiet_sync(&mut self) {
        self.pause();
        let round = self.figures.rounds;
        let seed = self.seed;
        let before = match self.kernel_table() {
            Ok(t) => scoped(&t, |k| !is_ours(k)),
            Err(e) => {
                self.figures.divergences += 1;
                self.figures.note(format!(
                    "seed {seed} round {round}: listing before the quiet sync failed: {e}"
                ));
                self.resume();
                return;
            }
        };
        let result = self.syncer.sync(&mut self.normal, &self.desired);
        if let Some(r) = self.count(result, SyncKind::Quiet, false) {
            if !r.is_complete() {
                self.figures.quiet_incomplete += 1;
                if self.figures.quiet_incomplete <= 3 {
                    self.figures.note(format!(
                        "seed {seed} round {round}: quiet sync not complete: {r}"
                    ));
                }
            }
        }
        match self.kernel_table() {
            Ok(found) => {
                let diffs = first(differences(&self.desired, &found, is_ours), MAX_REPORTED);
                if !diffs.is_empty() {
                    self.figures.divergences += 1;
                    let line = format!(
                        "seed {seed} round {round}: DIVERGENCE after the quiet sync ({} wanted services):\n    {}",
                        self.desired.len(),
                        diffs.join("\n    ")
                    );
                    self.figures.note(line);
                }
                let theirs = first(differences(&before, &found, |k| !is_ours(k)), MAX_REPORTED);
                if !theirs.is_empty() {
                    self.figures.cotenant_touched += 1;
                    let line = format!(
                        "seed {seed} round {round}: the co-tenant's services changed during the quiet sync:\n    {}",
                        theirs.join("\n    ")
                    );
                    self.figures.note(line);
                }
            }
            Err(e) => {
                self.figures.divergences += 1;
                self.figures.note(format!(
                    "seed {seed} round {round}: listing after the quiet sync failed: {e}"
                ));
            }
        }
        self.resume();
    }

    /// The memory reading: an empty desired table synced (quiet, checked),
    /// the cached view dropped, then the heap and the RSS read.
    pub(crate) fn memory_checkpoint(&mut self) -> crate::memory::Memory {
        self.desired = Table::new();
        self.quiet_sync();
        self.pause();
        self.syncer.forget();
        let m = crate::memory::now();
        self.resume();
        m
    }
}
