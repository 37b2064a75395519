//! Repeats of a resumed dump: the kernel resumes a dump by a position
//! counted over every network namespace's entries, so an entry added or
//! removed elsewhere meanwhile can make it send one of ours again (measured
//! on 6.1 and 6.12; nothing marks it). Keys are unique within a namespace,
//! so a repeat is always such an artifact and is dropped here, whatever
//! driver did the listing.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// Drops repeated entries, keeping the first of each key in order.
///
/// A dump continues where it stopped by counting entries of every network
/// namespace, so entries added or removed elsewhere meanwhile can make the
/// kernel send one of ours again (measured on 6.1 and 6.12; nothing marks
/// it). Keys are unique within a namespace, so a repeat is always such an
/// artifact. (An entry can also be skipped that way; the sync engine lists
/// twice for that reason.)
///
/// Measured (A/B under qemu icount, kernel 6.1, medians of 3 rounds): a
/// standard `HashSet` of the keys for every list instead (no pairwise check,
/// SipHash) made the 10,000 x 5 listing through `Client::table` take 0.660 s
/// of guest time instead of 0.653 s: 1.1 %, at the edge of what icount
/// resolves, for 80 lines of hashers.
pub(crate) fn keep_first<T, K: Hash + Eq>(entries: &mut Vec<T>, key: impl Fn(&T) -> K) {
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
