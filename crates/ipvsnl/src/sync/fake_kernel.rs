//! A scripted IPVS kernel for the sync engine's tests: a [`Transport`]
//! that answers a client's datagrams as the kernel's IPVS family does (a
//! table of services and destinations with connection counts; gets, dumps
//! and changes, refused where the kernel refuses them), plus the faults a
//! test asks for: a change refused, changes held back unsent, a kernel
//! that stops answering, the module reloaded under the client.
//!
//! Time is not real: a receive that would wait for a reply that never
//! comes returns at once and adds its wait to [`FakeKernel::waited`].

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::time::Duration;

use ipvsnl_wire::netlink_packet_core::{
    NLMSG_DONE, NLMSG_ERROR, NLMSG_NOOP, NLM_F_ACK, NLM_F_DUMP, NLM_F_MULTIPART,
};
use ipvsnl_wire::write::{begin_ipvs_message, begin_nest, end_message, end_nest, push_attr};
use ipvsnl_wire::{DestAttr, IpvsCommand, IPVS_CMD_ATTR_DEST};

use crate::client_core::ClientCore;
use crate::decode::{destination_reply, service_reply, Detail};
use crate::proto::frame::GENL_ID_CTRL;
use crate::proto::Wait;
use crate::request::{addr_bytes, push_service_nest};
use crate::transport::netns::NetnsHandle;
use crate::transport::{Received, Transport};
use crate::{ClientOptions, Destination, Request, Service, ServiceKey};

/// The clients' reply timeout.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(5);

/// One destination as the fake kernel holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FakeDest {
    pub(crate) destination: Destination,
    pub(crate) active: u32,
    pub(crate) inactive: u32,
    pub(crate) persistent: u32,
}

/// A request the fake kernel took (a change) or answered (a read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seen {
    Change(Request),
    GetService(ServiceKey),
    ListServices,
    ListDestinations(ServiceKey),
}

/// The verdict on a change, beside what the table says.
type Refusal = Box<dyn FnMut(&Request) -> i32 + Send>;

/// The kernel's side of one client socket.
pub(crate) struct FakeKernel {
    /// The IPVS family id now.
    pub(crate) family: u16,
    /// The table.
    pub(crate) services: BTreeMap<ServiceKey, (Service, Vec<FakeDest>)>,
    /// An errno for a change (0: apply it as the table allows).
    pub(crate) refuse: Refusal,
    /// While set, a datagram carrying a change is never sent: its send
    /// waits for ever.
    pub(crate) hold_changes: bool,
    /// Once it took this many changes, the kernel answers nothing more
    /// (the next change and everything after it are taken, unanswered).
    pub(crate) answered_changes: Option<usize>,
    /// When set, the module is reloaded before the next change is taken:
    /// a new family id, an empty table.
    pub(crate) reload_before_change: bool,
    /// What the kernel took, in order.
    pub(crate) seen: Vec<Seen>,
    /// How long receives waited for replies that never came.
    pub(crate) waited: Duration,
    stalled: bool,
    queue: VecDeque<Vec<u8>>,
}

impl FakeKernel {
    /// A kernel with an empty table.
    pub(crate) fn new() -> Self {
        FakeKernel {
            family: 0x20,
            services: BTreeMap::new(),
            refuse: Box::new(|_| 0),
            hold_changes: false,
            answered_changes: None,
            reload_before_change: false,
            seen: Vec::new(),
            waited: Duration::ZERO,
            stalled: false,
            queue: VecDeque::new(),
        }
    }

    /// A client's connection to this kernel, in the test's own namespace.
    pub(crate) fn connect(self) -> ClientCore<FakeKernel> {
        let netns = NetnsHandle::current().expect("the test's namespace file");
        self.connect_in(Some(netns))
    }

    /// A client's connection to this kernel, of namespace `netns`.
    pub(crate) fn connect_in(self, netns: Option<NetnsHandle>) -> ClientCore<FakeKernel> {
        let opts = ClientOptions::default().with_timeout(TIMEOUT);
        // No socket-option interface here: listings check themselves by
        // dumping again, as on a host without one.
        let no_sockopt = Err(std::io::Error::from_raw_os_error(libc::EAFNOSUPPORT));
        ClientCore::new(self, 1 << 20, opts, netns, no_sockopt)
    }

    /// Adds a service with destinations (weight, active connections).
    pub(crate) fn put(&mut self, service: Service, dests: &[(Destination, u32)]) {
        let dests = dests
            .iter()
            .map(|&(destination, active)| FakeDest {
                destination,
                active,
                inactive: 0,
                persistent: 0,
            })
            .collect();
        self.services.insert(service.key, (service, dests));
    }

    /// A destination of a service, if there.
    pub(crate) fn dest(&self, key: &ServiceKey, addr: IpAddr) -> Option<&FakeDest> {
        self.services
            .get(key)?
            .1
            .iter()
            .find(|d| d.destination.addr == addr)
    }

    /// The changes taken so far.
    pub(crate) fn changes(&self) -> impl Iterator<Item = &Request> {
        self.seen.iter().filter_map(|s| match s {
            Seen::Change(r) => Some(r),
            _ => None,
        })
    }

    /// How many single-service reads (read-backs) were taken, answered or
    /// not.
    pub(crate) fn reads(&self) -> usize {
        self.seen
            .iter()
            .filter(|s| matches!(s, Seen::GetService(_)))
            .count()
    }

    /// Takes a datagram: `None` if it was held back (not sent).
    fn take(&mut self, datagram: &[u8]) -> Option<()> {
        let messages = messages(datagram);
        let has_change = messages
            .iter()
            .any(|m| m.kind == self.family && is_change(m.command));
        if self.hold_changes && has_change {
            return None;
        }
        if self.reload_before_change && has_change {
            self.reload_before_change = false;
            self.family += 1;
            self.services.clear();
        }
        for m in messages {
            self.message(&m);
        }
        Some(())
    }

    fn message(&mut self, m: &Message<'_>) {
        if self.stalled && m.kind != self.family {
            return;
        }
        if m.kind == GENL_ID_CTRL {
            let mut d = Vec::new();
            header(&mut d, GENL_ID_CTRL, 0, m.seq, 4 + 8);
            d.extend_from_slice(&[1, 2, 0, 0]);
            d.extend_from_slice(&6u16.to_ne_bytes());
            d.extend_from_slice(&1u16.to_ne_bytes());
            d.extend_from_slice(&self.family.to_ne_bytes());
            d.extend_from_slice(&[0, 0]);
            self.queue.push_back(d);
            return self.ack(m, 0);
        }
        if m.kind == NLMSG_NOOP {
            return self.ack(m, 0);
        }
        if m.kind != self.family {
            // A stale id: no such family.
            return self.queue.push_back(error(m.seq, libc::ENOENT));
        }
        let command = IpvsCommand::from(m.command);
        let dump = m.flags & NLM_F_DUMP == NLM_F_DUMP;
        let seen = match command {
            IpvsCommand::GetService if dump => Seen::ListServices,
            IpvsCommand::GetService => Seen::GetService(key_of(m.attrs)),
            IpvsCommand::GetDest => Seen::ListDestinations(key_of(m.attrs)),
            other => match request_of(other, m.attrs) {
                Some(r) => Seen::Change(r),
                None => return self.ack(m, libc::EINVAL),
            },
        };
        self.seen.push(seen.clone());
        if let Seen::Change(_) = seen {
            match self.answered_changes.as_mut() {
                Some(0) => self.stalled = true,
                Some(n) => *n -= 1,
                None => {}
            }
        }
        if self.stalled {
            return;
        }
        match seen {
            Seen::ListServices => {
                let parts: Vec<Vec<u8>> = self
                    .services
                    .values()
                    .map(|(s, _)| service_message(self.family, m.seq, s))
                    .collect();
                self.dump(m.seq, parts);
            }
            Seen::GetService(key) => match self.services.get(&key) {
                Some((s, _)) => {
                    let mut d = service_message(self.family, m.seq, s);
                    d[6..8].copy_from_slice(&0u16.to_ne_bytes());
                    self.queue.push_back(d);
                    self.ack(m, 0);
                }
                None => self.queue.push_back(error(m.seq, libc::ESRCH)),
            },
            Seen::ListDestinations(key) => match self.services.get(&key) {
                Some((_, dests)) => {
                    let parts = dests
                        .iter()
                        .map(|d| dest_message(self.family, m.seq, d))
                        .collect();
                    self.dump(m.seq, parts);
                }
                None => self.queue.push_back(error(m.seq, libc::ESRCH)),
            },
            Seen::Change(r) => {
                let errno = match (self.refuse)(&r) {
                    0 => self.change(&r),
                    e => e,
                };
                self.ack(m, errno);
            }
        }
    }

    /// Applies a change to the table, or says why the kernel would not.
    fn change(&mut self, r: &Request) -> i32 {
        fn svc<'a>(t: &'a mut FakeKernel, k: &ServiceKey) -> Option<&'a mut Vec<FakeDest>> {
            t.services.get_mut(k).map(|e| &mut e.1)
        }
        match r {
            Request::AddService(s) if self.services.contains_key(&s.key) => libc::EEXIST,
            Request::AddService(s) => {
                self.services.insert(s.key, ((**s).clone(), Vec::new()));
                0
            }
            Request::EditService(s) => match self.services.get_mut(&s.key) {
                Some(e) => {
                    e.0 = (**s).clone();
                    0
                }
                None => libc::ESRCH,
            },
            Request::DeleteService(k) => match self.services.remove(k) {
                Some(_) => 0,
                None => libc::ESRCH,
            },
            Request::AddDestination(k, d) => match svc(self, k) {
                None => libc::ESRCH,
                Some(ds) if ds.iter().any(|x| x.destination.addr == d.addr) => libc::EEXIST,
                Some(ds) => {
                    ds.push(FakeDest {
                        destination: *d,
                        active: 0,
                        inactive: 0,
                        persistent: 0,
                    });
                    ds.sort_by_key(|x| (x.destination.addr, x.destination.port));
                    0
                }
            },
            Request::EditDestination(k, d) => match svc(self, k) {
                None => libc::ESRCH,
                Some(ds) => match ds.iter_mut().find(|x| x.destination.addr == d.addr) {
                    Some(x) => {
                        x.destination = *d;
                        0
                    }
                    None => libc::ENOENT,
                },
            },
            Request::DeleteDestination(k, a, p) => match svc(self, k) {
                None => libc::ESRCH,
                Some(ds) => {
                    let before = ds.len();
                    ds.retain(|x| (x.destination.addr, x.destination.port) != (*a, *p));
                    if ds.len() == before {
                        libc::ENOENT
                    } else {
                        0
                    }
                }
            },
            _ => libc::EINVAL,
        }
    }

    /// An ACK (errno 0, if asked for) or an error for message `m`.
    fn ack(&mut self, m: &Message<'_>, errno: i32) {
        if errno != 0 || m.flags & NLM_F_ACK != 0 {
            self.queue.push_back(error(m.seq, errno));
        }
    }

    /// The parts of a dump, a few a datagram, then its `NLMSG_DONE`.
    fn dump(&mut self, seq: u32, parts: Vec<Vec<u8>>) {
        for chunk in parts.chunks(8) {
            self.queue.push_back(chunk.concat());
        }
        let mut done = Vec::new();
        header(&mut done, NLMSG_DONE, NLM_F_MULTIPART, seq, 4);
        done.extend_from_slice(&0i32.to_ne_bytes());
        self.queue.push_back(done);
    }
}

impl Transport for FakeKernel {
    fn send(&mut self, datagram: &[u8]) -> impl Future<Output = io::Result<()>> + Send {
        let taken = self.take(datagram);
        async move {
            match taken {
                Some(()) => Ok(()),
                None => std::future::pending().await,
            }
        }
    }

    fn receive(
        &mut self,
        rx: &mut [u8],
        segment: usize,
        got: &mut [Received],
        wait: Wait,
    ) -> impl Future<Output = io::Result<usize>> + Send {
        let mut n = 0;
        while n < got.len() {
            let Some(d) = self.queue.pop_front() else {
                break;
            };
            let len = d.len().min(segment);
            rx[n * segment..n * segment + len].copy_from_slice(&d[..len]);
            got[n] = Received {
                len: d.len(),
                truncated: d.len() > segment,
            };
            n += 1;
        }
        let result = if n > 0 {
            Ok(n)
        } else {
            if let Wait::Up(d) = wait {
                self.waited += d;
            }
            Err(io::Error::from_raw_os_error(libc::EAGAIN))
        };
        std::future::ready(result)
    }
}

/// One netlink message of a datagram the client sent.
struct Message<'a> {
    kind: u16,
    flags: u16,
    seq: u32,
    command: u8,
    attrs: &'a [u8],
}

fn messages(datagram: &[u8]) -> Vec<Message<'_>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 16 <= datagram.len() {
        let word = |i: usize| u32::from_ne_bytes(datagram[i..i + 4].try_into().unwrap());
        let half = |i: usize| u16::from_ne_bytes([datagram[i], datagram[i + 1]]);
        let len = (word(at) as usize).clamp(16, datagram.len() - at);
        let payload = &datagram[at + 16..at + len];
        out.push(Message {
            kind: half(at + 4),
            flags: half(at + 6),
            seq: word(at + 8),
            command: payload.first().copied().unwrap_or(0),
            attrs: payload.get(4..).unwrap_or(&[]),
        });
        at += (len + 3) & !3;
    }
    out
}

fn is_change(command: u8) -> bool {
    matches!(
        IpvsCommand::from(command),
        IpvsCommand::NewService
            | IpvsCommand::SetService
            | IpvsCommand::DelService
            | IpvsCommand::NewDest
            | IpvsCommand::SetDest
            | IpvsCommand::DelDest
    )
}

fn key_of(attrs: &[u8]) -> ServiceKey {
    service_reply(attrs, Detail::Settings)
        .expect("the client sent a service nest")
        .service
        .key
}

/// The change a message asks for.
fn request_of(command: IpvsCommand, attrs: &[u8]) -> Option<Request> {
    let service = || {
        service_reply(attrs, Detail::Settings)
            .ok()
            .map(|e| e.service)
    };
    let dest = |k: &ServiceKey| {
        destination_reply(attrs, k.family(), Detail::Settings)
            .ok()
            .map(|e| e.destination)
    };
    Some(match command {
        IpvsCommand::NewService => Request::AddService(Box::new(service()?)),
        IpvsCommand::SetService => Request::EditService(Box::new(service()?)),
        IpvsCommand::DelService => Request::DeleteService(service()?.key),
        IpvsCommand::NewDest => {
            let k = service()?.key;
            Request::AddDestination(k, dest(&k)?)
        }
        IpvsCommand::SetDest => {
            let k = service()?.key;
            Request::EditDestination(k, dest(&k)?)
        }
        IpvsCommand::DelDest => {
            let k = service()?.key;
            let d = dest(&k)?;
            Request::DeleteDestination(k, d.addr, d.port)
        }
        _ => return None,
    })
}

fn header(out: &mut Vec<u8>, kind: u16, flags: u16, seq: u32, payload: usize) {
    out.extend_from_slice(&((16 + payload) as u32).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(&flags.to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
}

/// An `NLMSG_ERROR` answering `seq` (0: an ACK), as to a CAP_ACK socket.
fn error(seq: u32, errno: i32) -> Vec<u8> {
    let mut v = Vec::new();
    header(&mut v, NLMSG_ERROR, 0, seq, 4 + 16);
    v.extend_from_slice(&(-errno).to_ne_bytes());
    header(&mut v, 0, 0, seq, 0);
    v
}

/// A dump part (or, flags cleared, a get's reply) holding a service.
fn service_message(family: u16, seq: u32, s: &Service) -> Vec<u8> {
    let mut out = Vec::new();
    let m = begin_ipvs_message(
        &mut out,
        family,
        NLM_F_MULTIPART,
        seq,
        IpvsCommand::NewService,
    );
    push_service_nest(&mut out, &s.key, Some(s));
    end_message(&mut out, m);
    out
}

/// A dump part holding a destination, its connection counts with it.
fn dest_message(family: u16, seq: u32, d: &FakeDest) -> Vec<u8> {
    let mut out = Vec::new();
    let m = begin_ipvs_message(&mut out, family, NLM_F_MULTIPART, seq, IpvsCommand::NewDest);
    let n = begin_nest(&mut out, IPVS_CMD_ATTR_DEST);
    let x = &d.destination;
    for a in [
        DestAttr::AddressFamily(x.family().to_raw()),
        DestAttr::Address(addr_bytes(&x.addr)),
        DestAttr::Port(x.port),
        DestAttr::ForwardMethod(x.forward.to_raw()),
        DestAttr::Weight(x.weight),
        DestAttr::UpperThreshold(x.upper_threshold),
        DestAttr::LowerThreshold(x.lower_threshold),
        DestAttr::ActiveConns(d.active),
        DestAttr::InactiveConns(d.inactive),
        DestAttr::PersistentConns(d.persistent),
    ] {
        push_attr(&mut out, &a);
    }
    end_nest(&mut out, n);
    end_message(&mut out, m);
    out
}
