//! Dumps as the kernel runs them: one per socket, written a part at a
//! time (the first when the request is taken, the next each time the
//! reader takes a datagram), each part as many messages as fit in the
//! buffer the kernel allocates, then `NLMSG_DONE` alone. Each part
//! starts from a count, as the kernel's `cb->args[0]`: of the entries
//! already written (destinations, daemons) or of the services walked in
//! every namespace ([`walk`](super::walk)). A change between two parts
//! can make a dump skip or repeat entries, as it does on a real kernel;
//! for a service dump, a change in another namespace too.

use std::ops::Bound;

use super::encode;
use super::socket_faults::Quirks;
use super::table::{DumpPlace, NsTable, SvcId};
use super::walk::{self, Tables};

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
    /// `cb->args[0]`: entries written so far; for services, services
    /// walked in every namespace.
    written: usize,
    /// Where the next part of a service dump starts, and every table's
    /// generation then: it starts there when nothing changed in between
    /// (else from the count, as the kernel always does).
    resume: Option<(u64, Bound<DumpPlace>)>,
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
    /// none is left, `NLMSG_DONE`. `all` is every namespace's table, the
    /// dump's own at `own`.
    pub(crate) fn next_part(
        &mut self,
        all: &Tables,
        own: usize,
        max_recv: usize,
        out: &mut Vec<u8>,
    ) {
        self.parts += 1;
        let room = if max_recv > GOODSIZE {
            max_recv.min(LARGEST)
        } else {
            GOODSIZE
        };
        let ns = &all[own].1;
        let listed = match &self.listing {
            Listing::Services => self.services(all, own, room, out),
            Listing::Dests(id) => {
                let id = *id;
                self.dests(ns, id, room, out)
            }
            Listing::Daemons => self.daemons(ns, out),
        };
        if listed == 0 {
            out.clear();
            encode::done(out, self.seq, self.pid);
            self.finished = true;
        } else if self.quirks.done_with_last_part() && !self.has_more(all, own) {
            encode::done(out, self.seq, self.pid);
            self.finished = true;
        }
        self.quirks.apply(out);
    }

    /// Whether the next part would list anything.
    fn has_more(&self, all: &Tables, own: usize) -> bool {
        let ns = &all[own].1;
        match &self.listing {
            Listing::Services => self
                .services_from(all)
                .is_some_and(|from| ns.places_from(from).next().is_some()),
            Listing::Dests(id) => id
                .and_then(|id| ns.get(&id))
                .is_some_and(|svc| svc.dests.len() > self.written),
            Listing::Daemons => ns.daemons.iter().flatten().count() > self.written,
        }
    }

    /// Where the next part of a service dump starts (`None`: past the
    /// end of the tables).
    fn services_from(&self, all: &Tables) -> Option<Bound<DumpPlace>> {
        match self.resume {
            Some((generation, from)) if generation == walk::generation(all) => Some(from),
            // Counted from the start, as the kernel skips `args[0]`.
            _ => walk::after_first(all, self.written),
        }
    }

    /// Lists the own namespace's services from where the walk stands,
    /// counting every namespace's walked; how many it listed.
    fn services(&mut self, all: &Tables, own: usize, room: usize, out: &mut Vec<u8>) -> usize {
        let Some(mut from) = self.services_from(all) else {
            return 0;
        };
        let mut listed = 0;
        let mut full = false;
        for (place, svc) in all[own].1.places_from(from) {
            let at = out.len();
            encode::service(out, self.family, 2, self.seq, self.pid, svc);
            // The other namespaces' services up to this one are walked,
            // whether it fits or not.
            self.written += walk::others_between(all, own, from, Bound::Excluded(place));
            if out.len() > room {
                out.truncate(at);
                from = Bound::Included(place);
                full = true;
                break;
            }
            self.written += 1;
            listed += 1;
            from = Bound::Excluded(place);
        }
        if !full {
            // The walk reached the end of the tables.
            self.written += walk::others_between(all, own, from, Bound::Unbounded);
            from = Bound::Excluded(walk::END);
        }
        self.resume = Some((walk::generation(all), from));
        listed
    }

    fn dests(&mut self, ns: &NsTable, id: Option<SvcId>, room: usize, out: &mut Vec<u8>) -> usize {
        let Some(svc) = id.and_then(|id| ns.get(&id)) else {
            return 0;
        };
        let before = self.written;
        for d in svc.dests.iter().rev().skip(self.written) {
            let at = out.len();
            encode::dest(out, self.family, self.seq, self.pid, d);
            if out.len() > room {
                out.truncate(at);
                break;
            }
            self.written += 1;
        }
        self.written - before
    }

    fn daemons(&mut self, ns: &NsTable, out: &mut Vec<u8>) -> usize {
        let before = self.written;
        for d in ns.daemons.iter().flatten().skip(self.written) {
            encode::daemon(out, self.family, self.seq, self.pid, d);
            self.written += 1;
        }
        self.written - before
    }
}
