//! [`Plan`]: the planner's result, its requests kept as references to the
//! desired table's entries wherever they would copy one (a service added
//! with all its destinations is two steps, not a request each).
//!
//! A/B (benches/MEMORY.md). Memory, `bulk-compare --scale --memory-only`:
//! a plan of 100,000 services x 10 destinations from empty held every
//! request written out, 72 bytes each, plus a boxed copy of each service:
//! 166 bytes of desired table and plan per destination at the peak, 76 of
//! them the table's. Referring to the table's shared entries instead (16
//! bytes a step, two steps a service added) leaves 79. Work,
//! `scripts/measure/plan-cost 10000` (instructions a destination under valgrind): the
//! plan from empty 95.3 -> 12.1; with its requests written out, as a sync
//! sends them, 95.3 -> 94.7; to a 0 % / 10 % churned copy 118.7 -> 115.9 /
//! 124.0 -> 118.8; a dry run's rules 9394 -> 9435 (+0.4 %).

use std::iter::{Chain, FusedIterator};
use std::slice;
use std::sync::{Arc, OnceLock};

use crate::sync::ledger::DrainLedger;
use crate::sync::table::{TableDestination, TableService};
use crate::{Request, ServiceKey};

/// One run of a plan's requests.
#[derive(Debug, Clone)]
enum Step {
    /// The next this many requests written out (deletes, edits, the
    /// diff of a changed service).
    Written(usize),
    /// Add this service (its settings), shared with the desired table.
    AddService(Arc<TableService>),
    /// Add every destination of this service, shared with the desired
    /// table: one request each, in its order.
    AddDestinations(Arc<TableService>),
}

/// The requests of one phase of a plan, as the planner builds them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Steps {
    steps: Vec<Step>,
    written: Vec<Request>,
    len: usize,
}

impl Steps {
    /// Room for this many steps.
    pub(crate) fn with_capacity(steps: usize) -> Self {
        Steps {
            steps: Vec::with_capacity(steps),
            ..Steps::default()
        }
    }

    /// How many requests.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Appends a request written out.
    pub(crate) fn push(&mut self, r: Request) {
        self.written.push(r);
        self.len += 1;
        match self.steps.last_mut() {
            Some(Step::Written(n)) => *n += 1,
            _ => self.steps.push(Step::Written(1)),
        }
    }

    /// Appends these requests written out (emptying `more`).
    pub(crate) fn append_written(&mut self, more: &mut Vec<Request>) {
        let n = more.len();
        if n == 0 {
            return;
        }
        self.written.append(more);
        self.len += n;
        match self.steps.last_mut() {
            Some(Step::Written(m)) => *m += n,
            _ => self.steps.push(Step::Written(n)),
        }
    }

    /// Appends the add of this service (shared, not copied).
    pub(crate) fn add_service(&mut self, s: &Arc<TableService>) {
        self.steps.push(Step::AddService(Arc::clone(s)));
        self.len += 1;
    }

    /// Appends the adds of every destination of this service (shared, not
    /// copied); nothing when it has none.
    pub(crate) fn add_destinations(&mut self, s: &Arc<TableService>) {
        if !s.destinations.is_empty() {
            self.len += s.destinations.len();
            self.steps.push(Step::AddDestinations(Arc::clone(s)));
        }
    }
}

/// The ordered requests that take the current table to the desired one.
///
/// Requests come in two phases: first service-level requests (delete,
/// add, edit services), then destination requests. The applier sends the
/// second phase only for services whose first-phase request succeeded.
///
/// A plan refers to the desired table's entries (shared, as a clone of the
/// table shares them) rather than copying them: the adds of a service and
/// of its destinations cost it 32 bytes, not 72 a request.
/// [`Plan::iter`] makes each request as it is read; [`Plan::requests`]
/// writes them all out once and keeps them.
#[derive(Debug, Clone, Default)]
#[must_use = "a plan changes nothing until applied"]
#[non_exhaustive]
pub struct Plan {
    // Two lists, not one: joining them would hold both and their join at
    // once (6 bytes a destination more at the peak of a cold start).
    services: Steps,
    destinations: Steps,
    conflicts: Vec<ServiceKey>,
    draining: DrainLedger,
    unchanged: usize,
    written_out: OnceLock<Vec<Request>>,
}

impl Plan {
    /// The plan of these two phases.
    pub(crate) fn new(
        services: Steps,
        destinations: Steps,
        conflicts: Vec<ServiceKey>,
        draining: DrainLedger,
        unchanged: usize,
    ) -> Plan {
        Plan {
            services,
            destinations,
            conflicts,
            draining,
            unchanged,
            written_out: OnceLock::new(),
        }
    }

    /// The requests, in the order they must be sent, written out: on the
    /// first call they are made and kept with the plan (72 bytes each);
    /// [`Plan::iter`] reads them without keeping them.
    pub fn requests(&self) -> &[Request] {
        self.written_out.get_or_init(|| self.write_out())
    }

    /// The requests, in the order they must be sent, each made as it is
    /// read (a service or destination added is copied from the desired
    /// table then).
    ///
    /// ```
    /// use std::time::Instant;
    /// use ipvsnl::sync::{plan, DrainLedger, PlanOptions, Table};
    /// use ipvsnl::{Destination, Request, Service, ServiceKey};
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// let mut want = Table::new();
    /// want.insert(Service::new(key), [Destination::new("172.16.0.1".parse().unwrap(), 80)]);
    /// let p = plan(&Table::new(), &want, &PlanOptions::default(), &DrainLedger::new(), Instant::now());
    /// assert_eq!(p.iter().len(), 2);
    /// assert!(matches!(p.iter().next(), Some(Request::AddService(s)) if s.key == key));
    /// assert!(matches!(p.iter().nth(1), Some(Request::AddDestination(k, _)) if k == key));
    /// assert!(p.iter().eq(p.requests().iter().cloned()));
    /// ```
    pub fn iter(&self) -> PlanRequests<'_> {
        let (s, d) = (&self.services, &self.destinations);
        PlanRequests {
            steps: s.steps.iter().chain(&d.steps),
            written: s.written.iter().chain(&d.written),
            current: Current::Idle,
            left: self.len(),
        }
    }

    /// How many of the first requests are service-level (phase one).
    pub fn service_phase(&self) -> usize {
        self.services.len
    }

    /// How many requests.
    pub fn len(&self) -> usize {
        self.services.len + self.destinations.len
    }

    /// True when nothing needs to change.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Wanted services outside the scope: refused, not touched.
    pub fn conflicts(&self) -> &[ServiceKey] {
        &self.conflicts
    }

    /// Destinations still draining once this plan is applied, with the time
    /// their drain began.
    pub fn draining(&self) -> &DrainLedger {
        &self.draining
    }

    /// Wanted services already exactly as wanted (no request at all).
    pub fn unchanged(&self) -> usize {
        self.unchanged
    }

    /// The bytes the plan itself holds on the heap (its steps, its
    /// requests written out by the planner, its conflicts; not the shared
    /// entries nor a service boxed in a request).
    #[cfg(test)]
    pub(crate) fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        [&self.services, &self.destinations]
            .iter()
            .map(|p| {
                p.steps.capacity() * size_of::<Step>() + p.written.capacity() * size_of::<Request>()
            })
            .sum::<usize>()
            + self.conflicts.capacity() * size_of::<ServiceKey>()
    }

    /// Every request, made from the steps (what [`Plan::iter`] reads, in
    /// tight loops: `collect` of the iterator costs a cold start's plan
    /// 60 instructions a destination more, `scripts/measure/plan-cost`).
    fn write_out(&self) -> Vec<Request> {
        let mut out = Vec::with_capacity(self.len());
        for phase in [&self.services, &self.destinations] {
            let mut written = phase.written.iter();
            for step in &phase.steps {
                match step {
                    Step::Written(n) => out.extend(written.by_ref().take(*n).cloned()),
                    Step::AddService(s) => out.push(Request::add_service(s.service.clone())),
                    Step::AddDestinations(s) => {
                        let key = s.service.key;
                        out.extend(
                            s.destinations
                                .iter()
                                .map(|d| Request::AddDestination(key, d.destination)),
                        );
                    }
                }
            }
        }
        out
    }

    /// The requests written out, the service phase's length and the
    /// drains.
    pub(crate) fn into_parts(mut self) -> (Vec<Request>, usize, DrainLedger) {
        let requests = match self.written_out.take() {
            Some(all) => all,
            None => self.write_out(),
        };
        (requests, self.services.len, self.draining)
    }
}

impl<'a> IntoIterator for &'a Plan {
    type Item = Request;
    type IntoIter = PlanRequests<'a>;

    fn into_iter(self) -> PlanRequests<'a> {
        self.iter()
    }
}

/// Where [`PlanRequests`] is within a step.
#[derive(Debug, Clone)]
enum Current<'a> {
    /// Between steps.
    Idle,
    /// This many written requests left of the step.
    Written(usize),
    /// The destinations of this service left to add.
    Adds(ServiceKey, slice::Iter<'a, TableDestination>),
}

/// The requests of a [`Plan`] in order, each made as it is read
/// ([`Plan::iter`]).
#[derive(Debug, Clone)]
#[must_use = "iterators do nothing unless read"]
pub struct PlanRequests<'a> {
    steps: Chain<slice::Iter<'a, Step>, slice::Iter<'a, Step>>,
    written: Chain<slice::Iter<'a, Request>, slice::Iter<'a, Request>>,
    current: Current<'a>,
    left: usize,
}

impl Iterator for PlanRequests<'_> {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        loop {
            match &mut self.current {
                Current::Written(n) if *n > 0 => {
                    *n -= 1;
                    self.left -= 1;
                    return self.written.next().cloned();
                }
                Current::Adds(key, dests) => {
                    if let Some(d) = dests.next() {
                        self.left -= 1;
                        return Some(Request::AddDestination(*key, d.destination));
                    }
                }
                _ => {}
            }
            match self.steps.next()? {
                Step::Written(n) => self.current = Current::Written(*n),
                Step::AddService(s) => {
                    self.current = Current::Idle;
                    self.left -= 1;
                    return Some(Request::add_service(s.service.clone()));
                }
                Step::AddDestinations(s) => {
                    self.current = Current::Adds(s.service.key, s.destinations.iter());
                }
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for PlanRequests<'_> {}

impl FusedIterator for PlanRequests<'_> {}
