//! The client: one socket, typed operations, pipelined batches.

use std::path::Path;
use std::time::Duration;

use ipvsnl_wire::netlink_packet_core::{NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST};
use ipvsnl_wire::{IpvsCommand, IpvsMessage, IPVS_GENL_NAME};

use crate::decode;
use crate::transport::frame::{self, Reply};
use crate::transport::netns::NetnsHandle;
use crate::transport::socket::NlSocket;
use crate::{
    DaemonRole, Destination, DestinationEntry, Error, Info, Request, RequestKind, Service,
    ServiceEntry, ServiceKey, Stats, SyncDaemon, Timeouts,
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
    pub fn with_socket_buffer(mut self, bytes: usize) -> Self {
        self.socket_buffer = bytes.max(4096);
        self
    }

    /// The most request bytes sent in one `sendmsg` (default 64 KiB).
    pub fn with_batch_bytes(mut self, bytes: usize) -> Self {
        self.batch_bytes = bytes.max(256);
        self
    }

    /// The user-space buffer one receive reads into (default: a page).
    pub fn with_recv_buffer(mut self, bytes: usize) -> Self {
        self.recv_buffer = bytes.clamp(4096, 1 << 20);
        self
    }
}

/// A client of the kernel's IPVS table in one network namespace.
///
/// It owns one netlink socket for its whole life, resolves the IPVS family
/// id on first use (and again if the module was reloaded), and never waits
/// longer than its timeout for a reply.
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
#[derive(Debug)]
pub struct Client {
    pub(crate) sock: NlSocket,
    pub(crate) family: Option<u16>,
    pub(crate) seq: u32,
    pub(crate) opts: ClientOptions,
    /// Replies one batch may leave queued without overflowing the socket.
    pub(crate) max_batch_requests: usize,
    /// Room for [`DUMP_DATAGRAMS`] datagrams of the receive buffer's size
    /// (one receive call takes a few).
    pub(crate) rx: Vec<u8>,
    pub(crate) tx: Vec<u8>,
    /// The client's namespace, for the `/proc/net` files (None if `/proc`
    /// was not there when the client was made).
    netns: Option<NetnsHandle>,
}

/// The most datagrams one receive call of a get or a dump takes (a short
/// dump's data and `NLMSG_DONE`, or a few parts of a long one).
const DUMP_DATAGRAMS: usize = 2;

/// Estimated kernel memory one queued reply takes from the socket buffer
/// (an skb's truesize for a small message).
const REPLY_TRUESIZE: usize = 1024;

/// A service and its destinations, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TableEntry {
    /// The service.
    pub service: ServiceEntry,
    /// Its destinations.
    pub destinations: Vec<DestinationEntry>,
}

impl Client {
    /// A client in the caller's network namespace, with default options.
    pub fn new() -> Result<Self, Error> {
        Client::with_options(ClientOptions::default())
    }

    /// A client in the caller's network namespace.
    pub fn with_options(opts: ClientOptions) -> Result<Self, Error> {
        let sock = NlSocket::open().map_err(|source| Error::Io {
            kind: RequestKind::ResolveFamily,
            source,
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
        let io = |source| Error::Io {
            kind: RequestKind::ResolveFamily,
            source,
        };
        sock.set_timeout(opts.timeout).map_err(io)?;
        let granted = sock.set_receive_buffer(opts.socket_buffer).map_err(io)?;
        Ok(Client {
            sock,
            family: None,
            seq: 0,
            max_batch_requests: (granted / REPLY_TRUESIZE / 2).max(1),
            rx: vec![0; opts.recv_buffer * DUMP_DATAGRAMS],
            tx: Vec::with_capacity(opts.batch_bytes + 4096),
            opts,
            netns,
        })
    }

    /// The options in force.
    pub fn options(&self) -> &ClientOptions {
        &self.opts
    }

    pub(crate) fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1).max(1);
        self.seq
    }

    /// The IPVS family id, resolved on first use.
    pub fn family_id(&mut self) -> Result<u16, Error> {
        if let Some(id) = self.family {
            return Ok(id);
        }
        let id = self.resolve_family()?;
        self.family = Some(id);
        Ok(id)
    }

    fn resolve_family(&mut self) -> Result<u16, Error> {
        let kind = RequestKind::ResolveFamily;
        let seq = self.next_seq();
        self.tx.clear();
        frame::push_get_family(&mut self.tx, IPVS_GENL_NAME, seq, NLM_F_REQUEST | NLM_F_ACK);
        self.sock
            .send(&self.tx)
            .map_err(|e| self.io_error(kind, e))?;
        let mut id = None;
        loop {
            let n = self.recv(kind)?;
            for f in frame::frames(&self.rx[..n], 0) {
                let f = f.map_err(|detail| Error::Decode { kind, detail })?;
                if f.seq != seq {
                    continue;
                }
                match f.reply {
                    Reply::FamilyId(v) => id = Some(v),
                    Reply::Error(libc::ENOENT) => return Err(Error::Unavailable),
                    Reply::Error(e) => return Err(Error::kernel(kind, IPVS_GENL_NAME, e)),
                    Reply::Ack => {
                        return id.ok_or_else(|| Error::Decode {
                            kind,
                            detail: "family lookup acknowledged without an id".into(),
                        })
                    }
                    _ => {}
                }
            }
        }
    }

    pub(crate) fn io_error(&self, kind: RequestKind, source: std::io::Error) -> Error {
        if matches!(
            source.raw_os_error(),
            Some(libc::EAGAIN) | Some(libc::ETIMEDOUT)
        ) {
            return Error::Timeout {
                kind,
                timeout: self.opts.timeout,
            };
        }
        Error::Io { kind, source }
    }

    /// Receives one datagram into the first receive buffer's worth of
    /// `rx`.
    pub(crate) fn recv(&mut self, kind: RequestKind) -> Result<usize, Error> {
        self.recv_one().map_err(|e| self.io_error(kind, e))
    }

    /// [`Client::recv`] with the socket's own error. Every receive but a
    /// dump's reads one receive buffer's worth: the kernel sizes what it
    /// sends this socket from the largest buffer it was ever offered.
    pub(crate) fn recv_one(&mut self) -> std::io::Result<usize> {
        self.sock.recv(&mut self.rx[..self.opts.recv_buffer])
    }

    /// Sends one request and collects its reply messages (none for a plain
    /// set; one for a get; many for a dump), parsed into owned attributes.
    fn transact(
        &mut self,
        kind: RequestKind,
        target: &dyn Fn() -> String,
        msg: IpvsMessage,
    ) -> Result<Vec<IpvsMessage>, Error> {
        self.exchange(
            kind,
            target,
            |out, family, seq, flags| frame::push_request(out, family, seq, flags, msg.clone()),
            |command, attrs, out| {
                out.push(frame::decode(command, attrs)?);
                Ok(())
            },
        )
    }

    /// Sends the request `write` appends (given the family id, sequence
    /// number and flags) and hands each IPVS reply (its command and
    /// attribute bytes) to `decode`, which appends what it decodes to the
    /// list returned, until the dump's `NLMSG_DONE` or the
    /// get's or set's ACK. Retries once with a freshly resolved family id
    /// if the id went stale (module reloaded).
    pub(crate) fn exchange<T>(
        &mut self,
        kind: RequestKind,
        target: &dyn Fn() -> String,
        write: impl Fn(&mut Vec<u8>, u16, u32, u16),
        decode: impl Fn(u8, &[u8], &mut Vec<T>) -> Result<(), String>,
    ) -> Result<Vec<T>, Error> {
        match self.exchange_once(kind, target, &write, &decode) {
            Err(Error::Kernel {
                errno: libc::ENOENT,
                ..
            })
            | Err(Error::Kernel {
                errno: libc::EOPNOTSUPP,
                ..
            }) if self.family_changed()? => self.exchange_once(kind, target, &write, &decode),
            other => other,
        }
    }

    fn family_changed(&mut self) -> Result<bool, Error> {
        let old = self.family;
        let new = self.resolve_family()?;
        self.family = Some(new);
        Ok(old != Some(new))
    }

    fn exchange_once<T>(
        &mut self,
        kind: RequestKind,
        target: &dyn Fn() -> String,
        write: &impl Fn(&mut Vec<u8>, u16, u32, u16),
        decode: &impl Fn(u8, &[u8], &mut Vec<T>) -> Result<(), String>,
    ) -> Result<Vec<T>, Error> {
        let family = self.family_id()?;
        let dump = matches!(
            kind,
            RequestKind::ListServices | RequestKind::ListDestinations | RequestKind::ListDaemons
        );
        let seq = self.next_seq();
        let flags = if dump {
            NLM_F_REQUEST | NLM_F_DUMP
        } else {
            NLM_F_REQUEST | NLM_F_ACK
        };
        self.tx.clear();
        write(&mut self.tx, family, seq, flags);
        self.sock
            .send(&self.tx)
            .map_err(|e| self.io_error(kind, e))?;
        let mut out = Vec::new();
        let segment = self.opts.recv_buffer;
        let mut lens = [0; DUMP_DATAGRAMS];
        loop {
            let got = self
                .sock
                .recv_many(&mut self.rx, segment, &mut lens)
                .map_err(|e| self.io_error(kind, e))?;
            for (slot, &n) in lens[..got].iter().enumerate() {
                let datagram = &self.rx[slot * segment..slot * segment + n];
                // Room for every data message of the datagram at once (a dump's
                // part is typically all of a service's destinations).
                out.reserve(frame::data_message_count(datagram));
                for f in frame::frames(datagram, family) {
                    let f = f.map_err(|detail| Error::Decode { kind, detail })?;
                    if f.seq != seq {
                        continue; // a late reply to an earlier, abandoned request
                    }
                    match f.reply {
                        Reply::Data { command, attrs } => {
                            // A get's single reply is followed by its ACK; a
                            // dump's parts (NLM_F_MULTI) by NLMSG_DONE.
                            decode(command, attrs, &mut out)
                                .map_err(|detail| Error::Decode { kind, detail })?;
                        }
                        Reply::Done => return Ok(out),
                        Reply::Ack if !dump => return Ok(out),
                        Reply::Error(e) => return Err(Error::kernel(kind, target(), e)),
                        _ => {}
                    }
                }
            }
        }
    }

    fn set(&mut self, request: &Request) -> Result<(), Error> {
        request.validate()?;
        self.transact(request.kind(), &|| request.target(), request.to_message())?;
        Ok(())
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
        let replies = self.transact(
            kind,
            &String::new,
            IpvsMessage::new(IpvsCommand::GetInfo, vec![]),
        )?;
        let first = replies.first().ok_or_else(|| Error::Decode {
            kind,
            detail: "no reply".into(),
        })?;
        decode::info(&first.attrs).map_err(|detail| Error::Decode { kind, detail })
    }

    /// The connection timeouts.
    pub fn timeouts(&mut self) -> Result<Timeouts, Error> {
        let kind = RequestKind::GetTimeouts;
        let replies = self.transact(
            kind,
            &String::new,
            IpvsMessage::new(IpvsCommand::GetConfig, vec![]),
        )?;
        let first = replies.first().ok_or_else(|| Error::Decode {
            kind,
            detail: "no reply".into(),
        })?;
        Ok(decode::timeouts(&first.attrs))
    }

    /// The running sync daemons (master first).
    pub fn sync_daemons(&mut self) -> Result<Vec<SyncDaemon>, Error> {
        let kind = RequestKind::ListDaemons;
        let replies = self.transact(
            kind,
            &String::new,
            IpvsMessage::new(IpvsCommand::GetDaemon, vec![]),
        )?;
        replies
            .iter()
            .map(|m| decode::sync_daemon(&m.attrs).map_err(|detail| Error::Decode { kind, detail }))
            .collect()
    }

    /// The totals of the client's namespace: counters since the last zero
    /// and rates, as `/proc/net/ip_vs_stats` of that namespace reports
    /// them (netlink has no command for them). Read from a short-lived
    /// thread inside the namespace when the caller is elsewhere; no thread
    /// of the caller moves.
    pub fn totals(&self) -> Result<Stats, Error> {
        let kind = RequestKind::Totals;
        let netns = self.netns.as_ref().ok_or_else(|| Error::Io {
            kind,
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the client's namespace is unknown (/proc was not mounted)",
            ),
        })?;
        let text = netns
            .read_proc_net("ip_vs_stats")
            .map_err(|source| match source.kind() {
                std::io::ErrorKind::NotFound => Error::Unavailable,
                _ => Error::Io { kind, source },
            })?;
        decode::proc_stats(&text).map_err(|detail| Error::Decode { kind, detail })
    }
}
