//! The applier: lists (or remembers) the kernel's table, plans, applies the
//! plan pipelined and reports every request's outcome.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::time::Instant;

use crate::decode::Detail;
use crate::sync::outcomes::{Outcome, Outcomes};
use crate::sync::plan::{plan, DrainLedger, Plan, PlanOptions};
use crate::sync::table::{
    dest_matches, service_from_entry, service_matches, Table, TableDestination, TableService,
};
use crate::{ApplyOptions, Client, Error, Request, ServiceKey, TableEntry};

/// Every planned request with its outcome.
#[derive(Debug)]
#[non_exhaustive]
pub struct Report {
    requests: Vec<Request>,
    outcomes: Outcomes,
    conflicts: Vec<ServiceKey>,
    listed: bool,
    verified: usize,
}

impl Report {
    /// Each request in plan order with its outcome.
    pub fn operations(&self) -> impl Iterator<Item = (&Request, &Outcome)> {
        self.requests.iter().zip(self.outcomes.iter())
    }

    /// The planned requests.
    pub fn requests(&self) -> &[Request] {
        &self.requests
    }

    /// The outcomes, one per request, in plan order.
    pub fn outcomes(&self) -> impl Iterator<Item = &Outcome> {
        self.outcomes.iter()
    }

    /// The outcome of request `i` of [`Report::requests`].
    pub fn outcome(&self, i: usize) -> Option<&Outcome> {
        (i < self.outcomes.len()).then(|| self.outcomes.get(i))
    }

    /// How many requests were applied.
    pub fn done(&self) -> usize {
        let not_done = self.outcomes.exceptions().filter(|(_, o)| !o.is_done());
        self.outcomes.len() - not_done.count()
    }

    /// The failed requests with their errors.
    pub fn failures(&self) -> impl Iterator<Item = (&Request, &Error)> {
        self.outcomes.exceptions().filter_map(|(i, o)| match o {
            Outcome::Failed(e) => Some((&self.requests[i], e)),
            _ => None,
        })
    }

    /// How many requests failed.
    pub fn failed(&self) -> usize {
        self.failures().count()
    }

    /// How many requests were skipped because their service failed.
    pub fn skipped(&self) -> usize {
        self.outcomes
            .exceptions()
            .filter(|(_, o)| matches!(o, Outcome::Skipped { .. }))
            .count()
    }

    /// Wanted services outside the scope, refused.
    pub fn conflicts(&self) -> &[ServiceKey] {
        &self.conflicts
    }

    /// True when every request was applied and nothing was refused: the
    /// kernel now holds the desired state (within the scope).
    pub fn is_complete(&self) -> bool {
        self.conflicts.is_empty() && self.outcomes.exceptions().all(|(_, o)| o.is_done())
    }

    /// True when the table was listed from the kernel for this sync (false:
    /// planned from the cached view).
    pub fn listed(&self) -> bool {
        self.listed
    }

    /// Requests whose replies were lost (`ENOBUFS`) and whose outcome was
    /// established by reading the kernel's state back.
    pub fn verified(&self) -> usize {
        self.verified
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} requests: {} done, {} failed, {} skipped",
            self.requests.len(),
            self.done(),
            self.failed(),
            self.skipped()
        )?;
        if !self.conflicts.is_empty() {
            write!(f, ", {} wanted services out of scope", self.conflicts.len())?;
        }
        for (i, o) in self.outcomes.exceptions() {
            let r = &self.requests[i];
            match o {
                Outcome::Failed(e) => write!(f, "\n  failed: {e}")?,
                Outcome::Skipped { cause } => {
                    write!(f, "\n  skipped: {r} (request {cause} failed; this is {i})")?
                }
                Outcome::Done | Outcome::Superseded => {}
            }
        }
        Ok(())
    }
}

/// Keeps one manager's services of one namespace converged to a desired
/// [`Table`].
///
/// [`Syncer::sync`] lists the kernel's table (the services in scope with
/// their destinations), plans and applies. After a sync it knows the table
/// it left: [`Syncer::sync_cached`] plans from that view instead of a
/// listing, for a caller that promises no one else writes its services;
/// the cost then grows with the change, not the table. Services whose
/// request failed are read back from the kernel, so the view stays true.
///
/// ```no_run
/// use ipvsnl::sync::{PlanOptions, Scope, Syncer, Table};
/// use ipvsnl::{Client, Destination, Service, ServiceKey};
/// let mut ipvs = Client::new()?;
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let mut want = Table::new();
/// want.insert(Service::new(key), [Destination::new("172.16.0.1".parse().unwrap(), 80)]);
/// let mut syncer = Syncer::new(PlanOptions::new(Scope::keys([key])));
/// print!("{}", syncer.plan(&mut ipvs, &want)?); // dry run: ipvsadm rules
/// let report = syncer.sync(&mut ipvs, &want)?;
/// assert!(report.is_complete(), "{report}");
/// # Ok::<(), ipvsnl::Error>(())
/// ```
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Syncer {
    options: PlanOptions,
    apply: ApplyOptions,
    cache: Option<Table>,
    ledger: DrainLedger,
}

impl Syncer {
    /// A syncer with these planner options and no cached view.
    pub fn new(options: PlanOptions) -> Self {
        Syncer {
            options,
            ..Syncer::default()
        }
    }

    /// Batch tuning for the applier.
    pub fn with_apply_options(mut self, apply: ApplyOptions) -> Self {
        self.apply = apply;
        self
    }

    /// The planner options.
    pub fn options(&self) -> &PlanOptions {
        &self.options
    }

    /// The table as this syncer last left it (services out of scope are
    /// listed without destinations), if it has synced.
    pub fn cached(&self) -> Option<&Table> {
        self.cache.as_ref()
    }

    /// Forgets the cached view: the next [`Syncer::sync_cached`] lists.
    pub fn forget(&mut self) {
        self.cache = None;
    }

    /// Destinations draining, with the time their drain began.
    pub fn draining(&self) -> &DrainLedger {
        &self.ledger
    }

    /// Lists the kernel's table as the planner needs it: every service,
    /// and the destinations (with connection counts) of those in scope.
    ///
    /// The kernel's service dump resumes each part at a position counted
    /// over the services of every namespace, so services added or deleted
    /// in another namespace meanwhile can make it skip one of ours. The
    /// service dump (cheap next to the destination dumps) is therefore
    /// taken twice and the two merged; a service still missed is found
    /// when adding it fails (`EEXIST`) and corrected in the same sync.
    pub fn list(&self, client: &mut Client) -> Result<Table, Error> {
        // Settings and connection counts are all the planner reads.
        let scope = &self.options.scope;
        let entries = client.list_entries(2, Detail::Settings, |k| scope.contains(k))?;
        Ok(Table::from_entries(entries))
    }

    /// Dry run: lists the table and plans, applying nothing.
    pub fn plan(&self, client: &mut Client, desired: &Table) -> Result<Plan, Error> {
        let current = self.list(client)?;
        Ok(plan(
            &current,
            desired,
            &self.options,
            &self.ledger,
            Instant::now(),
        ))
    }

    /// Lists the kernel's table, plans and applies. `Err` only when the
    /// listing fails; every request's outcome is in the report.
    pub fn sync(&mut self, client: &mut Client, desired: &Table) -> Result<Report, Error> {
        let current = self.list(client)?;
        Ok(self.run(client, current, desired, true))
    }

    /// Plans from the cached view (listing only if there is none) and
    /// applies. For a caller that promises no one else writes the services
    /// in scope. With a drain, the services with destinations draining or
    /// leaving are read back first, for their live connection counts.
    pub fn sync_cached(&mut self, client: &mut Client, desired: &Table) -> Result<Report, Error> {
        let Some(mut current) = self.cache.take() else {
            return self.sync(client, desired);
        };
        // Connection counts in the view are as old as its listing: read
        // back the services whose destinations drain or are about to be
        // removed (a drain decides by the live count).
        let mut draining: HashSet<ServiceKey> = self.ledger.keys().map(|id| id.0).collect();
        if self.options.drain.is_some() {
            let pre = plan(
                &current,
                desired,
                &self.options,
                &self.ledger,
                Instant::now(),
            );
            draining.extend(pre.draining().keys().map(|id| id.0));
            for r in pre.requests() {
                if let Request::DeleteDestination(k, _, _) = r {
                    draining.insert(*k);
                }
            }
        }
        for key in draining {
            if let Err(e) = refresh(client, &mut current, &key) {
                self.cache = Some(current);
                return Err(e);
            }
        }
        Ok(self.run(client, current, desired, false))
    }

    fn run(
        &mut self,
        client: &mut Client,
        mut current: Table,
        desired: &Table,
        listed: bool,
    ) -> Report {
        let p = plan(
            &current,
            desired,
            &self.options,
            &self.ledger,
            Instant::now(),
        );
        let conflicts = p.conflicts().to_vec();
        let (requests, phase, ledger) = p.into_parts();
        self.ledger = ledger;
        let mut outcomes = Outcomes::all_done(requests.len());

        // Phase one: services. Then destinations of the services that exist.
        let first = client.apply_failures(&requests[..phase], &self.apply);
        let mut failed_adds: HashMap<ServiceKey, usize> = HashMap::new();
        for (i, e) in first {
            if let Request::AddService(s) = &requests[i] {
                failed_adds.insert(s.key, i);
            }
            outcomes.set(i, Outcome::Failed(e));
        }
        if failed_adds.is_empty() {
            // The common case: every destination request goes out as planned.
            for (i, e) in client.apply_failures(&requests[phase..], &self.apply) {
                outcomes.set(phase + i, Outcome::Failed(e));
            }
        } else {
            let mut send = Vec::new();
            let mut sent_at = Vec::new();
            for (i, r) in requests.iter().enumerate().skip(phase) {
                match request_key(r).and_then(|k| failed_adds.get(&k)) {
                    Some(&cause) if !is_unknown(outcomes.get(cause)) => {
                        outcomes.set(i, Outcome::Skipped { cause })
                    }
                    _ => {
                        send.push(r.clone());
                        sent_at.push(i);
                    }
                }
            }
            let failures = client.apply_failures(&send, &self.apply);
            drop(send);
            for (j, e) in failures {
                outcomes.set(sent_at[j], Outcome::Failed(e));
            }
        }

        // Bring the view up to date: what was done is applied to it; the
        // services of failed or unknown requests are read back.
        let mut stale: HashSet<ServiceKey> = HashSet::new();
        let all_done = conflicts.is_empty() && outcomes.all_plain_done();
        if all_done && requests.len().saturating_mul(4) >= desired.len() {
            // A big change that fully went through (a cold create, say):
            // the view is the desired table plus what the plan left alone
            // (services out of scope, destinations still draining). Cloning
            // it is cheaper than replaying every request.
            current = self.converged_view(&current, desired);
        } else {
            apply_done(&mut current, &requests, &outcomes);
        }
        for (i, o) in outcomes.exceptions() {
            if let Outcome::Failed(_) = o {
                if let Some(k) = request_key(&requests[i]) {
                    stale.insert(k);
                }
            }
        }
        let mut view_ok = true;
        for key in &stale {
            if refresh(client, &mut current, key).is_err() {
                view_ok = false;
            }
        }
        // The listing can miss services (the kernel's dump resumes by a
        // position counted over every namespace's services): adding one
        // then fails with EEXIST. It was read back above; plan it again
        // and apply, once.
        let mut requests = requests;
        if view_ok {
            self.repair(client, &mut current, desired, &mut requests, &mut outcomes);
        }
        // Requests whose replies were lost: settled by the state read back.
        let mut verified = 0;
        if view_ok {
            let settled: Vec<usize> = outcomes
                .exceptions()
                .filter(|&(i, o)| is_unknown(o) && holds(&current, &requests[i]))
                .map(|(i, _)| i)
                .collect();
            for i in settled {
                outcomes.set(i, Outcome::Done);
                verified += 1;
            }
        }
        self.cache = view_ok.then_some(current);
        Report {
            requests,
            outcomes,
            conflicts,
            listed,
            verified,
        }
    }
}

impl Syncer {
    /// The table after a plan fully applied: `desired`, the services of
    /// `current` out of scope, and the destinations still draining.
    fn converged_view(&self, current: &Table, desired: &Table) -> Table {
        let mut view = desired.clone();
        for key in current.keys() {
            if !self.options.scope.contains(key) {
                view.put_shared(current, key);
            }
        }
        for (key, addr, port) in self.ledger.keys() {
            let found = current.get(key).and_then(|t| t.destination(addr, *port));
            if let (Some(found), Some(entry)) = (found, view.get_mut(key)) {
                let mut d = *found;
                d.destination.weight = 0;
                entry.upsert(d);
            }
        }
        view
    }

    fn repair(
        &mut self,
        client: &mut Client,
        current: &mut Table,
        desired: &Table,
        requests: &mut Vec<Request>,
        outcomes: &mut Outcomes,
    ) {
        let mut missed: HashMap<ServiceKey, usize> = HashMap::new();
        for (i, o) in outcomes.exceptions() {
            if let (Request::AddService(svc), Outcome::Failed(e)) = (&requests[i], o) {
                if e.is_already_exists() {
                    missed.insert(svc.key, i);
                }
            }
        }
        if missed.is_empty() {
            return;
        }
        let mut cur = Table::new();
        let mut want = Table::new();
        for key in missed.keys() {
            if let Some(t) = current.get(key) {
                cur.put(t.clone());
            }
            if let Some(t) = desired.get(key) {
                want.put(t.clone());
            }
        }
        let settled: Vec<usize> = outcomes
            .exceptions()
            .filter(|&(i, o)| match (&requests[i], o) {
                (Request::AddService(s), Outcome::Failed(_)) => missed.contains_key(&s.key),
                (Request::AddDestination(k, _), Outcome::Skipped { .. }) => missed.contains_key(k),
                _ => false,
            })
            .map(|(i, _)| i)
            .collect();
        for i in settled {
            outcomes.set(i, Outcome::Superseded);
        }
        let p = plan(&cur, &want, &self.options, &self.ledger, Instant::now());
        let (extra, _, ledger) = p.into_parts();
        self.ledger.extend(ledger);
        let results = client.apply_with(&extra, &self.apply);
        for (r, res) in extra.into_iter().zip(results) {
            let o = result_outcome(res);
            match &o {
                Outcome::Done => apply_to(current, &r),
                _ => {
                    if let Some(k) = request_key(&r) {
                        let _ = refresh(client, current, &k);
                    }
                }
            }
            requests.push(r);
            outcomes.push(o);
        }
    }
}

fn result_outcome(r: Result<(), Error>) -> Outcome {
    match r {
        Ok(()) => Outcome::Done,
        Err(e) => Outcome::Failed(e),
    }
}

/// A failure whose outcome is not known: sent, and the reply never seen.
fn is_unknown(o: &Outcome) -> bool {
    matches!(o, Outcome::Failed(e) if e.is_unknown_outcome())
}

/// The service a request is about.
fn request_key(r: &Request) -> Option<ServiceKey> {
    match r {
        Request::AddService(s) | Request::EditService(s) => Some(s.key),
        Request::DeleteService(k)
        | Request::AddDestination(k, _)
        | Request::EditDestination(k, _)
        | Request::DeleteDestination(k, _, _) => Some(*k),
        _ => None,
    }
}

/// Applies the requests that were done to the view. Destination requests
/// of one service come together in a plan: the service is looked up once
/// per run of them.
fn apply_done(t: &mut Table, requests: &[Request], outcomes: &Outcomes) {
    let mut i = 0;
    while i < requests.len() {
        let key = match &requests[i] {
            Request::AddDestination(k, _)
            | Request::EditDestination(k, _)
            | Request::DeleteDestination(k, _, _) => *k,
            other => {
                if let Outcome::Done = outcomes.get(i) {
                    apply_to(t, other);
                }
                i += 1;
                continue;
            }
        };
        let run = requests[i..]
            .iter()
            .take_while(|r| match r {
                Request::AddDestination(k, _)
                | Request::EditDestination(k, _)
                | Request::DeleteDestination(k, _, _) => *k == key,
                _ => false,
            })
            .count();
        if let Some(entry) = t.get_mut(&key) {
            entry.destinations.reserve(run);
            for (j, r) in requests[i..i + run].iter().enumerate() {
                if let Outcome::Done = outcomes.get(i + j) {
                    apply_to_service(entry, r);
                }
            }
        }
        i += run;
    }
}

fn apply_to_service(e: &mut TableService, r: &Request) {
    match r {
        Request::AddDestination(_, d) | Request::EditDestination(_, d) => {
            match e.position(&d.addr, d.port) {
                Ok(at) => e.destinations[at].destination = *d,
                Err(at) => e.destinations.insert(
                    at,
                    TableDestination {
                        destination: *d,
                        connections: 0,
                    },
                ),
            }
        }
        Request::DeleteDestination(_, a, p) => e.remove(a, *p),
        _ => {}
    }
}

/// Applies a request that was done to the view.
fn apply_to(t: &mut Table, r: &Request) {
    match r {
        Request::AddService(s) => t.put(TableService {
            service: s.clone(),
            destinations: Vec::new(),
        }),
        Request::EditService(s) => match t.get_mut(&s.key) {
            Some(e) => e.service = s.clone(),
            None => t.put(TableService {
                service: s.clone(),
                destinations: Vec::new(),
            }),
        },
        Request::DeleteService(k) => {
            t.remove(k);
        }
        Request::AddDestination(k, d) | Request::EditDestination(k, d) => {
            if let Some(e) = t.get_mut(k) {
                let connections = e
                    .destination(&d.addr, d.port)
                    .map_or(0, |found| found.connections);
                e.upsert(TableDestination {
                    destination: *d,
                    connections,
                });
            }
        }
        Request::DeleteDestination(k, a, p) => {
            if let Some(e) = t.get_mut(k) {
                e.remove(a, *p);
            }
        }
        _ => {}
    }
}

/// Whether the view shows the request's effect.
fn holds(t: &Table, r: &Request) -> bool {
    match r {
        Request::AddService(s) | Request::EditService(s) => t
            .get(&s.key)
            .is_some_and(|e| service_matches(&e.service, s)),
        Request::DeleteService(k) => t.get(k).is_none(),
        Request::AddDestination(k, d) | Request::EditDestination(k, d) => t
            .get(k)
            .and_then(|e| e.destination(&d.addr, d.port))
            .is_some_and(|found| dest_matches(&found.destination, d)),
        Request::DeleteDestination(k, a, p) => {
            t.get(k).is_none_or(|e| e.destination(a, *p).is_none())
        }
        _ => false,
    }
}

/// Reads one service and its destinations back from the kernel into the
/// view (removing it if the kernel has none).
fn refresh(client: &mut Client, t: &mut Table, key: &ServiceKey) -> Result<(), Error> {
    match client.service(key) {
        Ok(service) => {
            let destinations = client.list_destinations(key, Detail::Settings)?;
            t.put(service_from_entry(TableEntry {
                service,
                destinations,
            }));
            Ok(())
        }
        Err(e) if e.is_not_found() => {
            t.remove(key);
            Ok(())
        }
        Err(e) => Err(e),
    }
}
