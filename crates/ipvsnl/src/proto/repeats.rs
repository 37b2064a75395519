//! Repeats of a resumed dump: the kernel resumes a dump by a position
//! counted over every network namespace's entries, so an entry added or
//! removed elsewhere meanwhile can make it send one of ours again (measured
//! on 6.1 and 6.12; nothing marks it). Keys are unique within a namespace,
//! so a repeat is always such an artifact and is dropped here, whatever
//! driver did the listing.

use std::hash::{BuildHasher, Hash};

use rustc_hash::{FxBuildHasher, FxHashSet};

/// Drops repeated entries, keeping the first of each key in order.
///
/// A dump continues where it stopped by counting entries of every network
/// namespace, so entries added or removed elsewhere meanwhile can make the
/// kernel send one of ours again (measured on 6.1 and 6.12; nothing marks
/// it). Keys are unique within a namespace, so a repeat is always such an
/// artifact. (An entry can also be skipped that way: a whole listing checks
/// itself for that, see `listing::whole`.)
///
/// Hashed with `rustc-hash`'s Fx hasher: a few instructions per word
/// where the standard one runs SipHash rounds (a standard `HashSet` of the
/// keys for every list made the 10,000 x 5 listing 1.1 % slower under
/// qemu icount, kernel 6.1). Not resistant to chosen collisions, which is
/// fine here: the keys are the kernel's listing of this namespace's own
/// table, deduplicated once.
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
        let mut seen = FxHashSet::with_capacity_and_hasher(n, FxBuildHasher);
        entries.retain(|e| seen.insert(key(e)));
    }
}

/// Whether two entries' keys have the same hash. A set of hashes is a
/// third of the size of a set of service keys, and that is what a listing
/// of tens of thousands of services pays for.
fn hashes_repeat<T, K: Hash>(entries: &[T], key: impl Fn(&T) -> K) -> bool {
    let mut seen = FxHashSet::with_capacity_and_hasher(entries.len(), FxBuildHasher);
    entries
        .iter()
        .any(|e| !seen.insert(FxBuildHasher.hash_one(key(e))))
}

#[cfg(test)]
mod tests {
    use super::keep_first;

    #[test]
    fn the_hasher_tells_keys_apart() {
        use std::hash::BuildHasher;
        let hash = |k: &crate::ServiceKey| rustc_hash::FxBuildHasher.hash_one(k);
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
