//! The checks under way and to come: every checked server's schedule, the
//! timetable of checks due, and the checks running (each the [`Prober`]'s
//! future, which its contract bounds by the check's timeout).
//!
//! The running checks are polled by the daemon's loop itself, in a
//! [`FuturesUnordered`], not spawned as tasks: a task a check cost the
//! spawn (its cell allocated cache-line aligned), the scheduler's run
//! queue, the `JoinSet`'s bookkeeping and a second timer (a timeout around
//! the prober's own). Measured on the host (callgrind, the agent's
//! user-space instructions per TCP check, `examples/check_cost.rs`,
//! 1,000 checks a second): 13,091 with a task and two timers a check,
//! 10,359 without, the results of a burst taken in one turn of the loop
//! (README, "Measured").

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use ipvsnl::sync::DestinationId;
use tokio::task::coop::{unconstrained, Unconstrained};
use tokio::time::Instant;

use crate::check::{seed_of, IdMap, Outcome, Schedule, Timetable};
use crate::config::{Config, HealthCheck};
use crate::daemon::metrics::kind_label;
use crate::probe::{ProbeFuture, Prober};

/// One checked server.
#[derive(Debug)]
struct Checked {
    id: DestinationId,
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
    /// The slot of its check.
    slot: usize,
    pub(crate) generation: u64,
    pub(crate) outcome: Outcome,
    pub(crate) took: Duration,
}

/// One check under way: the prober's future and whose check it is.
///
/// The future runs outside tokio's cooperative budget: within it, a burst
/// of a few thousand checks ending together exhausted the loop's budget
/// every 128 sockets, and each check was polled 4.4 times instead of 2
/// (callgrind on the host, `examples/check_cost.rs`: 8,005 user-space
/// instructions a TCP check with the budget, 6,357 without; README
/// "Measured"). A check does a bounded step a poll, and the loop serves
/// nothing else that would wait on it but the HTTP endpoint's tasks.
struct Running {
    probe: Unconstrained<ProbeFuture>,
    id: DestinationId,
    slot: usize,
    generation: u64,
    /// When it was first polled (its connect, say, begins then).
    started: Option<Instant>,
}

impl Future for Running {
    type Output = CheckResult;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<CheckResult> {
        let started = *self.started.get_or_insert_with(Instant::now);
        let outcome = std::task::ready!(Pin::new(&mut self.probe).poll(cx));
        Poll::Ready(CheckResult {
            id: self.id,
            slot: self.slot,
            generation: self.generation,
            outcome,
            took: started.elapsed(),
        })
    }
}

/// The checks of every server, each in a slot of its own that it keeps
/// while its check is the same: the timetable and the running checks name
/// a check by its slot and generation, not by the server's id (a smaller
/// entry to move in the timetable's heap, no lookup by id a check).
pub(crate) struct Checks {
    slots: Vec<Option<Checked>>,
    /// The slot of each server checked.
    index: IdMap<usize>,
    /// Slots free for the next new server.
    free: Vec<usize>,
    timetable: Timetable<(usize, u64)>,
    running: FuturesUnordered<Running>,
    next_generation: u64,
}

impl Checks {
    pub(crate) fn new() -> Self {
        Checks {
            slots: Vec::new(),
            index: IdMap::default(),
            free: Vec::new(),
            timetable: Timetable::new(),
            running: FuturesUnordered::new(),
            next_generation: 0,
        }
    }

    /// Makes the checks those of `config` from `now`: a server whose check
    /// is the same keeps its schedule; a new or changed one is first
    /// checked within its jitter from now; a removed one is dropped.
    pub(crate) fn reconcile(&mut self, config: &Config, now: Instant) {
        let mut index = IdMap::default();
        for vs in &config.services {
            for rs in &vs.servers {
                let Some(check) = &rs.check else { continue };
                let id = (vs.service.key, rs.destination.addr, rs.destination.port);
                let slot = self.index.remove(&id);
                let same = slot
                    .and_then(|i| self.slots[i].as_ref())
                    .is_some_and(|c| *c.check == *check);
                let slot = match slot {
                    Some(i) if same => {
                        index.insert(id, i);
                        continue;
                    }
                    Some(i) => i,
                    None => self.free.pop().unwrap_or_else(|| {
                        self.slots.push(None);
                        self.slots.len() - 1
                    }),
                };
                self.next_generation += 1;
                let mut schedule = Schedule::for_check(check, seed_of(&id));
                let first = schedule.first(now.into_std());
                self.timetable.insert(first, (slot, self.next_generation));
                self.slots[slot] = Some(Checked {
                    id,
                    generation: self.next_generation,
                    schedule,
                    check: Arc::new(check.clone()),
                    addr: SocketAddr::new(rs.destination.addr, rs.destination.port),
                    kind: kind_label(&check.kind),
                });
                index.insert(id, slot);
            }
        }
        // The servers left are no longer checked.
        for (_, slot) in self.index.drain() {
            self.slots[slot] = None;
            self.free.push(slot);
        }
        self.index = index;
    }

    /// When the next check is due.
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.timetable.next_due().map(Instant::from_std)
    }

    /// Starts every check due at `now`, and schedules each one's next.
    pub(crate) fn start_due(&mut self, now: Instant, prober: &Arc<dyn Prober>) {
        while let Some((due, (slot, generation))) = self.timetable.pop_due(now.into_std()) {
            let Some(c) = self.slots[slot].as_mut() else {
                continue;
            };
            if c.generation != generation {
                continue;
            }
            let next = c.schedule.next(due);
            self.timetable.insert(next, (slot, generation));
            // The prober bounds its future by the check's timeout.
            self.running.push(Running {
                probe: unconstrained(prober.probe(c.addr, Arc::clone(&c.check))),
                id: c.id,
                slot,
                generation,
                started: None,
            });
        }
    }

    /// The next check to end (pending while none runs). A result of a
    /// check since changed or removed is `None`.
    pub(crate) async fn next_result(&mut self) -> Option<(CheckResult, &'static str)> {
        let Some(r) = self.running.next().await else {
            return std::future::pending().await;
        };
        self.current(r)
    }

    /// A check that has ended already, if any (`Some(None)`: one of a
    /// check since changed or removed), without waiting.
    pub(crate) fn ended(&mut self) -> Option<Option<(CheckResult, &'static str)>> {
        let waker = futures_util::task::noop_waker_ref();
        match self
            .running
            .poll_next_unpin(&mut Context::from_waker(waker))
        {
            Poll::Ready(Some(r)) => Some(self.current(r)),
            _ => None,
        }
    }

    /// `r` with its check's kind, unless its check changed since.
    fn current(&self, r: CheckResult) -> Option<(CheckResult, &'static str)> {
        let c = self.slots[r.slot].as_ref()?;
        (c.generation == r.generation).then_some((r, c.kind))
    }

    /// The servers checked.
    pub(crate) fn ids(&self) -> impl Iterator<Item = &DestinationId> {
        self.index.keys()
    }

    /// The longest a first check can take from `reconcile`: its jitter
    /// plus its timeout, the most of any server's.
    pub(crate) fn first_round(&self) -> Duration {
        self.slots
            .iter()
            .flatten()
            .map(|c| c.check.jitter + c.check.timeout)
            .max()
            .unwrap_or_default()
    }
}
