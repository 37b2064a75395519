//! Arbitrary bytes as the payload of a nest, read every way the crate
//! offers: as a service nest, a destination nest and a counters nest, each
//! by the owned parse (the attribute enums) and the one-pass values; and as
//! a message's attributes by `find_attr`.
//!
//! Checked, besides "never panics":
//! * what the owned parse accepts, every one-pass reading accepts, and they
//!   agree on every field (the last of a repeated attribute counts);
//! * wherever the values succeed, the counters nests they hand over unread
//!   pass, read on their own, the counters-nest check of the last point;
//! * `DestValues::visit` hands over exactly the owned parse's known
//!   attributes, in order, and `DestValues::read` is their fold;
//! * a counters nest: the owned parse and `StatsValues::read` (its fast
//!   path for the kernel's layout included) accept the same bytes.
//!
//! The converse of the first point does not hold: the one-pass readings
//! hand the counters nests over unread, so a malformed counters nest fails
//! only the owned parse.
#![no_main]

use ipvsnl_wire::netlink_packet_core::{DecodeError, NlaBuffer, NlasIterator, Parseable};
use ipvsnl_wire::{
    find_attr, DestAttr, DestValue, DestValues, ServiceAttr, ServiceValues, StatsAttr, StatsField,
    StatsValues,
};
use libfuzzer_sys::fuzz_target;

/// The owned parse of a nest's payload, as the crate parses a nest.
fn owned<A>(nest: &[u8]) -> Option<Vec<A>>
where
    A: for<'a> Parseable<NlaBuffer<&'a [u8]>>,
{
    NlasIterator::new(nest)
        .map(|nla| A::parse(&nla?))
        .collect::<Result<Vec<A>, DecodeError>>()
        .ok()
}

type Counters = [Option<u64>; StatsField::ALL.len()];

fn counters_of(v: &StatsValues) -> Counters {
    StatsField::ALL.map(|f| v.get(f))
}

/// The counters of an owned stats nest, the last of each field counting.
fn counters_folded(attrs: &[StatsAttr]) -> Counters {
    let mut out = [None; StatsField::ALL.len()];
    for (field, v) in attrs.iter().filter_map(StatsAttr::value) {
        let at = StatsField::ALL.iter().position(|&f| f == field).unwrap();
        out[at] = Some(v);
    }
    out
}

/// A counters nest, every way; its counters when the one-pass read takes it.
fn stats(nest: &[u8]) -> Option<Counters> {
    let values = StatsValues::read(nest, "fuzz stats");
    let owned = owned::<StatsAttr>(nest);
    assert_eq!(values.is_ok(), owned.is_some(), "{values:?} vs {owned:?}");
    let values = counters_of(&values.ok()?);
    assert_eq!(values, counters_folded(&owned.unwrap()));
    Some(values)
}

/// A counters nest handed over raw by the values, read as a counters nest
/// (whether or not the owned parse took the nest around it).
fn stats_raw(raw: Option<&[u8]>) {
    if let Some(raw) = raw {
        stats(raw);
    }
}

/// An owned counters nest against the raw one the values handed over.
fn stats_owned(raw: Option<&[u8]>, owned: Option<&[StatsAttr]>) {
    match (raw, owned) {
        (None, None) => {}
        (Some(raw), Some(owned)) => {
            let values = StatsValues::read(raw, "fuzz stats").unwrap();
            assert_eq!(counters_of(&values), counters_folded(owned));
        }
        (raw, owned) => panic!("stats: {raw:?} vs {owned:?}"),
    }
}

fn service(nest: &[u8]) {
    let values = ServiceValues::read(nest);
    let owned = owned::<ServiceAttr>(nest);
    if values.is_err() {
        assert!(
            owned.is_none(),
            "{values:?}, but the owned parse: {owned:?}"
        );
    }
    let Ok(v) = values else { return };
    stats_raw(v.stats);
    stats_raw(v.stats64);

    let Some(attrs) = owned else { return };
    let mut want = ServiceValues::default();
    let (mut stats, mut stats64) = (None, None);
    for a in &attrs {
        match a {
            ServiceAttr::AddressFamily(x) => want.address_family = Some(*x),
            ServiceAttr::Protocol(x) => want.protocol = Some(*x),
            ServiceAttr::Address(x) => want.address = Some(*x),
            ServiceAttr::Port(x) => want.port = Some(*x),
            ServiceAttr::Fwmark(x) => want.fwmark = Some(*x),
            ServiceAttr::Scheduler(x) => want.scheduler = Some(x.as_str()),
            ServiceAttr::Flags(x) => want.flags = Some(*x),
            ServiceAttr::Timeout(x) => want.timeout = Some(*x),
            ServiceAttr::Netmask(x) => want.netmask = Some(*x),
            ServiceAttr::PersistenceEngine(x) => want.persistence_engine = Some(x.as_str()),
            ServiceAttr::Stats(x) => stats = Some(&x[..]),
            ServiceAttr::Stats64(x) => stats64 = Some(&x[..]),
            _ => {}
        }
    }
    stats_owned(v.stats, stats);
    stats_owned(v.stats64, stats64);
    // The counters compared above; the rest field by field.
    want.stats = v.stats;
    want.stats64 = v.stats64;
    assert_eq!(want, v);
}

/// A known destination attribute as `DestValues::visit` hands it over
/// (the counters nests apart: compared by their counters).
fn as_value(a: &DestAttr) -> Option<DestValue<'static>> {
    use DestAttr as A;
    use DestValue as V;
    Some(match *a {
        A::Address(x) => V::Address(x),
        A::Port(x) => V::Port(x),
        A::ForwardMethod(x) => V::ForwardMethod(x),
        A::Weight(x) => V::Weight(x),
        A::UpperThreshold(x) => V::UpperThreshold(x),
        A::LowerThreshold(x) => V::LowerThreshold(x),
        A::ActiveConns(x) => V::ActiveConns(x),
        A::InactiveConns(x) => V::InactiveConns(x),
        A::PersistentConns(x) => V::PersistentConns(x),
        A::AddressFamily(x) => V::AddressFamily(x),
        A::TunnelType(x) => V::TunnelType(x),
        A::TunnelPort(x) => V::TunnelPort(x),
        A::TunnelFlags(x) => V::TunnelFlags(x),
        _ => return None,
    })
}

fn dest(nest: &[u8]) {
    let mut seen = Vec::new();
    let visited = DestValues::visit(nest, |x| seen.push(x));
    let values = DestValues::read(nest);
    let owned = owned::<DestAttr>(nest);
    assert_eq!(visited.is_ok(), values.is_ok());
    if values.is_err() {
        assert!(
            owned.is_none(),
            "{values:?}, but the owned parse: {owned:?}"
        );
    }
    let Ok(v) = values else { return };

    // `read` is the fold of `visit`, the last one counting.
    let mut folded = DestValues::default();
    for x in &seen {
        match *x {
            DestValue::Address(x) => folded.address = Some(x),
            DestValue::Port(x) => folded.port = Some(x),
            DestValue::ForwardMethod(x) => folded.forward_method = Some(x),
            DestValue::Weight(x) => folded.weight = Some(x),
            DestValue::UpperThreshold(x) => folded.upper_threshold = Some(x),
            DestValue::LowerThreshold(x) => folded.lower_threshold = Some(x),
            DestValue::ActiveConns(x) => folded.active_conns = Some(x),
            DestValue::InactiveConns(x) => folded.inactive_conns = Some(x),
            DestValue::PersistentConns(x) => folded.persistent_conns = Some(x),
            DestValue::AddressFamily(x) => folded.address_family = Some(x),
            DestValue::TunnelType(x) => folded.tunnel_type = Some(x),
            DestValue::TunnelPort(x) => folded.tunnel_port = Some(x),
            DestValue::TunnelFlags(x) => folded.tunnel_flags = Some(x),
            DestValue::Stats(x) => folded.stats = Some(x),
            DestValue::Stats64(x) => folded.stats64 = Some(x),
            _ => {}
        }
    }
    assert_eq!(folded, v);
    stats_raw(v.stats);
    stats_raw(v.stats64);

    // The visit is the owned parse without its unknown attributes.
    let Some(attrs) = owned else { return };
    let known: Vec<&DestAttr> = attrs
        .iter()
        .filter(|a| !matches!(a, DestAttr::Other(_)))
        .collect();
    assert_eq!(seen.len(), known.len(), "{seen:?} vs {known:?}");
    for (got, a) in seen.iter().zip(known) {
        match (got, a) {
            (DestValue::Stats(raw), DestAttr::Stats(o))
            | (DestValue::Stats64(raw), DestAttr::Stats64(o)) => {
                stats_owned(Some(*raw), Some(&o[..]))
            }
            _ => assert_eq!(Some(*got), as_value(a)),
        }
    }
}

/// `find_attr` against the owned iterator: the first payload of `kind`, and
/// an error wherever the iterator meets one.
fn find(attrs: &[u8], kind: u16) {
    let found = find_attr(attrs, kind);
    let mut want = None;
    for nla in NlasIterator::new(attrs) {
        match nla {
            Ok(nla) if nla.kind() == kind && want.is_none() => {
                // The payload, borrowed from `attrs` (not from `nla`).
                let end = usize::from(nla.length());
                want = Some(&nla.into_inner()[4..end]);
            }
            Ok(_) => {}
            Err(_) => {
                assert!(found.is_err(), "{found:?}");
                return;
            }
        }
    }
    assert_eq!(found.unwrap(), want);
}

fuzz_target!(|data: &[u8]| {
    service(data);
    dest(data);
    stats(data);
    for kind in [1, 2, data.first().map_or(0, |&k| u16::from(k))] {
        find(data, kind);
    }
});
