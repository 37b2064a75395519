//! The client: one socket, typed operations, pipelined batches.

use std::path::Path;
use std::time::Duration;

use ipvsnl_wire::{IpvsCommand, IpvsMessage};

use crate::decode;
use crate::drive::{drive, outcome, DATAGRAMS};
use crate::proto::{frame, CallKind, Replies, Session};
use crate::transport::netns::NetnsHandle;
use crate::transport::socket::NlSocket;
use crate::{
    DaemonRole, Destination, Error, Info, Object, Request, RequestKind, Service, ServiceKey, Stats,
    SyncDaemon, Target, Timeouts,
};

/// How a client talks to the kernel.
///
/// ```
/// use std::time::Duration;
/// let opts = ipvsnl::ClientOptions::default().with_timeout(Duration::from_secs(5));
/// assert_eq!(opts.timeout(), Duration::from_secs(5));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientOptions {
    pub(crate) timeout: Duration,
    pub(crate) socket_buffer: usize,
    pub(crate) batch_bytes: usize,
    pub(crate) recv_buffer: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            timeout: Duration::from_secs(30),
            socket_buffer: 4 << 20,
            batch_bytes: 64 << 10,
            recv_buffer: default_recv_buffer(),
        }
    }
}

/// The kernel sizes dump messages from the reader's buffer: a page-sized
/// buffer keeps its allocations small (measured faster than 1 MiB), and no
/// reply the kernel sends to this client is larger than a page.
fn default_recv_buffer() -> usize {
    // SAFETY: sysconf has no preconditions; it only reads a constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).unwrap_or(4096).clamp(4096, 65536)
}

impl ClientOptions {
    /// How long one receive may wait for the kernel (default 30 s; at
    /// least 1 ms: a zero socket timeout would mean "wait forever").
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// The receive timeout in force.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The socket receive buffer (`SO_RCVBUF`, default 4 MiB). It bounds
    /// how many replies a batch may queue; batches are sized to fit it.
    #[must_use]
    pub fn with_socket_buffer(mut self, bytes: usize) -> Self {
        self.socket_buffer = bytes.max(4096);
        self
    }

    /// The most request bytes sent in one `sendmsg` (default 64 KiB).
    #[must_use]
    pub fn with_batch_bytes(mut self, bytes: usize) -> Self {
        self.batch_bytes = bytes.max(256);
        self
    }

    /// The user-space buffer one receive reads into (default: a page).
    #[must_use]
    pub fn with_recv_buffer(mut self, bytes: usize) -> Self {
        self.recv_buffer = bytes.clamp(4096, 1 << 20);
        self
    }
}

/// A client of the kernel's IPVS table in one network namespace.
///
/// It owns one netlink socket for its whole life, resolves the IPVS family
/// id on first use (and again if the module was reloaded), and never waits
/// longer than its timeout for a reply. It is a thin driver: every protocol
/// decision is made by the sans-IO machines of [`crate::proto`].
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
    pub(crate) sock: NlSocket,
    pub(crate) session: Session,
    pub(crate) opts: ClientOptions,
    /// Replies one batch may leave queued without overflowing the socket.
    pub(crate) max_batch_requests: usize,
    /// Room for [`DATAGRAMS`] datagrams of the receive buffer's size.
    pub(crate) rx: Vec<u8>,
    /// The client's namespace, for the `/proc/net` files (None if `/proc`
    /// was not there when the client was made).
    netns: Option<NetnsHandle>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("namespace", &self.netns)
            .field("family", &self.session.family())
            .field("last_seq", &self.session.last_seq())
            .field("unfinished_dump", &self.session.unfinished_dump())
            .field("options", &self.opts)
            .field("max_batch_requests", &self.max_batch_requests)
            .finish_non_exhaustive()
    }
}

/// Estimated kernel memory one queued reply takes from the socket buffer
/// (an skb's truesize for a small message).
const REPLY_TRUESIZE: usize = 1024;

impl Client {
    /// A client in the caller's network namespace, with default options.
    pub fn new() -> Result<Self, Error> {
        Client::with_options(ClientOptions::default())
    }

    /// A client in the caller's network namespace.
    pub fn with_options(opts: ClientOptions) -> Result<Self, Error> {
        let sock = NlSocket::open().map_err(|source| {
            Error::io(
                Target::new(RequestKind::ResolveFamily, Object::Family),
                source,
            )
        })?;
        // The socket belongs to this thread's namespace: remember it.
        Client::from_socket(sock, opts, NetnsHandle::current().ok())
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
        let path = path.as_ref();
        let sock = NlSocket::open_in(path)?;
        let netns = NetnsHandle::open(path).map_err(|source| Error::Namespace {
            path: path.to_path_buf(),
            source,
        })?;
        Client::from_socket(sock, opts, Some(netns))
    }

    fn from_socket(
        sock: NlSocket,
        opts: ClientOptions,
        netns: Option<NetnsHandle>,
    ) -> Result<Self, Error> {
        let io = |source| {
            Error::io(
                Target::new(RequestKind::ResolveFamily, Object::Family),
                source,
            )
        };
        sock.set_timeout(opts.timeout).map_err(io)?;
        let granted = sock.set_receive_buffer(opts.socket_buffer).map_err(io)?;
        Ok(Client {
            sock,
            session: Session::new(opts.timeout),
            max_batch_requests: (granted / REPLY_TRUESIZE / 2).max(1),
            rx: vec![0; opts.recv_buffer * DATAGRAMS],
            opts,
            netns,
        })
    }

    /// The options in force.
    pub fn options(&self) -> &ClientOptions {
        &self.opts
    }

    /// The IPVS family id, resolved on first use.
    pub fn family_id(&mut self) -> Result<u16, Error> {
        if let Some(id) = self.session.family() {
            return Ok(id);
        }
        let mut lookup = self.session.resolve_family();
        drive(&self.sock, &mut self.rx, self.opts.recv_buffer, &mut lookup);
        outcome(lookup.result(), || {
            Target::new(RequestKind::ResolveFamily, Object::Family)
        })
    }

    /// Sends a get or a dump (`kind` says which, and names it in errors)
    /// written by `write` (given the family id, sequence number and
    /// flags), and hands each IPVS reply (its command and attribute bytes)
    /// to `decode`, which appends what it decodes to the list returned.
    pub(crate) fn exchange<T>(
        &mut self,
        kind: RequestKind,
        target: impl FnOnce() -> Object,
        write: impl Fn(&mut Vec<u8>, u16, u32, u16),
        decode: impl Fn(u8, &[u8], &mut Vec<T>) -> Result<(), String>,
    ) -> Result<Vec<T>, Error> {
        let call_kind = match kind {
            RequestKind::ListServices
            | RequestKind::ListDestinations
            | RequestKind::ListDaemons => CallKind::Dump,
            _ => CallKind::Get,
        };
        let mut call = self.session.call(
            call_kind,
            write,
            Collect {
                out: Vec::new(),
                decode,
            },
        );
        drive(&self.sock, &mut self.rx, self.opts.recv_buffer, &mut call);
        let result = call.result();
        let out = std::mem::take(&mut call.replies().out);
        drop(call);
        outcome(result, || Target::new(kind, target()))?;
        Ok(out)
    }

    /// Sends one request and collects its reply messages, parsed into
    /// owned attributes.
    fn transact(&mut self, kind: RequestKind, msg: IpvsMessage) -> Result<Vec<IpvsMessage>, Error> {
        self.exchange(
            kind,
            || Object::Table,
            |out, family, seq, flags| frame::push_request(out, family, seq, flags, msg.clone()),
            |command, attrs, out| {
                out.push(frame::decode(command, attrs)?);
                Ok(())
            },
        )
    }

    /// One change: an apply of one request (the same state machine, so a
    /// lost reply is unknown and a stale family id is looked up again).
    fn set(&mut self, request: &Request) -> Result<(), Error> {
        match self.apply(std::slice::from_ref(request)).pop() {
            Some(r) => r,
            None => Err(Error::decode(request.target(), "no outcome")),
        }
    }

    /// Adds a service.
    pub fn add_service(&mut self, service: &Service) -> Result<(), Error> {
        self.set(&Request::AddService(service.clone()))
    }

    /// Replaces a service's scheduler, flags and persistence.
    pub fn edit_service(&mut self, service: &Service) -> Result<(), Error> {
        self.set(&Request::EditService(service.clone()))
    }

    /// Deletes a service and its destinations.
    pub fn delete_service(&mut self, key: &ServiceKey) -> Result<(), Error> {
        self.set(&Request::DeleteService(*key))
    }

    /// Adds a destination to a service.
    pub fn add_destination(
        &mut self,
        service: &ServiceKey,
        dest: &Destination,
    ) -> Result<(), Error> {
        self.set(&Request::AddDestination(*service, *dest))
    }

    /// Replaces a destination's forwarding, weight and thresholds.
    pub fn edit_destination(
        &mut self,
        service: &ServiceKey,
        dest: &Destination,
    ) -> Result<(), Error> {
        self.set(&Request::EditDestination(*service, *dest))
    }

    /// Deletes a destination.
    pub fn delete_destination(
        &mut self,
        service: &ServiceKey,
        addr: std::net::IpAddr,
        port: u16,
    ) -> Result<(), Error> {
        self.set(&Request::DeleteDestination(*service, addr, port))
    }

    /// Zeroes the counters of one service, or of every service and the
    /// totals.
    pub fn zero(&mut self, service: Option<&ServiceKey>) -> Result<(), Error> {
        self.set(&Request::Zero(service.copied()))
    }

    /// Deletes every service.
    pub fn flush(&mut self) -> Result<(), Error> {
        self.set(&Request::Flush)
    }

    /// Sets connection timeouts (0 leaves a value unchanged).
    pub fn set_timeouts(&mut self, timeouts: &Timeouts) -> Result<(), Error> {
        self.set(&Request::SetTimeouts(*timeouts))
    }

    /// Starts a sync daemon.
    pub fn start_sync_daemon(&mut self, daemon: &SyncDaemon) -> Result<(), Error> {
        self.set(&Request::StartDaemon(daemon.clone()))
    }

    /// Stops the sync daemon of a role.
    pub fn stop_sync_daemon(&mut self, role: DaemonRole) -> Result<(), Error> {
        self.set(&Request::StopDaemon(role))
    }

    /// The version and connection table size.
    pub fn info(&mut self) -> Result<Info, Error> {
        let kind = RequestKind::GetInfo;
        let replies = self.transact(kind, IpvsMessage::new(IpvsCommand::GetInfo, vec![]))?;
        let target = || Target::new(kind, Object::Table);
        let first = replies
            .first()
            .ok_or_else(|| Error::decode(target(), "no reply"))?;
        decode::info(&first.attrs).map_err(|detail| Error::decode(target(), detail))
    }

    /// The connection timeouts.
    pub fn timeouts(&mut self) -> Result<Timeouts, Error> {
        let kind = RequestKind::GetTimeouts;
        let replies = self.transact(kind, IpvsMessage::new(IpvsCommand::GetConfig, vec![]))?;
        let first = replies
            .first()
            .ok_or_else(|| Error::decode(Target::new(kind, Object::Table), "no reply"))?;
        Ok(decode::timeouts(&first.attrs))
    }

    /// The running sync daemons (master first).
    pub fn sync_daemons(&mut self) -> Result<Vec<SyncDaemon>, Error> {
        let kind = RequestKind::ListDaemons;
        let replies = self.transact(kind, IpvsMessage::new(IpvsCommand::GetDaemon, vec![]))?;
        replies
            .iter()
            .map(|m| {
                decode::sync_daemon(&m.attrs)
                    .map_err(|detail| Error::decode(Target::new(kind, Object::Table), detail))
            })
            .collect()
    }

    /// The totals of the client's namespace: counters since the last zero
    /// and rates, as `/proc/net/ip_vs_stats` of that namespace reports
    /// them (netlink has no command for them). Read from a short-lived
    /// thread inside the namespace when the caller is elsewhere; no thread
    /// of the caller moves.
    pub fn totals(&self) -> Result<Stats, Error> {
        let target = || Target::new(RequestKind::Totals, Object::Table);
        let netns = self.netns.as_ref().ok_or_else(|| {
            Error::io(
                target(),
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "the client's namespace is unknown (/proc was not mounted)",
                ),
            )
        })?;
        let text = netns
            .read_proc_net("ip_vs_stats")
            .map_err(|source| match source.kind() {
                std::io::ErrorKind::NotFound => Error::Unavailable,
                _ => Error::io(target(), source),
            })?;
        decode::proc_stats(&text).map_err(|detail| Error::decode(target(), detail))
    }
}

/// The replies of a get or dump, decoded into a list.
struct Collect<T, D> {
    out: Vec<T>,
    decode: D,
}

impl<T, D> Replies for Collect<T, D>
where
    D: Fn(u8, &[u8], &mut Vec<T>) -> Result<(), String>,
{
    #[inline]
    fn message(&mut self, command: u8, attrs: &[u8]) -> Result<(), String> {
        (self.decode)(command, attrs, &mut self.out)
    }

    fn restart(&mut self) {
        self.out.clear();
    }

    #[inline]
    fn datagram(&mut self, datagram: &[u8]) {
        // Room for every data message of the datagram at once (a dump's
        // part is typically all of a service's destinations).
        self.out.reserve(frame::data_message_count(datagram));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
