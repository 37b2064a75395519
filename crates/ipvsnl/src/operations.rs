//! The operations of a client, each declared once: its name, arguments,
//! result, docs and attributes, and the future that does it over the
//! client's [`ClientCore`](crate::client_core::ClientCore). From this one table
//! ([`generate`]) come the methods of the blocking [`Client`] (each runs
//! its future on the calling thread), those of the async client (each
//! awaits it), and the [`Operations`] trait, implemented by both.
//!
//! Why a table and not a client generic over its transport: the two
//! clients differ in more than the transport (one's methods are `fn`, the
//! other's `async fn`; their constructors and their totals read differ),
//! so a generic client would still need two inherent impls, and its type
//! (`Client<Blocking>`) would put a private transport in every user's
//! signatures. The table keeps two plain types with identical methods,
//! costs nothing on the operation path (each method is the one call it
//! was when written by hand), and gives users, with the trait, one way to
//! write code for both.

#[macro_use]
mod generate;

use std::ops::ControlFlow;

use crate::decode::Detail;
#[cfg(doc)]
use crate::Client;
use crate::{
    ApplyOptions, DaemonRole, Destination, DestinationEntry, Error, Info, Request, Service,
    ServiceEntry, ServiceKey, Stats, SyncDaemon, Timeouts,
};

pub(crate) mod sealed;

client_ops! {
    /// Every operation of a client, for code written once for the blocking
    /// [`Client`] and the async client (feature `tokio`): a daemon's
    /// reconciling code, a test suite run over both.
    ///
    /// Each method is the client's method of the same name, with the same
    /// arguments, result and meaning, returning a future (`Send`, as are
    /// the closures it takes). The async client's is the future of its
    /// method. The blocking client does the operation when the method is
    /// called, on the calling thread, and returns a future that is already
    /// complete ([`std::future::Ready`]): awaiting it never waits, on any
    /// executor (or [`std::future::Future::poll`]ed once).
    ///
    /// Only the clients of this crate implement it (it is sealed), so new
    /// operations can join it. The sync engine takes it as well
    /// ([`Syncer::sync_on`](crate::sync::Syncer::sync_on) and its
    /// siblings), with the same behaviour on each client.
    ///
    /// ```no_run
    /// use ipvsnl::{Destination, Error, Operations, Service, ServiceKey};
    ///
    /// /// One service with one destination, through either client.
    /// async fn publish(ipvs: &mut impl Operations) -> Result<usize, Error> {
    ///     let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    ///     ipvs.add_service(&Service::new(key)).await?;
    ///     ipvs.add_destination(&key, &Destination::new("10.0.1.1".parse().unwrap(), 80))
    ///         .await?;
    ///     Ok(ipvs.table().await?.len())
    /// }
    ///
    /// // The blocking client's futures are complete when made: any
    /// // executor runs them, or none, with `ipvsnl::block_on`.
    /// let mut blocking = ipvsnl::Client::new()?;
    /// println!("{} services", ipvsnl::block_on(publish(&mut blocking))?);
    /// # Ok::<(), Error>(())
    /// ```
    pub trait Operations;

    /// The IPVS family id, resolved on first use.
    fn family_id(self: &mut Self) -> Result<u16, Error> = self.core.family_id();

    /// Adds a service.
    fn add_service(self: &mut Self, service: &Service) -> Result<(), Error> =
        self.core.set(Request::add_service(service.clone()));

    /// Replaces a service's scheduler, flags and persistence.
    fn edit_service(self: &mut Self, service: &Service) -> Result<(), Error> =
        self.core.set(Request::edit_service(service.clone()));

    /// Deletes a service and its destinations.
    fn delete_service(self: &mut Self, key: &ServiceKey) -> Result<(), Error> =
        self.core.set(Request::DeleteService(*key));

    /// Adds a destination to a service.
    fn add_destination(self: &mut Self, service: &ServiceKey, dest: &Destination)
        -> Result<(), Error> = self.core.set(Request::AddDestination(*service, *dest));

    /// Replaces every setting of a destination: its forwarding, weight
    /// and both thresholds become those of `dest`. A field left at its
    /// default in `dest` is written as that default:
    /// `Destination::new(addr, port).with_weight(5)` also resets the
    /// forwarding to masquerading and the thresholds to none. To change
    /// the weight alone, see
    /// [`set_destination_weight`](Self::set_destination_weight).
    fn edit_destination(self: &mut Self, service: &ServiceKey, dest: &Destination)
        -> Result<(), Error> = self.core.set(Request::EditDestination(*service, *dest));

    /// Sets the weight of destination `addr`:`port` of `service`, keeping
    /// its forwarding and thresholds as they are.
    ///
    /// The kernel has no partial edit, so this is two kernel calls: a
    /// listing of the service's destinations, then an edit that writes
    /// back the listed settings with the new weight. It is not atomic: a
    /// change another program makes to the destination's forwarding or
    /// thresholds between the two calls is overwritten with what was
    /// listed; a destination deleted between them is refused by the edit
    /// ([`Error::is_not_found`]), and one deleted and added again gets the
    /// settings it had before. A destination that is not listed (or a
    /// service that does not exist) is refused the same way, without the
    /// edit being sent. Where no other program edits the destination, the
    /// result is exact.
    ///
    /// ```no_run
    /// use ipvsnl::{Client, ServiceKey};
    ///
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// let mut ipvs = Client::new()?;
    /// // Drain one real server: new connections go elsewhere, the
    /// // forwarding method and thresholds stay.
    /// ipvs.set_destination_weight(&key, "10.0.1.1".parse().unwrap(), 80, 0)?;
    /// # Ok::<(), ipvsnl::Error>(())
    /// ```
    fn set_destination_weight(
        self: &mut Self,
        service: &ServiceKey,
        addr: std::net::IpAddr,
        port: u16,
        weight: u32,
    ) -> Result<(), Error> = self.core.set_destination_weight(service, addr, port, weight);

    /// Deletes a destination.
    fn delete_destination(
        self: &mut Self,
        service: &ServiceKey,
        addr: std::net::IpAddr,
        port: u16,
    ) -> Result<(), Error> = self.core.set(Request::DeleteDestination(*service, addr, port));

    /// Zeroes the counters of one service, or of every service and the
    /// totals.
    fn zero(self: &mut Self, service: Option<&ServiceKey>) -> Result<(), Error> =
        self.core.set(Request::Zero(service.copied()));

    /// Deletes every service.
    fn flush(self: &mut Self) -> Result<(), Error> = self.core.set(Request::Flush);

    /// Sets connection timeouts (0 leaves a value unchanged).
    fn set_timeouts(self: &mut Self, timeouts: &Timeouts) -> Result<(), Error> =
        self.core.set(Request::SetTimeouts(*timeouts));

    /// Starts a sync daemon.
    ///
    /// Once this returns the kernel lists the daemon and refuses a second
    /// start in its role, though its thread may not have run yet; a stop
    /// sent at once is answered all the same (see
    /// [`stop_sync_daemon`](Self::stop_sync_daemon)).
    fn start_sync_daemon(self: &mut Self, daemon: &SyncDaemon) -> Result<(), Error> =
        self.core.set(Request::StartDaemon(daemon.clone()));

    /// Stops the sync daemon of a role.
    ///
    /// A stop that finds the daemon's kernel thread not yet run (right
    /// after the start) completes, but the kernel sends no reply to it, not
    /// even the ACK asked for: `stop_sync_thread` returns what
    /// `kthread_stop` did, the never-run thread's `EINTR`, and netlink
    /// answers nothing to that code. So the stop goes out followed by a
    /// no-op whose ACK ends the exchange: such a stop is reported done at
    /// once, not unknown after the timeout (as it was, on 6.1 and 6.12, for
    /// many stops sent straight after a start). [`apply`](Self::apply)
    /// does the same for a batch that ends with [`Request::StopDaemon`]. A
    /// stop sent in that window by another program that waits for the ACK
    /// gets no reply from the kernel either.
    fn stop_sync_daemon(self: &mut Self, role: DaemonRole) -> Result<(), Error> =
        self.core.set(Request::StopDaemon(role));

    /// The version and connection table size.
    fn info(self: &mut Self) -> Result<Info, Error> = self.core.info();

    /// The connection timeouts.
    fn timeouts(self: &mut Self) -> Result<Timeouts, Error> = self.core.timeouts();

    /// The running sync daemons (master first).
    fn sync_daemons(self: &mut Self) -> Result<Vec<SyncDaemon>, Error> =
        self.core.sync_daemons();

    /// The totals of the client's namespace: counters since the last zero
    /// and rates, as `/proc/net/ip_vs_stats` of that namespace reports
    /// them (netlink has no command for them). Read from a short-lived
    /// thread inside the namespace when the caller is elsewhere (by the
    /// async client, on tokio's blocking pool); no thread of the caller
    /// moves.
    fn totals(self: &Self) -> Result<Stats, Error> = self.read_totals();

    /// Every service, each with its counters and an empty
    /// [`ServiceEntry::destinations`]: this lists no destination (see
    /// [`table`](Self::table) for a listing with them). Whole as
    /// [`table`](Self::table) says: every service that existed for the
    /// whole call is in it, once. Service dumps, this one and those of the
    /// other listings, take a netlink socket of their own read with
    /// 32 KiB (the kernel then makes fewer, larger dump parts, which costs
    /// it less), beside the one every other call takes with a page.
    fn services(self: &mut Self) -> Result<Vec<ServiceEntry>, Error> =
        self.core.list_services(Detail::Full);

    /// One service, with its counters and an empty
    /// [`ServiceEntry::destinations`] (see
    /// [`destinations`](Self::destinations)); [`Error::is_not_found`] if
    /// there is none.
    fn service(self: &mut Self, key: &ServiceKey) -> Result<ServiceEntry, Error> =
        self.core.service(key);

    /// Visits every service once, without building a list (each entry's
    /// [`ServiceEntry::destinations`] is empty); `visit` returns
    /// [`ControlFlow::Break`] to stop early. The rest of a dump stopped
    /// early is read out (and dropped) by the client's next call, so
    /// nothing of it reaches that call.
    ///
    /// Whole as [`table`](Self::table) says: every service that existed
    /// for the whole call is visited (unless the visit stops early), in the
    /// kernel's order as the dump streams in, and any the dump skipped at
    /// the end, after its check (which keeps the keys visited in a set).
    ///
    /// ```no_run
    /// use std::ops::ControlFlow;
    /// use ipvsnl::{Error, Operations, Scheduler, ServiceKey};
    ///
    /// /// The first round-robin service, through either client.
    /// async fn first_rr(ipvs: &mut impl Operations) -> Result<Option<ServiceKey>, Error> {
    ///     let mut found = None;
    ///     ipvs.for_each_service(|s| {
    ///         if s.service.scheduler == Scheduler::RoundRobin {
    ///             found = Some(s.service.key);
    ///             return ControlFlow::Break(());
    ///         }
    ///         ControlFlow::Continue(())
    ///     })
    ///     .await?;
    ///     Ok(found)
    /// }
    /// ```
    fn for_each_service[V: FnMut(&ServiceEntry) -> ControlFlow<()>](self: &mut Self, visit: V)
        -> Result<(), Error> = self.core.for_each_service(visit);

    /// The destinations of a service, newest first (the kernel's order).
    /// An unknown service has none (the kernel does not say it is unknown).
    fn destinations(self: &mut Self, key: &ServiceKey) -> Result<Vec<DestinationEntry>, Error> =
        async {
            key.validate()?;
            self.core.list_destinations(key, Detail::Full).await
        };

    /// Every service with its destinations: one service dump, then one
    /// destination dump per service, all on this client's socket.
    ///
    /// # What a listing guarantees
    ///
    /// - Every IPv4 service that existed for the whole call is in it,
    ///   once.
    /// - Every IPv6 service that existed for the whole call and was in an
    ///   earlier listing of this client is in it, once. One that no
    ///   listing of this client has held yet is found unless every dump of
    ///   the call skipped it: rare, not impossible (see below).
    /// - A service added or deleted during the call may be in it or not.
    ///
    /// So a client that lists again and again (a watcher, an exporter)
    /// never sees a service vanish that did not leave. The services come
    /// in the kernel's order, but for those the check below found: they
    /// come last. The destinations of each service are those of its own
    /// dump (a destination added or deleted during it may be in it or
    /// not).
    ///
    /// Why that takes care: the kernel sends a dump of many services in
    /// parts, each resumed by a position counted over every network
    /// namespace's services, so a service deleted anywhere (in another
    /// namespace too) between two parts makes the next part skip one of
    /// ours. Measured before this check: with another namespace adding and
    /// deleting 40 services in pipelined batches, 25 of 483 listings of an
    /// unchanged namespace of 300 services came back short (in the kernel
    /// test `kernel_listing_whole::whole`, with a harder churn, 449 of 450). So:
    ///
    /// - A dump whose services came in one part (about six services or
    ///   fewer) is one consistent snapshot: nothing more is done.
    /// - Otherwise, the IPv4 services are checked against one copy of them
    ///   all, which the kernel makes in one call under its IPVS mutex (the
    ///   older socket-option interface, `IP_VS_SO_GET_SERVICES`, on a plain
    ///   IPv4 socket the client opened beside its netlink socket, in its
    ///   namespace); a service of the copy that the dump skipped is got
    ///   alone (gone meanwhile: left out). That call never waits on the
    ///   network (the kernel answers within it, as it answers a netlink
    ///   request within the `sendmsg` that carries it), so the async
    ///   client makes it inline, on the task.
    /// - IPv6 services have no such copy, nor a count (that interface
    ///   counts IPv4 services only). The client remembers those of its last
    ///   listing and gets alone any the dump skipped; and once it has seen
    ///   one in its namespace, the services are dumped again, up to four
    ///   dumps in all, until a dump finds no IPv6 service the ones before
    ///   missed. Measured under that harder churn: the first listing of a
    ///   new client missed three of 100 IPv6 services in one run of two;
    ///   no later listing missed one (900 listings).
    /// - Without the socket-option socket (it could not be opened, or the
    ///   kernel refuses its calls: the client's `Debug` says so), every
    ///   service is checked as IPv6 ones are.
    ///
    /// Cost, when nothing changes: the copy (104 bytes a service, about
    /// 4 ms of the kernel's time for 10,000 services under qemu's
    /// instruction counting) and a comparison in order. Measured with
    /// `scripts/measure/listing-cost` (kernel 6.1, 10,000 services x 5 destinations):
    /// 0.4 % more for this listing, 1.042x the plain listing (see
    /// `crates/ipvsnl/src/listing/whole.rs`). A table with IPv6 services
    /// costs a second service dump.
    ///
    /// ```no_run
    /// use ipvsnl::{Error, Operations};
    ///
    /// /// Prints the table, through either client.
    /// async fn show(ipvs: &mut impl Operations) -> Result<(), Error> {
    ///     for row in ipvs.table().await? {
    ///         let n = row.destinations.len();
    ///         println!("{} {} ({n} destinations)", row.key(), row.service.scheduler);
    ///     }
    ///     Ok(())
    /// }
    /// ```
    fn table(self: &mut Self) -> Result<Vec<ServiceEntry>, Error> =
        self.core.list_entries(Detail::Full, |_| true);

    /// Every service with its destinations, as [`table`](Self::table)
    /// lists them (whole in the same sense), but their settings and
    /// connection counts only: every counter and rate is left at zero.
    /// What a reconciler compares, and, for the kernel, much cheaper: the
    /// destinations of IPv4 services are read through the older
    /// socket-option interface (one `IP_VS_SO_GET_DESTS` each, answered
    /// within the call, so the async client makes it inline) wherever that
    /// gives every field a netlink dump would; by netlink where it does not
    /// (IPv6 services, tunnelled destinations, destinations of the other
    /// family), or with
    /// [`ClientOptions::with_socket_option_listing`](crate::ClientOptions::with_socket_option_listing)`(false)`.
    /// Which path each service takes, and the measured cost: see
    /// `crates/ipvsnl/src/listing/by_sockopt.rs` (a `Syncer`'s no-op sync
    /// of 10,000 services x 5 destinations, which lists this way: 0.69 s
    /// of the kernel's time before, 0.20 s after, under qemu's
    /// instruction counting on 6.1).
    ///
    /// ```no_run
    /// use ipvsnl::{Error, Operations};
    ///
    /// /// The weights of every destination, through either client.
    /// async fn weights(ipvs: &mut impl Operations) -> Result<Vec<u32>, Error> {
    ///     let table = ipvs.table_settings().await?;
    ///     Ok(table.iter().flat_map(|s| &s.destinations).map(|d| d.destination.weight).collect())
    /// }
    /// ```
    fn table_settings(self: &mut Self) -> Result<Vec<ServiceEntry>, Error> =
        self.core.list_entries(Detail::Settings, |_| true);

    /// Visits every row of [`table_settings`](Self::table_settings) in
    /// turn, without holding them all: each service's destinations are
    /// listed just before its visit and dropped after it (a table of
    /// 10,000 services x 5 destinations holds 6.8 MB of
    /// [`DestinationEntry`] at once in `table_settings`). The services are
    /// listed first, whole as [`table`](Self::table) says, then visited in
    /// the kernel's order, each with what its destinations are when its
    /// turn comes; `visit` returns [`ControlFlow::Break`] to stop early.
    /// An error after some visits ends the listing: the rows visited were
    /// right, the rest are not known.
    ///
    /// ```no_run
    /// use std::ops::ControlFlow;
    /// use ipvsnl::{Error, Operations};
    ///
    /// /// How many destinations have weight 0, through either client.
    /// async fn drained(ipvs: &mut impl Operations) -> Result<usize, Error> {
    ///     let mut n = 0;
    ///     ipvs.for_each_settings_row(|row| {
    ///         n += row.destinations.iter().filter(|d| d.destination.weight == 0).count();
    ///         ControlFlow::Continue(())
    ///     })
    ///     .await?;
    ///     Ok(n)
    /// }
    /// ```
    fn for_each_settings_row[V: FnMut(&ServiceEntry) -> ControlFlow<()>](self: &mut Self, visit: V)
        -> Result<(), Error> = self.core.for_each_settings_row(None::<fn(&[ServiceKey]) -> Vec<usize>>, visit);

    /// [`for_each_settings_row`](Self::for_each_settings_row) in an order
    /// of the caller's: the services are listed first, and `order` is
    /// given their keys, in the kernel's order, before any destination is
    /// listed; it returns the indices of those keys in the order to visit
    /// them (one left out is not visited). So a program that prints the
    /// rows sorted (as `ipvsadm -S` does) can print each as it comes,
    /// holding no row's text for later. An index past the keys, or one
    /// given twice, is an [`Error::InvalidInput`] and nothing is visited.
    ///
    /// ```no_run
    /// use std::ops::ControlFlow;
    /// use ipvsnl::{Client, ServiceKey};
    ///
    /// # fn main() -> Result<(), ipvsnl::Error> {
    /// let mut ipvs = Client::new()?;
    /// // The firewall-mark services first, each before its destinations.
    /// let marks_first = |keys: &[ServiceKey]| {
    ///     let mut order: Vec<usize> = (0..keys.len()).collect();
    ///     order.sort_by_key(|&i| !matches!(keys[i], ServiceKey::Fwmark { .. }));
    ///     order
    /// };
    /// ipvs.for_each_settings_row_in(marks_first, |row| {
    ///     println!("{}: {} destinations", row.service.key, row.destinations.len());
    ///     ControlFlow::Continue(())
    /// })?;
    /// # Ok(())
    /// # }
    /// ```
    fn for_each_settings_row_in[
        O: FnOnce(&[ServiceKey]) -> Vec<usize>,
        V: FnMut(&ServiceEntry) -> ControlFlow<()>
    ](
        self: &mut Self,
        order: O,
        visit: V,
    ) -> Result<(), Error> = self.core.for_each_settings_row(Some(order), visit);

    /// Every service, as [`table`](Self::table) lists them, but with the
    /// destinations of only those `wanted` accepts (the others have an
    /// empty [`ServiceEntry::destinations`]; no destination dump is sent
    /// for them).
    fn table_with_destinations_of[W: FnMut(&ServiceKey) -> bool](self: &mut Self, wanted: W)
        -> Result<Vec<ServiceEntry>, Error> = self.core.list_entries(Detail::Full, wanted);

    /// Applies many requests, pipelined: as many as fit in a batch go out in
    /// one `sendmsg`, with one acknowledgement asked for per batch; a
    /// refused request still gets its own error. Returns one outcome per
    /// request, in order. Invalid requests are refused locally and not
    /// sent; the others still apply.
    ///
    /// What is not known is said so: if the kernel drops replies
    /// (`ENOBUFS`: the socket buffer overflowed), the requests of that
    /// batch whose reply could not be seen are [`Error::Unknown`] (they may
    /// have been applied; later batches are made smaller); after a time-out
    /// or a socket failure the batch in flight is unknown where unanswered
    /// and the rest [`Error::NotSent`].
    #[must_use = "each request's outcome is in the returned list; a failed one is reported nowhere else"]
    fn apply(self: &mut Self, requests: &[Request]) -> Vec<Result<(), Error>> = async {
        let options = ApplyOptions::default();
        self.core.apply_failures(requests, &options).await.into_results(requests.len())
    };

    /// [`apply`](Self::apply) with tuning.
    #[must_use = "each request's outcome is in the returned list; a failed one is reported nowhere else"]
    fn apply_with(self: &mut Self, requests: &[Request], options: &ApplyOptions)
        -> Vec<Result<(), Error>> = async {
        self.core.apply_failures(requests, options).await.into_results(requests.len())
    };
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    use super::Operations;
    use crate::Client;

    /// Polls `future` once.
    fn poll_once<F: Future>(future: F) -> Poll<F::Output> {
        pin!(future).poll(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn the_blocking_clients_futures_are_complete_when_made() {
        // A generic-netlink socket opens on any Linux host, IPVS or not.
        let mut c = Client::new().unwrap();
        match poll_once(Operations::family_id(&mut c)) {
            Poll::Ready(Ok(id)) => assert!(id >= 0x10),
            Poll::Ready(Err(e)) => assert!(e.is_unavailable(), "{e}"),
            Poll::Pending => panic!("the blocking client's future waited"),
        }
        let outcomes = poll_once(Operations::apply(&mut c, &[]));
        assert!(matches!(outcomes, Poll::Ready(ref o) if o.is_empty()));
    }

    #[cfg(feature = "tokio")]
    #[test]
    fn code_generic_over_the_trait_runs_on_both_clients() {
        async fn version(ipvs: &mut impl Operations) -> Option<u32> {
            ipvs.info().await.ok().map(|i| i.version)
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut blocking = Client::new().unwrap();
        let from_blocking = rt.block_on(version(&mut blocking));
        let from_async = rt.block_on(async {
            let mut c = crate::AsyncClient::new().unwrap();
            // Spawnable: the trait's futures are Send.
            tokio::spawn(async move { version(&mut c).await })
                .await
                .unwrap()
        });
        // The same kernel answers both (or neither has IPVS).
        assert_eq!(from_blocking, from_async);
    }
}
