//! An emulated kernel (feature `emulator`): an in-process model of the
//! Linux kernel's IPVS generic-netlink family, for unit tests of code
//! that uses this library, without root, a VM or the `ip_vs` module.
//!
//! A [`Kernel`] holds one IPVS table per network namespace ([`Netns`])
//! and a family id that changes when the test reloads the module.
//! [`Client::emulated`](crate::Client::emulated) (and `AsyncClient::emulated`
//! with `tokio`) connects the library's own clients to it, so the code
//! under test runs unchanged: operations, pipelined batches, listings,
//! the sync engine, the watcher.
//!
//! It answers the bytes the client sends as the kernel does (Linux 6.12,
//! the behaviour of 6.1 where the two agree):
//!
//! - every command's checks in the kernel's order and with its errnos:
//!   `EEXIST`, `ESRCH` for a missing service, `ENOENT` for a missing
//!   destination or an unknown scheduler or persistence engine, `ERANGE`
//!   for a negative weight or a lower threshold above the upper one,
//!   `EINVAL` for a missing attribute, a destination address that is not
//!   unicast or an IPv6 prefix out of 1..=128, `EAFNOSUPPORT`,
//!   `EOPNOTSUPP` for a dump of a command that has none (or the reverse),
//!   `EPERM` without `CAP_NET_ADMIN` ([`Kernel::set_privileged`]);
//! - listings in the kernel's order: services by hash bucket (newest
//!   first within one; the kernel's per-namespace pointer in the hash is
//!   taken as 0), then the firewall-mark services; destinations newest
//!   first;
//! - dumps in parts of the size the kernel allocates (by the reader's
//!   largest receive buffer), each written when the reader takes the one
//!   before, then `NLMSG_DONE` alone; one dump per socket (`EBUSY`); a
//!   service dump's next part resumes at a count of the services walked
//!   in every namespace (the kernel's tables hold them all), so another
//!   namespace's changes between two parts make it repeat or skip
//!   services, as on Linux 6.1 and 6.12;
//! - a datagram of many requests answered one by one: an error for each
//!   failure, an ACK for each success that asked;
//! - counters (zero, [`ZERO`](crate::Request::Zero)ed, or set by the test
//!   with [`Netns::set_service_stats`] and
//!   [`Netns::set_destination_state`]), timeouts, `GET_INFO`, sync
//!   daemons (with the kernel's defaults; interfaces from
//!   [`Netns::add_link`]). A destination's connection counts are 0 until
//!   the test sets them: a sync that drains
//!   ([`Drain`](crate::sync::Drain)) deletes a removed destination at
//!   once, with no weight-0 step, unless the test gave it clients first
//!   (the last example below).
//!
//! Faults ([`Kernel::inject`]) strike where a test says ([`When`]):
//! [`Fault::Overrun`] (`ENOBUFS`), [`Fault::LoseReply`],
//! [`Fault::Stall`], [`Fault::Truncate`], [`Fault::Hold`],
//! [`Fault::Unload`], [`Fault::Reload`], [`Fault::Foreign`] (another
//! writer, between two calls or two dump parts); at the socket,
//! [`Fault::QueueLimit`] (a receive queue that overflows),
//! [`Fault::SendFails`], [`Fault::ReceiveFails`], [`Fault::Garbage`],
//! [`Fault::Stray`]; and [`Fault::Unanswered`] (a daemon's stop the kernel
//! answers with nothing, a race) and [`Fault::DumpQuirk`] (dump framing
//! IPVS never uses, for tests of a protocol reader). Time is not real: a
//! wait for a reply that never comes ends at once and is added to
//! [`Kernel::waited`].
//!
//! For assertions: [`Netns::table`] (the library's
//! [`ServiceEntry`](crate::ServiceEntry)s, as a client would list them),
//! [`Netns::timeouts`], [`Netns::sync_daemons`], and
//! [`Kernel::requests`], every request taken ([`Taken`]), with the
//! library's [`Request`](crate::Request) for a change and the message's
//! bytes as received ([`Taken::bytes`]).
//!
//! The socket-option interface the library's listings use is there too
//! (`IP_VS_SO_GET_INFO`, `..._GET_SERVICES`, `..._GET_DESTS`, and
//! `..._GET_TIMEOUT`). So is the connection table: a test sets it
//! ([`Netns::set_connections`]) and reads the text of
//! `/proc/net/ip_vs_conn` ([`Netns::proc_ip_vs_conn`]) with the library's
//! [`connections::parse`](crate::connections::parse). Not emulated: the
//! other socket options, the other files of `/proc/net`, and traffic
//! (counters and connections move only when a test sets them).
//!
//! A controller's unit test: the function under test is the user's,
//! written once for either client ([`Operations`](crate::Operations), with
//! the sync engine's [`Syncer::sync_on`](crate::sync::Syncer::sync_on)); the
//! test gives it a client of an emulated kernel, the blocking one or the
//! async one, then checks the kernel's table and what the controller did
//! when the kernel failed it.
//!
//! ```
//! use std::net::IpAddr;
//!
//! use ipvsnl::emulator::{Fault, Kernel, When};
//! use ipvsnl::sync::{PlanOptions, Scope, Syncer, Table};
//! use ipvsnl::{Client, Destination, Error, Operations, RequestKind, Service, ServiceKey};
//!
//! /// The code under test, one body for both clients: publish `backends`
//! /// behind one virtual service, retrying once what the kernel's answer
//! /// left unknown.
//! async fn publish(
//!     ipvs: &mut impl Operations,
//!     syncer: &mut Syncer,
//!     vip: IpAddr,
//!     backends: &[IpAddr],
//! ) -> Result<(), Error> {
//!     let mut want = Table::new();
//!     want.insert(
//!         Service::new(ServiceKey::tcp(vip, 443)),
//!         backends.iter().map(|b| Destination::new(*b, 8443)),
//!     );
//!     let report = syncer.sync_on(ipvs, &want).await?;
//!     if !report.is_complete() {
//!         syncer.sync_on(ipvs, &want).await?;
//!     }
//!     Ok(())
//! }
//!
//! /// The test's checks, whichever client ran the code.
//! fn published(kernel: &Kernel, backends: &[IpAddr]) {
//!     let table = kernel.init_netns().table();
//!     assert_eq!(table.len(), 1);
//!     let mut listed: Vec<IpAddr> = table[0].destinations.iter().map(|d| d.destination.addr).collect();
//!     listed.sort();
//!     assert_eq!(listed, backends);
//!     // What the controller sent, in the library's words.
//!     let adds = kernel.requests().iter().filter(|t| t.kind == Some(RequestKind::AddDestination)).count();
//!     assert_eq!(adds, 2, "each destination added once: the unknown one was found applied");
//! }
//!
//! // The test: no root, no kernel module.
//! let vip: IpAddr = "10.0.0.1".parse().unwrap();
//! let backends: Vec<IpAddr> = vec!["10.1.0.1".parse().unwrap(), "10.1.0.2".parse().unwrap()];
//!
//! // With the blocking client, run by `block_on` (its futures never wait).
//! let kernel = Kernel::new();
//! // The kernel never answers the first destination add.
//! kernel.inject(When::next(RequestKind::AddDestination), Fault::LoseReply);
//! let mut syncer = Syncer::new(PlanOptions::new(Scope::All));
//! let mut ipvs = Client::emulated(&kernel);
//! ipvsnl::block_on(publish(&mut ipvs, &mut syncer, vip, &backends))?;
//! published(&kernel, &backends);
//!
//! // The same function with the async client (feature `tokio`), on tokio.
//! # #[cfg(feature = "tokio")] {
//! let kernel = Kernel::new();
//! kernel.inject(When::next(RequestKind::AddDestination), Fault::LoseReply);
//! let mut syncer = Syncer::new(PlanOptions::new(Scope::All));
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! runtime.block_on(async {
//!     let mut ipvs = ipvsnl::AsyncClient::emulated(&kernel);
//!     publish(&mut ipvs, &mut syncer, vip, &backends).await
//! })?;
//! published(&kernel, &backends);
//! # }
//! # Ok::<(), ipvsnl::Error>(())
//! ```
//!
//! One fault and its outcome, through a client's own call:
//!
//! ```
//! use ipvsnl::emulator::{Fault, Kernel, When};
//! use ipvsnl::{Client, Destination, RequestKind, Service, ServiceKey};
//!
//! let kernel = Kernel::new();
//! let mut ipvs = Client::emulated(&kernel);
//! let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
//! ipvs.add_service(&Service::new(key))?;
//!
//! // The next destination add is never answered: its outcome is unknown.
//! kernel.inject(When::next(RequestKind::AddDestination), Fault::LoseReply);
//! let e = ipvs
//!     .add_destination(&key, &Destination::new("10.0.1.1".parse().unwrap(), 80))
//!     .unwrap_err();
//! assert!(e.is_unknown_outcome(), "{e}");
//! // The kernel did apply it.
//! assert_eq!(kernel.init_netns().table()[0].destinations.len(), 1);
//! # Ok::<(), ipvsnl::Error>(())
//! ```
//!
//! A drain, tested: the destination leaving has clients only once the
//! test says so ([`Connections`], named counts), then it is set to weight
//! 0 and kept; without them it would be deleted at once.
//!
//! ```
//! use std::net::SocketAddr;
//! use std::time::Duration;
//!
//! use ipvsnl::emulator::{Connections, Kernel};
//! use ipvsnl::sync::{Drain, PlanOptions, Scope, Syncer, Table};
//! use ipvsnl::{Client, Destination, Request, Service, ServiceKey, Stats};
//!
//! let kernel = Kernel::new();
//! let mut ipvs = Client::emulated(&kernel);
//! let drain = Drain::new(Duration::from_secs(60));
//! let mut syncer = Syncer::new(PlanOptions::new(Scope::All).with_drain(drain));
//! let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 443);
//! let backends: [SocketAddr; 2] = ["10.1.0.1:8443".parse().unwrap(), "10.1.0.2:8443".parse().unwrap()];
//! let mut want = Table::new();
//! want.insert(Service::new(key), backends.map(Destination::from));
//! syncer.sync(&mut ipvs, &want)?;
//!
//! let leaving = backends[0];
//! let clients = Connections::default().with_active(5).with_inactive(1);
//! let ns = kernel.init_netns();
//! assert!(ns.set_destination_state(&key, leaving.ip(), leaving.port(), clients, Stats::default()));
//! want.remove_destination(&key, leaving.ip(), leaving.port()).unwrap();
//! let report = syncer.sync(&mut ipvs, &want)?;
//! let weight_0 = Destination::from(leaving).with_weight(0);
//! assert_eq!(report.requests(), [Request::EditDestination(key, weight_0)]);
//! assert_eq!(ns.service(&key).unwrap().destinations.len(), 2, "kept while it drains");
//! # Ok::<(), ipvsnl::Error>(())
//! ```

mod attrs;
mod commands;
#[cfg(feature = "emulator")]
mod connect;
mod dump;
mod encode;
mod faults;
mod inspect;
mod kernel;
mod messages;
mod parse;
mod proc_conn;
mod record;
mod run;
mod socket;
mod socket_faults;
mod sockopt;
mod table;
mod walk;

pub use faults::{Condition, DumpQuirk, Fault, Taken, When};
pub use inspect::Connections;
pub use kernel::{Kernel, Netns, INIT_NETNS};

pub(crate) use socket::Port;
#[cfg(feature = "emulator")]
pub(crate) use sockopt::SockoptPort;
#[cfg(test)]
mod socket_fault_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod walk_tests;
