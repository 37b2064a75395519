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
//! (benches/AGENT.md).
//!
//! The checks a prober hands over unbounded ([`Prober::probe_untimed`]:
//! every kind of [`NetProber`](crate::probe::NetProber)'s but the command)
//! are timed here, by deadlines the loop sleeps until like its checks due
//! (`daemon/deadlines.rs`), not by a timer of tokio's a check: tokio wakes its own
//! poller (a write to its eventfd, a system call) for every timer set while
//! none is due sooner, which within a burst of checks is every one of them.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use ipvsnl::sync::DestinationId;
use tokio::task::coop::{unconstrained, Unconstrained};
use tokio::time::Instant;

use crate::check::{seed_of, Failure, IdMap, Outcome, Schedule, Timetable};
use crate::config::{Config, HealthCheck, VirtualService};
use crate::daemon::deadlines::Deadlines;
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
    /// A run of its check is under way: the next one due is not started
    /// (one run per server at a time).
    in_flight: bool,
    /// Waiting in [`Checks::deferred`] for room under the cap.
    queued: bool,
}

/// A check's result as the loop takes it.
#[derive(Debug)]
pub(crate) struct CheckResult {
    pub(crate) id: DestinationId,
    /// The slot of its check.
    slot: usize,
    pub(crate) generation: u64,
    /// Its entry in [`Checks::live`], if the daemon timed it.
    live: Option<usize>,
    pub(crate) outcome: Outcome,
    pub(crate) took: Duration,
}

/// One check under way: the prober's future and whose check it is.
///
/// The future runs outside tokio's cooperative budget: within it, a burst
/// of a few thousand checks ending together exhausted the loop's budget
/// every 128 sockets, and each check was polled 4.4 times instead of 2
/// (callgrind on the host, `examples/check_cost.rs`: 8,005 user-space
/// instructions a TCP check with the budget, 6,357 without;
/// benches/AGENT.md). A check does a bounded step a poll, and the loop serves
/// nothing else that would wait on it but the HTTP endpoint's tasks.
struct Running {
    probe: Unconstrained<ProbeFuture>,
    id: DestinationId,
    slot: usize,
    generation: u64,
    /// When it was first polled (its connect, say, begins then).
    started: Option<Instant>,
    /// Set when the daemon times it (the prober's future is unbounded).
    timed: Option<Timed>,
}

/// A check the daemon times: its deadline is `timeout` from its first poll.
struct Timed {
    /// Its entry in [`Checks::live`].
    live: usize,
    run: u64,
    timeout: Duration,
    /// Its deadline passed: it ends as a timeout at its next poll.
    expired: bool,
    /// Its task's waker (from its first poll), to poll it once expired.
    waker: Option<Waker>,
}

impl Future for Running {
    type Output = CheckResult;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<CheckResult> {
        let this = &mut *self;
        let started = *this.started.get_or_insert_with(Instant::now);
        let outcome = match &mut this.timed {
            Some(t) if t.expired => Outcome::Fail(Failure::Timeout),
            timed => {
                if let Some(t) = timed {
                    if t.waker.is_none() {
                        t.waker = Some(cx.waker().clone());
                    }
                }
                std::task::ready!(Pin::new(&mut this.probe).poll(cx))
            }
        };
        Poll::Ready(CheckResult {
            id: this.id,
            slot: this.slot,
            generation: this.generation,
            live: this.timed.as_ref().map(|t| t.live),
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
    /// The deadlines of the checks the daemon times, each named by its
    /// entry in `live` and its run; an entry of a check that has ended is
    /// dropped when it comes first.
    deadlines: Deadlines<(usize, u64)>,
    /// The run of each timed check under way (`None`: a free entry).
    live: Vec<Option<u64>>,
    free_live: Vec<usize>,
    runs: u64,
    /// The most checks in flight at once: each holds a descriptor, and the
    /// director short of them fails checks for its own reason.
    cap: usize,
    /// Checks due while `cap` were in flight, started first when one ends
    /// (a check at most once here: its `queued`).
    deferred: std::collections::VecDeque<(usize, u64)>,
    /// Checks not started since [`Checks::take_not_started`] last ran:
    /// overlapping their server's previous run, deferred by the cap.
    overlapping: u64,
    deferrals: u64,
}

impl Checks {
    /// No more than `cap` checks in flight at once (at least 1).
    pub(crate) fn new(cap: usize) -> Self {
        Checks {
            slots: Vec::new(),
            index: IdMap::default(),
            free: Vec::new(),
            timetable: Timetable::new(),
            running: FuturesUnordered::new(),
            next_generation: 0,
            deadlines: Deadlines::default(),
            live: Vec::new(),
            free_live: Vec::new(),
            runs: 0,
            cap: cap.max(1),
            deferred: std::collections::VecDeque::new(),
            overlapping: 0,
            deferrals: 0,
        }
    }

    /// Checks due but not started since the last call: (overlapping their
    /// server's previous run, deferred by the cap).
    pub(crate) fn take_not_started(&mut self) -> (u64, u64) {
        (
            std::mem::take(&mut self.overlapping),
            std::mem::take(&mut self.deferrals),
        )
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
                let slot = self.carry(
                    slot,
                    id,
                    rs.destination.addr,
                    rs.destination.port,
                    check,
                    now,
                );
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

    /// [`reconcile`](Self::reconcile) for one service only, checked as
    /// `old` had it and to be as `new` has it (`None`: gone): in time
    /// proportional to its servers.
    pub(crate) fn reconcile_service(
        &mut self,
        old: Option<&VirtualService>,
        new: Option<&VirtualService>,
        now: Instant,
    ) {
        // The new servers' slots out first: what is left of the old
        // service's is no longer checked.
        let mut taken = Vec::new();
        for vs in new.iter() {
            for rs in &vs.servers {
                let Some(check) = &rs.check else { continue };
                let id = (vs.service.key, rs.destination.addr, rs.destination.port);
                taken.push((id, rs, check, self.index.remove(&id)));
            }
        }
        for vs in old.iter() {
            for rs in &vs.servers {
                let id = (vs.service.key, rs.destination.addr, rs.destination.port);
                if let Some(slot) = self.index.remove(&id) {
                    self.slots[slot] = None;
                    self.free.push(slot);
                }
            }
        }
        for (id, rs, check, slot) in taken {
            let slot = self.carry(
                slot,
                id,
                rs.destination.addr,
                rs.destination.port,
                check,
                now,
            );
            self.index.insert(id, slot);
        }
    }

    /// The slot of server `id`'s check after a reload: `slot` kept as it
    /// is when its check is the same, else (or a new slot) scheduled anew
    /// from `now`.
    fn carry(
        &mut self,
        slot: Option<usize>,
        id: DestinationId,
        addr: std::net::IpAddr,
        port: u16,
        check: &HealthCheck,
        now: Instant,
    ) -> usize {
        let same = slot
            .and_then(|i| self.slots[i].as_ref())
            .is_some_and(|c| *c.check == *check);
        let slot = match slot {
            Some(i) if same => return i,
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
            addr: SocketAddr::new(addr, port),
            kind: kind_label(&check.kind),
            in_flight: false,
            queued: false,
        });
        slot
    }

    /// When the next check is due (`None` while the checks in flight are
    /// at their cap: the next to end makes room).
    pub(crate) fn next_due(&self) -> Option<Instant> {
        if self.running.len() >= self.cap {
            return None;
        }
        if !self.deferred.is_empty() {
            return Some(Instant::now());
        }
        self.timetable.next_due().map(Instant::from_std)
    }

    /// Starts every check due at `now` (those deferred first), and
    /// schedules each one's next. A check whose server's previous run is
    /// still under way is not started (one run per server at a time); one
    /// due while the cap of checks in flight is reached waits for room.
    pub(crate) fn start_due(&mut self, now: Instant, prober: &Arc<dyn Prober>) {
        while self.running.len() < self.cap {
            let Some((slot, generation)) = self.deferred.pop_front() else {
                break;
            };
            if let Some(c) = self.slots[slot].as_mut() {
                if c.generation == generation {
                    c.queued = false;
                    self.start(now, slot, prober);
                }
            }
        }
        while let Some((due, (slot, generation))) = self.timetable.pop_due(now.into_std()) {
            let Some(c) = self.slots[slot].as_mut() else {
                continue;
            };
            if c.generation != generation {
                continue;
            }
            let next = c.schedule.next(due);
            self.timetable.insert(next, (slot, generation));
            if c.in_flight || c.queued {
                self.overlapping += 1;
                continue;
            }
            if self.running.len() >= self.cap {
                c.queued = true;
                self.deferred.push_back((slot, generation));
                self.deferrals += 1;
                continue;
            }
            self.start(now, slot, prober);
        }
    }

    /// Starts the check of `slot` (current, not in flight).
    fn start(&mut self, now: Instant, slot: usize, prober: &Arc<dyn Prober>) {
        let Some(c) = self.slots[slot].as_mut() else {
            return;
        };
        c.in_flight = true;
        let generation = c.generation;
        let (probe, timed) = match prober.probe_untimed(c.addr, &c.check) {
            Some(probe) => {
                self.runs += 1;
                let live = self.free_live.pop().unwrap_or_else(|| {
                    self.live.push(None);
                    self.live.len() - 1
                });
                self.live[live] = Some(self.runs);
                // A first deadline from now; from its first poll, the
                // true one, it is put back if that is later.
                self.deadlines
                    .insert(now, c.check.timeout, (live, self.runs));
                let timed = Timed {
                    live,
                    run: self.runs,
                    timeout: c.check.timeout,
                    expired: false,
                    waker: None,
                };
                (probe, Some(timed))
            }
            // The prober bounds its future by the check's timeout.
            None => (prober.probe(c.addr, Arc::clone(&c.check)), None),
        };
        self.running.push(Running {
            probe: unconstrained(probe),
            id: c.id,
            slot,
            generation,
            started: None,
            timed,
        });
    }

    /// When the next deadline of a timed check falls (the entries of
    /// checks that have ended are dropped first).
    pub(crate) fn next_deadline(&mut self) -> Option<Instant> {
        let live = &self.live;
        self.deadlines.first(|(i, run)| live[i] == Some(run))
    }

    /// Ends as timeouts the timed checks whose deadline is `now` or past
    /// (each reports at its next poll, which this wakes).
    pub(crate) fn expire(&mut self, now: Instant) {
        let mut due = Vec::new();
        while let Some((live, run)) = self.deadlines.pop_due(now) {
            if self.live[live] == Some(run) {
                due.push((live, run));
            }
        }
        if due.is_empty() {
            return;
        }
        due.sort_unstable();
        for r in self.running.iter_mut() {
            let Some(t) = r.timed.as_mut() else { continue };
            if t.expired || due.binary_search(&(t.live, t.run)).is_err() {
                continue;
            }
            match r.started {
                // Polled first after its start: its own deadline is later.
                Some(started) if started + t.timeout > now => {
                    self.deadlines.insert(started, t.timeout, (t.live, t.run));
                }
                _ => {
                    t.expired = true;
                    if let Some(waker) = t.waker.take() {
                        waker.wake();
                    }
                }
            }
        }
    }

    /// The next check to end (pending while none runs). A result of a
    /// check since changed or removed is `None`.
    pub(crate) async fn next_result(&mut self) -> Option<(CheckResult, &'static str)> {
        let Some(r) = self.running.next().await else {
            return std::future::pending().await;
        };
        self.ended_with(r)
    }

    /// A check that has ended already, if any (`Some(None)`: one of a
    /// check since changed or removed), without waiting.
    pub(crate) fn ended(&mut self) -> Option<Option<(CheckResult, &'static str)>> {
        let waker = futures_util::task::noop_waker_ref();
        match self
            .running
            .poll_next_unpin(&mut Context::from_waker(waker))
        {
            Poll::Ready(Some(r)) => Some(self.ended_with(r)),
            _ => None,
        }
    }

    /// `r` with its check's kind, unless its check changed since; its
    /// deadline, if timed here, no longer counts.
    fn ended_with(&mut self, r: CheckResult) -> Option<(CheckResult, &'static str)> {
        if let Some(live) = r.live {
            self.live[live] = None;
            self.free_live.push(live);
        }
        let c = self.slots[r.slot].as_mut()?;
        if c.generation != r.generation {
            return None;
        }
        c.in_flight = false;
        Some((r, c.kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_str;
    use std::net::SocketAddr;

    /// Every check handed over unbounded, and never ending.
    struct Hanging;

    impl Prober for Hanging {
        fn probe(&self, _: SocketAddr, _: Arc<HealthCheck>) -> ProbeFuture {
            unreachable!("every check is handed over untimed")
        }

        fn probe_untimed(&self, _: SocketAddr, _: &Arc<HealthCheck>) -> Option<ProbeFuture> {
            Some(Box::pin(std::future::pending()))
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_check_first_polled_late_gets_its_whole_timeout_from_then() {
        let config = parse_str(
            "t.toml",
            "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\n\
             check = { kind = \"tcp\", interval = \"5s\", timeout = \"1s\" }\n\
             [[service.server]]\naddress = \"10.0.0.1\"\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let prober: Arc<dyn Prober> = Arc::new(Hanging);
        let mut checks = Checks::new(usize::MAX);
        let t0 = Instant::now();
        checks.reconcile(&config, t0);
        checks.start_due(t0, &prober);
        assert_eq!(checks.next_deadline(), Some(t0 + Duration::from_secs(1)));
        // First polled 400 ms after its start was decided.
        tokio::time::advance(Duration::from_millis(400)).await;
        assert!(checks.ended().is_none());
        // The first deadline passes: not its own yet, which is put back.
        tokio::time::advance(Duration::from_millis(600)).await;
        checks.expire(Instant::now());
        assert!(checks.ended().is_none());
        let own = t0 + Duration::from_millis(1400);
        assert_eq!(checks.next_deadline(), Some(own));
        tokio::time::advance(Duration::from_millis(400)).await;
        checks.expire(Instant::now());
        let ended = checks.ended().expect("ended").expect("current");
        assert_eq!(ended.0.outcome, Outcome::Fail(Failure::Timeout));
        assert_eq!(ended.0.took, Duration::from_secs(1));
        // Its deadline no longer counts; the next check's is 5 s later.
        assert_eq!(checks.next_deadline(), None);
    }
}
