//! One table diff for the kernel tests and the soak: the kernel's table,
//! field by field, against the desired one, keys included. Written out
//! rather than through `Table::same_settings` so that every field is named
//! in a difference and nothing is forgiven: the only kernel addition set
//! aside is `HASHED` (set on every service it holds). (The kernel also
//! forces `Local` forwarding on a destination whose address is the
//! director's own; the tables compared here never have one.)
//!
//! ```
//! use ipvsnl::sync::Table;
//! use ipvsnl::{Destination, Service, ServiceKey};
//! use ipvsnl_test_support::table_diff::differences;
//!
//! let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
//! let d = Destination::new("172.16.0.1".parse().unwrap(), 80);
//! let mut want = Table::new();
//! want.insert(Service::new(key), [d.with_weight(1)]);
//! let mut found = Table::new();
//! found.insert(Service::new(key), [d.with_weight(2)]);
//! let diff = differences(&want, &found, |_| true);
//! assert_eq!(diff.len(), 1);
//! assert!(diff[0].contains("weight: wanted 1, kernel 2"), "{diff:?}");
//! ```

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::net::IpAddr;

use ipvsnl::sync::{Table, TableService};
use ipvsnl::{ServiceFlags, ServiceKey};

/// Every difference between `want` and the services of `found` that
/// `in_scope` accepts (every service of `want` must be in scope), each as
/// one line naming the key, the field and both values; empty when equal.
pub fn differences(
    want: &Table,
    found: &Table,
    in_scope: impl Fn(&ServiceKey) -> bool,
) -> Vec<String> {
    let mut out = Diffs::default();
    let want_keys: BTreeSet<&ServiceKey> = want.keys().collect();
    let found_keys: BTreeSet<&ServiceKey> = found.keys().filter(|k| in_scope(k)).collect();
    for k in want_keys.difference(&found_keys) {
        out.push(format!("{k}: wanted, missing from the kernel"));
    }
    for k in found_keys.difference(&want_keys) {
        let n = found.get(k).map_or(0, |s| s.destinations.len());
        out.push(format!("{k}: in the kernel ({n} destinations), not wanted"));
    }
    for k in want_keys.intersection(&found_keys) {
        if let (Some(w), Some(f)) = (want.get(k), found.get(k)) {
            service_differences(k, w, f, &mut out);
        }
    }
    out.lines
}

/// The first `max` of `lines`, then one line saying how many more there
/// were (`... and N more differences`), if any.
pub fn first(mut lines: Vec<String>, max: usize) -> Vec<String> {
    if lines.len() > max {
        let more = lines.len() - max;
        lines.truncate(max);
        lines.push(format!("... and {more} more differences"));
    }
    lines
}

/// Asserts that `got` (the kernel's) equals `want` field by field,
/// showing how many differences and the first ten; and that the library's
/// own comparison (`Table::same_settings`) agrees.
pub fn assert_tables_equal(what: &str, got: &Table, want: &Table) {
    let diff = differences(want, got, |_| true);
    assert!(
        diff.is_empty(),
        "{what}: the kernel holds {} services / {} destinations, wanted {} / {}; {} differences, first: {:#?}",
        got.len(),
        got.destination_count(),
        want.len(),
        want.destination_count(),
        diff.len(),
        &diff[..diff.len().min(10)]
    );
    assert!(
        got.same_settings(want),
        "{what}: Table::same_settings disagrees"
    );
}

/// The services of `t` that `keep` accepts, destinations included.
pub fn scoped(t: &Table, keep: impl Fn(&ServiceKey) -> bool) -> Table {
    let mut out = Table::new();
    for s in t.iter().filter(|s| keep(&s.service.key)) {
        out.insert(
            s.service.clone(),
            s.destinations.iter().map(|d| d.destination),
        );
    }
    out
}

/// Differences accumulated.
#[derive(Default)]
struct Diffs {
    lines: Vec<String>,
}

impl Diffs {
    fn push(&mut self, line: String) {
        self.lines.push(line);
    }

    /// Compares one field; records `key: what: wanted W, kernel F`.
    fn field<T: PartialEq + Debug>(&mut self, key: &dyn std::fmt::Display, what: &str, w: T, f: T) {
        if w != f {
            self.push(format!("{key}: {what}: wanted {w:?}, kernel {f:?}"));
        }
    }
}

/// A service's settings and destinations, field by field.
fn service_differences(key: &ServiceKey, w: &TableService, f: &TableService, out: &mut Diffs) {
    let (ws, fs) = (&w.service, &f.service);
    out.field(key, "key", ws.key, fs.key);
    out.field(key, "key (kernel row)", *key, fs.key);
    out.field(key, "scheduler", &ws.scheduler, &fs.scheduler);
    out.field(
        key,
        "flags",
        ws.flags - ServiceFlags::HASHED,
        fs.flags - ServiceFlags::HASHED,
    );
    out.field(key, "persistence timeout", ws.timeout, fs.timeout);
    out.field(key, "netmask", ws.netmask, fs.netmask);
    out.field(
        key,
        "persistence engine",
        &ws.persistence_engine,
        &fs.persistence_engine,
    );
    let ids = |t: &TableService| -> BTreeSet<(IpAddr, u16)> {
        t.destinations
            .iter()
            .map(|d| (d.destination.addr, d.destination.port))
            .collect()
    };
    let (wi, fi) = (ids(w), ids(f));
    for (a, p) in wi.difference(&fi) {
        out.push(format!("{key}: destination {a} port {p}: wanted, missing"));
    }
    for (a, p) in fi.difference(&wi) {
        out.push(format!(
            "{key}: destination {a} port {p}: in the kernel, not wanted"
        ));
    }
    if w.destinations.len() != wi.len() || f.destinations.len() != fi.len() {
        out.push(format!(
            "{key}: a destination listed twice (wanted {} for {} ids, kernel {} for {})",
            w.destinations.len(),
            wi.len(),
            f.destinations.len(),
            fi.len()
        ));
    }
    for wd in &w.destinations {
        let (a, p) = (wd.destination.addr, wd.destination.port);
        let Some(fd) = f.destination(&a, p) else {
            continue;
        };
        let (wd, fd) = (&wd.destination, &fd.destination);
        let at = format!("{key} -> {}", Endpoint(a, p));
        out.field(&at, "forwarding (with tunnel)", wd.forward, fd.forward);
        out.field(&at, "weight", wd.weight, fd.weight);
        out.field(
            &at,
            "upper threshold",
            wd.upper_threshold,
            fd.upper_threshold,
        );
        out.field(
            &at,
            "lower threshold",
            wd.lower_threshold,
            fd.lower_threshold,
        );
    }
}

/// An address and port as ipvsadm prints them.
struct Endpoint(IpAddr, u16);

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            IpAddr::V4(a) => write!(f, "{a}:{}", self.1),
            IpAddr::V6(a) => write!(f, "[{a}]:{}", self.1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipvsnl::{Destination, Forward, Service, Tunnel};

    fn key(i: u8) -> ServiceKey {
        ServiceKey::tcp(IpAddr::from([10, 10, 0, i]), 80)
    }

    fn table(weight: u32, gue_port: u16) -> Table {
        let mut t = Table::new();
        t.insert(
            Service::new(key(1)),
            [
                Destination::new(IpAddr::from([10, 20, 0, 1]), 80).with_weight(weight),
                Destination::new(IpAddr::from([10, 20, 0, 2]), 80)
                    .with_forward(Forward::Tunnel(Tunnel::gue(gue_port))),
            ],
        );
        t.insert(Service::new(key(2)), []);
        t
    }

    fn ours(k: &ServiceKey) -> bool {
        matches!(k, ServiceKey::Inet { addr: IpAddr::V4(a), .. } if a.octets()[..2] == [10, 10])
    }

    #[test]
    fn equal_tables_and_the_kernels_hashed_flag_are_no_difference() {
        let want = table(1, 6080);
        assert!(differences(&want, &want.clone(), ours).is_empty());
        let mut found = want.clone();
        let mut svc = found.remove(&key(2)).unwrap().service;
        svc.flags |= ServiceFlags::HASHED;
        found.insert(svc, []);
        assert!(differences(&want, &found, ours).is_empty());
    }

    #[test]
    fn a_skipped_request_is_a_difference_named_by_field() {
        let want = table(1, 6080);
        let d = differences(&want, &table(2, 6080), ours);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].contains("weight: wanted 1, kernel 2"), "{d:?}");
        let d = differences(&want, &table(1, 6081), ours);
        assert!(d[0].contains("forwarding"), "{d:?}");
        let mut found = want.clone();
        found.remove(&key(2));
        let d = differences(&want, &found, ours);
        assert!(d[0].contains("missing from the kernel"), "{d:?}");
        let mut found = want.clone();
        let old = found.remove(&key(1)).unwrap();
        found.insert(old.service, [old.destinations[1].destination]);
        let d = differences(&want, &found, ours);
        assert!(
            d[0].contains("destination 10.20.0.1 port 80: wanted, missing"),
            "{d:?}"
        );
    }

    #[test]
    fn services_out_of_scope_are_not_compared_but_extra_ones_in_scope_are() {
        let want = table(1, 6080);
        let mut found = want.clone();
        found.insert(
            Service::new(ServiceKey::tcp(IpAddr::from([192, 168, 50, 1]), 80)),
            [],
        );
        assert!(differences(&want, &found, ours).is_empty());
        found.insert(Service::new(key(3)), []);
        let d = differences(&want, &found, ours);
        assert!(d[0].contains("not wanted"), "{d:?}");
    }

    #[test]
    fn first_keeps_the_first_lines_and_counts_the_rest() {
        let lines: Vec<String> = (0..10).map(|i| i.to_string()).collect();
        assert_eq!(first(lines.clone(), 10), lines);
        let cut = first(lines, 8);
        assert_eq!(cut.len(), 9);
        assert_eq!(cut[7], "7");
        assert_eq!(cut[8], "... and 2 more differences");
    }
}
