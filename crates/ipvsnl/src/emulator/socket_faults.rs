//! What a socket does to the replies on their way to the reader, apart
//! from the kernel's answers: a receive queue that holds so many datagrams
//! and drops a reply that finds it full (an overrun: the next receive
//! fails with `ENOBUFS`, and the socket drops every reply until its queue
//! is read empty, netlink's `NETLINK_S_CONGESTED`), a receive that fails,
//! a datagram that comes garbled, a stranger's message; and the dump
//! framing generic netlink allows a family that IPVS never uses
//! ([`DumpQuirk`]).

use ipvsnl_wire::netlink_packet_core::{NLMSG_DONE, NLMSG_ERROR, NLM_F_MULTIPART};

use super::faults::DumpQuirk;

/// `NLM_F_DUMP_INTR`: the dump was interrupted by a change.
const NLM_F_DUMP_INTR: u16 = 0x10;

/// The sequence numbers of the stranger's messages [`stray`] makes.
pub(crate) const STRAY_SEQ: [u32; 2] = [0x7fff_0000, 0x7fff_0001];

/// The state of one socket's receive side, beside its queue.
#[derive(Debug, Default)]
pub(crate) struct Congestion {
    /// The most datagrams the queue holds (`None`: no limit).
    pub(crate) limit: Option<usize>,
    /// A reply was dropped and the queue was not read empty since: every
    /// reply is dropped.
    pub(crate) congested: bool,
    /// The errno the next receive fails with, before anything else.
    pub(crate) fail_receive: Option<i32>,
}

impl Congestion {
    /// Whether a reply finding `queued` datagrams queued is queued; if not,
    /// the socket is congested from now on.
    pub(crate) fn admits(&mut self, queued: usize) -> bool {
        if self.congested || self.limit.is_some_and(|l| queued >= l) {
            self.congested = true;
            return false;
        }
        true
    }
}

/// Bytes no netlink reader can frame (shorter than a header, and all
/// ones): a datagram garbled on its way.
pub(crate) fn garbage() -> Vec<u8> {
    vec![0xff; 7]
}

/// A datagram answering nothing the socket asked: an `NLMSG_ERROR` and a
/// message of the IPVS family `family`, numbered [`STRAY_SEQ`] (numbers a
/// client's first two billion requests do not reach), as a reply to a
/// request long given up on would come.
pub(crate) fn stray(family: u16, pid: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    let mut request = [0u8; 16];
    request[..4].copy_from_slice(&16u32.to_ne_bytes());
    request[8..12].copy_from_slice(&STRAY_SEQ[0].to_ne_bytes());
    super::encode::error(&mut out, &request, libc::EEXIST, pid);
    header(&mut out, 24, family, 0, STRAY_SEQ[1], pid);
    // A generic-netlink header (command 1, version 1) and an empty
    // attribute of 4 bytes.
    out.extend_from_slice(&[1, 1, 0, 0, 4, 0, 1, 0]);
    out
}

fn header(out: &mut Vec<u8>, len: u32, kind: u16, flags: u16, seq: u32, pid: u32) {
    out.extend_from_slice(&len.to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(&flags.to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&pid.to_ne_bytes());
}

/// The [`DumpQuirk`]s struck on one dump so far.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Quirks {
    interrupted: bool,
    done_errno: i32,
    done_with_last_part: bool,
}

impl Quirks {
    /// Adds `q` to this dump's.
    pub(crate) fn add(&mut self, q: &DumpQuirk) {
        match q {
            DumpQuirk::Interrupted => self.interrupted = true,
            DumpQuirk::DoneErrno(e) => self.done_errno = *e,
            DumpQuirk::DoneWithLastPart => self.done_with_last_part = true,
        }
    }

    /// Whether the `NLMSG_DONE` goes in the datagram of the last part.
    pub(crate) fn done_with_last_part(&self) -> bool {
        self.done_with_last_part
    }

    /// Applies the flags and the DONE's errno to a part's datagram.
    pub(crate) fn apply(&self, datagram: &mut [u8]) {
        if !self.interrupted && self.done_errno == 0 {
            return;
        }
        let mut at = 0;
        while at + 16 <= datagram.len() {
            let len = u32::from_ne_bytes(datagram[at..at + 4].try_into().unwrap_or([0; 4]));
            let len = len as usize;
            if len < 16 || at + len > datagram.len() {
                return;
            }
            let kind = u16::from_ne_bytes([datagram[at + 4], datagram[at + 5]]);
            if self.interrupted && kind != NLMSG_ERROR {
                let flags = u16::from_ne_bytes([datagram[at + 6], datagram[at + 7]]);
                let flags = flags | NLM_F_DUMP_INTR | NLM_F_MULTIPART;
                datagram[at + 6..at + 8].copy_from_slice(&flags.to_ne_bytes());
            }
            if kind == NLMSG_DONE && len >= 20 {
                datagram[at + 16..at + 20].copy_from_slice(&(-self.done_errno).to_ne_bytes());
            }
            at += (len + 3) & !3;
        }
    }
}
