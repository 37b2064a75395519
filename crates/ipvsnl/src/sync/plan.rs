//! The pure planner: current table + desired table + scope -> ordered
//! requests. No I/O, no clock: time comes in as an argument.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::sync::clock::Clock;
use crate::sync::ledger::DrainLedger;
use crate::sync::planned::{Plan, Steps};
use crate::sync::table::{
    dest_id, dest_matches, service_matches, Table, TableDestination, TableService,
};
use crate::{Protocol, Request, Service, ServiceFlags, ServiceKey};

/// Which services a sync may touch, so that it coexists with other
/// managers of the same table. Services outside the scope are never
/// changed nor deleted, and a wanted service outside it is refused
/// ([`Plan::conflicts`]).
///
/// ```
/// use ipvsnl::sync::Scope;
/// use ipvsnl::ServiceKey;
/// let mine = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let other = ServiceKey::tcp("192.0.2.1".parse().unwrap(), 80);
/// let scope = Scope::predicate(|k: &ServiceKey| k.to_string().contains(" 10."));
/// assert!(scope.contains(&mine));
/// assert!(!scope.contains(&other));
/// assert!(Scope::keys([mine]).contains(&mine));
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum Scope {
    /// Every service of the namespace belongs to this manager.
    #[default]
    All,
    /// Only these keys.
    Keys(HashSet<ServiceKey>),
    /// The keys this predicate accepts.
    Predicate(Arc<dyn Fn(&ServiceKey) -> bool + Send + Sync>),
}

impl Scope {
    /// A scope of these keys.
    pub fn keys(keys: impl IntoIterator<Item = ServiceKey>) -> Self {
        Scope::Keys(keys.into_iter().collect())
    }

    /// A scope given by a predicate.
    pub fn predicate(f: impl Fn(&ServiceKey) -> bool + Send + Sync + 'static) -> Self {
        Scope::Predicate(Arc::new(f))
    }

    /// Whether the key is in scope.
    pub fn contains(&self, key: &ServiceKey) -> bool {
        match self {
            Scope::All => true,
            Scope::Keys(k) => k.contains(key),
            Scope::Predicate(f) => f(key),
        }
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::All => f.write_str("All"),
            Scope::Keys(k) => f.debug_tuple("Keys").field(&k.len()).finish(),
            Scope::Predicate(_) => f.write_str("Predicate(..)"),
        }
    }
}

/// How destinations that are no longer wanted are removed: drained, then
/// deleted.
///
/// A destination that leaves the desired table while it still has clients
/// is not deleted at once: its weight is set to 0, so the scheduler gives
/// it no new client, and it is kept while its clients last. Its clients are
/// what the kernel counts on it when a sync reads it:
///
/// - its active and inactive connections;
/// - for a persistent service ([`crate::Service::with_persistence`]), its
///   persistence templates too (the kernel's "persistent connections",
///   `IPVS_DEST_ATTR_PERSIST_CONNS`). A template sends its client's new
///   connections to the destination it names, at weight 0 or not, until it
///   expires: the service's persistence timeout after it was last used,
///   and not before the client's last connection through it is gone
///   (kubernetes#81591). The kernel drops such templates early only when
///   the namespace's `net.ipv4.vs.expire_quiescent_template` is 1.
///
/// Nothing runs between syncs: each sync reads the counts (a listed sync
/// lists them; a cached sync reads back the services with destinations
/// draining or leaving) and deletes a draining destination once they are
/// all 0, or once it has drained for `max`, whatever they are.
///
/// A drain begins when the destination's weight is known to be 0 in the
/// kernel: when its weight-0 edit was applied (its reply seen, or the
/// destination read back at weight 0), or when a sync finds it at weight
/// 0 already. A sync dropped or failing before that records nothing, and a
/// destination found at another weight (the edit never went through, or
/// someone set it back) begins its drain again. The syncer keeps the
/// beginnings ([`crate::sync::Syncer::draining`]); a destination wanted
/// again while it drains gets its weight back and its drain is forgotten.
///
/// UDP and SCTP destinations are deleted at once unless
/// [`Drain::with_datagrams`]: their "connections" are only timers.
///
/// Against the emulated kernel (feature `emulator`), a destination has no
/// clients until the test gives it some: its counts are 0 unless set with
/// `Netns::set_destination_state`, so a removed destination is deleted at
/// once, with no weight-0 step. A test of the drain sets them first:
///
/// ```
/// # #[cfg(feature = "emulator")]
/// # fn main() -> Result<(), ipvsnl::Error> {
/// use std::net::SocketAddr;
/// use std::time::Duration;
/// use ipvsnl::emulator::{Connections, Kernel};
/// use ipvsnl::sync::{Drain, PlanOptions, Scope, Syncer, Table};
/// use ipvsnl::{Client, Destination, Request, Service, ServiceKey, Stats};
///
/// let kernel = Kernel::new();
/// let mut ipvs = Client::emulated(&kernel);
/// let options = PlanOptions::new(Scope::All).with_drain(Drain::new(Duration::from_secs(60)));
/// let mut syncer = Syncer::new(options);
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let backend: SocketAddr = "10.1.0.1:8080".parse().unwrap();
/// let mut want = Table::new();
/// want.insert(Service::new(key), [Destination::from(backend)]);
/// syncer.sync(&mut ipvs, &want)?;
///
/// // Without this, the sync below would delete it at once.
/// let busy = Connections::default().with_active(2);
/// let ns = kernel.init_netns();
/// ns.set_destination_state(&key, backend.ip(), backend.port(), busy, Stats::default());
///
/// want.remove_destination(&key, backend.ip(), backend.port()).unwrap();
/// let report = syncer.sync(&mut ipvs, &want)?;
/// let weight_0 = Destination::from(backend).with_weight(0);
/// assert_eq!(report.requests(), [Request::EditDestination(key, weight_0)]);
/// # Ok(())
/// # }
/// # #[cfg(not(feature = "emulator"))]
/// # fn main() {}
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Drain {
    /// The longest a destination may drain before it is deleted anyway.
    pub max: Duration,
    /// Drain UDP (and SCTP) destinations too; by default they are deleted
    /// at once, as their "connections" are only timers.
    pub datagrams: bool,
}

impl Drain {
    /// Graceful removal with at most `max` of draining, TCP only.
    pub fn new(max: Duration) -> Self {
        Drain {
            max,
            datagrams: false,
        }
    }

    /// Drains UDP and SCTP destinations too.
    #[must_use]
    pub fn with_datagrams(mut self, yes: bool) -> Self {
        self.datagrams = yes;
        self
    }
}

/// Planner settings.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct PlanOptions {
    /// Which services may be touched.
    pub scope: Scope,
    /// Graceful destination removal; `None` deletes at once.
    pub drain: Option<Drain>,
    /// The clock drains are timed by (the system's by default).
    pub clock: Clock,
}

impl PlanOptions {
    /// Options with this scope and immediate removal.
    pub fn new(scope: Scope) -> Self {
        PlanOptions {
            scope,
            drain: None,
            clock: Clock::system(),
        }
    }

    /// Removes destinations gracefully: weight 0 first, delete once their
    /// connections (and, for a persistent service, their persistence
    /// templates) reach 0 on a later sync, or after the drain's maximum
    /// (see [`Drain`]).
    #[must_use]
    pub fn with_drain(mut self, drain: Drain) -> Self {
        self.drain = Some(drain);
        self
    }

    /// Times drains by `clock` instead of the system's clock.
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }
}

fn drains_protocol(key: &ServiceKey, drain: &Drain) -> bool {
    match key {
        ServiceKey::Inet {
            protocol: Protocol::Tcp,
            ..
        }
        | ServiceKey::Fwmark { .. } => true,
        _ => drain.datagrams,
    }
}

/// Plans the requests that make `current` hold `desired`, within
/// `options.scope`: what matches is not touched; settings the kernel can
/// edit in place are edited (service scheduler, flags, persistence,
/// netmask, persistence engine; destination forwarding, tunnel, weight and
/// thresholds); only what is no longer wanted is deleted.
///
/// `ledger` says which destinations were already draining and since when;
/// `now` is the time the drain deadlines are measured against. Pure: the
/// same inputs give the same plan.
///
/// ```
/// use std::time::Instant;
/// use ipvsnl::sync::{plan, PlanOptions, Table};
/// use ipvsnl::{Destination, Request, Service, ServiceKey};
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let mut want = Table::new();
/// want.insert(Service::new(key), [Destination::new("172.16.0.1".parse().unwrap(), 80)]);
/// let p = plan(&Table::new(), &want, &PlanOptions::default(), &Default::default(), Instant::now());
/// assert!(matches!(p.requests()[0], Request::AddService(_)));
/// assert_eq!(p.len(), 2);
/// let again = plan(&want, &want, &PlanOptions::default(), &Default::default(), Instant::now());
/// assert!(again.is_empty());
/// ```
pub fn plan(
    current: &Table,
    desired: &Table,
    options: &PlanOptions,
    ledger: &DrainLedger,
    now: Instant,
) -> Plan {
    // Phase one, the service requests; phase two, the destination
    // requests, in service order. A service added (all of a cold start)
    // is two steps referring to its entry in `desired`, not a request
    // for it and each of its destinations.
    let (mut services, mut destinations) = if current.is_empty() {
        (
            Steps::with_capacity(desired.len()),
            Steps::with_capacity(desired.len()),
        )
    } else {
        (Steps::default(), Steps::default())
    };
    let mut conflicts = Vec::new();
    let mut draining = DrainLedger::default();
    let mut unchanged = 0;
    let mut diff: Vec<Request> = Vec::new();
    let scope = &options.scope;
    let mut cur = current.entries().peekable();
    let mut want = desired.entries().peekable();
    loop {
        let order = match (cur.peek(), want.peek()) {
            (None, None) => break,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some(c), Some(w)) => c.service.key.cmp(&w.service.key),
        };
        match order {
            std::cmp::Ordering::Less => {
                // Found, not wanted.
                if let Some(c) = cur.next() {
                    if scope.contains(&c.service.key) {
                        services.push(Request::DeleteService(c.service.key));
                    }
                }
            }
            std::cmp::Ordering::Greater => {
                // Wanted, not found.
                if let Some(w) = want.next() {
                    if !scope.contains(&w.service.key) {
                        conflicts.push(w.service.key);
                        continue;
                    }
                    services.add_service(w);
                    destinations.add_destinations(w);
                }
            }
            std::cmp::Ordering::Equal => {
                let (Some(c), Some(w)) = (cur.next(), want.next()) else {
                    break;
                };
                if !scope.contains(&w.service.key) {
                    conflicts.push(w.service.key);
                    continue;
                }
                if Arc::ptr_eq(c, w) {
                    // One shared entry (the cached view was cloned from
                    // this desired table): the same, without comparing.
                    unchanged += 1;
                    continue;
                }
                let before = services.len() + destinations.len();
                if !service_matches(&c.service, &w.service) {
                    services.push(Request::edit_service(w.service.clone()));
                }
                diff_destinations(c, w, options, ledger, now, &mut diff, &mut draining);
                destinations.append_written(&mut diff);
                if services.len() + destinations.len() == before {
                    unchanged += 1;
                }
            }
        }
    }
    Plan::new(services, destinations, conflicts, draining, unchanged)
}

/// Whether a destination leaving a service still has clients to drain:
/// connections (active or inactive), or, when the service is persistent,
/// persistence templates (a template sends its client's new connections
/// to the destination it names, whatever its weight, until it expires).
fn holds_clients(found: &TableDestination, service: &Service) -> bool {
    found.connections > 0
        || (service.flags.contains(ServiceFlags::PERSISTENT) && found.templates > 0)
}

fn diff_destinations(
    c: &TableService,
    w: &TableService,
    options: &PlanOptions,
    ledger: &DrainLedger,
    now: Instant,
    out: &mut Vec<Request>,
    draining: &mut DrainLedger,
) {
    let key = w.service.key;
    let drain = options.drain.filter(|d| drains_protocol(&key, d));
    let mut deletes = Vec::new();
    let mut edits = Vec::new();
    let mut adds = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < c.destinations.len() || j < w.destinations.len() {
        let order = match (c.destinations.get(i), w.destinations.get(j)) {
            (Some(a), Some(b)) => dest_id(&a.destination).cmp(&dest_id(&b.destination)),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match order {
            std::cmp::Ordering::Less => {
                let found = &c.destinations[i];
                let d = found.destination;
                let id = (key, d.addr, d.port);
                i += 1;
                let Some(drain) = drain else {
                    deletes.push(Request::DeleteDestination(key, d.addr, d.port));
                    continue;
                };
                // A drain runs while the destination is at weight 0: one
                // found otherwise (its weight-0 edit never went through, or
                // someone set a weight again) begins its drain now.
                let since = match ledger.since(&id) {
                    Some(t) if d.weight == 0 => t,
                    _ => now,
                };
                let expired = now.saturating_duration_since(since) >= drain.max;
                if !holds_clients(found, &w.service) || expired {
                    deletes.push(Request::DeleteDestination(key, d.addr, d.port));
                } else {
                    if d.weight != 0 {
                        edits.push(Request::EditDestination(key, d.with_weight(0)));
                    }
                    draining.record(id, since);
                }
            }
            std::cmp::Ordering::Greater => {
                adds.push(Request::AddDestination(key, w.destinations[j].destination));
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                let (a, b) = (
                    &c.destinations[i].destination,
                    &w.destinations[j].destination,
                );
                if !dest_matches(a, b) {
                    edits.push(Request::EditDestination(key, *b));
                }
                i += 1;
                j += 1;
            }
        }
    }
    out.append(&mut deletes);
    out.append(&mut edits);
    out.append(&mut adds);
}
