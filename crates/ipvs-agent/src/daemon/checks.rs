//! The checks under way and to come: every checked server's schedule, the
//! timetable of checks due, and the checks running (each a task through
//! the [`Prober`], bounded by its timeout).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ipvsnl::sync::DestinationId;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::check::{seed_of, Failure, Outcome, Schedule, Timetable};
use crate::config::{Config, HealthCheck};
use crate::daemon::metrics::kind_label;
use crate::probe::Prober;

/// One checked server.
#[derive(Debug)]
struct Checked {
    /// Changes when its check does: results and timetable entries of an
    /// older check are dropped.
    generation: u64,
    schedule: Schedule,
    check: Arc<HealthCheck>,
    addr: SocketAddr,
    kind: &'static str,
}

/// A check's result as the loop takes it.
#[derive(Debug)]
pub(crate) struct CheckResult {
    pub(crate) id: DestinationId,
    pub(crate) generation: u64,
    pub(crate) outcome: Outcome,
    pub(crate) took: Duration,
}

/// The checks of every server.
pub(crate) struct Checks {
    servers: HashMap<DestinationId, Checked>,
    timetable: Timetable<(DestinationId, u64)>,
    running: JoinSet<CheckResult>,
    next_generation: u64,
}

impl Checks {
    pub(crate) fn new() -> Self {
        Checks {
            servers: HashMap::new(),
            timetable: Timetable::new(),
            running: JoinSet::new(),
            next_generation: 0,
        }
    }

    /// Makes the checks those of `config` from `now`: a server whose check
    /// is the same keeps its schedule; a new or changed one is first
    /// checked within its jitter from now; a removed one is dropped.
    pub(crate) fn reconcile(&mut self, config: &Config, now: Instant) {
        let mut next = HashMap::new();
        for vs in &config.services {
            for rs in &vs.servers {
                let Some(check) = &rs.check else { continue };
                let id = (vs.service.key, rs.destination.addr, rs.destination.port);
                match self.servers.remove(&id) {
                    Some(c) if *c.check == *check => {
                        next.insert(id, c);
                    }
                    _ => {
                        self.next_generation += 1;
                        let mut schedule = Schedule::for_check(check, seed_of(&id));
                        let first = schedule.first(now.into_std());
                        self.timetable.insert(first, (id, self.next_generation));
                        let c = Checked {
                            generation: self.next_generation,
                            schedule,
                            check: Arc::new(check.clone()),
                            addr: SocketAddr::new(rs.destination.addr, rs.destination.port),
                            kind: kind_label(&check.kind),
                        };
                        next.insert(id, c);
                    }
                }
            }
        }
        self.servers = next;
    }

    /// When the next check is due.
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.timetable.next_due().map(Instant::from_std)
    }

    /// Starts every check due at `now`, and schedules each one's next.
    pub(crate) fn start_due(&mut self, now: Instant, prober: &Arc<dyn Prober>) {
        while let Some((due, (id, generation))) = self.timetable.pop_due(now.into_std()) {
            let Some(c) = self.servers.get_mut(&id) else {
                continue;
            };
            if c.generation != generation {
                continue;
            }
            let next = c.schedule.next(due);
            self.timetable.insert(next, (id, generation));
            let probe = prober.probe(c.addr, Arc::clone(&c.check));
            let timeout = c.check.timeout;
            self.running.spawn(async move {
                let started = Instant::now();
                let outcome = tokio::time::timeout(timeout, probe)
                    .await
                    .unwrap_or(Outcome::Fail(Failure::Timeout));
                CheckResult {
                    id,
                    generation,
                    outcome,
                    took: started.elapsed(),
                }
            });
        }
    }

    /// The next check to end (pending while none runs). A result of a
    /// check since changed or removed is `None`; so is a check whose task
    /// panicked.
    pub(crate) async fn next_result(&mut self) -> Option<(CheckResult, &'static str)> {
        let Some(joined) = self.running.join_next().await else {
            return std::future::pending().await;
        };
        let r = joined.ok()?;
        let c = self.servers.get(&r.id)?;
        (c.generation == r.generation).then_some((r, c.kind))
    }

    /// The servers checked.
    pub(crate) fn ids(&self) -> impl Iterator<Item = &DestinationId> {
        self.servers.keys()
    }

    /// The longest a first check can take from `reconcile`: its jitter
    /// plus its timeout, the most of any server's.
    pub(crate) fn first_round(&self) -> Duration {
        self.servers
            .values()
            .map(|c| c.check.jitter + c.check.timeout)
            .max()
            .unwrap_or_default()
    }
}
