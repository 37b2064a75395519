//! The one-pass values against the owned parse: on every captured message,
//! and on random and mutated bytes, whatever the owned parse accepts the
//! values read to the same values (and nothing panics either way).

use ipvsnl_wire::netlink_packet_core::{Nla, NlasIterator, Parseable, ParseableParametrized};
use ipvsnl_wire::netlink_packet_generic::GenlHeader;
use ipvsnl_wire::*;

use crate::{fixture_messages, Rng};

/// A value in a form both readings can give: (attribute number, text).
type Canon = Vec<(u16, String)>;

fn text<T: std::fmt::Debug>(v: T) -> String {
    format!("{v:?}")
}

/// None if a field repeats (the values keep the last, the owned parse all).
fn stats_owned(nest: &[StatsAttr]) -> Option<String> {
    let mut pairs: Vec<(StatsField, u64)> = nest.iter().filter_map(StatsAttr::value).collect();
    pairs.sort_by_key(|(f, _)| f.kind());
    let n = pairs.len();
    pairs.dedup_by_key(|(f, _)| *f);
    (pairs.len() == n).then(|| text(pairs))
}

/// The owned nest's known attributes by number; None if a number repeats
/// (the values keep the last, the owned parse all).
fn sorted(mut c: Canon) -> Option<Canon> {
    c.sort();
    let n = c.len();
    c.dedup_by_key(|(k, _)| *k);
    (c.len() == n).then_some(c)
}

/// What the test compares of one owned attribute.
enum Known<'a> {
    Text(String),
    Stats(&'a [StatsAttr]),
    Unknown,
}

fn owned<A: Nla>(nest: &[A], known: impl Fn(&A) -> Known<'_>) -> Option<Canon> {
    let mut c = Canon::new();
    for a in nest {
        let t = match known(a) {
            Known::Text(t) => t,
            Known::Stats(n) => stats_owned(n)?,
            Known::Unknown => continue,
        };
        c.push((a.kind(), t));
    }
    sorted(c)
}

fn service_owned(nest: &[ServiceAttr]) -> Option<Canon> {
    use ServiceAttr::*;
    owned(nest, |a| match a {
        AddressFamily(v) | Protocol(v) | Port(v) => Known::Text(text(v)),
        Fwmark(v) | Timeout(v) => Known::Text(text(v)),
        Address(v) => Known::Text(text(v)),
        Netmask(v) => Known::Text(text(v)),
        Flags(v) => Known::Text(text(v)),
        Scheduler(v) | PersistenceEngine(v) => Known::Text(text(v.as_str())),
        Stats(n) | Stats64(n) => Known::Stats(n),
        _ => Known::Unknown,
    })
}

fn dest_owned(nest: &[DestAttr]) -> Option<Canon> {
    use DestAttr::*;
    owned(nest, |a| match a {
        Address(v) => Known::Text(text(v)),
        Port(v) | AddressFamily(v) | TunnelPort(v) | TunnelFlags(v) => Known::Text(text(v)),
        ForwardMethod(v) | Weight(v) | UpperThreshold(v) | LowerThreshold(v) | ActiveConns(v)
        | InactiveConns(v) | PersistentConns(v) => Known::Text(text(v)),
        TunnelType(v) => Known::Text(text(v)),
        Stats(n) | Stats64(n) => Known::Stats(n),
        _ => Known::Unknown,
    })
}

fn some<T: std::fmt::Debug>(c: &mut Canon, kind: u16, v: Option<T>) {
    if let Some(v) = v {
        c.push((kind, text(v)));
    }
}

/// The counters of a [`StatsValues`], in the form of [`stats_owned`].
fn stats_values(v: &StatsValues) -> String {
    let pairs: Vec<(StatsField, u64)> = StatsField::ALL
        .into_iter()
        .filter_map(|f| v.get(f).map(|x| (f, x)))
        .collect();
    text(pairs)
}

fn some_stats(c: &mut Canon, kind: u16, nest: Option<&[u8]>) {
    if let Some(nest) = nest {
        let v = StatsValues::read(nest, "stats").unwrap();
        c.push((kind, stats_values(&v)));
    }
}

fn service_values(v: &ServiceValues<'_>) -> Canon {
    let mut c = Canon::new();
    some(&mut c, IPVS_SVC_ATTR_AF, v.address_family);
    some(&mut c, IPVS_SVC_ATTR_PROTOCOL, v.protocol);
    some(&mut c, IPVS_SVC_ATTR_ADDR, v.address);
    some(&mut c, IPVS_SVC_ATTR_PORT, v.port);
    some(&mut c, IPVS_SVC_ATTR_FWMARK, v.fwmark);
    some(&mut c, IPVS_SVC_ATTR_SCHED_NAME, v.scheduler);
    some(&mut c, IPVS_SVC_ATTR_FLAGS, v.flags);
    some(&mut c, IPVS_SVC_ATTR_TIMEOUT, v.timeout);
    some(&mut c, IPVS_SVC_ATTR_NETMASK, v.netmask);
    some_stats(&mut c, IPVS_SVC_ATTR_STATS, v.stats);
    some(&mut c, IPVS_SVC_ATTR_PE_NAME, v.persistence_engine);
    some_stats(&mut c, IPVS_SVC_ATTR_STATS64, v.stats64);
    c.sort();
    c
}

fn dest_values(v: &DestValues<'_>) -> Canon {
    let mut c = Canon::new();
    some(&mut c, IPVS_DEST_ATTR_ADDR, v.address);
    some(&mut c, IPVS_DEST_ATTR_PORT, v.port);
    some(&mut c, IPVS_DEST_ATTR_FWD_METHOD, v.forward_method);
    some(&mut c, IPVS_DEST_ATTR_WEIGHT, v.weight);
    some(&mut c, IPVS_DEST_ATTR_U_THRESH, v.upper_threshold);
    some(&mut c, IPVS_DEST_ATTR_L_THRESH, v.lower_threshold);
    some(&mut c, IPVS_DEST_ATTR_ACTIVE_CONNS, v.active_conns);
    some(&mut c, IPVS_DEST_ATTR_INACT_CONNS, v.inactive_conns);
    some(&mut c, IPVS_DEST_ATTR_PERSIST_CONNS, v.persistent_conns);
    some_stats(&mut c, IPVS_DEST_ATTR_STATS, v.stats);
    some(&mut c, IPVS_DEST_ATTR_ADDR_FAMILY, v.address_family);
    some_stats(&mut c, IPVS_DEST_ATTR_STATS64, v.stats64);
    some(&mut c, IPVS_DEST_ATTR_TUN_TYPE, v.tunnel_type);
    some(&mut c, IPVS_DEST_ATTR_TUN_PORT, v.tunnel_port);
    some(&mut c, IPVS_DEST_ATTR_TUN_FLAGS, v.tunnel_flags);
    c.sort();
    c
}

/// Reads every counters nest the values hand over (the owned parse may
/// have refused the message around it), each against the owned parse of
/// that nest alone; returns how many were compared.
fn counters_agree(attrs: &[u8]) -> usize {
    let mut nests = Vec::new();
    if let Ok(Some(v)) = ServiceValues::find(attrs) {
        nests.extend([v.stats, v.stats64]);
    }
    if let Ok(Some(v)) = DestValues::find(attrs) {
        nests.extend([v.stats, v.stats64]);
    }
    nests.into_iter().flatten().map(stats_agree).sum()
}

/// Compares the values with the owned parse of one message's attribute
/// bytes; returns how many service and destination nests were compared,
/// and how many counters nests.
fn values_agree(command: u8, attrs: &[u8]) -> (usize, usize) {
    let counters = counters_agree(attrs);
    let header = GenlHeader {
        cmd: command,
        version: 1,
    };
    let Ok(owned) = IpvsMessage::parse_with_param(attrs, header) else {
        return (0, counters);
    };
    if owned.command == IpvsCommand::SetInfo {
        return (0, 0); // attribute 1 is the version there, not a service
    }
    let service = owned.attrs.iter().find_map(|a| match a {
        IpvsAttr::Service(n) => Some(service_owned(n)),
        _ => None,
    });
    let dest = owned.attrs.iter().find_map(|a| match a {
        IpvsAttr::Dest(n) => Some(dest_owned(n)),
        _ => None,
    });
    let accepted = "the owned parse accepted the message";
    let nests = agree(
        service,
        ServiceValues::find(attrs).expect(accepted),
        service_values,
    ) + agree(dest, DestValues::find(attrs).expect(accepted), dest_values);
    (nests, counters)
}

/// Whether the values were found where the owned parse found a nest, and
/// read the same (unless a number repeats); 1 if compared.
fn agree<V>(owned: Option<Option<Canon>>, values: Option<V>, read: fn(&V) -> Canon) -> usize {
    assert_eq!(values.is_some(), owned.is_some());
    match (owned, values) {
        (Some(Some(want)), Some(values)) => {
            assert_eq!(read(&values), want);
            1
        }
        _ => 0,
    }
}

/// A counters nest read by [`StatsValues::read`] and by the owned parse:
/// whatever the owned parse accepts, the values read to the same counters
/// (unless a field repeats); 1 if compared.
fn stats_agree(nest: &[u8]) -> usize {
    let values = StatsValues::read(nest, "stats");
    let owned: Result<Vec<StatsAttr>, _> = NlasIterator::new(nest)
        .map(|nla| StatsAttr::parse(&nla?))
        .collect();
    let Ok(owned) = owned else {
        return 0;
    };
    let values = values.expect("the owned parse accepted the nest");
    match stats_owned(&owned) {
        Some(want) => {
            assert_eq!(stats_values(&values), want);
            1
        }
        None => 0,
    }
}

#[test]
fn values_read_every_fixture_as_the_owned_parse_does() {
    let (mut nests, mut counters) = (0, 0);
    for m in fixture_messages() {
        if m.len() > 20 && u16::from_ne_bytes([m[4], m[5]]) >= 0x10 {
            let (n, c) = values_agree(m[16], &m[20..]);
            nests += n;
            counters += c;
        }
    }
    // 3 services + 1 get + 4 destinations, on both kernels; each with its
    // STATS and STATS64.
    assert_eq!((nests, counters), (16, 32));
}

#[test]
fn values_agree_on_random_and_mutated_bytes_and_never_panic() {
    let mut r = Rng(0x0bad_cafe_f00d_d00d);
    for _ in 0..20_000 {
        let len = (r.next() % 160) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| r.next() as u8).collect();
        values_agree(1, &bytes);
        stats_agree(&bytes);
    }
    let messages: Vec<Vec<u8>> = fixture_messages()
        .into_iter()
        .filter(|m| m.len() > 20)
        .collect();
    let (mut nests, mut counters) = (0, 0);
    for _ in 0..20_000 {
        let mut m = messages[(r.next() % messages.len() as u64) as usize].clone();
        for _ in 0..1 + r.next() % 4 {
            // Mostly inside the attributes, where the nests are.
            let i = 20 + (r.next() % (m.len() as u64 - 20)) as usize;
            m[i] = r.next() as u8;
        }
        if r.next() % 3 == 1 {
            m.truncate(20 + (r.next() % (m.len() as u64 - 19)) as usize);
        }
        let (n, c) = values_agree(m[16], &m[20..]);
        nests += n;
        counters += c;
    }
    assert!(nests > 1000, "only {nests} mutated nests parsed");
    assert!(
        counters > 1000,
        "only {counters} mutated counters nests parsed"
    );
}
