//! A safe client for Linux IPVS (IP Virtual Server), the kernel's layer-4
//! load balancer, over its generic-netlink family — no libnl, no shelling
//! out to `ipvsadm`. One socket per client, every kernel operation a typed
//! method, pipelined batches with one outcome per request, any network
//! namespace, and a declarative sync engine that makes the kernel's table
//! the one you want in the fewest round trips. Linux only; changing the
//! table needs `CAP_NET_ADMIN` (when IPVS cannot be used at all, the
//! `ipvsnl-doctor` crate says why).
//!
//! This page is a guide, in the order a daemon author meets the crate:
//!
//! 1. [The blocking `Client`](#the-blocking-client): list and change the
//!    table, one call at a time or in batches.
//! 2. [Declarative sync: `sync::Syncer`](#declarative-sync-syncsyncer):
//!    give the table you want, with a [`Scope`](sync::Scope) of what you
//!    own and a [`Drain`](sync::Drain) for removed servers.
//! 3. [From async code: `AsyncClient` and `watch`](#from-async-code-asyncclient-and-watch)
//!    (feature `tokio`).
//! 4. [The ipvsadm rules text: `rules`](#the-ipvsadm-rules-text-rules).
//! 5. [Errors](#errors), [namespaces](#network-namespaces), [code for both
//!    clients: `Operations`](#code-for-both-clients-operations), [feature
//!    flags](#feature-flags).
//!
//! # The blocking `Client`
//!
//! [`Client`] opens its sockets once; each method is one kernel
//! operation on the model types: a [`Service`] keyed by its
//! [`ServiceKey`] (protocol + address + port, or fwmark + family), a
//! [`Destination`] with its [`Forward`]ing method, any [`Scheduler`] by
//! name. Listings return [`ServiceEntry`] rows (service, [`Stats`],
//! destinations); [`Client::table`] lists everything in one call.
//!
//! ```no_run
//! use ipvsnl::{Client, Destination, Forward, Request, Scheduler, Service, ServiceKey};
//!
//! let mut ipvs = Client::new()?;
//! let web = ServiceKey::tcp("192.0.2.10".parse().unwrap(), 80);
//! ipvs.add_service(&Service::new(web).with_scheduler(Scheduler::RoundRobin))?;
//! ipvs.add_destination(&web, &Destination::new("10.1.0.1".parse().unwrap(), 8080))?;
//!
//! // A batch: pipelined (up to 64 KiB a sendmsg), one outcome per request.
//! let outcomes = ipvs.apply(&[
//!     Request::AddDestination(web, Destination::new("10.1.0.2".parse().unwrap(), 8080)),
//!     Request::AddDestination(
//!         web,
//!         Destination::new("10.1.0.3".parse().unwrap(), 8080).with_forward(Forward::Route),
//!     ),
//! ]);
//! for outcome in outcomes {
//!     if let Err(err) = outcome {
//!         eprintln!("{err}"); // names the request and the kernel's errno
//!     }
//! }
//!
//! for row in ipvs.table()? {
//!     println!("{}: {} destinations", row.key(), row.destinations.len());
//! }
//! # Ok::<(), ipvsnl::Error>(())
//! ```
//!
//! Every model type checks what the kernel would refuse before anything
//! is sent (the fault named in an [`InvalidValue`]); every enum and flag
//! set prints in ipvsadm's words ([`std::fmt::Display`]); a key reads
//! from the text it prints (`TCP 10.0.0.1:80`, `fwmark 5 (IPv4)`). A
//! listing is whole: every service that existed for the whole call is in
//! it, although the kernel's dump can skip services while any namespace
//! changes its table ([`Client::table`] says how, and the one case, IPv6
//! services, where a miss stays possible). The rest of the kernel's
//! interface is here too: [`Timeouts`], [`Info`], zeroing counters,
//! flushing, the connection sync daemon ([`SyncDaemon`]) and the
//! connection table ([`connections`]).
//!
//! # Declarative sync: `sync::Syncer`
//!
//! A daemon usually knows the table it wants, not the requests that get
//! there. Build a [`sync::Table`], say which services are yours with a
//! [`sync::Scope`] (services outside it are never touched), and
//! [`sync::Syncer::sync`] lists the kernel's table, plans the fewest
//! requests (editing in place where the kernel allows), applies them
//! pipelined and returns a [`sync::Report`] with every request's outcome.
//! With a [`sync::Drain`], a destination removed from the table is first
//! set to weight 0 and deleted only once its connections are gone (or
//! the drain's limit passed); the syncer remembers the draining ones
//! between syncs. After the first sync, [`sync::Syncer::sync_cached`]
//! plans against the table it remembers instead of listing again.
//!
//! ```no_run
//! use std::time::Duration;
//! use ipvsnl::sync::{Drain, PlanOptions, Scope, Syncer, Table};
//! use ipvsnl::{Client, Destination, Service, ServiceKey};
//!
//! let mut client = Client::new()?;
//! let web = ServiceKey::tcp("192.0.2.10".parse().unwrap(), 80);
//! let mut desired = Table::new();
//! desired.insert(
//!     Service::new(web),
//!     [
//!         Destination::new("10.1.0.1".parse().unwrap(), 80),
//!         Destination::new("10.1.0.2".parse().unwrap(), 80),
//!     ],
//! );
//!
//! // Touch only the services we own; drain removed destinations for up to 5 minutes.
//! let options = PlanOptions::new(Scope::keys([web]))
//!     .with_drain(Drain::new(Duration::from_secs(300)));
//! let mut syncer = Syncer::new(options);
//!
//! print!("{}", syncer.plan(&mut client, &desired)?.to_rules()); // a dry run, as ipvsadm rules
//! let report = syncer.sync(&mut client, &desired)?;              // list, plan, apply
//! println!("{} done, {} failed, {} skipped", report.done(), report.failed(), report.skipped());
//! for (request, err) in report.failures() {
//!     eprintln!("{request:?}: {err}");
//! }
//!
//! // Later: change the same table and sync from the remembered view (no full listing).
//! desired
//!     .remove_destination(&web, "10.1.0.1".parse().unwrap(), 80)
//!     .expect("web is in the table");
//! let report = syncer.sync_cached(&mut client, &desired)?;
//! assert!(report.is_complete(), "{report}");
//! # Ok::<(), ipvsnl::Error>(())
//! ```
//!
//! The planner alone is pure: [`sync::plan`] (current + desired + scope
//! -> ordered [`Request`]s), for tests and dry runs.
//!
//! # From async code: `AsyncClient` and `watch`
//!
//! With feature `tokio`, [`AsyncClient`] has the same methods as [`Client`]
//! as futures (`Send`, cancel-safe: drop one at any await and the next
//! call does not read the abandoned call's replies), with the same types
//! and errors. The sync engine runs on it too (`Syncer::sync_async`,
//! `sync_cached_async`, `plan_async`, `list_async`, or the `*_on` methods
//! that take either client: [code for both clients](#code-for-both-clients-operations)).
//!
//! IPVS sends no change notifications, so [`watch::Watcher`] polls: each
//! tick lists the table once and yields the settings that changed since
//! the last listing (counters are not changes), also as a `Stream`.
//!
#![cfg_attr(feature = "tokio", doc = "```no_run")]
#![cfg_attr(not(feature = "tokio"), doc = "```ignore")]
//! use std::time::Duration;
//! use ipvsnl::sync::{PlanOptions, Scope, Syncer, Table};
//! use ipvsnl::watch::Watcher;
//! use ipvsnl::{AsyncClient, Destination, Service, ServiceKey};
//!
//! # async fn run() -> Result<(), ipvsnl::Error> {
//! let mut ipvs = AsyncClient::new()?; // inside a tokio runtime
//! let web = ServiceKey::tcp("192.0.2.10".parse().unwrap(), 80);
//! let mut want = Table::new();
//! want.insert(Service::new(web), [Destination::new("10.1.0.1".parse().unwrap(), 8080)]);
//! let mut syncer = Syncer::new(PlanOptions::new(Scope::keys([web])));
//! let report = syncer.sync_async(&mut ipvs, &want).await?;
//! println!("{report}");
//!
//! // Then watch the table: one listing a second, the changes printed.
//! let mut watcher = Watcher::new(ipvs, Duration::from_secs(1));
//! loop {
//!     for change in watcher.next().await?.changes {
//!         println!("{change}"); // e.g. "+ TCP 192.0.2.10:80 -> 10.1.0.2:8080 (Masq, weight 1)"
//!     }
//! }
//! # }
//! ```
//!
//! # The ipvsadm rules text: `rules`
//!
//! [`rules`] reads and prints the text of `ipvsadm -S` / `ipvsadm -R`:
//! [`rules::parse`] turns a rules text into [`Request`]s (every bad line
//! reported with its number) or, with [`rules::Rules::to_table`], into a
//! [`sync::Table`] to sync; [`rules::table_rules`], [`rules::service_rule`]
//! and [`rules::destination_rule`] print exactly what `ipvsadm -S -n`
//! prints, and [`sync::Plan::to_rules`] prints a plan as a dry run.
//!
//! ```
//! use ipvsnl::rules::{parse, Numeric};
//!
//! let text = "-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 10.0.1.1:8080 -m -w 2\n";
//! let table = parse(text, &Numeric).unwrap().to_table().unwrap();
//! assert_eq!(table.destination_count(), 1);
//! ```
//!
//! # Errors
//!
//! One [`Error`] for everything, which says what is known, told apart by
//! variant and by method:
//!
//! - refused by the kernel, not applied: [`Error::Refused`] with its errno
//!   ([`Error::is_refused`], [`Error::errno`]; and by cause:
//!   [`Error::is_already_exists`], [`Error::is_not_found`],
//!   [`Error::is_permission_denied`]);
//! - outcome unknown, sent and its reply never seen, so it may or may not
//!   have been applied: [`Error::Unknown`] ([`Error::is_unknown_outcome`]);
//!   never reported as a refusal;
//! - not sent, so not applied, because an earlier request of the same
//!   call stopped the rest: [`Error::NotSent`] ([`Error::is_not_sent`]);
//!   among them, every change the `ip_vs` module's reload struck (its
//!   family id changed, its tables emptied), whatever the change and
//!   wherever in the call: [`Error::is_family_changed`], never a refusal
//!   and with no errno to misread;
//! - not applied, answered as under a stale family id (the `ip_vs` module
//!   reloaded) and the family lookup that would tell failed:
//!   [`Error::FamilyUnconfirmed`], never reported as a refusal;
//! - invalid input, refused before anything was sent:
//!   [`Error::InvalidInput`] carrying the [`InvalidValue`] that names the
//!   field and why ([`Error::is_invalid_input`]);
//! - a reply that could not be read: [`Error::Decode`] with a
//!   [`DecodeError`] naming the message, attribute and why
//!   ([`Error::is_decode`]);
//! - and no reply in time to a read ([`Error::Timeout`]), a socket
//!   failure ([`Error::Io`]), IPVS missing from the kernel
//!   ([`Error::Unavailable`]), a namespace that could not be entered
//!   ([`Error::Namespace`]).
//!
//! Each names its request as a structured [`Target`] ([`Error::target`]),
//! and its text says what failed: `add destination 10.1.0.2:8080 to TCP
//! 192.0.2.10:80: destination already exists (EEXIST)`.
//!
//! What a caller may assume after each, and what to do next:
//!
//! | error | the request | the client | next |
//! |---|---|---|---|
//! | [`Error::Refused`] | not applied: the kernel said no, with its errno | in step | act on the errno |
//! | [`Error::Unknown`] | may or may not have been applied | in step; after a time-out, on a fresh socket from the next call | read the state back (the sync engine does) |
//! | [`Error::NotSent`] | not applied | in step (on a fresh socket after a time-out) | send it again; after a reload ([`Error::is_family_changed`]), list and plan again: the tables are empty |
//! | [`Error::FamilyUnconfirmed`] | not applied; not known to be refused | family forgotten, looked up at the next call | send it again |
//! | [`Error::Timeout`] | a read: nothing changed | on a fresh socket from the next call | call again |
//! | [`Error::Io`], [`Error::Decode`] | a read or a lookup: nothing changed (a change whose reply was lost so is [`Error::Unknown`]) | in step | call again |
//! | [`Error::Unavailable`] | not applied | family looked up at the next call | load `ip_vs` |
//! | [`Error::InvalidInput`] | never sent | untouched | fix the input |
//! | [`Error::Namespace`] | nothing sent | no client was made | check the namespace |
//!
//! "In step": the client's next call does not read an earlier call's
//! replies, whatever the error. A wait that ran out is the one error
//! after which the client changes socket: the kernel may never answer on
//! the old one again, and its late replies could otherwise be taken for
//! a later call's (see [`ClientOptions::with_timeout`]).
//!
//! # Network namespaces
//!
//! IPVS tables are per network namespace. [`Client::in_namespace`] opens a
//! client in the namespace of a file (`/var/run/netns/lb`,
//! `/proc/PID/ns/net`), [`Client::in_namespace_fd`] in that of an open
//! descriptor; only the socket is made there, the caller's threads never
//! move. [`AsyncClient`] has the same two (as futures).
//!
//! ```no_run
//! let mut lb = ipvsnl::Client::in_namespace("/var/run/netns/lb")?;
//! println!("{} services in lb", lb.services()?.len());
//! # Ok::<(), ipvsnl::Error>(())
//! ```
//!
//! # Code for both clients: `Operations`
//!
//! [`Operations`] is a trait both clients implement, every operation
//! returning a future: code written once against it (a daemon's
//! reconciling code, a test suite) runs on the blocking [`Client`], whose
//! futures are complete when made, and on [`AsyncClient`]. The sync
//! engine takes it too ([`sync::Syncer::sync_on`], `sync_cached_on`,
//! `plan_on`, `list_on`), so a controller is one body for both clients;
//! [`block_on`] runs it on the blocking client without an async runtime.
//!
//! ```no_run
//! use ipvsnl::sync::{Report, Syncer, Table};
//! use ipvsnl::{Error, Operations};
//!
//! async fn count(ipvs: &mut impl Operations) -> Result<usize, Error> {
//!     Ok(ipvs.services().await?.len())
//! }
//!
//! async fn reconcile(ipvs: &mut impl Operations, syncer: &mut Syncer, want: &Table)
//!     -> Result<Report, Error>
//! {
//!     syncer.sync_on(ipvs, want).await
//! }
//!
//! let mut ipvs = ipvsnl::Client::new()?;
//! println!("{} services", ipvsnl::block_on(count(&mut ipvs))?);
//! # Ok::<(), Error>(())
//! ```
//!
//! # Feature flags
//!
//! | feature | adds |
//! |---|---|
//! | `tokio` | [`AsyncClient`]; `Syncer::sync_async`, `sync_cached_async`, `plan_async`, `list_async`; the table watcher [`watch::Watcher`] (a `Stream` of changes); [`Operations`] for `AsyncClient` |
//! | `serde` | `Serialize`/`Deserialize` for the model types, the listed entries and [`sync::Table`] (flags as lists of names, unknown values as numbers), so a desired table can live in a JSON, YAML or TOML file |
//! | `emulator` | `ipvsnl::emulator`: an in-process model of the kernel's IPVS family (its checks and errnos, listing order, dump framing, faults), and `Client::emulated` / `AsyncClient::emulated`, the same clients over it: a controller's unit tests without root (take it in `[dev-dependencies]`) |
//!
//! None is on by default. The items each adds are marked with it in
//! these docs.
//!
//! # Below the client
//!
//! The protocol core, [`proto`], is a set of pure state machines (no
//! socket) that both clients drive, and that another driver can drive
//! too. The wire format is the sans-IO crate [`wire`] (`ipvsnl-wire`).

//!
#![cfg_attr(feature = "tokio", doc = "[`AsyncClient`]: crate::AsyncClient")]
#![cfg_attr(feature = "tokio", doc = "[`watch::Watcher`]: crate::watch::Watcher")]
#![cfg_attr(
    not(feature = "tokio"),
    doc = "[`AsyncClient`]: #from-async-code-asyncclient-and-watch"
)]
#![cfg_attr(
    not(feature = "tokio"),
    doc = "[`watch::Watcher`]: #from-async-code-asyncclient-and-watch"
)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

// Netlink sockets, setns(2) and the IPVS family exist only on Linux.
#[cfg(not(target_os = "linux"))]
compile_error!(
    "ipvsnl builds only for target_os = \"linux\": it drives the Linux kernel's IPVS over \
     netlink sockets and setns(2); the sans-IO wire format (ipvsnl-wire) builds anywhere"
);

#[cfg(feature = "tokio")]
mod async_client;
mod block_on;
mod client;
mod client_core;
pub mod connections;
mod decode;
mod decode_error;
mod destination_weight;
mod drive;
// Also in the crate's own tests, where the sync engine's tests run on it.
#[cfg(any(test, feature = "emulator"))]
#[cfg_attr(docsrs, doc(cfg(feature = "emulator")))]
pub mod emulator;
mod errno;
mod error;
mod failures;
mod fixed_attrs;
#[cfg(all(test, feature = "tokio"))]
mod futures_are_send;
mod listing;
mod model;
mod operations;
mod options;
mod pipeline;
pub mod proto;
mod reason;
mod request;
pub mod rules;
mod service_dumps;
pub mod sync;
mod target;
mod totals;
mod transport;
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub mod watch;

#[cfg(feature = "tokio")]
pub use async_client::AsyncClient;
pub use block_on::block_on;
pub use client::Client;
pub use decode_error::DecodeError;
pub use errno::errno_name;
pub use error::Error;
pub use model::config::{Info, Timeouts, TIMEOUT_MAX};
pub use model::daemon::{DaemonRole, SyncDaemon, IFNAME_MAX, SYNC_ID_MAX};
pub use model::destination::{
    Destination, Forward, Tunnel, TunnelFlags, TunnelKind, THRESHOLD_MAX, WEIGHT_MAX,
};
pub use model::entry::{DestinationEntry, ServiceEntry};
pub use model::family::{AddressFamily, Protocol};
pub use model::invalid::InvalidValue;
pub use model::key_text::ParseKeyError;
pub use model::other::{OtherForward, OtherProtocol, OtherScheduler, OtherTunnelKind};
pub use model::scheduler::{Scheduler, SCHED_NAME_MAX};
pub use model::service::{Netmask, Service, ServiceFlags, ServiceKey, PE_NAME_MAX};
pub use model::stats::Stats;
pub use operations::Operations;
pub use options::{ApplyOptions, ClientOptions};
pub use request::{Request, RequestKind};
pub use target::{Object, Target};

/// The sans-IO wire crate this client is built on.
pub use ipvsnl_wire as wire;

/// The crate README's examples, compiled as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
