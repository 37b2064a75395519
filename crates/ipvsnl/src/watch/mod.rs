//! Watching the table for changes (feature `tokio`): poll and diff.
//!
//! IPVS sends no notifications (its generic-netlink family has no
//! multicast groups), so a [`Watcher`] polls: every tick of an interval it
//! lists the whole table once (every service with its destinations) and
//! yields the [`Change`]s since the listing before, found by [`diff()`].
//!
//! What that means:
//!
//! - It sees states, not events. It sees the table as it is at each tick;
//!   changes between two ticks that cancel out (a destination removed and
//!   added back, a weight set to 0 and back) are not seen, and several
//!   edits of one setting between two ticks are one change.
//! - Counters are not changes. Connection counts, packet and byte counters
//!   and rates move all the time; only settings count (see [`Change`]).
//! - It costs exactly one listing a tick, whether anything changed or not:
//!   one dump of the services and one dump of the destinations of each, in
//!   proportion to the table's size. Choose the period for that: the
//!   shorter it is, the sooner a change is seen and the more listings the
//!   kernel answers. The first tick is at once; a listing slower than the
//!   period delays the next tick rather than bringing a burst of them.
//! - A tick that finds no change yields nothing; a failed listing yields
//!   its error and the watcher carries on at the next tick, diffing
//!   against the last listing that succeeded.
//!
//! A listing comes from a [`Lister`]; a fake one drives the watcher
//! without a kernel, as here:
//!
//! ```
//! use std::time::Duration;
//! use ipvsnl::watch::{Lister, Watcher};
//! use ipvsnl::{Destination, DestinationEntry, Error, Service, ServiceEntry, ServiceKey};
//!
//! /// A table that grows by one destination a listing.
//! struct Growing(Vec<DestinationEntry>);
//!
//! impl Lister for Growing {
//!     async fn list(&mut self) -> Result<Vec<ServiceEntry>, Error> {
//!         let n = self.0.len() as u8 + 1;
//!         let addr = std::net::Ipv4Addr::new(10, 1, 0, n).into();
//!         self.0.push(DestinationEntry::new(Destination::new(addr, 80)));
//!         let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
//!         Ok(vec![ServiceEntry::new(Service::new(key)).with_destinations(self.0.clone())])
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let mut watcher = Watcher::new(Growing(Vec::new()), Duration::from_millis(10));
//! let first = watcher.next().await?;
//! assert!(first.first);
//! assert_eq!(first.changes[0].to_string(), "+ TCP 10.0.0.1:80 (wlc, 1 destination)");
//! let then = watcher.next().await?;
//! assert_eq!(
//!     then.changes[0].to_string(),
//!     "+ TCP 10.0.0.1:80 -> 10.1.0.2:80 (Masq, weight 1)"
//! );
//! # Ok::<(), Error>(())
//! # }).unwrap();
//! ```
//!
//! [`Watcher::into_stream`] gives the same as a
//! [`Stream`](futures_core::Stream).

mod change;
mod diff;
mod watcher;

#[cfg(test)]
mod tests;

pub use change::Change;
pub use diff::diff;
pub use watcher::{Changes, Lister, Watcher};
