//! A sync from the cached view: what the syncer remembers of the table it
//! converged to, and the plan of only the services that may differ since.

use std::collections::BTreeSet;

use crate::client_core::ClientCore;
use crate::sync::fates::Fates;
use crate::sync::ledger::DrainLedger;
use crate::sync::namespace::NetnsId;
use crate::sync::plan::{plan, PlanOptions};
use crate::sync::planned::Plan;
use crate::sync::table::Table;
use crate::sync::view::request_key;
use crate::transport::Transport;
use crate::{Error, Request, ServiceKey};

/// Where a sync's view comes from: the namespace the client talks to and
/// the IPVS family id seen before the table was listed (or, for a cached
/// sync, before the remembered view was trusted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Origin {
    /// `None`: the namespace could not be told; no view of it is kept.
    pub(crate) namespace: Option<NetnsId>,
    pub(crate) family: u16,
}

impl Origin {
    /// The client's namespace and the family id the kernel has now (one
    /// round trip: an id resolved earlier may be stale).
    pub(crate) async fn now<T: Transport>(core: &mut ClientCore<T>) -> Result<Origin, Error> {
        let namespace = NetnsId::of(core);
        let family = core.family_now().await?;
        Ok(Origin { namespace, family })
    }
}

/// What a sync converged to, beside the view it left.
#[derive(Debug, Clone)]
pub(crate) struct Synced {
    /// The stamp of the desired table it was given.
    stamp: u64,
    /// The namespace whose table the view shows.
    namespace: NetnsId,
    /// The IPVS family id seen before the view was listed, and still the
    /// client's after the sync's requests: another one now means the module
    /// was reloaded and the kernel's tables began again empty.
    family: u16,
    /// Services the view may show otherwise than the desired table (a
    /// request failed, was skipped or its outcome stayed unknown; wanted
    /// but out of scope): planned again by every cached sync until settled.
    unsettled: BTreeSet<ServiceKey>,
}

impl Synced {
    /// The view a sync left (`None`: it could not be kept true) with what
    /// it converged to, if they can be kept. A view is kept only of a
    /// namespace that could be told, and only if the family id the client
    /// ends with is the one seen before the listing (a module reloaded in
    /// between emptied the table under the view, and the requests that
    /// found the new id went to the new, empty table).
    pub(crate) fn remember<T: Transport>(
        core: &ClientCore<T>,
        origin: Origin,
        view: Option<Table>,
        desired: &Table,
        requests: &[Request],
        outcomes: &Fates,
        conflicts: &[ServiceKey],
    ) -> Option<(Table, Synced)> {
        let namespace = origin.namespace?;
        if core.known_family() != Some(origin.family) {
            return None;
        }
        let view = view?;
        let synced = Synced {
            stamp: desired.stamp(),
            namespace,
            family: origin.family,
            unsettled: outcomes
                .exceptions()
                .filter_map(|(i, _)| request_key(&requests[i]))
                .chain(conflicts.iter().copied())
                .collect(),
        };
        Some((view, synced))
    }

    /// Marks `keys` to be planned by every cached sync until settled (they
    /// entered the scope).
    pub(crate) fn unsettle(&mut self, keys: impl IntoIterator<Item = ServiceKey>) {
        self.unsettled.extend(keys);
    }

    /// Whether the remembered view is of the namespace and the `ip_vs`
    /// module (family id) of `origin`.
    pub(crate) fn trusts(&self, origin: &Origin) -> bool {
        origin.namespace == Some(self.namespace) && self.family == origin.family
    }

    /// The services a cached sync must plan: those changed in `desired`
    /// since the table last synced, those left unsettled and those with
    /// destinations draining (in `ledger`). `None`: every service (the
    /// table does not descend from the one synced, or changed too much to
    /// say).
    pub(crate) fn to_plan(
        &self,
        desired: &Table,
        ledger: &DrainLedger,
    ) -> Option<BTreeSet<ServiceKey>> {
        let changed = desired.changed_since(self.stamp)?;
        let mut keys: BTreeSet<ServiceKey> = changed.copied().collect();
        keys.extend(self.unsettled.iter().copied());
        keys.extend(ledger.services());
        Some(keys)
    }
}

/// The plan of the services `keys` (all of them if `None`).
pub(crate) fn plan_part(
    current: &Table,
    desired: &Table,
    keys: Option<&BTreeSet<ServiceKey>>,
    options: &PlanOptions,
    ledger: &DrainLedger,
) -> Plan {
    let now = options.clock.now();
    match keys {
        Some(k) => plan(&current.subset(k), &desired.subset(k), options, ledger, now),
        None => plan(current, desired, options, ledger, now),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use std::net::IpAddr;

    use super::*;
    use crate::{Destination, Scheduler, Service};

    fn key(i: u32) -> ServiceKey {
        ServiceKey::tcp(IpAddr::from([10, 0, (i >> 8) as u8, i as u8]), 80)
    }

    fn dest(i: u32) -> Destination {
        Destination::new(IpAddr::from([172, 16, (i >> 8) as u8, i as u8]), 80)
    }

    fn service(s: u32, weight: u32) -> (Service, Vec<Destination>) {
        (
            Service::new(key(s)).with_scheduler(Scheduler::RoundRobin),
            (0..4)
                .map(|d| dest(s * 4 + d).with_weight(weight))
                .collect(),
        )
    }

    /// What a syncer keeps after it converged to a table.
    struct Converged {
        view: Table,
        synced: Synced,
        ledger: DrainLedger,
    }

    impl Converged {
        fn to_plan(&self, desired: &Table) -> Option<BTreeSet<ServiceKey>> {
            self.synced.to_plan(desired, &self.ledger)
        }
    }

    /// A syncer's memory after it converged to `desired` (its view shares
    /// the entries).
    fn converged(desired: &Table) -> Converged {
        Converged {
            view: desired.clone(),
            synced: Synced {
                stamp: desired.stamp(),
                namespace: NetnsId::fake(1),
                family: 0x20,
                unsettled: BTreeSet::new(),
            },
            ledger: DrainLedger::new(),
        }
    }

    fn plan_of(s: &Converged, desired: &Table) -> Vec<String> {
        let options = PlanOptions::default();
        let keys = s.to_plan(desired);
        let p = plan_part(&s.view, desired, keys.as_ref(), &options, &s.ledger);
        p.requests().iter().map(ToString::to_string).collect()
    }

    fn whole_plan(s: &Converged, desired: &Table) -> Vec<String> {
        plan(
            &s.view,
            desired,
            &PlanOptions::default(),
            &s.ledger,
            Instant::now(),
        )
        .requests()
        .iter()
        .map(ToString::to_string)
        .collect()
    }

    #[test]
    fn a_descendant_is_planned_by_its_changes_alone_and_plans_what_a_whole_plan_does() {
        let mut desired: Table = (1..=300).map(|s| service(s, 1)).collect();
        let syncer = converged(&desired);
        assert_eq!(syncer.to_plan(&desired).map(|k| k.len()), Some(0));
        // A little PRNG: the same mix of changes every run.
        let mut x = 0x9e37_79b9_u32;
        let mut next = |n: u32| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x % n
        };
        for step in 0..200 {
            let s = 1 + next(320);
            match next(4) {
                0 => {
                    desired.remove(&key(s));
                }
                1 => {
                    let (svc, d) = service(s, 1 + next(3));
                    desired.insert(svc, d);
                }
                2 => {
                    // Changed, then changed back: planned, and nothing to do.
                    let (svc, d) = service(s, 9);
                    desired.insert(svc, d);
                    let (svc, d) = service(s, 1);
                    desired.insert(svc, d);
                }
                _ => {
                    let (svc, mut d) = service(s, 1);
                    d.truncate(next(4) as usize);
                    desired.insert(svc, d);
                }
            }
            let keys = syncer.to_plan(&desired).expect("a descendant");
            assert!(keys.len() <= step + 1, "only the keys changed are planned");
            assert_eq!(plan_of(&syncer, &desired), whole_plan(&syncer, &desired));
        }
    }

    #[test]
    fn a_table_of_another_line_or_past_the_journal_is_planned_whole() {
        let desired: Table = (1..=10).map(|s| service(s, 1)).collect();
        let syncer = converged(&desired);
        // The same content built again is another table: no shared history.
        let rebuilt: Table = (1..=10).map(|s| service(s, 1)).collect();
        assert_eq!(rebuilt, desired);
        assert_eq!(syncer.to_plan(&rebuilt), None);
        assert!(plan_of(&syncer, &rebuilt).is_empty());
        // A table changed more than its journal keeps.
        let mut churned = desired.clone();
        for round in 0..3 {
            for s in 1..=600 {
                let (svc, d) = service(s, 1 + round);
                churned.insert(svc, d);
            }
        }
        assert_eq!(syncer.to_plan(&churned), None);
        assert_eq!(plan_of(&syncer, &churned), whole_plan(&syncer, &churned));
        // 590 services added with their 4 destinations; the 10 kept have
        // their 4 destinations' weights edited.
        assert_eq!(plan_of(&syncer, &churned).len(), 590 * 5 + 10 * 4);
    }

    #[test]
    fn unsettled_and_draining_services_are_planned_again() {
        let desired: Table = (1..=10).map(|s| service(s, 1)).collect();
        let mut syncer = converged(&desired);
        syncer.synced.unsettled.insert(key(3));
        syncer
            .ledger
            .record((key(7), dest(28).addr, 80), Instant::now());
        let keys: Vec<ServiceKey> = syncer.to_plan(&desired).unwrap().into_iter().collect();
        assert_eq!(keys, vec![key(3), key(7)]);
    }
}
