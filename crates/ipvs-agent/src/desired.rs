//! The decision layer: from the configuration and every server's health,
//! the table the kernel should hold for the agent's services, and the
//! syncer options that carry it out.
//!
//! - A healthy server has its configured weight; a failing one weight 0
//!   (the kernel's drain: its connections go on, it gets no new ones). With
//!   `remove_after_drain` a failing server is left out of the table
//!   instead: the [`Syncer`](ipvsnl::sync::Syncer) built with
//!   [`plan_options`] sets it to weight 0 and deletes it once its
//!   connections (and persistence templates) are gone, or after
//!   `drain_max`. Healthy again, it is added back (or, still draining,
//!   given its weight back).
//! - A service whose healthy weight (the sum of its healthy servers'
//!   configured weights) is below its quorum gets its sorry server if it
//!   has one (beside any healthy servers); else, with `below = "withdraw"`,
//!   it is left out of the table (the syncer deletes it); else it stays as
//!   its servers' health says.

use ipvsnl::sync::{Clock, Drain, PlanOptions, Scope, Table};
use ipvsnl::{Destination, ServiceKey};

use crate::check::Health;
use crate::config::{Below, Config, RealServer, VirtualService};

/// What became of a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServiceState {
    /// At or above its quorum.
    Serving,
    /// Below its quorum, with its sorry server added.
    Sorry,
    /// Below its quorum, kept as its servers' health says (`below = "keep"`).
    Degraded,
    /// Below its quorum and taken out of the kernel (`below = "withdraw"`).
    Withdrawn,
}

/// One service's decision.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServiceDecision {
    /// The service.
    pub key: ServiceKey,
    /// The sum of its healthy servers' configured weights.
    pub healthy_weight: u64,
    /// What became of it.
    pub state: ServiceState,
}

/// The desired table and how each service got there.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Desired {
    /// What the kernel should hold for the agent's services (a withdrawn
    /// service is absent).
    pub table: Table,
    /// Each service's decision, in the configuration's order.
    pub services: Vec<ServiceDecision>,
}

/// The desired table for `config`, each server's health given by `health`
/// (called once per real server with its service's key).
///
/// ```
/// use ipvs_agent::check::Health;
/// let config = ipvs_agent::config::parse_str("a.toml", r#"
/// [[service]]
/// protocol = "tcp"
/// address = "192.0.2.1"
/// port = 80
/// [[service.server]]
/// address = "10.0.0.2"
/// weight = 5
/// "#).unwrap();
/// let key = config.services[0].service.key;
/// let up = ipvs_agent::desired::desired(&config, |_, _| Health::Up);
/// let d = &up.table.get(&key).unwrap().destinations[0];
/// assert_eq!(d.destination.weight, 5);
/// let down = ipvs_agent::desired::desired(&config, |_, _| Health::Down);
/// assert_eq!(down.table.get(&key).unwrap().destinations[0].destination.weight, 0);
/// ```
pub fn desired(config: &Config, health: impl Fn(&ServiceKey, &RealServer) -> Health) -> Desired {
    let mut table = Table::new();
    let mut services = Vec::with_capacity(config.services.len());
    for vs in &config.services {
        let (decision, destinations) = desired_service(vs, |rs| health(&vs.service.key, rs));
        if let Some(d) = destinations {
            table.insert(vs.service.clone(), d);
        }
        services.push(decision);
    }
    Desired { table, services }
}

/// One service's decision and, unless it is withdrawn, its destinations:
/// what [`desired`] puts in the table for it. A daemon that keeps its
/// desired table between syncs recomputes only the services whose
/// configuration or servers' health changed.
///
/// ```
/// use ipvs_agent::check::Health;
/// use ipvs_agent::desired::{desired_service, ServiceState};
/// let config = ipvs_agent::config::parse_str("a.toml", r#"
/// [[service]]
/// protocol = "tcp"
/// address = "192.0.2.1"
/// port = 80
/// quorum = { min_weight = 1, below = "withdraw" }
/// [[service.server]]
/// address = "10.0.0.2"
/// weight = 5
/// "#).unwrap();
/// let (up, d) = desired_service(&config.services[0], |_| Health::Up);
/// assert_eq!((up.state, d.unwrap()[0].weight), (ServiceState::Serving, 5));
/// let (down, d) = desired_service(&config.services[0], |_| Health::Down);
/// assert_eq!((down.state, d), (ServiceState::Withdrawn, None));
/// ```
pub fn desired_service(
    vs: &VirtualService,
    health: impl Fn(&RealServer) -> Health,
) -> (ServiceDecision, Option<Vec<Destination>>) {
    let key = vs.service.key;
    let states: Vec<Health> = vs.servers.iter().map(health).collect();
    let healthy_weight: u64 = vs
        .servers
        .iter()
        .zip(&states)
        .filter(|(_, h)| **h == Health::Up)
        .map(|(s, _)| u64::from(s.destination.weight))
        .sum();
    let below = healthy_weight < vs.quorum.min_weight;
    let state = match (below, vs.sorry.is_some(), vs.quorum.below) {
        (false, _, _) => ServiceState::Serving,
        (true, true, _) => ServiceState::Sorry,
        (true, false, Below::Withdraw) => ServiceState::Withdrawn,
        (true, false, _) => ServiceState::Degraded,
    };
    let destinations = (state != ServiceState::Withdrawn).then(|| destinations(vs, &states, state));
    let decision = ServiceDecision {
        key,
        healthy_weight,
        state,
    };
    (decision, destinations)
}

/// The destinations of a service that is not withdrawn.
fn destinations(vs: &VirtualService, states: &[Health], state: ServiceState) -> Vec<Destination> {
    let mut out: Vec<Destination> = vs
        .servers
        .iter()
        .zip(states)
        .filter_map(|(s, h)| match h {
            Health::Up => Some(s.destination),
            _ if vs.remove_after_drain => None,
            _ => Some(s.destination.with_weight(0)),
        })
        .collect();
    if state == ServiceState::Sorry {
        out.extend(vs.sorry);
    }
    out
}

/// The syncer's options for `config`: its services only (anything else in
/// the kernel is left alone; a withdrawn service, still in scope, is
/// deleted), and graceful removal with at most `drain_max` of draining.
///
/// The drain is the syncer's, for every service: servers a reload removes
/// drain too. UDP and SCTP servers are deleted at once (the library's
/// default: their "connections" are only timers).
///
/// Drains are timed by tokio's clock: the system's in a running daemon, the
/// test's when a test pauses it (so `drain_max` is exact under a paused
/// clock, like every other timer of the agent).
pub fn plan_options(config: &Config) -> PlanOptions {
    let scope = Scope::keys(config.services.iter().map(|s| s.service.key));
    PlanOptions::new(scope)
        .with_drain(Drain::new(config.agent.drain_max))
        .with_clock(Clock::from_fn(|| tokio::time::Instant::now().into_std()))
}
