//! One difference between two listings of the table, and how it prints.

use std::fmt;
use std::net::SocketAddr;

use crate::{Destination, DestinationEntry, Forward, Service, ServiceEntry, ServiceKey};

/// One difference between two listings of the table.
///
/// Only settings count: a service's scheduler, flags, persistence timeout,
/// netmask and persistence engine; a destination's forwarding method (with
/// its tunnel parameters), weight and thresholds. Counters, rates and
/// connection counts change all the time and are never a change.
///
/// It prints in a short human form, one line: `+` added, `-` removed, `~`
/// changed, then the service and, for a destination, `->` and the real
/// server; a change lists the settings that differ as `old -> new`.
///
/// ```
/// use ipvsnl::watch::Change;
/// use ipvsnl::{Destination, Scheduler, Service, ServiceKey};
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let old = Service::new(key);
/// let new = old.clone().with_scheduler(Scheduler::RoundRobin);
/// let change = Change::ServiceChanged { old, new };
/// assert_eq!(change.to_string(), "~ TCP 10.0.0.1:80: scheduler wlc -> rr");
/// let d = Destination::new("10.1.0.1".parse().unwrap(), 8080);
/// let change = Change::DestinationChanged { service: key, old: d, new: d.with_weight(0) };
/// assert_eq!(change.to_string(), "~ TCP 10.0.0.1:80 -> 10.1.0.1:8080: weight 1 -> 0");
/// assert_eq!(change.service(), &key);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// A service appeared, with the destinations it was listed with (they
    /// are not reported again as [`Change::DestinationAdded`]).
    ServiceAdded(ServiceEntry),
    /// A service went away: the entry as last seen, with its destinations
    /// (they are not reported again as [`Change::DestinationRemoved`]).
    ServiceRemoved(ServiceEntry),
    /// A service's settings changed (its key stays: a new key is another
    /// service).
    ServiceChanged {
        /// The settings before.
        old: Service,
        /// The settings now.
        new: Service,
    },
    /// A destination appeared on a service that was already there.
    DestinationAdded {
        /// The service it belongs to.
        service: ServiceKey,
        /// The destination as listed.
        destination: DestinationEntry,
    },
    /// A destination went away from a service that is still there.
    DestinationRemoved {
        /// The service it belonged to.
        service: ServiceKey,
        /// The destination as last seen.
        destination: DestinationEntry,
    },
    /// A destination's settings changed (its address and port stay).
    DestinationChanged {
        /// The service it belongs to.
        service: ServiceKey,
        /// The settings before.
        old: Destination,
        /// The settings now.
        new: Destination,
    },
}

impl Change {
    /// The service the change is about (for a destination, the one it
    /// belongs to).
    pub fn service(&self) -> &ServiceKey {
        match self {
            Change::ServiceAdded(entry) | Change::ServiceRemoved(entry) => entry.key(),
            Change::ServiceChanged { new, .. } => &new.key,
            Change::DestinationAdded { service, .. }
            | Change::DestinationRemoved { service, .. }
            | Change::DestinationChanged { service, .. } => service,
        }
    }
}

impl fmt::Display for Change {
    /// One line: `+ TCP 10.0.0.1:80 (wlc, 2 destinations)`,
    /// `- TCP 10.0.0.1:80 -> 10.1.0.1:80`,
    /// `~ TCP 10.0.0.1:80: timeout 0 -> 300, flags none -> persistent`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::ServiceAdded(entry) => {
                let n = entry.destinations.len();
                let plural = if n == 1 { "" } else { "s" };
                write!(
                    f,
                    "+ {} ({}, {n} destination{plural})",
                    entry.key(),
                    entry.service.scheduler
                )
            }
            Change::ServiceRemoved(entry) => write!(f, "- {}", entry.key()),
            Change::ServiceChanged { old, new } => {
                write!(f, "~ {}", new.key)?;
                service_settings(&mut Differences::new(f), old, new)
            }
            Change::DestinationAdded {
                service,
                destination,
            } => {
                let d = &destination.destination;
                write!(
                    f,
                    "+ {service} -> {} ({}, weight {})",
                    real_server(d),
                    Method(&d.forward),
                    d.weight
                )
            }
            Change::DestinationRemoved {
                service,
                destination,
            } => write!(
                f,
                "- {service} -> {}",
                real_server(&destination.destination)
            ),
            Change::DestinationChanged { service, old, new } => {
                write!(f, "~ {service} -> {}", real_server(new))?;
                destination_settings(&mut Differences::new(f), old, new)
            }
        }
    }
}

/// A real server's address and port (`10.1.0.1:80`, `[2001:db8::1]:80`).
fn real_server(d: &Destination) -> SocketAddr {
    SocketAddr::new(d.addr, d.port)
}

/// Writes the service settings that differ.
fn service_settings(out: &mut Differences<'_, '_>, old: &Service, new: &Service) -> fmt::Result {
    // Every field named, so that a new setting cannot be forgotten here.
    let Service {
        key: _,
        scheduler,
        flags,
        timeout,
        netmask,
        persistence_engine,
    } = old;
    out.setting("scheduler", scheduler, &new.scheduler)?;
    out.setting("flags", flags, &new.flags)?;
    out.setting("timeout", timeout, &new.timeout)?;
    out.setting("netmask", netmask, &new.netmask)?;
    out.setting(
        "persistence engine",
        &Engine(persistence_engine.as_deref()),
        &Engine(new.persistence_engine.as_deref()),
    )?;
    out.finish()
}

/// Writes the destination settings that differ.
fn destination_settings(
    out: &mut Differences<'_, '_>,
    old: &Destination,
    new: &Destination,
) -> fmt::Result {
    // Every field named, so that a new setting cannot be forgotten here.
    let Destination {
        addr: _,
        port: _,
        forward,
        weight,
        upper_threshold,
        lower_threshold,
    } = old;
    out.setting("forward", &Method(forward), &Method(&new.forward))?;
    out.setting("weight", weight, &new.weight)?;
    out.setting("upper threshold", upper_threshold, &new.upper_threshold)?;
    out.setting("lower threshold", lower_threshold, &new.lower_threshold)?;
    out.finish()
}

/// Writes `: name old -> new, name old -> new` for the settings that
/// differ, after the subject of a change.
struct Differences<'a, 'f> {
    f: &'a mut fmt::Formatter<'f>,
    written: usize,
}

impl<'a, 'f> Differences<'a, 'f> {
    fn new(f: &'a mut fmt::Formatter<'f>) -> Self {
        Differences { f, written: 0 }
    }

    /// Writes one setting, if it differs.
    fn setting<T: PartialEq + fmt::Display>(
        &mut self,
        name: &str,
        old: &T,
        new: &T,
    ) -> fmt::Result {
        if old == new {
            return Ok(());
        }
        let lead = if self.written == 0 { ": " } else { ", " };
        self.written += 1;
        write!(self.f, "{lead}{name} {old} -> {new}")
    }

    /// Says so when no setting differed (a change built by hand).
    fn finish(&mut self) -> fmt::Result {
        if self.written == 0 {
            self.f.write_str(": no setting differs")?;
        }
        Ok(())
    }
}

/// A forwarding method with its tunnel parameters: `Route`,
/// `Tunnel gue port 6080 csum`.
#[derive(PartialEq)]
struct Method<'a>(&'a Forward);

impl fmt::Display for Method<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        if let Some(tunnel) = self.0.tunnel() {
            write!(f, " {tunnel}")?;
        }
        Ok(())
    }
}

/// A persistence engine, or `none`.
#[derive(PartialEq)]
struct Engine<'a>(Option<&'a str>);

impl fmt::Display for Engine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.unwrap_or("none"))
    }
}
