//! Every real server's health, by its id, carried across reloads: an
//! unchanged server keeps its state, a new one starts as its check says, a
//! removed one is forgotten.

use ipvsnl::sync::DestinationId;

use crate::check::id_map::IdMap;
use crate::check::outcome::Outcome;
use crate::check::state::{Health, ServerHealth, Transition};
use crate::config::{Config, HealthCheck, RealServer, StartState, VirtualService};

/// What a reload did to the book.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reconciled {
    /// Servers new to the book (in the file's order).
    pub added: Vec<DestinationId>,
    /// Servers no longer in the file.
    pub removed: Vec<DestinationId>,
    /// Servers whose check changed: they keep their health, their count of
    /// consecutive results starts again under the new thresholds.
    pub retuned: Vec<DestinationId>,
    /// Servers kept as they were.
    pub unchanged: usize,
}

#[derive(Debug, Clone)]
struct Entry {
    check: Option<HealthCheck>,
    health: Option<ServerHealth>,
}

/// The health of every server of a configuration.
///
/// ```
/// use ipvs_agent::check::{Failure, Health, HealthBook, Outcome};
/// let config = ipvs_agent::config::parse_str("a.toml", r#"
/// [[service]]
/// protocol = "tcp"
/// address = "192.0.2.1"
/// port = 80
/// check = { kind = "tcp", fall = 1 }
/// [[service.server]]
/// address = "10.0.0.2"
/// "#).unwrap();
/// let mut book = HealthBook::new();
/// book.reconcile(&config);
/// let id = (config.services[0].service.key, "10.0.0.2".parse().unwrap(), 80);
/// assert_eq!(book.health(&id), Health::Up);
/// book.record(&id, &Outcome::Pass);
/// book.record(&id, &Outcome::Fail(Failure::Timeout));
/// assert_eq!(book.health(&id), Health::Down);
/// // The same file again: the state stays.
/// assert_eq!(book.reconcile(&config).unchanged, 1);
/// assert_eq!(book.health(&id), Health::Down);
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct HealthBook {
    servers: IdMap<Entry>,
}

impl HealthBook {
    /// An empty book.
    pub fn new() -> Self {
        HealthBook::default()
    }

    /// Makes the book hold exactly the servers of `config`.
    pub fn reconcile(&mut self, config: &Config) -> Reconciled {
        let mut r = Reconciled::default();
        let mut next = IdMap::with_capacity_and_hasher(self.servers.len(), Default::default());
        for vs in &config.services {
            for rs in &vs.servers {
                let id = (vs.service.key, rs.destination.addr, rs.destination.port);
                let entry = carried(self.servers.remove(&id), id, rs, &mut r);
                next.insert(id, entry);
            }
        }
        r.removed = self.servers.drain().map(|(id, _)| id).collect();
        r.removed.sort();
        self.servers = next;
        r
    }

    /// Makes the book hold the servers of one service as `new` has them
    /// (`None`: the service is gone), where it held them as `old` had
    /// them: what [`reconcile`](Self::reconcile) does for that service,
    /// in time proportional to its servers. `r` gathers what it did.
    ///
    /// ```
    /// use ipvs_agent::check::{HealthBook, Reconciled};
    /// let config = ipvs_agent::config::parse_str("a.toml", r#"
    /// [[service]]
    /// protocol = "tcp"
    /// address = "192.0.2.1"
    /// port = 80
    /// [[service.server]]
    /// address = "10.0.0.2"
    /// "#).unwrap();
    /// let mut book = HealthBook::new();
    /// let mut r = Reconciled::default();
    /// book.reconcile_service(None, Some(&config.services[0]), &mut r);
    /// assert_eq!((r.added.len(), book.len()), (1, 1));
    /// book.reconcile_service(Some(&config.services[0]), None, &mut r);
    /// assert_eq!((r.removed.len(), book.len()), (1, 0));
    /// ```
    pub fn reconcile_service(
        &mut self,
        old: Option<&VirtualService>,
        new: Option<&VirtualService>,
        r: &mut Reconciled,
    ) {
        // The new servers' entries out first: what is left of the old
        // service's then is what the reload removes.
        let mut taken = Vec::new();
        for vs in new.iter() {
            for rs in &vs.servers {
                let id = (vs.service.key, rs.destination.addr, rs.destination.port);
                taken.push((id, rs, self.servers.remove(&id)));
            }
        }
        for vs in old.iter() {
            for rs in &vs.servers {
                let id = (vs.service.key, rs.destination.addr, rs.destination.port);
                if self.servers.remove(&id).is_some() {
                    r.removed.push(id);
                }
            }
        }
        for (id, rs, entry) in taken {
            let entry = carried(entry, id, rs, r);
            self.servers.insert(id, entry);
        }
    }

    /// Takes one check result of a server; gives its transition, if any.
    /// A server not in the book, or without a check, takes none.
    pub fn record(&mut self, id: &DestinationId, outcome: &Outcome) -> Option<Transition> {
        self.servers.get_mut(id)?.health.as_mut()?.record(outcome)
    }

    /// Makes a checked server that has had no result yet begin as `start`
    /// says instead of as its check's `start` does: an agent that adopts
    /// the kernel's table begins a server it finds serving provisionally
    /// up and one it finds drained down. A server without a check, or not
    /// in the book, is left as it is.
    ///
    /// ```
    /// use ipvs_agent::check::{Health, HealthBook};
    /// use ipvs_agent::config::StartState;
    /// let config = ipvs_agent::config::parse_str("a.toml", r#"
    /// [[service]]
    /// protocol = "tcp"
    /// address = "192.0.2.1"
    /// port = 80
    /// check = { kind = "tcp" }
    /// [[service.server]]
    /// address = "10.0.0.2"
    /// "#).unwrap();
    /// let mut book = HealthBook::new();
    /// book.reconcile(&config);
    /// let id = (config.services[0].service.key, "10.0.0.2".parse().unwrap(), 80);
    /// book.begin_as(&id, StartState::Down);
    /// assert_eq!(book.health(&id), Health::Down);
    /// ```
    pub fn begin_as(&mut self, id: &DestinationId, start: StartState) {
        if let Some(Entry {
            check: Some(c),
            health: Some(h),
        }) = self.servers.get_mut(id)
        {
            *h = ServerHealth::new(c.rise, c.fall, start);
        }
    }

    /// A server's health: a server without a check is up; one the book
    /// does not hold is down (nothing vouches for it).
    pub fn health(&self, id: &DestinationId) -> Health {
        match self.servers.get(id) {
            Some(Entry {
                health: Some(h), ..
            }) => h.health(),
            Some(Entry { health: None, .. }) => Health::Up,
            None => Health::Down,
        }
    }

    /// How many servers the book holds.
    pub fn len(&self) -> usize {
        self.servers.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }
}

/// A server's entry after a reload: `old`, kept or retuned to its new
/// check, or a new one.
fn carried(old: Option<Entry>, id: DestinationId, rs: &RealServer, r: &mut Reconciled) -> Entry {
    match old {
        Some(old) if old.check == rs.check => {
            r.unchanged += 1;
            old
        }
        Some(old) => {
            r.retuned.push(id);
            let health = match (&rs.check, old.health) {
                (Some(c), Some(h)) => Some(h.retuned(c.rise, c.fall)),
                (Some(c), None) => Some(ServerHealth::for_check(c)),
                (None, _) => None,
            };
            Entry {
                check: rs.check.clone(),
                health,
            }
        }
        None => {
            r.added.push(id);
            Entry {
                check: rs.check.clone(),
                health: rs.check.as_ref().map(ServerHealth::for_check),
            }
        }
    }
}
