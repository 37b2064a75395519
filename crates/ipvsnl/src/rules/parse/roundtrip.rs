//! The reader against the library's printer: any table the printer can
//! write down in full, printed with `service_rule` / `destination_rule`
//! and `Numeric`, reads back (and replays) to the same table. Random
//! lines never make the reader panic.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;

use super::*;
use crate::rules::{request_rule, table_rules, Numeric};
use crate::{
    AddressFamily, Destination, Forward, Netmask, Scheduler, Service, ServiceFlags, ServiceKey,
    Tunnel, TunnelFlags, WEIGHT_MAX,
};

fn v4() -> impl Strategy<Value = IpAddr> {
    // Unicast: 1.0.0.0 to 223.255.255.254.
    (1u8..=223, any::<u8>(), any::<u8>(), 1u8..=254)
        .prop_map(|(a, b, c, d)| IpAddr::V4(Ipv4Addr::new(a, b, c, d)))
}

fn v6() -> impl Strategy<Value = IpAddr> {
    // Not multicast (ff00::/8), not unspecified.
    (0x2000u16..0xfe00, any::<[u16; 7]>()).prop_map(|(first, rest)| {
        IpAddr::V6(Ipv6Addr::new(
            first, rest[0], rest[1], rest[2], rest[3], rest[4], rest[5], rest[6],
        ))
    })
}

fn key() -> impl Strategy<Value = ServiceKey> {
    let addr = prop_oneof![v4(), v6()];
    prop_oneof![
        (addr.clone(), any::<u16>()).prop_map(|(a, p)| ServiceKey::tcp(a, p)),
        (addr.clone(), any::<u16>()).prop_map(|(a, p)| ServiceKey::udp(a, p)),
        (addr, any::<u16>()).prop_map(|(a, p)| ServiceKey::sctp(a, p)),
        (1u32.., any::<bool>()).prop_map(|(m, six)| {
            let family = if six {
                AddressFamily::Inet6
            } else {
                AddressFamily::Inet
            };
            ServiceKey::fwmark(m, family)
        }),
    ]
}

fn scheduler() -> impl Strategy<Value = Scheduler> {
    let named: Vec<Scheduler> = Scheduler::named().collect();
    prop_oneof![
        proptest::sample::select(named),
        "[a-z][a-z0-9_]{0,14}".prop_map(|n| Scheduler::new(&n).unwrap()),
    ]
}

/// A service the printer writes down in full: a netmask only when
/// persistent, `-o` only on UDP and fwmark services, scheduler flags the
/// printer names, a non-zero port unless persistent.
fn service() -> impl Strategy<Value = Service> {
    (
        key(),
        scheduler(),
        proptest::option::of(any::<u32>()),
        any::<u8>(),
        any::<u32>(),
        any::<bool>(),
        proptest::option::of("[a-z]{1,15}"),
    )
        .prop_map(|(key, scheduler, persistence, prefix, mask, ops, pe)| {
            let mut svc = Service::new(key).with_scheduler(scheduler);
            if let Some(timeout) = persistence {
                svc = svc.with_persistence(timeout);
                svc.netmask = match key.family() {
                    AddressFamily::Inet => Netmask::V4(Ipv4Addr::from(mask)),
                    AddressFamily::Inet6 => Netmask::V6(1 + prefix % 128),
                };
            } else if let ServiceKey::Inet { port: 0, .. } = key {
                svc = svc.with_persistence(1);
            }
            let one_packet = match key {
                ServiceKey::Inet { protocol, .. } => protocol == crate::Protocol::Udp,
                _ => true,
            };
            if ops && one_packet {
                svc.flags |= ServiceFlags::ONE_PACKET;
            }
            let named = match svc.scheduler.name() {
                "sh" | "mh" => ServiceFlags::SCHED1 | ServiceFlags::SCHED2,
                _ => ServiceFlags::SCHED1 | ServiceFlags::SCHED2 | ServiceFlags::SCHED3,
            };
            svc.flags |= ServiceFlags::from_bits_retain(u32::from(prefix) << 3) & named;
            svc.persistence_engine = pe;
            svc
        })
}

/// A destination the printer writes down in full: masqueraded, routed or
/// tunnelled (ipip without port or flags; gue and gre with one checksum
/// option), no thresholds; another family only when tunnelled.
fn destination(family: AddressFamily) -> impl Strategy<Value = Destination> {
    let flags = proptest::sample::select(vec![
        TunnelFlags::empty(),
        TunnelFlags::CSUM,
        TunnelFlags::REMCSUM,
    ]);
    let tunnel = prop_oneof![
        Just(Tunnel::ipip()),
        (1u16.., flags.clone()).prop_map(|(p, f)| Tunnel::gue(p).with_flags(f)),
        flags.prop_map(|f| Tunnel::gre().with_flags(f)),
    ];
    let forward = prop_oneof![
        Just(Forward::Masquerade),
        Just(Forward::Route),
        tunnel.prop_map(Forward::Tunnel),
    ];
    (
        prop_oneof![v4(), v6()],
        any::<u16>(),
        forward,
        0..=WEIGHT_MAX,
    )
        .prop_map(move |(addr, port, forward, weight)| {
            let forward = match forward {
                Forward::Tunnel(t) => Forward::Tunnel(t),
                f if AddressFamily::of(&addr) == family => f,
                _ => Forward::Tunnel(Tunnel::ipip()),
            };
            Destination::new(addr, port)
                .with_forward(forward)
                .with_weight(weight)
        })
}

fn entry() -> impl Strategy<Value = (Service, Vec<Destination>)> {
    service().prop_flat_map(|svc| {
        let dests = proptest::collection::vec(destination(svc.key.family()), 0..4);
        (Just(svc), dests)
    })
}

fn table() -> impl Strategy<Value = Table> {
    proptest::collection::vec(entry(), 0..5).prop_map(|entries| entries.into_iter().collect())
}

/// The table as `ipvsadm -S -n` would print it.
fn print(table: &Table) -> String {
    table_rules(table, &Numeric)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn printed_tables_read_back_the_same(table in table()) {
        let text = print(&table);
        let rules = parse(&text, &Numeric).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(rules.len(), table.len() + table.destination_count());
        let back = rules.to_table().map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back, table, "{}", text);
    }

    /// Every request with a rule form reads back from `request_rule`.
    #[test]
    fn request_rules_read_back(entry in entry(), pick in any::<proptest::sample::Index>()) {
        let (svc, dests) = entry;
        let key = svc.key;
        let mut requests = vec![
            Request::AddService(Box::new(svc.clone())),
            Request::EditService(Box::new(svc)),
            Request::DeleteService(key),
            Request::Zero(Some(key)),
            Request::Zero(None),
            Request::Flush,
        ];
        for d in dests {
            requests.push(Request::AddDestination(key, d));
            requests.push(Request::EditDestination(key, d));
            requests.push(Request::DeleteDestination(key, d.addr, d.port));
        }
        let request = pick.get(&requests);
        let line = request_rule(request, &Numeric);
        prop_assert_eq!(&parse_line(&line, &Numeric).map_err(|e| format!("{line}: {e}")), &Ok(request.clone()));
    }

    #[test]
    fn any_line_gives_a_request_or_an_error(line in "(ipvsadm |-[A-Za-z6] |--[a-z-]{1,14}(=[a-z0-9]{0,4})? |[0-9a-f:.\\[\\]x,-]{0,12} ){0,8}") {
        let one = parse_line(&line, &Numeric);
        let whole = parse(&line, &Numeric);
        check_text(&line, &whole)?;
        // A non-blank line reads the same alone and as a text.
        if !line.trim().is_empty() && line.trim() != "ipvsadm" {
            let from_text = whole.as_ref().map(|r| r.requests()).map_err(|e| e.lines()[0].error().clone());
            prop_assert_eq!(one.map(|r| vec![r]), from_text);
        }
    }

    #[test]
    fn any_text_gives_requests_or_errors(text in "\\PC{0,80}(\n\\PC{0,40}){0,3}") {
        check_text(&text, &parse(&text, &Numeric))?;
    }
}

/// Every line number a result names is a line of `text` holding tokens,
/// each once, in order; a table replay names only lines of the rules.
fn check_text(text: &str, result: &Result<Rules, RulesError>) -> Result<(), TestCaseError> {
    let lines: Vec<&str> = text.lines().collect();
    let numbers: Vec<usize> = match result {
        Ok(rules) => {
            if let Err(e) = rules.to_table() {
                let ruled: Vec<usize> = rules.iter().map(|(n, _)| n).collect();
                for bad in e.lines() {
                    prop_assert!(ruled.contains(&bad.line()), "{}", bad);
                }
            }
            rules.iter().map(|(n, _)| n).collect()
        }
        Err(e) => e.lines().iter().map(BadLine::line).collect(),
    };
    prop_assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{:?}", numbers);
    for n in numbers {
        prop_assert!(n >= 1 && n <= lines.len(), "line {} of {}", n, lines.len());
        let tokens: Vec<&str> = lines[n - 1].split_whitespace().collect();
        prop_assert!(
            !tokens.is_empty() && tokens != ["ipvsadm"],
            "line {}: {:?}",
            n,
            tokens
        );
    }
    Ok(())
}
