//! The services the agent owned that its file no longer has, found in the
//! kernel at start (removed from the file while the agent was down): each
//! is held in the desired table with no servers until the kernel holds
//! none of them (each drained, then deleted, as any removed server), then
//! left out, and the next sync deletes it. A reload that puts one back in
//! the file makes it the file's again.

use std::collections::BTreeSet;

use ipvsnl::sync::Table;
use ipvsnl::ServiceKey;

use crate::config::Config;

/// The services being retired, with their settings as found.
#[derive(Debug, Default)]
pub(crate) struct Retiring {
    services: Table,
}

impl Retiring {
    /// The services `recorded` as the agent's that `config` lacks and the
    /// kernel's table at start (`found`) holds.
    pub(crate) fn new(config: &Config, found: &Table, recorded: &BTreeSet<ServiceKey>) -> Self {
        let file: BTreeSet<ServiceKey> = config.services.iter().map(|s| s.service.key).collect();
        let mut services = Table::new();
        for key in recorded.difference(&file) {
            if let Some(entry) = found.get(key) {
                tracing::info!(
                    service = %key,
                    servers = entry.destinations.len(),
                    "the agent's service is no longer in the file: its servers drain, then it is removed"
                );
                services.insert(entry.service.clone(), []);
            }
        }
        Retiring { services }
    }

    /// Puts every service being retired in `table`, with no servers.
    pub(crate) fn hold_all(&self, table: &mut Table) {
        for entry in self.services.iter() {
            table.insert(entry.service.clone(), []);
        }
    }

    /// The services `config` has again are no longer retired.
    pub(crate) fn keep_only_outside(&mut self, config: &Config) {
        for vs in &config.services {
            self.services.remove(&vs.service.key);
        }
    }

    /// After a sync: a service the kernel was seen to hold with no servers
    /// (or not at all) leaves `table`, and the next sync deletes it.
    /// Whether one did.
    pub(crate) fn update(&mut self, view: Option<&Table>, table: &mut Table) -> bool {
        let Some(view) = view else {
            return false;
        };
        let done: Vec<ServiceKey> = self
            .services
            .keys()
            .filter(|k| view.get(k).map_or(true, |e| e.destinations.is_empty()))
            .copied()
            .collect();
        for key in &done {
            self.services.remove(key);
            table.remove(key);
        }
        !done.is_empty()
    }
}
