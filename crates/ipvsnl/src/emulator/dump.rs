//! Dumps as the kernel runs them: one per socket, written a part at a
//! time (the first when the request is taken, the next each time the
//! reader takes a datagram), each part as many messages as fit in the
//! buffer the kernel allocates, then `NLMSG_DONE` alone. Each part
//! starts from the count of entries already written, as the kernel's
//! `cb->args[0]`: a change between two parts can make a dump skip or
//! repeat entries, as it does on a real kernel.

use super::encode;
use super::socket_faults::Quirks;
use super::table::{DumpPlace, NsTable, SvcId};

/// `NLMSG_GOODSIZE` on x86-64 (a page less the `skb_shared_info`): the
/// least a dump part's buffer holds.
const GOODSIZE: usize = 4096 - 320;
/// The most (`SKB_WITH_OVERHEAD(32768)`).
const LARGEST: usize = 32768 - 320;

/// What a dump lists.
#[derive(Debug, Clone)]
pub(crate) enum Listing {
    Services,
    /// The destinations of the service the request named (looked up
    /// again at every part, as the kernel does; `None`: a request that
    /// named none, an empty dump).
    Dests(Option<SvcId>),
    Daemons,
}

/// A dump under way on one socket.
#[derive(Debug)]
pub(crate) struct Dump {
    pub(crate) listing: Listing,
    pub(crate) namespace: String,
    pub(crate) family: u16,
    pub(crate) seq: u32,
    pub(crate) pid: u32,
    /// Entries written so far (`cb->args[0]`).
    written: usize,
    /// Where the last part ended, and the table's generation then: the
    /// next part resumes there when nothing changed in between.
    resume: Option<(u64, DumpPlace)>,
    /// Parts written so far.
    pub(crate) parts: usize,
    finished: bool,
    /// Framing IPVS never uses, struck by a test's fault.
    pub(crate) quirks: Quirks,
}

impl Dump {
    /// A dump not yet started.
    pub(crate) fn new(listing: Listing, namespace: &str, family: u16, seq: u32, pid: u32) -> Self {
        Dump {
            listing,
            namespace: namespace.to_string(),
            family,
            seq,
            pid,
            written: 0,
            resume: None,
            parts: 0,
            finished: false,
            quirks: Quirks::default(),
        }
    }

    /// Whether its `NLMSG_DONE` was written.
    pub(crate) fn finished(&self) -> bool {
        self.finished
    }

    /// Writes the next part into `out` (a datagram), for a reader whose
    /// largest receive so far was `max_recv` bytes: entries, or, when
    /// none is left, `NLMSG_DONE`.
    pub(crate) fn next_part(&mut self, ns: &mut NsTable, max_recv: usize, out: &mut Vec<u8>) {
        self.parts += 1;
        let room = if max_recv > GOODSIZE {
            max_recv.min(LARGEST)
        } else {
            GOODSIZE
        };
        let before = self.written;
        match &self.listing {
            Listing::Services => self.services(ns, room, out),
            Listing::Dests(id) => {
                let id = *id;
                self.dests(ns, id, room, out)
            }
            Listing::Daemons => self.daemons(ns, out),
        }
        if self.written == before {
            out.clear();
            encode::done(out, self.seq, self.pid);
            self.finished = true;
        } else if self.quirks.done_with_last_part() && !self.has_more(ns) {
            encode::done(out, self.seq, self.pid);
            self.finished = true;
        }
        self.quirks.apply(out);
    }

    /// Whether the next part would list anything.
    fn has_more(&self, ns: &NsTable) -> bool {
        match &self.listing {
            Listing::Services => {
                let after = match self.resume {
                    Some((generation, place)) if generation == ns.generation => Some(place),
                    _ if self.written == 0 => None,
                    _ => match ns.nth_place(self.written - 1) {
                        Some(p) => Some(p),
                        None => return false,
                    },
                };
                ns.places_after(after).next().is_some()
            }
            Listing::Dests(id) => id
                .and_then(|id| ns.get(&id))
                .is_some_and(|svc| svc.dests.len() > self.written),
            Listing::Daemons => ns.daemons.iter().flatten().count() > self.written,
        }
    }

    fn services(&mut self, ns: &NsTable, room: usize, out: &mut Vec<u8>) {
        let after = match self.resume {
            Some((generation, place)) if generation == ns.generation => Some(place),
            _ if self.written == 0 => None,
            // Counted from the start, as the kernel skips `args[0]`.
            _ => match ns.nth_place(self.written - 1) {
                Some(p) => Some(p),
                None => return,
            },
        };
        for (place, svc) in ns.places_after(after) {
            let at = out.len();
            encode::service(out, self.family, 2, self.seq, self.pid, svc);
            if out.len() > room {
                out.truncate(at);
                break;
            }
            self.written += 1;
            self.resume = Some((ns.generation, place));
        }
    }

    fn dests(&mut self, ns: &NsTable, id: Option<SvcId>, room: usize, out: &mut Vec<u8>) {
        let Some(svc) = id.and_then(|id| ns.get(&id)) else {
            return;
        };
        for d in svc.dests.iter().rev().skip(self.written) {
            let at = out.len();
            encode::dest(out, self.family, self.seq, self.pid, d);
            if out.len() > room {
                out.truncate(at);
                break;
            }
            self.written += 1;
        }
    }

    fn daemons(&mut self, ns: &NsTable, out: &mut Vec<u8>) {
        for d in ns.daemons.iter().flatten().skip(self.written) {
            encode::daemon(out, self.family, self.seq, self.pid, d);
            self.written += 1;
        }
    }
}
