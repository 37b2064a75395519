//! The blocking client: one socket, typed operations, pipelined batches.
//! Every operation is the one of [`crate::conn`], run to its end on the
//! calling thread.

use std::ops::ControlFlow;
use std::path::Path;

use crate::block_on::block_on;
use crate::conn::{read_totals, setup_error, Conn};
use crate::decode::Detail;
use crate::transport::blocking::Blocking;
use crate::transport::netns::{NetnsHandle, Sockets};
use crate::{
    ApplyOptions, ClientOptions, DaemonRole, Destination, DestinationEntry, Error, Info, Request,
    Service, ServiceEntry, ServiceKey, Stats, SyncDaemon, Timeouts,
};

/// A client of the kernel's IPVS table in one network namespace.
///
/// It owns one netlink socket for its whole life, resolves the IPVS family
/// id on first use (and again if the module was reloaded), and never waits
/// longer than its timeout for a reply. It is a thin driver: every protocol
/// decision is made by the sans-IO machines of [`crate::proto`]. Its calls
/// block the calling thread; `AsyncClient` (feature `tokio`) has the same
/// operations as futures.
///
/// ```no_run
/// use ipvsnl::{Client, Destination, Scheduler, Service, ServiceKey};
/// let mut ipvs = Client::new()?;
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// ipvs.add_service(&Service::new(key).with_scheduler(Scheduler::RoundRobin))?;
/// ipvs.add_destination(&key, &Destination::new("10.0.1.1".parse().unwrap(), 80))?;
/// for entry in ipvs.services()? {
///     println!("{} {}", entry.service.key, entry.service.scheduler);
/// }
/// # Ok::<(), ipvsnl::Error>(())
/// ```
pub struct Client {
    pub(crate) conn: Conn<Blocking>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.conn.fmt(f)
    }
}

impl Client {
    /// A client in the caller's network namespace, with default options.
    pub fn new() -> Result<Self, Error> {
        Client::with_options(ClientOptions::default())
    }

    /// A client in the caller's network namespace.
    pub fn with_options(opts: ClientOptions) -> Result<Self, Error> {
        let sockets = Sockets::open().map_err(setup_error)?;
        // The sockets belong to this thread's namespace: remember it.
        Client::from_sockets(sockets, opts, NetnsHandle::current().ok())
    }

    /// A client bound to the network namespace of `path`
    /// (`/var/run/netns/NAME`, `/proc/PID/ns/net`), without moving any
    /// thread of the caller.
    pub fn in_namespace(path: impl AsRef<Path>) -> Result<Self, Error> {
        Client::in_namespace_with_options(path, ClientOptions::default())
    }

    /// [`Client::in_namespace`] with options.
    pub fn in_namespace_with_options(
        path: impl AsRef<Path>,
        opts: ClientOptions,
    ) -> Result<Self, Error> {
        let (sockets, netns) = Sockets::open_in(path.as_ref())?;
        Client::from_sockets(sockets, opts, Some(netns))
    }

    fn from_sockets(
        sockets: Sockets,
        opts: ClientOptions,
        netns: Option<NetnsHandle>,
    ) -> Result<Self, Error> {
        let Sockets {
            netlink: mut sock,
            sockopt,
        } = sockets;
        sock.set_timeout(opts.timeout).map_err(setup_error)?;
        let granted = sock
            .set_receive_buffer(opts.socket_buffer)
            .map_err(setup_error)?;
        Ok(Client {
            conn: Conn::new(Blocking { sock }, granted, opts, netns, sockopt),
        })
    }

    /// The options in force.
    pub fn options(&self) -> &ClientOptions {
        &self.conn.opts
    }

    /// The IPVS family id, resolved on first use.
    pub fn family_id(&mut self) -> Result<u16, Error> {
        block_on(self.conn.family_id())
    }

    /// Adds a service.
    pub fn add_service(&mut self, service: &Service) -> Result<(), Error> {
        block_on(
            self.conn
                .set(Request::AddService(Box::new(service.clone()))),
        )
    }

    /// Replaces a service's scheduler, flags and persistence.
    pub fn edit_service(&mut self, service: &Service) -> Result<(), Error> {
        block_on(
            self.conn
                .set(Request::EditService(Box::new(service.clone()))),
        )
    }

    /// Deletes a service and its destinations.
    pub fn delete_service(&mut self, key: &ServiceKey) -> Result<(), Error> {
        block_on(self.conn.set(Request::DeleteService(*key)))
    }

    /// Adds a destination to a service.
    pub fn add_destination(
        &mut self,
        service: &ServiceKey,
        dest: &Destination,
    ) -> Result<(), Error> {
        block_on(self.conn.set(Request::AddDestination(*service, *dest)))
    }

    /// Replaces a destination's forwarding, weight and thresholds.
    pub fn edit_destination(
        &mut self,
        service: &ServiceKey,
        dest: &Destination,
    ) -> Result<(), Error> {
        block_on(self.conn.set(Request::EditDestination(*service, *dest)))
    }

    /// Deletes a destination.
    pub fn delete_destination(
        &mut self,
        service: &ServiceKey,
        addr: std::net::IpAddr,
        port: u16,
    ) -> Result<(), Error> {
        block_on(
            self.conn
                .set(Request::DeleteDestination(*service, addr, port)),
        )
    }

    /// Zeroes the counters of one service, or of every service and the
    /// totals.
    pub fn zero(&mut self, service: Option<&ServiceKey>) -> Result<(), Error> {
        block_on(self.conn.set(Request::Zero(service.copied())))
    }

    /// Deletes every service.
    pub fn flush(&mut self) -> Result<(), Error> {
        block_on(self.conn.set(Request::Flush))
    }

    /// Sets connection timeouts (0 leaves a value unchanged).
    pub fn set_timeouts(&mut self, timeouts: &Timeouts) -> Result<(), Error> {
        block_on(self.conn.set(Request::SetTimeouts(*timeouts)))
    }

    /// Starts a sync daemon.
    ///
    /// Once this returns the kernel lists the daemon and refuses a second
    /// start in its role, though its thread may not have run yet; a stop
    /// sent at once is answered all the same (see
    /// [`Client::stop_sync_daemon`]).
    pub fn start_sync_daemon(&mut self, daemon: &SyncDaemon) -> Result<(), Error> {
        block_on(self.conn.set(Request::StartDaemon(daemon.clone())))
    }

    /// Stops the sync daemon of a role.
    ///
    /// A stop that finds the daemon's kernel thread not yet run (right
    /// after the start) completes, but the kernel sends no reply to it, not
    /// even the ACK asked for: `stop_sync_thread` returns what
    /// `kthread_stop` did, the never-run thread's `EINTR`, and netlink
    /// answers nothing to that code. So the stop goes out followed by a
    /// no-op whose ACK ends the exchange: such a stop is reported done at
    /// once, not unknown after the timeout (as it was, on 6.1 and 6.12, for
    /// many stops sent straight after a start). [`Client::apply`] does the same
    /// for a batch that ends with [`Request::StopDaemon`]. A stop sent in
    /// that window by another program that waits for the ACK gets no
    /// reply from the kernel either.
    pub fn stop_sync_daemon(&mut self, role: DaemonRole) -> Result<(), Error> {
        block_on(self.conn.set(Request::StopDaemon(role)))
    }

    /// The version and connection table size.
    pub fn info(&mut self) -> Result<Info, Error> {
        block_on(self.conn.info())
    }

    /// The connection timeouts.
    pub fn timeouts(&mut self) -> Result<Timeouts, Error> {
        block_on(self.conn.timeouts())
    }

    /// The running sync daemons (master first).
    pub fn sync_daemons(&mut self) -> Result<Vec<SyncDaemon>, Error> {
        block_on(self.conn.sync_daemons())
    }

    /// The totals of the client's namespace: counters since the last zero
    /// and rates, as `/proc/net/ip_vs_stats` of that namespace reports
    /// them (netlink has no command for them). Read from a short-lived
    /// thread inside the namespace when the caller is elsewhere; no thread
    /// of the caller moves.
    pub fn totals(&self) -> Result<Stats, Error> {
        read_totals(self.conn.netns.as_ref())
    }

    /// Every service, each with its counters and an empty
    /// [`ServiceEntry::destinations`]: this lists no destination (see
    /// [`Client::table`] for a listing with them). Whole as
    /// [`Client::table`] says: every service that existed for the whole
    /// call is in it, once.
    pub fn services(&mut self) -> Result<Vec<ServiceEntry>, Error> {
        block_on(self.conn.list_services(Detail::Full))
    }

    /// One service, with its counters and an empty
    /// [`ServiceEntry::destinations`] (see [`Client::destinations`]);
    /// [`Error::is_not_found`] if there is none.
    pub fn service(&mut self, key: &ServiceKey) -> Result<ServiceEntry, Error> {
        block_on(self.conn.service(key))
    }

    /// Visits every service once, without building a list (each entry's
    /// [`ServiceEntry::destinations`] is empty); `visit` returns
    /// [`ControlFlow::Break`] to stop early. The rest of a dump stopped
    /// early is read out (and dropped) by the client's next call, so
    /// nothing of it reaches that call.
    ///
    /// Whole as [`Client::table`] says: every service that existed for the
    /// whole call is visited (unless the visit stops early), in the
    /// kernel's order as the dump streams in, and any the dump skipped at
    /// the end, after its check (which keeps the keys visited in a set).
    ///
    /// ```no_run
    /// use std::ops::ControlFlow;
    /// let mut ipvs = ipvsnl::Client::new()?;
    /// let mut first_rr = None;
    /// ipvs.for_each_service(|s| {
    ///     if s.service.scheduler == ipvsnl::Scheduler::RoundRobin {
    ///         first_rr = Some(s.service.key);
    ///         return ControlFlow::Break(());
    ///     }
    ///     ControlFlow::Continue(())
    /// })?;
    /// # Ok::<(), ipvsnl::Error>(())
    /// ```
    pub fn for_each_service(
        &mut self,
        visit: impl FnMut(&ServiceEntry) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        block_on(self.conn.for_each_service(visit))
    }

    /// The destinations of a service, newest first (the kernel's order).
    /// An unknown service has none (the kernel does not say it is unknown).
    pub fn destinations(&mut self, key: &ServiceKey) -> Result<Vec<DestinationEntry>, Error> {
        key.validate()?;
        block_on(self.conn.list_destinations(key, Detail::Full))
    }

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
    /// test `kernel_listing_whole`, with a harder churn, 449 of 450). So:
    ///
    /// - A dump whose services came in one part (about six services or
    ///   fewer) is one consistent snapshot: nothing more is done.
    /// - Otherwise, the IPv4 services are checked against one copy of them
    ///   all, which the kernel makes in one call under its IPVS mutex (the
    ///   older socket-option interface, `IP_VS_SO_GET_SERVICES`, on a plain
    ///   IPv4 socket the client opened beside its netlink socket, in its
    ///   namespace); a service of the copy that the dump skipped is got
    ///   alone (gone meanwhile: left out).
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
    /// `.ci/listing-cost` (kernel 6.1, 10,000 services x 5 destinations):
    /// 0.4 % more for this listing, 1.042x the plain listing (see
    /// `crates/ipvsnl/src/listing/whole.rs`). A table with IPv6 services
    /// costs a second service dump.
    ///
    /// ```no_run
    /// let mut ipvs = ipvsnl::Client::new()?;
    /// for row in ipvs.table()? {
    ///     println!("{} {} ({} destinations)", row.key(), row.service.scheduler, row.destinations.len());
    /// }
    /// # Ok::<(), ipvsnl::Error>(())
    /// ```
    pub fn table(&mut self) -> Result<Vec<ServiceEntry>, Error> {
        self.list_table_where(|_| true)
    }

    /// The same as [`Client::table`] (the name the sync engine's listing
    /// had when it was the faster of two).
    pub fn list_table(&mut self) -> Result<Vec<ServiceEntry>, Error> {
        self.table()
    }

    /// Every service, and the destinations of those `wanted` accepts (the
    /// others are listed with an empty [`ServiceEntry::destinations`]).
    pub fn list_table_where(
        &mut self,
        wanted: impl FnMut(&ServiceKey) -> bool,
    ) -> Result<Vec<ServiceEntry>, Error> {
        block_on(self.conn.list_entries(Detail::Full, wanted))
    }

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
    pub fn apply(&mut self, requests: &[Request]) -> Vec<Result<(), Error>> {
        self.apply_with(requests, &ApplyOptions::default())
    }

    /// [`Client::apply`] with tuning.
    #[must_use = "each request's outcome is in the returned list; a failed one is reported nowhere else"]
    pub fn apply_with(
        &mut self,
        requests: &[Request],
        options: &ApplyOptions,
    ) -> Vec<Result<(), Error>> {
        block_on(self.conn.apply_failures(requests, options)).into_results(requests.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn debug_shows_the_state_not_the_buffers() {
        // A generic-netlink socket opens on any Linux host, IPVS or not.
        let opts = ClientOptions::default().with_timeout(Duration::from_secs(3));
        let c = Client::with_options(opts).unwrap();
        let shown = format!("{c:?}");
        for part in [
            "namespace",
            "family: None",
            "options",
            "timeout: 3s",
            "unfinished_dump",
        ] {
            assert!(shown.contains(part), "{part} not in {shown}");
        }
        // A page of receive buffer would be thousands of numbers.
        assert!(shown.len() < 600, "{shown}");
        assert!(!shown.contains("rx"), "{shown}");
    }
}
