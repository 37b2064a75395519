//! ipvsadm's order of services and destinations in its listings: its
//! comparators (`ipvs_cmp_services`, `ipvs_cmp_dests`, which subtract as
//! `int`, so that their order is not a consistent one) run by glibc's
//! `qsort` on this platform, a top-down merge sort. Reproduced exactly, on
//! small copies of the compared fields with the entry's index, so that
//! nothing of the listing is moved or cloned: the result is the order to
//! print the entries in.
//!
//! Measured on the host (`scripts/measure/ipvsadm-text-cost`, callgrind, release, the
//! 10,000 services x 5 destinations of the bench): sorting the services and
//! each one's destinations took 73.7 million instructions when the merge
//! sort cloned whole entries at every level, 15.6 million on these keys.

use std::net::IpAddr;

use ipvsnl::{AddressFamily, DestinationEntry, ServiceEntry, ServiceKey};

/// glibc's `msort` (`qsort` on this platform): sorts `v` with `tmp` as the
/// merge buffer (`tmp.len() >= v.len()`): left half of n/2 elements, ties
/// taken from the left.
fn msort<T: Copy>(v: &mut [T], tmp: &mut [T], cmp: &impl Fn(&T, &T) -> i32) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    let n1 = n / 2;
    msort(&mut v[..n1], tmp, cmp);
    msort(&mut v[n1..], tmp, cmp);
    let (mut i, mut j, mut k) = (0, n1, 0);
    while i < n1 && j < n {
        if cmp(&v[i], &v[j]) <= 0 {
            tmp[k] = v[i];
            i += 1;
        } else {
            tmp[k] = v[j];
            j += 1;
        }
        k += 1;
    }
    // What is left of the right half is in its place already (as glibc
    // leaves it): the rest of the left half, then all that was merged,
    // go back. Element by element: the runs are short, and a `memcpy`
    // call per run cost more than the copy (4 million more instructions of
    // the 10,000 x 5 workload).
    while i < n1 {
        tmp[k] = v[i];
        i += 1;
        k += 1;
    }
    for (slot, x) in v[..k].iter_mut().zip(&tmp[..k]) {
        *slot = *x;
    }
}

/// An address as ipvsadm's comparators read it: 32-bit words in host
/// order (IPv4 in the first).
fn words(a: &IpAddr) -> [u32; 4] {
    match a {
        IpAddr::V4(a) => [u32::from(*a), 0, 0, 0],
        IpAddr::V6(a) => {
            let o = a.octets();
            let w = |i: usize| u32::from_be_bytes([o[i], o[i + 1], o[i + 2], o[i + 3]]);
            [w(0), w(4), w(8), w(12)]
        }
    }
}

/// The words of two addresses compared as ipvsadm does, over 4 words for
/// IPv6 (`v6`), 1 otherwise: the first difference, subtracted as `int`.
fn cmp_words(a: &[u32; 4], b: &[u32; 4], v6: bool) -> i32 {
    let n = if v6 { 4 } else { 1 };
    for i in 0..n {
        let r = a[i].wrapping_sub(b[i]) as i32;
        if r != 0 {
            return r;
        }
    }
    0
}

/// What `ipvs_cmp_services` compares of a service, and its index.
#[derive(Clone, Copy)]
struct ServiceOrder {
    fwmark: u32,
    af: i32,
    protocol: i32,
    words: [u32; 4],
    port: i32,
    index: u32,
}

impl ServiceOrder {
    fn of(key: &ServiceKey, index: u32) -> Self {
        match key {
            ServiceKey::Fwmark { mark, family } => ServiceOrder {
                fwmark: *mark,
                af: i32::from(family.to_raw()),
                protocol: 0,
                words: [0; 4],
                port: 0,
                index,
            },
            ServiceKey::Inet {
                protocol,
                addr,
                port,
            } => ServiceOrder {
                fwmark: 0,
                af: i32::from(AddressFamily::of(addr).to_raw()),
                protocol: i32::from(protocol.to_raw()),
                words: words(addr),
                port: i32::from(*port),
                index,
            },
            _ => ServiceOrder {
                fwmark: 0,
                af: 0,
                protocol: 0,
                words: [0; 4],
                port: 0,
                index,
            },
        }
    }
}

/// ipvsadm's `ipvs_cmp_services`.
fn cmp_services(a: &ServiceOrder, b: &ServiceOrder) -> i32 {
    let r = a.fwmark.wrapping_sub(b.fwmark) as i32;
    if r != 0 {
        return r;
    }
    let r = a.af - b.af;
    if r != 0 {
        return r;
    }
    let r = a.protocol - b.protocol;
    if r != 0 {
        return r;
    }
    let v6 = a.af == i32::from(AddressFamily::Inet6.to_raw());
    let r = cmp_words(&a.words, &b.words, v6);
    if r != 0 {
        return r;
    }
    a.port - b.port
}

/// What `ipvs_cmp_dests` compares of a destination, and its index.
#[derive(Clone, Copy)]
struct DestOrder {
    words: [u32; 4],
    v6: bool,
    port: i32,
    index: u32,
}

/// ipvsadm's `ipvs_cmp_dests` (the first argument's family picks the
/// address comparison).
fn cmp_dests(a: &DestOrder, b: &DestOrder) -> i32 {
    let r = cmp_words(&a.words, &b.words, a.v6);
    if r != 0 {
        return r;
    }
    a.port - b.port
}

/// The order ipvsadm prints `services` in (indices into it); the kernel's
/// order with `nosort`.
pub(crate) fn services(services: &[ServiceEntry], nosort: bool) -> Vec<u32> {
    service_keys(services.iter().map(|s| &s.service.key), nosort)
}

/// The order ipvsadm prints the services of `keys` in (indices into
/// them); the kernel's order with `nosort`.
pub(crate) fn service_keys<'a>(
    keys: impl ExactSizeIterator<Item = &'a ServiceKey>,
    nosort: bool,
) -> Vec<u32> {
    let n = keys.len() as u32;
    if nosort {
        return (0..n).collect();
    }
    let keys: Vec<ServiceOrder> = keys
        .zip(0..n)
        .map(|(k, i)| ServiceOrder::of(k, i))
        .collect();
    sort_services(keys)
}

/// The order of `keys` by [`cmp_services`] as glibc's merge sort gives it
/// (their indices).
fn sort_services(mut keys: Vec<ServiceOrder>) -> Vec<u32> {
    if let Some(mut packed) = packed_services(&keys) {
        packed.sort_unstable();
        return packed.into_iter().map(|k| k as u32).collect();
    }
    let mut tmp = keys.clone();
    msort(&mut keys, &mut tmp, &cmp_services);
    keys.into_iter().map(|k| k.index).collect()
}

/// Whether every difference of values in `min..=max` has its true sign
/// when subtracted as `int`: then a comparator made of such subtractions
/// is a consistent order, the one of the values.
/// (`min <= max`.)
fn subtracts_truly(min: u32, max: u32) -> bool {
    max - min < 1 << 31
}

/// The services' keys packed in `u128`s that order as [`cmp_services`]
/// orders them, the index last, when that comparator is a consistent
/// order over these keys: all of one family, not IPv6 (one address word
/// compared), the marks within 2^31 of each other, and so the addresses
/// of the services without one. A merge sort is stable, so on a consistent order it gives what
/// any sort of keys made unique by their index gives (measured on the
/// host with `scripts/measure/ipvsadm-text-cost`, 10,000 services: 6.9 million
/// instructions by the merge sort, 2.4 million these). `None` otherwise.
fn packed_services(keys: &[ServiceOrder]) -> Option<Vec<u128>> {
    let first = keys.first()?;
    let (mut marks, mut words) = ((u32::MAX, 0), (u32::MAX, 0));
    for k in keys {
        if k.af != first.af || k.af == i32::from(AddressFamily::Inet6.to_raw()) {
            return None;
        }
        marks = (marks.0.min(k.fwmark), marks.1.max(k.fwmark));
        // Addresses are compared between services of one mark only: those
        // of mark 0 (a mark's services have none).
        if k.fwmark == 0 {
            words = (words.0.min(k.words[0]), words.1.max(k.words[0]));
        }
    }
    if !subtracts_truly(marks.0, marks.1)
        || (words.0 <= words.1 && !subtracts_truly(words.0, words.1))
    {
        return None;
    }
    // Protocol and port are 16-bit: their differences never overflow.
    let field = |v: i32| u128::from(v as u16);
    Some(
        keys.iter()
            .map(|k| {
                u128::from(k.fwmark) << 96
                    | field(k.protocol) << 80
                    | u128::from(k.words[0]) << 48
                    | field(k.port) << 32
                    | u128::from(k.index)
            })
            .collect(),
    )
}

/// Destination orders, with their buffers kept from one service to the
/// next.
#[derive(Default)]
pub(crate) struct DestSorter {
    keys: Vec<DestOrder>,
    tmp: Vec<DestOrder>,
    packed: Vec<u64>,
    order: Vec<u32>,
}

impl DestSorter {
    /// The order ipvsadm prints `dests` in (indices into it); the kernel's
    /// order with `nosort`.
    pub(crate) fn order(&mut self, dests: &[DestinationEntry], nosort: bool) -> &[u32] {
        let n = dests.len() as u32;
        self.order.clear();
        if nosort {
            self.order.extend(0..n);
            return &self.order;
        }
        if self.packed(dests) {
            return &self.order;
        }
        self.keys.clear();
        self.keys
            .extend(dests.iter().zip(0..n).map(|(d, index)| DestOrder {
                words: words(&d.destination.addr),
                v6: d.destination.addr.is_ipv6(),
                port: i32::from(d.destination.port),
                index,
            }));
        self.tmp.clear();
        self.tmp.extend_from_slice(&self.keys);
        msort(&mut self.keys, &mut self.tmp, &cmp_dests);
        self.order.extend(self.keys.iter().map(|k| k.index));
        &self.order
    }

    /// The order of `dests` into `self.order` by keys packed in `u64`s
    /// (address, port, index), when [`cmp_dests`] is a consistent order
    /// over them (see [`packed_services`]): all IPv4, the addresses within
    /// 2^31 of each other, fewer than 2^16 of them (10,000 services of 5,
    /// measured as there: 6.8 million instructions by the merge sort, 2.8
    /// million these). False otherwise.
    fn packed(&mut self, dests: &[DestinationEntry]) -> bool {
        let Ok(n) = u16::try_from(dests.len()) else {
            return false;
        };
        let n = u32::from(n);
        let (mut min, mut max) = (u32::MAX, 0);
        for d in dests {
            let IpAddr::V4(a) = d.destination.addr else {
                return false;
            };
            let a = u32::from(a);
            (min, max) = (min.min(a), max.max(a));
        }
        if !dests.is_empty() && !subtracts_truly(min, max) {
            return false;
        }
        self.packed.clear();
        self.packed
            .extend(dests.iter().zip(0u64..).map(|(d, index)| {
                let a = match d.destination.addr {
                    IpAddr::V4(a) => u64::from(u32::from(a)),
                    IpAddr::V6(_) => 0,
                };
                a << 32 | u64::from(d.destination.port) << 16 | index
            }));
        // The kernel lists a service's destinations newest first: often
        // the reverse of their order, when they were added in it.
        // (Measured on the host with `scripts/measure/ipvsadm-text-cost`, 10,000
        // services of 5 so: 3.4 million instructions sorted, 2.7 million
        // told.)
        if self.packed.windows(2).all(|w| w[0] >> 16 > w[1] >> 16) {
            self.order.extend((0..n).rev());
            return true;
        }
        self.packed.sort_unstable();
        self.order
            .extend(self.packed.iter().map(|&k| u32::from(k as u16)));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipvsnl::{Destination, Service};

    /// The merge sort of glibc, written as the old code of this crate did
    /// it (cloning at every level): the reference the keys must match.
    fn reference<T: Clone>(v: &mut [T], cmp: &dyn Fn(&T, &T) -> i32) {
        let n = v.len();
        if n <= 1 {
            return;
        }
        let n1 = n / 2;
        reference(&mut v[..n1], cmp);
        reference(&mut v[n1..], cmp);
        let mut merged = Vec::with_capacity(n);
        let (mut i, mut j) = (0, n1);
        while i < n1 && j < n {
            if cmp(&v[i], &v[j]) <= 0 {
                merged.push(v[i].clone());
                i += 1;
            } else {
                merged.push(v[j].clone());
                j += 1;
            }
        }
        merged.extend_from_slice(&v[i..n1]);
        merged.extend_from_slice(&v[j..n]);
        v.clone_from_slice(&merged);
    }

    /// A pseudo-random sequence (xorshift).
    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    #[test]
    fn services_sort_as_the_merge_sort_of_the_entries() {
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        for round in 0..50 {
            let n = (rng(&mut seed) % 40) as usize + round % 3;
            let entries: Vec<ServiceEntry> = (0..n)
                .map(|_| {
                    let r = rng(&mut seed);
                    // Addresses far apart so that subtraction overflows;
                    // families and fwmarks mixed.
                    let key = match r % 5 {
                        0 => ServiceKey::fwmark((r >> 8) as u32 | 1, AddressFamily::Inet),
                        1 => ServiceKey::fwmark((r >> 8) as u32 % 7 + 1, AddressFamily::Inet6),
                        2 => ServiceKey::tcp(
                            IpAddr::V6(std::net::Ipv6Addr::from(
                                u128::from(r) << 64 | u128::from(r),
                            )),
                            (r >> 48) as u16,
                        ),
                        3 => ServiceKey::udp(IpAddr::V4((r as u32).into()), (r >> 40) as u16),
                        _ => ServiceKey::tcp(
                            IpAddr::V4(((r >> 20) as u32).into()),
                            (r >> 40) as u16 % 3,
                        ),
                    };
                    ServiceEntry::new(Service::new(key))
                })
                .collect();
            let order = services(&entries, false);
            let mut expected: Vec<(ServiceOrder, usize)> = entries
                .iter()
                .enumerate()
                .map(|(i, e)| (ServiceOrder::of(&e.service.key, i as u32), i))
                .collect();
            reference(&mut expected, &|a, b| cmp_services(&a.0, &b.0));
            let expected: Vec<u32> = expected.iter().map(|e| e.1 as u32).collect();
            assert_eq!(order, expected);
            assert_eq!(services(&entries, true), (0..n as u32).collect::<Vec<_>>());
        }
    }

    /// IPv4 services and destinations whose addresses (and marks) are
    /// `spread` apart at most: the packed keys where that is below 2^31,
    /// the merge sort above; the same order as the reference either way.
    #[test]
    fn packed_keys_sort_as_the_merge_sort() {
        let mut seed = 0x2545_f491_4f6c_dd1d;
        // Rounds that took the merge sort, of services and destinations.
        let mut unpacked = (0, 0);
        for round in 0..120u64 {
            let spread: u64 = [1 << 8, (1 << 31) - 1, 1 << 31, 1 << 32][round as usize % 4];
            // Addresses from base to base + spread - 1, none wrapping.
            let base = (rng(&mut seed) % ((1 << 32) - spread + 1)) as u32;
            let n = (rng(&mut seed) % 60) as usize + 1;
            let v4 = |r: u64| IpAddr::V4((base + (r % spread) as u32).into());
            let entries: Vec<ServiceEntry> = (0..n)
                .map(|_| {
                    let r = rng(&mut seed);
                    let key = match r % 4 {
                        0 => {
                            ServiceKey::fwmark(((r >> 3) % spread) as u32 | 1, AddressFamily::Inet)
                        }
                        1 => ServiceKey::udp(v4(r >> 2), (r >> 50) as u16 % 4),
                        _ => ServiceKey::tcp(v4(r >> 2), (r >> 50) as u16 % 4),
                    };
                    ServiceEntry::new(Service::new(key))
                })
                .collect();
            let keys: Vec<ServiceOrder> = entries
                .iter()
                .zip(0..)
                .map(|(e, i)| ServiceOrder::of(&e.service.key, i))
                .collect();
            let mut expected = keys.clone();
            reference(&mut expected, &cmp_services);
            let expected: Vec<u32> = expected.iter().map(|k| k.index).collect();
            assert_eq!(services(&entries, false), expected, "spread {spread}");
            // The other services' marks are 0: the marks' spread is
            // `spread` too.
            let packed = packed_services(&keys).is_some();
            assert!(packed || spread >= 1 << 31, "spread {spread}");
            unpacked.0 += usize::from(!packed);

            let dests: Vec<DestinationEntry> = (0..n)
                .map(|_| {
                    let r = rng(&mut seed);
                    DestinationEntry::new(Destination::new(v4(r), (r >> 40) as u16 % 3))
                })
                .collect();
            let expected = merge_sort_order(&dests);
            let mut sorter = DestSorter::default();
            assert_eq!(sorter.order(&dests, false), expected, "spread {spread}");
            let packed = sorter.packed(&dests);
            assert!(packed || spread >= 1 << 31, "spread {spread}");
            unpacked.1 += usize::from(!packed);
        }
        assert!(unpacked.0 > 5 && unpacked.1 > 5, "{unpacked:?}");
    }

    /// The order glibc's merge sort gives IPv4 `dests` under ipvsadm's
    /// comparator: the reference the sorter must match.
    fn merge_sort_order(dests: &[DestinationEntry]) -> Vec<u32> {
        let mut keys: Vec<DestOrder> = dests
            .iter()
            .zip(0..)
            .map(|(d, index)| DestOrder {
                words: words(&d.destination.addr),
                v6: false,
                port: i32::from(d.destination.port),
                index,
            })
            .collect();
        reference(&mut keys, &cmp_dests);
        keys.iter().map(|k| k.index).collect()
    }

    /// Destinations newest first (the reverse of their order), in order,
    /// or nearly reversed (a tie, a swap): as the merge sort orders them.
    #[test]
    fn reversed_destinations_sort_as_the_merge_sort() {
        let d =
            |a: u32, port: u16| DestinationEntry::new(Destination::new(IpAddr::V4(a.into()), port));
        let reversed: Vec<_> = (0..6).rev().map(|i| d(0xac10_0000 + i, 80)).collect();
        let ordered: Vec<_> = (0..6).map(|i| d(0xac10_0000 + i, 80)).collect();
        let tie = vec![d(9, 80), d(5, 80), d(5, 80), d(1, 80)];
        let swap = vec![d(9, 80), d(5, 80), d(6, 80), d(1, 80)];
        let ports = vec![d(1, 90), d(1, 80), d(1, 70)];
        let mut sorter = DestSorter::default();
        for dests in [reversed, ordered, tie, swap, ports] {
            let expected = merge_sort_order(&dests);
            assert_eq!(sorter.order(&dests, false), expected);
        }
        let reversed: Vec<_> = (0..4).rev().map(|i| d(i, 1)).collect();
        assert_eq!(sorter.order(&reversed, false), &[3, 2, 1, 0]);
    }

    #[test]
    fn destinations_compare_by_the_first_ones_family() {
        let v4 = DestinationEntry::new(Destination::new("10.0.0.1".parse().unwrap(), 80));
        let v6 = DestinationEntry::new(Destination::new("ffff::1".parse().unwrap(), 80));
        let low = DestinationEntry::new(Destination::new("0.0.0.1".parse().unwrap(), 80));
        let mut s = DestSorter::default();
        // Subtracting as int: 0xffff0000 - 0x0a000001 is negative, so the
        // IPv6 address sorts first; 10.0.0.1 after 0.0.0.1.
        assert_eq!(s.order(&[v4, v6.clone(), low], false), &[1, 2, 0]);
        assert_eq!(s.order(&[v6.clone(), v6], false), &[0, 1]);
    }
}
