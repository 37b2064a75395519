//! A scripted kernel: what the real one does with the datagrams a machine
//! sends (in order, synchronously, one reply datagram per answer, dumps
//! made part by part as the reader reads, one dump per socket), plus the
//! faults a test asks for. No socket: datagrams in, datagrams out.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::io;

use ipvsnl_wire::netlink_packet_core::{
    NLMSG_DONE, NLMSG_ERROR, NLMSG_NOOP, NLM_F_ACK, NLM_F_DUMP, NLM_F_MULTIPART as NLM_F_MULTI,
};

use crate::proto::frame::{frames, Reply, GENL_ID_CTRL, NLM_F_DUMP_INTR};
use crate::proto::{Encode, Input, Limits, Machine, Outcome, Poll, Session, Wait};

/// A test request: an IPVS message whose payload is its index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Req(pub u32);

impl Encode for Req {
    fn encode(&self, out: &mut Vec<u8>, family: u16, seq: u32, flags: u16) {
        message(
            out,
            family,
            flags,
            seq,
            &[&[1, 1, 0, 0], &self.0.to_ne_bytes()],
        );
    }
}

/// Appends a netlink message of these header fields and payload parts.
pub(crate) fn message(out: &mut Vec<u8>, kind: u16, flags: u16, seq: u32, payload: &[&[u8]]) {
    let len: usize = 16 + payload.iter().map(|p| p.len()).sum::<usize>();
    out.extend_from_slice(&(len as u32).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(&flags.to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&4321u32.to_ne_bytes());
    for p in payload {
        out.extend_from_slice(p);
    }
    while out.len() & 3 != 0 {
        out.push(0);
    }
}

/// An `NLMSG_ERROR` answering `seq` (0: an ACK), as to a CAP_ACK socket.
pub(crate) fn error(seq: u32, errno: i32) -> Vec<u8> {
    let mut v = Vec::new();
    let mut orig = Vec::new();
    message(&mut orig, 0, 0, seq, &[]);
    message(
        &mut v,
        NLMSG_ERROR,
        0,
        seq,
        &[&(-errno).to_ne_bytes(), &orig],
    );
    v
}

/// Faults to inject, counted from 1.
#[derive(Debug, Default, Clone)]
pub(crate) struct Faults {
    /// The n-th transmit fails (and is not delivered).
    pub fail_send: Option<usize>,
    /// The n-th receive fails.
    pub fail_recv: Option<usize>,
    /// After this many IPVS requests, the kernel answers nothing more.
    pub hang_after: Option<usize>,
    /// Reply datagrams (by number) dropped as an overflow would.
    pub drop_replies: HashSet<usize>,
    /// The n-th delivered datagram comes truncated.
    pub truncate: Option<usize>,
    /// The n-th delivered datagram is garbage.
    pub garbage: Option<usize>,
    /// A stranger's message comes before every n-th delivered datagram.
    pub stray_every: Option<usize>,
}

/// What the kernel did with each IPVS request it got, by index: the errno
/// of each receipt (0: applied; `EINTR`: handled, answered with nothing).
pub(crate) struct Kernel {
    /// The IPVS family id now.
    pub family: u16,
    /// How many reply datagrams the socket buffer holds.
    pub capacity: usize,
    /// The verdict for request `index` (0: applied).
    pub verdict: Box<dyn Fn(u32) -> i32>,
    /// Receipts: (index, errno).
    pub receipts: Vec<(u32, i32)>,
    /// The faults.
    pub faults: Faults,
    /// Items each dump lists, and how many per part.
    pub dump_items: u32,
    /// Items per dump part.
    pub per_part: u32,
    /// The first this many dumps come marked interrupted.
    pub interrupted_dumps: u32,
    /// The error a dump's DONE carries.
    pub done_errno: i32,
    /// Dump requests answered EBUSY (one was open).
    pub busy: u32,
    /// The family is not registered at all.
    pub unregistered: bool,
    /// A dump's `NLMSG_DONE` comes in the datagram of its last part (as
    /// netlink puts it when the part has room and the family's dump says
    /// it ended), instead of a datagram of its own.
    pub done_in_last_part: bool,
    /// Family lookups are refused with this errno (`EPERM`, say).
    pub refuse_lookup: Option<i32>,
    /// Receives that waited for a reply and got none: each one a whole
    /// time-out on a real socket.
    pub stalls: usize,
    /// How many datagrams one receive takes (a driver's `recvmmsg`): the
    /// first waits, the others come if queued (or made by that read, as a
    /// dump's next part is).
    pub per_receive: usize,
    queue: VecDeque<Vec<u8>>,
    overrun: bool,
    congested: bool,
    /// The open dump: its number, the next item, whether interrupted.
    dump: Option<(u32, u32, bool)>,
    dumps: u32,
    requests: usize,
    transmits: usize,
    receives: usize,
    replies: usize,
    delivered: usize,
}

impl Kernel {
    /// A kernel with family id `family`, room for `capacity` replies,
    /// refusing requests as `verdict` says.
    pub(crate) fn new(
        family: u16,
        capacity: usize,
        verdict: impl Fn(u32) -> i32 + 'static,
    ) -> Self {
        Kernel {
            family,
            capacity,
            verdict: Box::new(verdict),
            receipts: Vec::new(),
            faults: Faults::default(),
            dump_items: 0,
            per_part: 3,
            interrupted_dumps: 0,
            done_errno: 0,
            busy: 0,
            unregistered: false,
            refuse_lookup: None,
            done_in_last_part: false,
            per_receive: 1,
            stalls: 0,
            queue: VecDeque::new(),
            overrun: false,
            congested: false,
            dump: None,
            dumps: 0,
            requests: 0,
            transmits: 0,
            receives: 0,
            replies: 0,
            delivered: 0,
        }
    }

    /// Whether request `index` was received at all.
    pub(crate) fn received(&self, index: u32) -> bool {
        self.receipts.iter().any(|r| r.0 == index)
    }

    /// The last verdict on request `index`.
    pub(crate) fn last_verdict(&self, index: u32) -> Option<i32> {
        self.receipts
            .iter()
            .rev()
            .find(|r| r.0 == index)
            .map(|r| r.1)
    }

    /// A dump is open on the socket.
    pub(crate) fn dump_open(&self) -> bool {
        self.dump.is_some()
    }

    fn reply(&mut self, d: Vec<u8>) {
        self.replies += 1;
        let full = self.queue.len() >= self.capacity;
        if full || self.congested || self.faults.drop_replies.contains(&self.replies) {
            self.overrun = true;
            self.congested = true;
            return;
        }
        self.queue.push_back(d);
    }

    /// A datagram sent to the kernel: returns whether it was taken.
    pub(crate) fn transmit(&mut self, datagram: &[u8]) -> io::Result<()> {
        self.transmits += 1;
        if self.faults.fail_send == Some(self.transmits) {
            return Err(io::Error::from_raw_os_error(libc::ENOBUFS));
        }
        let msgs: Vec<(u32, u16, u16, Option<u32>)> = frames(datagram, self.family)
            .map(|f| f.expect("the machine sent a malformed datagram"))
            .map(|f| {
                let index = match f.reply {
                    Reply::Data { attrs, .. } if attrs.len() >= 4 => {
                        Some(u32::from_ne_bytes([attrs[0], attrs[1], attrs[2], attrs[3]]))
                    }
                    _ => None,
                };
                (f.seq, f.flags, kind_of(datagram, f.seq), index)
            })
            .collect();
        for (seq, flags, kind, index) in msgs {
            self.message(seq, flags, kind, index);
        }
        Ok(())
    }

    fn message(&mut self, seq: u32, flags: u16, kind: u16, index: Option<u32>) {
        match kind {
            GENL_ID_CTRL => {
                if let Some(e) = self.refuse_lookup {
                    return self.reply(error(seq, e));
                }
                if self.unregistered {
                    return self.reply(error(seq, libc::ENOENT));
                }
                let mut d = Vec::new();
                let attr = [6u8, 0, 1, 0];
                message(
                    &mut d,
                    GENL_ID_CTRL,
                    0,
                    seq,
                    &[&[1, 2, 0, 0], &attr, &self.family.to_ne_bytes(), &[0, 0]],
                );
                self.reply(d);
                self.reply(error(seq, 0));
            }
            NLMSG_NOOP => {
                if flags & NLM_F_ACK != 0 {
                    self.reply(error(seq, 0));
                }
            }
            k if k == self.family && !self.unregistered => {
                self.requests += 1;
                if self.faults.hang_after.is_some_and(|n| self.requests > n) {
                    return;
                }
                if flags & NLM_F_DUMP == NLM_F_DUMP {
                    if self.dump.is_some() {
                        self.busy += 1;
                        return self.reply(error(seq, libc::EBUSY));
                    }
                    self.dumps += 1;
                    self.dump = Some((seq, 0, self.dumps <= self.interrupted_dumps));
                    return self.next_part();
                }
                let index = index.unwrap_or(u32::MAX);
                let errno = (self.verdict)(index);
                self.receipts.push((index, errno));
                if errno == libc::EINTR {
                    // Handled, and answered with nothing at all (netlink's
                    // rule for a handler that returns EINTR).
                    return;
                }
                if errno != 0 {
                    self.reply(error(seq, errno));
                } else if flags & NLM_F_ACK != 0 {
                    self.reply(error(seq, 0));
                }
            }
            // A stale id: no such family.
            _ => self.reply(error(seq, libc::ENOENT)),
        }
    }

    /// Makes the open dump's next part (or its DONE).
    fn next_part(&mut self) {
        let Some((seq, next, intr)) = self.dump else {
            return;
        };
        let flags = NLM_F_MULTI | if intr { NLM_F_DUMP_INTR } else { 0 };
        if next >= self.dump_items {
            let mut d = Vec::new();
            message(
                &mut d,
                NLMSG_DONE,
                flags,
                seq,
                &[&(-self.done_errno).to_ne_bytes()],
            );
            self.dump = None;
            return self.reply(d);
        }
        let mut d = Vec::new();
        let end = (next + self.per_part).min(self.dump_items);
        for i in next..end {
            message(
                &mut d,
                self.family,
                flags,
                seq,
                &[&[1, 1, 0, 0], &i.to_ne_bytes()],
            );
        }
        self.dump = Some((seq, end, intr));
        if end >= self.dump_items && self.done_in_last_part {
            message(
                &mut d,
                NLMSG_DONE,
                flags,
                seq,
                &[&(-self.done_errno).to_ne_bytes()],
            );
            self.dump = None;
        }
        self.reply(d);
    }

    /// A receive: the next datagram, or what the socket says instead.
    pub(crate) fn receive(&mut self, wait: Wait) -> Received {
        self.receives += 1;
        if self.faults.fail_recv == Some(self.receives) {
            return Received::Failed(io::Error::from_raw_os_error(libc::EBADF));
        }
        if std::mem::take(&mut self.overrun) {
            // Any receive on an empty queue ends the congestion.
            if self.queue.is_empty() {
                self.congested = false;
            }
            return Received::Overrun;
        }
        if self.queue.is_empty() {
            // The reader made room: a dump goes on.
            self.congested = false;
            self.next_part();
        }
        let Some(d) = self.queue.pop_front() else {
            if matches!(wait, Wait::Up(_)) {
                self.stalls += 1;
            }
            return Received::TimedOut;
        };
        if self.queue.is_empty() {
            self.congested = false;
        }
        self.delivered += 1;
        if self
            .faults
            .stray_every
            .is_some_and(|n| n > 0 && self.delivered.checked_rem(n) == Some(0))
        {
            self.queue.push_front(d);
            let mut stray = error(0x7fff_0000, libc::EEXIST);
            message(
                &mut stray,
                self.family,
                0,
                0x7fff_0001,
                &[&[1, 1, 0, 0], &[9; 4]],
            );
            return Received::Datagram(stray);
        }
        if self.faults.truncate == Some(self.delivered) {
            return Received::Truncated(d.len());
        }
        if self.faults.garbage == Some(self.delivered) {
            return Received::Datagram(vec![0xff; 7]);
        }
        Received::Datagram(d)
    }
}

/// The type of the message numbered `seq` in `datagram`.
fn kind_of(datagram: &[u8], seq: u32) -> u16 {
    let mut at = 0;
    while at + 16 <= datagram.len() {
        let len = u32::from_ne_bytes(datagram[at..at + 4].try_into().unwrap()) as usize;
        let kind = u16::from_ne_bytes([datagram[at + 4], datagram[at + 5]]);
        let s = u32::from_ne_bytes(datagram[at + 8..at + 12].try_into().unwrap());
        if s == seq {
            return kind;
        }
        at += (len.max(16) + 3) & !3;
    }
    0
}

/// What one receive gave.
#[derive(Debug)]
pub(crate) enum Received {
    Datagram(Vec<u8>),
    Truncated(usize),
    Overrun,
    TimedOut,
    Failed(io::Error),
}

/// Runs `m` against `k` until it finishes; panics if it does not within
/// `limit` steps. Returns the waits it asked for.
pub(crate) fn run(m: &mut impl Machine, k: &mut Kernel, limit: usize) -> Vec<Wait> {
    let mut waits = Vec::new();
    for _ in 0..limit {
        let wait = match m.poll() {
            Poll::Transmit(bytes) => {
                let bytes = bytes.to_vec();
                let input = match k.transmit(&bytes) {
                    Ok(()) => Input::Sent,
                    Err(e) => Input::SendFailed(e),
                };
                m.handle(input);
                continue;
            }
            Poll::Receive(w) => w,
            Poll::Finished => return waits,
        };
        waits.push(wait);
        let first = k.receive(wait);
        let mut more = matches!(first, Received::Datagram(_));
        give(m, first);
        // The rest of one receive call: handed over whatever the machine
        // made of the first, as a driver does.
        for _ in 1..k.per_receive.max(1) {
            if !more || k.queue.is_empty() && k.dump.is_none() {
                break;
            }
            let next = k.receive(Wait::Queued);
            more = matches!(next, Received::Datagram(_));
            if !more {
                break;
            }
            give(m, next);
        }
    }
    panic!("the machine did not finish in {limit} steps");
}

fn give(m: &mut impl Machine, r: Received) {
    match r {
        Received::Datagram(d) => m.handle(Input::Datagram(&d)),
        Received::Truncated(len) => m.handle(Input::Truncated { len }),
        Received::Overrun => m.handle(Input::Overrun),
        Received::TimedOut => m.handle(Input::TimedOut),
        Received::Failed(e) => m.handle(Input::ReceiveFailed(e)),
    }
}

/// Runs an apply of `requests` against `k`: the outcomes by index (each
/// reported once: a second report fails the test) and the waits asked for.
pub(crate) fn apply<R: Encode>(
    session: &mut Session,
    k: &mut Kernel,
    requests: &[R],
    limits: Limits,
) -> (BTreeMap<usize, Outcome>, Vec<Wait>) {
    let skip = vec![false; requests.len()];
    let mut out = BTreeMap::new();
    let mut sink = |i: usize, o: Outcome| {
        assert!(out.insert(i, o).is_none(), "request {i} got two outcomes");
    };
    let mut m = session.apply(requests, &skip, limits, &mut sink);
    let waits = run(&mut m, k, 100_000);
    drop(m);
    assert_eq!(out.len(), requests.len(), "every request has an outcome");
    (out, waits)
}
