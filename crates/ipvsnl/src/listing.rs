//! Listing: services and destinations, one dump (or get) at a time on the
//! client's one socket, each reply decoded in place from the kernel's bytes
//! (the wire crate's one-pass values, then [`crate::decode`]) without an
//! intermediate attribute list.
//!
//! One dump at a time: the kernel answers a second dump request on a socket
//! whose first dump is unfinished with `EBUSY`. The first part of a dump is
//! produced while the request is being sent, and each next part (at the
//! end, `NLMSG_DONE`) as the previous one is read, so one `recvmmsg` takes
//! two: a service with a few destinations costs one `sendmsg` and one
//! receive call. The kernel sizes the parts from the reader's buffer: the
//! client's page-sized buffers keep them small, which measured faster than
//! big ones.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::ops::ControlFlow;

use ipvsnl_wire::write::{begin_ipvs_message, end_message};
use ipvsnl_wire::IpvsCommand;

use crate::decode::{self, DecodeResult, Detail};
use crate::drive::drive;
use crate::proto::{CallKind, Replies};
use crate::request::push_service_nest;
use crate::{
    Client, DestinationEntry, Error, Object, RequestKind, ServiceEntry, ServiceKey, TableEntry,
    Target,
};

impl Client {
    /// Every service, in the kernel's order.
    pub fn services(&mut self) -> Result<Vec<ServiceEntry>, Error> {
        self.list_services(1, Detail::Full)
    }

    /// One service; [`Error::is_not_found`] if there is none.
    pub fn service(&mut self, key: &ServiceKey) -> Result<ServiceEntry, Error> {
        key.validate()?;
        let kind = RequestKind::GetService;
        let mut replies = self.fetch(kind, IpvsCommand::GetService, Some(key), |attrs, out| {
            out.push(decode::service_reply(attrs, Detail::Full)?);
            Ok(())
        })?;
        if replies.is_empty() {
            return Err(Error::decode(
                Target::new(kind, Object::Service(*key)),
                "no reply",
            ));
        }
        Ok(replies.swap_remove(0))
    }

    /// Visits every service in the kernel's order, each once, without
    /// building a list; `visit` returns [`ControlFlow::Break`] to stop
    /// early. The rest of a dump stopped early is read out (and dropped)
    /// by the client's next call, so nothing of it reaches that call.
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
        let kind = RequestKind::ListServices;
        let mut call = self.session.call(
            CallKind::Dump,
            |out: &mut Vec<u8>, family, seq, flags| {
                let msg = begin_ipvs_message(out, family, flags, seq, IpvsCommand::GetService);
                end_message(out, msg);
            },
            Visit {
                scratch: Vec::with_capacity(1),
                seen: HashSet::new(),
                visit,
                stopped: false,
            },
        );
        drive(&self.sock, &mut self.rx, self.opts.recv_buffer, &mut call);
        match call.result() {
            Some(Ok(())) => Ok(()),
            Some(Err(f)) => Err(Error::of_failure(Target::new(kind, Object::Table), f)),
            None => Err(Error::decode(Target::new(kind, Object::Table), "no result")),
        }
    }

    /// The destinations of a service, newest first (the kernel's order).
    /// An unknown service has none (the kernel does not say it is unknown).
    pub fn destinations(&mut self, key: &ServiceKey) -> Result<Vec<DestinationEntry>, Error> {
        key.validate()?;
        self.list_destinations(key, Detail::Full)
    }

    /// Every service with its destinations: one service dump, then one
    /// destination dump per service, all on this client's socket.
    pub fn table(&mut self) -> Result<Vec<TableEntry>, Error> {
        self.list_table_where(|_| true)
    }

    /// The same as [`Client::table`] (the name the sync engine's listing
    /// had when it was the faster of two).
    pub fn list_table(&mut self) -> Result<Vec<TableEntry>, Error> {
        self.table()
    }

    /// Every service, and the destinations of those `wanted` accepts (the
    /// others are listed with none).
    pub fn list_table_where(
        &mut self,
        wanted: impl FnMut(&ServiceKey) -> bool,
    ) -> Result<Vec<TableEntry>, Error> {
        self.list_entries(1, Detail::Full, wanted)
    }

    /// Every service from `passes` service dumps merged, each listed into
    /// the entry it stays in, and the destinations of those `wanted`
    /// accepts (one dump each; the others get none).
    pub(crate) fn list_entries(
        &mut self,
        passes: usize,
        detail: Detail,
        mut wanted: impl FnMut(&ServiceKey) -> bool,
    ) -> Result<Vec<TableEntry>, Error> {
        let mut entries: Vec<TableEntry> = self.list_services(passes, detail)?;
        for entry in &mut entries {
            let key = &entry.service.service.key;
            if wanted(key) {
                entry.destinations = self.list_destinations(key, detail)?;
            }
        }
        Ok(entries)
    }

    /// Every service, each once, from `passes` service dumps merged (see
    /// [`keep_first`] for why a resumed dump can miss or repeat entries:
    /// a second pass catches what one missed, at the cost of a dump).
    fn list_services<T: ListedService>(
        &mut self,
        passes: usize,
        detail: Detail,
    ) -> Result<Vec<T>, Error> {
        let mut services = self.dump_services(detail)?;
        for _ in 1..passes {
            if services.len() <= ONE_PART_SERVICES {
                break;
            }
            let again = self.dump_services(detail)?;
            services.extend(again);
        }
        keep_first(&mut services, |s: &T| s.service().service.key);
        Ok(services)
    }

    fn dump_services<T: ListedService>(&mut self, detail: Detail) -> Result<Vec<T>, Error> {
        self.fetch(
            RequestKind::ListServices,
            IpvsCommand::GetService,
            None,
            |attrs, out| push_service(attrs, detail, out),
        )
    }

    /// The destinations of one service (one dump), unchecked key.
    pub(crate) fn list_destinations(
        &mut self,
        key: &ServiceKey,
        detail: Detail,
    ) -> Result<Vec<DestinationEntry>, Error> {
        let family = key.family();
        let mut dests = self.fetch(
            RequestKind::ListDestinations,
            IpvsCommand::GetDest,
            Some(key),
            |attrs, out| decode::push_destination(attrs, family, detail, out),
        )?;
        keep_first(&mut dests, |d| (d.destination.addr, d.destination.port));
        Ok(dests)
    }

    /// Sends a get (or, for a list kind, a dump) of `command` with the
    /// service key nest of `key`, and decodes each reply's attribute bytes.
    fn fetch<T>(
        &mut self,
        kind: RequestKind,
        command: IpvsCommand,
        key: Option<&ServiceKey>,
        decode: impl Fn(&[u8], &mut Vec<T>) -> DecodeResult<()>,
    ) -> Result<Vec<T>, Error> {
        let target = || key.map_or(Object::Table, |k| Object::Service(*k));
        self.exchange(
            kind,
            target,
            |out, family, seq, flags| {
                let msg = begin_ipvs_message(out, family, flags, seq, command);
                if let Some(k) = key {
                    push_service_nest(out, k, None);
                }
                end_message(out, msg);
            },
            |_, attrs, out| decode(attrs, out),
        )
    }
}

/// The replies of [`Client::for_each_service`]: each service decoded into
/// one scratch entry and shown to the visitor, once per key.
struct Visit<F> {
    scratch: Vec<ServiceEntry>,
    seen: HashSet<ServiceKey>,
    visit: F,
    stopped: bool,
}

impl<F: FnMut(&ServiceEntry) -> ControlFlow<()>> Replies for Visit<F> {
    fn message(&mut self, _command: u8, attrs: &[u8]) -> Result<(), String> {
        self.scratch.clear();
        push_service(attrs, Detail::Full, &mut self.scratch)?;
        if let Some(s) = self.scratch.first() {
            // A resumed dump can send a service again (see keep_first).
            if self.seen.insert(s.service.key) {
                self.stopped = (self.visit)(s).is_break();
            }
        }
        Ok(())
    }

    fn restart(&mut self) {
        // Taken again from the start: those already shown are not shown
        // twice.
    }

    fn stopped(&self) -> bool {
        self.stopped
    }
}

/// What a service dump lists each service into: the service alone, or a
/// table entry (whose destinations come next).
pub(crate) trait ListedService {
    /// An entry to be filled.
    fn empty() -> Self;
    /// Its service.
    fn service(&self) -> &ServiceEntry;
    /// Its service, to be filled.
    fn service_mut(&mut self) -> &mut ServiceEntry;
}

impl ListedService for ServiceEntry {
    fn empty() -> Self {
        decode::empty_service()
    }
    fn service(&self) -> &ServiceEntry {
        self
    }
    fn service_mut(&mut self) -> &mut ServiceEntry {
        self
    }
}

impl ListedService for TableEntry {
    fn empty() -> Self {
        TableEntry {
            service: decode::empty_service(),
            destinations: Vec::new(),
        }
    }
    fn service(&self) -> &ServiceEntry {
        &self.service
    }
    fn service_mut(&mut self) -> &mut ServiceEntry {
        &mut self.service
    }
}

/// Appends the service of a service dump part's attribute bytes to `out`
/// (nothing on error), filled where it lies: a listing decodes tens of
/// thousands, and under emulation every copy of an entry costs.
pub(crate) fn push_service<T: ListedService>(
    attrs: &[u8],
    detail: Detail,
    out: &mut Vec<T>,
) -> DecodeResult<()> {
    let at = out.len();
    out.push(T::empty());
    let filled = match out.last_mut() {
        Some(last) => decode::fill_service(attrs, detail, last.service_mut()),
        None => Ok(()),
    };
    if filled.is_err() {
        out.truncate(at);
    }
    filled
}

/// Services that surely fit in the first part of a dump (a part is about a
/// page; a service message about 330 bytes): a dump of no more was never
/// resumed, so it can neither miss nor repeat one.
const ONE_PART_SERVICES: usize = 8;

/// Drops repeated entries, keeping the first of each key in order.
///
/// A dump continues where it stopped by counting entries of every network
/// namespace, so entries added or removed elsewhere meanwhile can make the
/// kernel send one of ours again (measured on 6.1 and 6.12; nothing marks
/// it). Keys are unique within a namespace, so a repeat is always such an
/// artifact. (An entry can also be skipped that way; the sync engine lists
/// twice for that reason.)
fn keep_first<T, K: Hash + Eq>(entries: &mut Vec<T>, key: impl Fn(&T) -> K) {
    let n = entries.len();
    // A few entries (a service's destinations, typically) are compared
    // pairwise; more, by their keys' hashes. Only a repeat (or, rarely,
    // two keys of one hash) takes the exact way, with a set of keys.
    let maybe_repeats = if n <= 32 {
        (1..n).any(|i| {
            let k = key(&entries[i]);
            entries[..i].iter().any(|e| key(e) == k)
        })
    } else {
        hashes_repeat(entries, &key)
    };
    if maybe_repeats {
        let mut seen: HashSet<K, BuildHasherDefault<QuickHasher>> =
            HashSet::with_capacity_and_hasher(n, Default::default());
        entries.retain(|e| seen.insert(key(e)));
    }
}

/// Whether two entries' keys have the same [`QuickHasher`] hash. A set of
/// hashes is a third of the size of a set of service keys, and that is
/// what a listing of tens of thousands of services pays for.
fn hashes_repeat<T, K: Hash>(entries: &[T], key: impl Fn(&T) -> K) -> bool {
    let mut seen: HashSet<u64, BuildHasherDefault<AsIs>> =
        HashSet::with_capacity_and_hasher(entries.len(), Default::default());
    entries.iter().any(|e| {
        let mut h = QuickHasher::default();
        key(e).hash(&mut h);
        !seen.insert(h.finish())
    })
}

/// The hasher of a set of hashes: a hash is its own.
#[derive(Default)]
struct AsIs(u64);

impl Hasher for AsIs {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        // Not used by u64 keys; anything else is folded in.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A multiply-rotate hasher for [`keep_first`]'s set of keys: a few
/// instructions per word where the standard one runs SipHash rounds. Not
/// resistant to chosen collisions, which is fine here: the keys are the
/// kernel's listing of this namespace's own table, deduplicated once.
#[derive(Default)]
struct QuickHasher(u64);

impl QuickHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        // Fold the word in, then spread it with an odd 64-bit constant.
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for QuickHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_ne_bytes(word));
        }
    }
    #[inline]
    fn write_u8(&mut self, v: u8) {
        self.add(u64::from(v));
    }
    #[inline]
    fn write_u16(&mut self, v: u16) {
        self.add(u64::from(v));
    }
    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.add(u64::from(v));
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }
    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::keep_first;

    #[test]
    fn the_quick_hasher_tells_keys_apart() {
        use std::hash::{Hash, Hasher};
        let hash = |k: &crate::ServiceKey| {
            let mut h = super::QuickHasher::default();
            k.hash(&mut h);
            h.finish()
        };
        // Services 10.0.0.1.. port 80 and one fwmark: every hash distinct.
        let mut hashes: Vec<u64> = (1..=10_000u32)
            .map(|i| crate::ServiceKey::Inet {
                protocol: crate::Protocol::Tcp,
                addr: std::net::Ipv4Addr::from(0x0a00_0000 + i).into(),
                port: 80,
            })
            .chain([crate::ServiceKey::Fwmark {
                mark: 1,
                family: crate::AddressFamily::Inet,
            }])
            .map(|k| hash(&k))
            .collect();
        hashes.sort_unstable();
        hashes.dedup();
        assert_eq!(hashes.len(), 10_001);
    }

    /// A service message's attribute bytes (after the netlink and generic
    /// headers).
    fn service_attrs(attrs: Vec<ipvsnl_wire::ServiceAttr>) -> Vec<u8> {
        use ipvsnl_wire::{IpvsAttr, IpvsCommand, IpvsMessage};
        let mut v = Vec::new();
        let msg = IpvsMessage::new(IpvsCommand::NewService, vec![IpvsAttr::Service(attrs)]);
        crate::proto::frame::push_request(&mut v, 0x30, 1, 0, msg);
        v.split_off(20)
    }

    #[test]
    fn a_listed_service_is_filled_in_place_and_a_refused_one_not_kept() {
        use super::push_service;
        use crate::decode::Detail;
        use crate::{AddressFamily, Scheduler, ServiceKey, TableEntry};
        use ipvsnl_wire::ServiceAttr;
        let good = service_attrs(vec![
            ServiceAttr::AddressFamily(2),
            ServiceAttr::Fwmark(4),
            ServiceAttr::Scheduler("wlc".into()),
            ServiceAttr::Timeout(30),
        ]);
        let mut out: Vec<TableEntry> = Vec::new();
        push_service(&good, Detail::Full, &mut out).unwrap();
        // No family: refused, and nothing of it is left in the list.
        let bad = service_attrs(vec![ServiceAttr::Fwmark(5)]);
        let err = push_service(&bad, Detail::Full, &mut out).unwrap_err();
        assert!(err.contains("IPVS_SVC_ATTR_AF"), "{err}");
        assert_eq!(out.len(), 1);
        let s = &out[0].service.service;
        assert_eq!(s.key, ServiceKey::fwmark(4, AddressFamily::Inet));
        assert_eq!(s.scheduler, Scheduler::WeightedLeastConnection);
        assert_eq!(s.timeout, 30);
        assert!(out[0].destinations.is_empty());
    }

    #[test]
    fn repeats_are_dropped_in_order() {
        let mut v = vec![(1, 'a'), (2, 'b'), (1, 'c'), (3, 'd'), (2, 'e')];
        keep_first(&mut v, |e| e.0);
        assert_eq!(v, vec![(1, 'a'), (2, 'b'), (3, 'd')]);
        // Past the pairwise size too, and a list without repeats untouched.
        let mut long: Vec<u32> = (0..100).chain([5, 99, 0]).collect();
        keep_first(&mut long, |e| *e);
        assert_eq!(long, (0..100).collect::<Vec<_>>());
        let mut few = vec![3, 1, 2];
        keep_first(&mut few, |e| *e);
        assert_eq!(few, vec![3, 1, 2]);
    }

    /// Distinct keys that all hash alike.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Alike(u32);

    impl std::hash::Hash for Alike {
        fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
            state.write_u32(7);
        }
    }

    #[test]
    fn keys_of_one_hash_are_told_apart() {
        let mut v: Vec<Alike> = (0..50).map(Alike).collect();
        keep_first(&mut v, |e| *e);
        assert_eq!(v, (0..50).map(Alike).collect::<Vec<_>>());
        v.push(Alike(10));
        keep_first(&mut v, |e| *e);
        assert_eq!(v.len(), 50);
    }
}
