//! One client's netlink socket into the emulated kernel: what the kernel's
//! `netlink_rcv_skb` and generic netlink do with a datagram sent (each
//! message in order, an error for each failure, an ACK for each success
//! that asked for one, a dump started or refused with `EBUSY`), and the
//! receive queue the client reads (dump parts written as it reads).

use std::collections::VecDeque;
use std::future::Future;
use std::io;

use ipvsnl_wire::netlink_packet_core::{NLM_F_ACK, NLM_F_REQUEST};
use ipvsnl_wire::IpvsCommand;

use super::attrs;
use super::dump::{Dump, Listing};
use super::encode;
use super::faults::{Fault, Taken};
use super::kernel::{Kernel, State};
use super::messages::{Message, Messages};
use super::record;
use super::run::{check, doit, foreign};
use super::socket_faults::{self, Congestion};
use crate::proto::Wait;
use crate::transport::{Received, Transport};
use crate::RequestKind;

const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const NLMSG_MIN_TYPE: u16 = 0x10;

/// A datagram queued for the reader.
#[derive(Debug)]
struct Datagram {
    bytes: Vec<u8>,
    /// Delivered truncated whatever the reader's buffer.
    cut: bool,
}

/// A client's socket in one namespace of an emulated kernel.
#[derive(Debug)]
pub(crate) struct Port {
    kernel: Kernel,
    namespace: String,
    pid: u32,
    queue: VecDeque<Datagram>,
    dump: Option<Box<Dump>>,
    /// An error the next receive reports (`ENOBUFS`).
    error: Option<i32>,
    /// The largest receive buffer used so far.
    max_recv: usize,
    /// Answers nothing more but family lookups.
    stalled: bool,
    /// Its receive queue's limit and congestion, a receive to fail.
    congestion: Congestion,
}

/// What became of a datagram sent.
enum Sent {
    Taken,
    /// A fault holds it back: the send never completes.
    Held,
    /// The socket refused it with this errno.
    Failed(i32),
}

impl Port {
    /// A new socket of namespace `namespace`.
    pub(crate) fn open(kernel: &Kernel, namespace: &str) -> Self {
        let pid = {
            let mut s = kernel.lock();
            s.ns(namespace);
            s.new_pid()
        };
        Port {
            kernel: kernel.clone(),
            namespace: namespace.to_string(),
            pid,
            queue: VecDeque::new(),
            dump: None,
            error: None,
            max_recv: 0,
            stalled: false,
            congestion: Congestion::default(),
        }
    }

    /// A new socket of the same namespace (a client's fresh socket).
    #[cfg_attr(not(feature = "emulator"), allow(dead_code))]
    pub(crate) fn reopened(&self) -> Self {
        Port::open(&self.kernel, &self.namespace)
    }

    /// The totals of its namespace.
    #[cfg_attr(not(feature = "emulator"), allow(dead_code))]
    pub(crate) fn totals(&self) -> crate::Stats {
        super::Netns {
            kernel: self.kernel.clone(),
            name: self.namespace.clone(),
        }
        .totals()
    }

    /// The largest receive buffer it was read with (what the kernel sizes
    /// its dump parts by).
    #[cfg(test)]
    pub(crate) fn largest_receive(&self) -> usize {
        self.max_recv
    }

    /// Its namespace's identity (see [`NsTable::serial`](super::table::NsTable)).
    pub(crate) fn serial(&self) -> u64 {
        self.kernel.lock().ns(&self.namespace).serial
    }

    /// Whether a dump is under way on the socket.
    #[cfg(test)]
    pub(crate) fn dump_open(&self) -> bool {
        self.dump.is_some()
    }

    /// Ends a [`Fault::Stall`] and a [`Fault::ReceiveFails`] yet to
    /// strike: the socket answers again (what it took meanwhile stays
    /// unanswered), for tests of a driver that outlives a hang.
    #[cfg(test)]
    pub(crate) fn recover(&mut self) {
        self.stalled = false;
        self.congestion.fail_receive = None;
    }

    /// Takes a datagram, unless a fault holds it back or fails it.
    fn take(&mut self, datagram: &[u8]) -> Sent {
        let kernel = self.kernel.clone();
        let mut s = kernel.lock();
        if !s.logging && s.faults.is_empty() {
            // Nothing to record, nothing to strike: no description.
            for m in Messages(datagram) {
                self.message(&mut s, &m, None);
            }
            return Sent::Taken;
        }
        let msgs: Vec<Message<'_>> = Messages(datagram).collect();
        let mut taken: Vec<Taken> = msgs.iter().map(|m| self.describe(&s, m)).collect();
        let mut faults: Vec<Option<Fault>> = Vec::with_capacity(msgs.len());
        for t in &taken {
            faults.push(if s.faults.is_empty() {
                None
            } else {
                s.fault_for(t)
            });
        }
        if faults.iter().any(|f| matches!(f, Some(Fault::Hold))) {
            return Sent::Held;
        }
        if let Some(Fault::SendFails(e)) = faults
            .iter()
            .flatten()
            .find(|f| matches!(f, Fault::SendFails(_)))
        {
            return Sent::Failed(*e);
        }
        for ((m, t), fault) in msgs.iter().zip(&mut taken).zip(faults) {
            t.errno = self.message(&mut s, m, fault);
        }
        if s.logging {
            s.log.extend(taken);
        }
        Sent::Taken
    }

    /// What a message asks, for the record and the faults' conditions.
    fn describe(&self, s: &State, m: &Message<'_>) -> Taken {
        let is_ipvs = s.family == Some(m.kind);
        let command = IpvsCommand::from(m.command());
        let record = s.logging || !s.faults.is_empty();
        let (kind, request, service) = if m.kind == GENL_ID_CTRL {
            (Some(RequestKind::ResolveFamily), None, None)
        } else if is_ipvs && record {
            let request = record::request(command, m.attrs());
            let service = match &request {
                Some(r) => r.service_key(),
                None => record::service(m.attrs()),
            };
            (record::kind(command, m.is_dump()), request, service)
        } else if is_ipvs {
            (record::kind(command, m.is_dump()), None, None)
        } else {
            (None, None, None)
        };
        Taken {
            namespace: self.namespace.clone(),
            kind,
            command: if m.kind == GENL_ID_CTRL {
                0
            } else {
                m.command()
            },
            dump: m.is_dump(),
            request,
            service,
            errno: None,
            bytes: m.bytes.to_vec(),
        }
    }

    /// Runs one message under `fault`; its errno (None: unanswered).
    fn message(&mut self, s: &mut State, m: &Message<'_>, fault: Option<Fault>) -> Option<i32> {
        let mut post = None;
        match fault {
            Some(Fault::Refuse(e)) => {
                self.push(error_datagram(m, e, self.pid));
                return Some(e);
            }
            Some(Fault::Stall) => {
                self.stalled = true;
                return None;
            }
            Some(Fault::Unload) => s.unload(),
            Some(Fault::Reload) => {
                s.unload();
                s.load();
            }
            Some(Fault::Foreign(requests)) => {
                foreign(s, &self.namespace, &requests);
            }
            Some(Fault::QueueLimit(n)) => self.congestion.limit = Some(n),
            Some(Fault::Stray) => {
                let family = s.family.unwrap_or(GENL_ID_CTRL);
                self.queue.push_back(Datagram {
                    bytes: socket_faults::stray(family, self.pid),
                    cut: false,
                });
            }
            other => post = other,
        }
        if self.stalled && m.kind != GENL_ID_CTRL {
            return None;
        }
        let mut replies = Vec::new();
        let errno = self.run(s, m, &mut replies);
        if errno != 0 {
            replies.push(error_datagram(m, errno, self.pid));
        } else if m.flags & NLM_F_ACK != 0 && !(m.is_dump() && m.kind != GENL_ID_CTRL) {
            replies.push(error_datagram(m, 0, self.pid));
        }
        match post {
            Some(Fault::Overrun) => {
                self.congestion.congested = true;
                self.error = Some(libc::ENOBUFS);
                None
            }
            Some(Fault::LoseReply) => {
                if errno == 0 && m.is_dump() && m.kind != GENL_ID_CTRL {
                    // Every part of it, to the DONE.
                    self.dump = None;
                }
                None
            }
            Some(Fault::Unanswered) if errno == 0 => Some(libc::EINTR),
            Some(fault @ (Fault::Truncate | Fault::Garbage)) => {
                let mut replies = replies.into_iter();
                if let Some(first) = replies.next() {
                    let (bytes, cut) = match fault {
                        Fault::Garbage => (socket_faults::garbage(), false),
                        _ => (first, true),
                    };
                    self.queue.push_back(Datagram { bytes, cut });
                }
                replies.for_each(|r| self.push(r));
                Some(errno)
            }
            Some(Fault::ReceiveFails(e)) => {
                replies.into_iter().for_each(|r| self.push(r));
                self.congestion.fail_receive = Some(e);
                Some(errno)
            }
            _ => {
                replies.into_iter().for_each(|r| self.push(r));
                Some(errno)
            }
        }
    }

    /// Queues a reply, or drops it if the queue is full or congested (an
    /// overrun: the next receive fails with `ENOBUFS`).
    fn push(&mut self, bytes: Vec<u8>) {
        if self.congestion.admits(self.queue.len()) {
            self.queue.push_back(Datagram { bytes, cut: false });
        } else {
            self.error = Some(libc::ENOBUFS);
        }
    }

    /// Runs one message; its errno (0: done), its replies into `replies`.
    fn run(&mut self, s: &mut State, m: &Message<'_>, replies: &mut Vec<Vec<u8>>) -> i32 {
        if m.flags & NLM_F_REQUEST == 0 || m.kind < NLMSG_MIN_TYPE {
            return 0;
        }
        if m.bytes.len() < 20 {
            return libc::EINVAL;
        }
        if m.kind == GENL_ID_CTRL {
            return self.controller(s, m, replies);
        }
        match check(s, m) {
            Err(e) => e,
            Ok((family, command)) if m.is_dump() => self.start_dump(s, m, command, family, replies),
            Ok((family, command)) => {
                doit(s, &self.namespace, self.pid, m, family, command, replies)
            }
        }
    }

    fn controller(&mut self, s: &mut State, m: &Message<'_>, replies: &mut Vec<Vec<u8>>) -> i32 {
        if m.command() != CTRL_CMD_GETFAMILY || m.is_dump() {
            return libc::EOPNOTSUPP;
        }
        let Ok(a) = attrs::parse(m.attrs(), &attrs::CTRL) else {
            return libc::EINVAL;
        };
        let mut found = None;
        let mut errno = libc::EINVAL;
        if let Some(id) = a.u16(1) {
            found = s.family.filter(|&f| f == id);
            errno = libc::ENOENT;
        }
        if let Some(name) = a.string(2) {
            if name == ipvsnl_wire::IPVS_GENL_NAME {
                if s.family.is_none() && s.autoload {
                    s.load();
                }
                found = s.family;
            } else {
                found = None;
            }
            errno = libc::ENOENT;
        }
        match found {
            Some(id) => {
                let mut reply = Vec::new();
                encode::family(&mut reply, m.seq, self.pid, id);
                replies.push(reply);
                0
            }
            None => errno,
        }
    }

    fn start_dump(
        &mut self,
        s: &mut State,
        m: &Message<'_>,
        command: IpvsCommand,
        family: u16,
        replies: &mut Vec<Vec<u8>>,
    ) -> i32 {
        if self.dump.is_some() {
            return libc::EBUSY;
        }
        let listing = match command {
            IpvsCommand::GetService => Listing::Services,
            IpvsCommand::GetDest => Listing::Dests(dest_listing_of(m.attrs())),
            _ => Listing::Daemons,
        };
        self.dump = Some(Box::new(Dump::new(
            listing,
            &self.namespace,
            family,
            m.seq,
            self.pid,
        )));
        // A full queue: the first part is written when the reader made room.
        let room = self.congestion.limit.map_or(true, |l| self.queue.len() < l);
        if room && !self.congestion.congested {
            match self.next_part(s) {
                Some(part) if part.cut => self.queue.push_back(part),
                Some(part) => replies.push(part.bytes),
                None => {}
            }
        }
        0
    }

    /// The next part of the dump under way, if one is.
    fn next_part(&mut self, s: &mut State) -> Option<Datagram> {
        let dump = self.dump.as_mut()?;
        let fault = if s.faults.is_empty() {
            None
        } else {
            s.fault_at_part(dump.parts + 1)
        };
        match &fault {
            Some(Fault::Foreign(requests)) => {
                foreign(s, &dump.namespace, requests);
            }
            Some(Fault::DumpQuirk(q)) => dump.quirks.add(q),
            Some(Fault::Stray) => {
                let family = s.family.unwrap_or(GENL_ID_CTRL);
                self.queue.push_back(Datagram {
                    bytes: socket_faults::stray(family, self.pid),
                    cut: false,
                });
            }
            Some(Fault::ReceiveFails(e)) => self.congestion.fail_receive = Some(*e),
            Some(Fault::Overrun) => {
                // The part's buffer could not be had: nothing written (no
                // entry skipped); the next receive after the error tries
                // again.
                self.error = Some(libc::ENOBUFS);
                return None;
            }
            _ => {}
        }
        let mut bytes = Vec::with_capacity(4096);
        let own = s.ns_index(&dump.namespace);
        dump.next_part(&s.namespaces, own, self.max_recv, &mut bytes);
        if dump.finished() {
            self.dump = None;
        }
        match fault {
            Some(Fault::Truncate) => Some(Datagram { bytes, cut: true }),
            Some(Fault::Garbage) => Some(Datagram {
                bytes: socket_faults::garbage(),
                cut: false,
            }),
            _ => Some(Datagram { bytes, cut: false }),
        }
    }

    /// Delivers queued datagrams (see [`Transport::receive`]).
    fn deliver(
        &mut self,
        rx: &mut [u8],
        segment: usize,
        got: &mut [Received],
        wait: Wait,
    ) -> io::Result<usize> {
        self.max_recv = self.max_recv.max(segment);
        if let Some(e) = self.congestion.fail_receive.take() {
            return Err(io::Error::from_raw_os_error(e));
        }
        if let Some(e) = self.error.take() {
            return Err(io::Error::from_raw_os_error(e));
        }
        let kernel = self.kernel.clone();
        let mut s = kernel.lock();
        let mut n = 0;
        // An error a dump part raised ends the receive (recvmmsg returns
        // what it has; the error comes at the next call).
        while n < got.len() && self.error.is_none() && self.congestion.fail_receive.is_none() {
            if self.queue.is_empty() && self.dump.is_some() && !self.stalled {
                if let Some(part) = self.next_part(&mut s) {
                    self.queue.push_back(part);
                }
            }
            let Some(d) = self.queue.pop_front() else {
                break;
            };
            let len = d.bytes.len().min(segment);
            let at = n * segment;
            rx[at..at + len].copy_from_slice(&d.bytes[..len]);
            got[n] = Received {
                len: d.bytes.len(),
                truncated: d.cut || d.bytes.len() > segment,
            };
            n += 1;
            if self.dump.is_some() && !self.stalled {
                if let Some(part) = self.next_part(&mut s) {
                    self.queue.push_back(part);
                }
            }
        }
        if self.queue.is_empty() {
            // Read empty: a congested socket takes replies again.
            self.congestion.congested = false;
        }
        if n > 0 {
            return Ok(n);
        }
        if let Some(e) = self.error.take() {
            return Err(io::Error::from_raw_os_error(e));
        }
        if let Wait::Up(d) = wait {
            s.waited += d;
        }
        Err(io::Error::from_raw_os_error(libc::EAGAIN))
    }
}

impl Transport for Port {
    fn send(&mut self, datagram: &[u8]) -> impl Future<Output = io::Result<()>> + Send {
        let sent = self.take(datagram);
        async move {
            match sent {
                Sent::Taken => Ok(()),
                Sent::Held => std::future::pending().await,
                Sent::Failed(e) => Err(io::Error::from_raw_os_error(e)),
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
        std::future::ready(self.deliver(rx, segment, got, wait))
    }
}

/// The service a destination dump lists: parsed once, looked up at every
/// part (the kernel parses the same request again each time, to the same
/// result). `None`: a request the kernel answers with an empty dump.
fn dest_listing_of(attrs: &[u8]) -> Option<super::table::SvcId> {
    let top = attrs::parse(attrs, &attrs::CMD).ok()?;
    super::parse::service(top.get(ipvsnl_wire::IPVS_CMD_ATTR_SERVICE), false)
        .ok()
        .map(|(id, _)| id)
}

/// An error (or ACK) datagram answering `m`.
fn error_datagram(m: &Message<'_>, errno: i32, pid: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(36);
    encode::error(&mut out, m.bytes, errno, pid);
    out
}
