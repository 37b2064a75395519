//! The walk of a service dump over the kernel's service tables, which are
//! one for every namespace: each part of a dump walks every namespace's
//! services in bucket order, lists its own namespace's, and counts them
//! all (`cb->args[0]` of `ip_vs_genl_dump_services` in Linux 6.1 and
//! 6.12), so the next part resumes at a count over every namespace. A
//! service another namespace adds or deletes between two parts, before
//! where the dump stopped, makes its next part repeat or skip one of
//! ours.

use std::ops::Bound;

use super::table::{DumpPlace, NsTable};

/// Every namespace's table, by name.
pub(crate) type Tables = [(String, NsTable)];

/// A number that changes whenever any namespace's table does.
pub(crate) fn generation(all: &Tables) -> u64 {
    all.iter()
        .fold(0u64, |sum, (_, t)| sum.wrapping_add(t.generation))
}

/// How many services of namespaces other than `own` are from `from` to
/// before `to` in the walk.
pub(crate) fn others_between(
    all: &Tables,
    own: usize,
    from: Bound<DumpPlace>,
    to: Bound<DumpPlace>,
) -> usize {
    all.iter()
        .enumerate()
        .filter(|(i, _)| *i != own)
        .map(|(_, (_, t))| t.count_between(from, to))
        .sum()
}

/// Where the walk goes on after skipping its first `n` services (of every
/// namespace), as the kernel resumes a dump from `cb->args[0]`; `None`
/// when there are not that many.
pub(crate) fn after_first(all: &Tables, n: usize) -> Option<Bound<DumpPlace>> {
    if n == 0 {
        return Some(Bound::Unbounded);
    }
    let mut places: Vec<DumpPlace> = all.iter().flat_map(|(_, t)| t.places()).collect();
    if places.len() < n {
        return None;
    }
    let (_, nth, _) = places.select_nth_unstable(n - 1);
    Some(Bound::Excluded(*nth))
}

/// A place after every service's: where a walk that reached the end of
/// the tables stands.
pub(crate) const END: DumpPlace = (true, u8::MAX, std::cmp::Reverse(0));
