//! The agent's start: the kernel's table adopted, each service synced once
//! its servers have answered or after a bounded wait.
//!
//! Contract:
//!
//! - The kernel's table is listed once before the first check. Each
//!   checked server begins as the kernel holds it ([`found_start`]): at a
//!   weight above 0, provisionally up (its first failure takes it out); at
//!   weight 0 (its configured weight not 0), down (`rise` successes bring
//!   it in); absent from a service the kernel holds whose failing servers
//!   are removed once drained (`remove_after_drain`), down. Otherwise, in
//!   a service the kernel lacks or a server new to it, as its check's
//!   `start` says.
//! - A service is *waiting* from the start until every checked server of
//!   it has had its first result, or until `start_wait` has passed since
//!   the start, whichever comes first; then it is *settled*. A service
//!   without a checked server is settled at once; a reload settles the
//!   services it changes.
//! - While a service waits, the desired table holds it exactly as the
//!   kernel held it at start (or not at all, if the kernel lacked it): no
//!   sync changes it. Settled, it is what its servers' health says; a
//!   server still without a result is then written as it began (above),
//!   so one the kernel held at weight 0 is never given weight by the
//!   wait's end.
//! - No sync runs before a service is settled (when every service waits,
//!   a sync would send nothing). The agent is ready once every service is
//!   settled and a sync started after that has ended without error.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use ipvsnl::sync::{DestinationId, Table};
use ipvsnl::ServiceKey;
use tokio::time::Instant;

use crate::check::HealthBook;
use crate::config::{Config, RealServer, StartState, VirtualService};

/// The services still waiting for their servers' first results.
#[derive(Debug)]
pub(crate) struct Startup {
    /// The kernel's table at start (the agent's services with their
    /// destinations, others without).
    found: Table,
    /// Each waiting service's checked servers without a result yet.
    waiting: HashMap<ServiceKey, HashSet<DestinationId>>,
    /// When every service still waiting is settled anyway.
    until: Instant,
    /// Whether some service is settled.
    settled_any: bool,
}

/// How a checked server `rs` of `vs` begins, from the kernel's table at
/// start (`None`: as its check's `start` says).
pub(crate) fn found_start(
    vs: &VirtualService,
    rs: &RealServer,
    found: &Table,
) -> Option<StartState> {
    let entry = found.get(&vs.service.key)?;
    let d = &rs.destination;
    match entry.destination(&d.addr, d.port) {
        Some(t) if t.destination.weight > 0 => Some(StartState::Up),
        Some(_) if d.weight > 0 => Some(StartState::Down),
        Some(_) => None,
        None if vs.remove_after_drain => Some(StartState::Down),
        None => None,
    }
}

impl Startup {
    /// The start of `config` over the kernel's table `found`, at `now`:
    /// every checked server of `book` begins as the kernel holds it, and
    /// every service with a checked server waits, at most `wait`.
    pub(crate) fn new(
        config: &Config,
        found: Table,
        book: &mut HealthBook,
        now: Instant,
        wait: Duration,
    ) -> Self {
        let mut waiting = HashMap::new();
        for vs in &config.services {
            let key = vs.service.key;
            let mut servers = HashSet::new();
            for rs in vs.servers.iter().filter(|rs| rs.check.is_some()) {
                let id = (key, rs.destination.addr, rs.destination.port);
                if let Some(start) = found_start(vs, rs, &found) {
                    book.begin_as(&id, start);
                }
                servers.insert(id);
            }
            if !servers.is_empty() {
                waiting.insert(key, servers);
            }
        }
        let settled_any = waiting.len() < config.services.len();
        Startup {
            found,
            waiting,
            until: now + wait,
            settled_any,
        }
    }

    /// Server `id` had a result: whether its service is settled by it.
    pub(crate) fn answered(&mut self, id: &DestinationId) -> bool {
        let Some(servers) = self.waiting.get_mut(&id.0) else {
            return false;
        };
        if !servers.remove(id) || !servers.is_empty() {
            return false;
        }
        self.settle(&id.0);
        true
    }

    /// The services still waiting at `now`, settled if the wait is over
    /// (a log line each, with how many of its servers had no result yet).
    pub(crate) fn expire(&mut self, now: Instant) -> Vec<ServiceKey> {
        if now < self.until || self.waiting.is_empty() {
            return Vec::new();
        }
        self.settled_any = true;
        let mut keys: Vec<_> = self.waiting.drain().collect();
        keys.sort_unstable_by_key(|(k, _)| *k);
        for (key, servers) in &keys {
            tracing::info!(
                service = %key,
                unanswered = servers.len(),
                "start_wait passed: the service is synced, its servers without a result as they began"
            );
        }
        keys.into_iter().map(|(k, _)| k).collect()
    }

    /// Settles the service `key` now.
    fn settle(&mut self, key: &ServiceKey) {
        if self.waiting.remove(key).is_some() {
            self.settled_any = true;
        }
    }

    /// Settles these services now (a reload changed or removed them).
    pub(crate) fn settle_all(&mut self, keys: impl IntoIterator<Item = ServiceKey>) {
        for key in keys {
            self.settle(&key);
        }
    }

    /// When the wait ends, while some service waits.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        (!self.waiting.is_empty()).then_some(self.until)
    }

    /// Whether a sync may run: some service is settled.
    pub(crate) fn may_sync(&self) -> bool {
        self.settled_any || self.waiting.is_empty()
    }

    /// Whether every service is settled.
    pub(crate) fn is_over(&self) -> bool {
        self.waiting.is_empty()
    }

    /// If the service `key` waits, makes its entry in `table` the one the
    /// kernel had at start (or none), and says so.
    pub(crate) fn hold(&self, key: &ServiceKey, table: &mut Table) -> bool {
        if !self.waiting.contains_key(key) {
            return false;
        }
        match self.found.get(key) {
            Some(entry) => table.insert(
                entry.service.clone(),
                entry.destinations.iter().map(|d| d.destination),
            ),
            None => {
                table.remove(key);
            }
        }
        true
    }

    /// [`hold`](Self::hold) for every service that waits.
    pub(crate) fn hold_all(&self, table: &mut Table) {
        for key in self.waiting.keys() {
            self.hold(key, table);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_str;
    use ipvsnl::{Destination, Service};

    #[test]
    fn a_server_begins_as_the_kernel_holds_it_else_as_its_start_says() {
        let file = |remove: bool| {
            parse_str(
                "t.toml",
                &format!(
                    "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\n\
                     remove_after_drain = {remove}\ncheck = {{ kind = \"tcp\" }}\n\
                     [[service.server]]\naddress = \"10.0.0.1\"\nweight = 3\n\
                     [[service.server]]\naddress = \"10.0.0.2\"\nweight = 0\n\
                     [[service.server]]\naddress = \"10.0.0.3\"\n"
                ),
            )
            .unwrap_or_else(|e| panic!("{e}"))
        };
        let begins = |config: &Config, found: &Table| -> Vec<Option<StartState>> {
            let vs = &config.services[0];
            vs.servers
                .iter()
                .map(|rs| found_start(vs, rs, found))
                .collect()
        };
        let d = |last: u8, weight: u32| {
            Destination::new(std::net::Ipv4Addr::new(10, 0, 0, last).into(), 80).with_weight(weight)
        };
        let config = file(false);
        let key = config.services[0].service.key;
        // The kernel lacks the service: every server as its `start` says.
        assert_eq!(begins(&config, &Table::new()), [None, None, None]);
        // 10.0.0.1 serving, 10.0.0.2 at 0 as configured, 10.0.0.3 absent.
        let mut found = Table::new();
        found.insert(Service::new(key), [d(1, 7), d(2, 0)]);
        assert_eq!(begins(&config, &found), [Some(StartState::Up), None, None]);
        // 10.0.0.1 drained.
        found.insert(Service::new(key), [d(1, 0)]);
        assert_eq!(
            begins(&config, &found),
            [Some(StartState::Down), None, None]
        );
        // Removed once drained: absent is down.
        let config = file(true);
        assert_eq!(
            begins(&config, &found),
            [
                Some(StartState::Down),
                Some(StartState::Down),
                Some(StartState::Down)
            ]
        );
    }
}
