//! Maps keyed by a real server's id, hashed cheaply: the daemon looks a
//! server up a few times a check (its schedule, its result, its health),
//! and the standard library's SipHash of a service key, an address and a
//! port cost about 590 instructions a lookup, 1,700 of the 10,359 a TCP
//! check cost (callgrind, benches/AGENT.md). The keys come from the
//! configuration file, not from the network, so a hash that resists
//! chosen collisions is not needed. [`IdHasher`] also hashes a fleet
//! watcher's value digests (`fleet::store::values`).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use ipvsnl::sync::DestinationId;

/// A map keyed by a real server's id, with [`IdHasher`].
pub(crate) type IdMap<V> = HashMap<DestinationId, V, BuildHasherDefault<IdHasher>>;

/// A multiply-and-rotate hash over 64-bit words: each word mixed in by an
/// odd constant (the golden ratio's 64-bit fraction), the state rotated so
/// that every input bit reaches the high bits the table's probe uses.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct IdHasher(u64);

/// 2^64 divided by the golden ratio, made odd.
const K: u64 = 0x9e37_79b9_7f4a_7c15;

impl IdHasher {
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(K);
    }
}

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.mix(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.mix(u64::from(n));
    }

    fn write_u16(&mut self, n: u16) {
        self.mix(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.mix(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    fn finish(&self) -> u64 {
        // The last multiply leaves the low bits weakest: fold the high
        // ones down (the table takes its bucket from the low bits).
        self.0 ^ (self.0 >> 32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::hash::BuildHasher;
    use std::net::IpAddr;

    use ipvsnl::ServiceKey;

    fn hash(id: &DestinationId) -> u64 {
        BuildHasherDefault::<IdHasher>::default().hash_one(id)
    }

    #[test]
    fn the_ids_of_a_large_table_hash_apart() {
        // 1,000 services x 4 servers, as the cost measurement's, and
        // their low bits (a table's buckets) too.
        let mut all = HashSet::new();
        let mut low = HashSet::new();
        for i in 0..1000u32 {
            let vip = IpAddr::from([10, 41, (i / 250) as u8, (i % 250 + 1) as u8]);
            for s in 1..=4u8 {
                let id = (ServiceKey::tcp(vip, 80), IpAddr::from([10, 30, s, 2]), 8080);
                let h = hash(&id);
                all.insert(h);
                low.insert(h & 0xfff);
            }
        }
        assert_eq!(all.len(), 4000);
        // 4,000 ids in 4,096 buckets: a uniform hash fills about 2,570.
        assert!(low.len() > 2400, "{} buckets of 4096", low.len());
    }

    #[test]
    fn a_map_finds_what_it_holds() {
        let mut m: IdMap<u32> = IdMap::default();
        let id = |p: u16| {
            (
                ServiceKey::tcp(IpAddr::from([192, 0, 2, 1]), 80),
                IpAddr::from([10, 0, 0, 1]),
                p,
            )
        };
        for p in 0..100 {
            m.insert(id(p), u32::from(p));
        }
        for p in 0..100 {
            assert_eq!(m.get(&id(p)), Some(&u32::from(p)));
        }
        assert_eq!(m.get(&id(100)), None);
    }
}
