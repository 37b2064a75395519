//! The `serde` feature: every model type (and the sync engine's table)
//! comes back from JSON as it went, values without a name included, and
//! what reads wrong is refused with a message naming it.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::sync::Table;
use crate::{
    AddressFamily, DaemonRole, Destination, DestinationEntry, Forward, Info, Netmask, Protocol,
    Scheduler, Service, ServiceEntry, ServiceFlags, ServiceKey, Stats, SyncDaemon, Timeouts,
    Tunnel, TunnelFlags, TunnelKind,
};

fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug>(value: &T) -> String {
    let json = serde_json::to_string(value).expect("serializes");
    let back: T = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{json}: {e}"));
    assert_eq!(&back, value, "{json}");
    json
}

fn refused<T: DeserializeOwned + Debug>(json: &str, says: &str) {
    let e = serde_json::from_str::<T>(json).expect_err(json).to_string();
    assert!(e.contains(says), "{json}: {e}");
}

fn fixture() -> ServiceEntry {
    let key = ServiceKey::Inet {
        protocol: Protocol::from_raw(47),
        addr: "2001:db8::1".parse().unwrap(),
        port: 0,
    };
    let service = Service::new(key)
        .with_scheduler(Scheduler::new("custom").unwrap())
        .with_flags(ServiceFlags::SCHED1 | ServiceFlags::from_bits_retain(0x400))
        .with_persistence(300)
        .with_netmask(Netmask::V6(64))
        .with_persistence_engine("sip");
    let odd_tunnel = Tunnel {
        kind: TunnelKind::from_raw(9),
        port: 0,
        flags: TunnelFlags::REMCSUM | TunnelFlags::from_bits_retain(0x100),
    };
    let dests = [
        Destination::new("10.1.0.1".parse().unwrap(), 0).with_forward(Forward::Tunnel(
            Tunnel::gue(6080).with_flags(TunnelFlags::CSUM),
        )),
        Destination::new("2001:db8::2".parse().unwrap(), 80)
            .with_forward(Forward::Tunnel(odd_tunnel)),
        Destination::new("2001:db8::3".parse().unwrap(), 80)
            .with_forward(Forward::from_raw(6).unwrap())
            .with_thresholds(10, 5),
        Destination::new("2001:db8::4".parse().unwrap(), 80).with_forward(Forward::Route),
    ];
    ServiceEntry::new(service)
        .with_stats(Stats::new().with_conns(7).with_byte_rates(1, 2))
        .with_destinations(dests.map(|d| {
            DestinationEntry::new(d)
                .with_active_conns(3)
                .with_persistent_conns(1)
        }))
}

#[test]
fn a_listed_entry_with_unknown_values_round_trips() {
    let json = round_trip(&fixture());
    assert!(
        json.contains(r#""flags":["persistent","flag-1","0x400"]"#),
        "{json}"
    );
    assert!(json.contains(r#""protocol":47"#), "{json}");
    assert!(json.contains(r#""scheduler":"custom""#), "{json}");
    assert!(json.contains(r#""flags":["remcsum","0x100"]"#), "{json}");
    assert!(json.contains(r#""forward":{"other":6}"#), "{json}");
}

#[test]
fn the_other_model_types_round_trip() {
    round_trip(&ServiceKey::fwmark(5, AddressFamily::Inet6));
    round_trip(&ServiceKey::sctp("10.0.0.1".parse().unwrap(), 9));
    round_trip(&Netmask::V4("255.255.0.0".parse().unwrap()));
    round_trip(&Timeouts::new(900, 120, 300));
    round_trip(&Info::new(0x010201, 4096));
    for role in [DaemonRole::Master, DaemonRole::Backup] {
        round_trip(
            &SyncDaemon::new(role, "eth0")
                .with_sync_id(9)
                .with_group("ff02::81".parse().unwrap())
                .with_ttl(2),
        );
    }
    for s in Scheduler::named() {
        round_trip(&s);
    }
    for p in [Protocol::Tcp, Protocol::Udp, Protocol::Sctp] {
        round_trip(&p);
    }
    for k in [TunnelKind::Ipip, TunnelKind::Gue, TunnelKind::Gre] {
        round_trip(&k);
    }
    assert_eq!(round_trip(&ServiceFlags::empty()), "[]");
    assert_eq!(round_trip(&TunnelFlags::empty()), "[]");
    assert_eq!(round_trip(&Forward::Masquerade), r#""masquerade""#);
}

#[test]
fn left_out_fields_take_the_constructors_defaults() {
    let svc: Service =
        serde_json::from_str(r#"{"key":{"fwmark":{"mark":3,"family":"inet6"}}}"#).unwrap();
    assert_eq!(
        svc,
        Service::new(ServiceKey::fwmark(3, AddressFamily::Inet6))
    );
    let d: Destination = serde_json::from_str(r#"{"addr":"10.0.0.2","port":80}"#).unwrap();
    assert_eq!(d, Destination::new("10.0.0.2".parse().unwrap(), 80));
    let e: DestinationEntry =
        serde_json::from_str(r#"{"destination":{"addr":"10.0.0.2","port":80}}"#).unwrap();
    assert_eq!(e, DestinationEntry::new(d));
}

#[test]
fn names_are_read_in_every_spelling_a_value_has() {
    let f: ServiceFlags = serde_json::from_str(r#""persistent,sh-port""#).unwrap();
    assert_eq!(f, ServiceFlags::PERSISTENT | ServiceFlags::SCHED2);
    let f: ServiceFlags = serde_json::from_str(r#"["mh-fallback", "none"]"#).unwrap();
    assert_eq!(f, ServiceFlags::SCHED1);
    let f: TunnelFlags = serde_json::from_str(r#""nocsum""#).unwrap();
    assert_eq!(f, TunnelFlags::empty());
    // A number of a named value reads as that value: no second spelling.
    assert_eq!(
        serde_json::from_str::<Protocol>("6").unwrap(),
        Protocol::Tcp
    );
    assert_eq!(
        serde_json::from_str::<Protocol>(r#""udp""#).unwrap(),
        Protocol::Udp
    );
    assert_eq!(
        serde_json::from_str::<TunnelKind>("1").unwrap(),
        TunnelKind::Gue
    );
    assert_eq!(
        serde_json::from_str::<Scheduler>(r#""rr""#).unwrap(),
        Scheduler::RoundRobin
    );
}

#[test]
fn bad_data_is_refused_naming_what_is_wrong() {
    refused::<ServiceFlags>(r#"["sticky"]"#, "\"sticky\" is not a service flag");
    refused::<TunnelFlags>(r#"["0x10000"]"#, "exceed 16 bits");
    refused::<Protocol>(r#""icmp""#, "\"icmp\" is not a protocol");
    refused::<Protocol>("70000", "out of range for a protocol");
    refused::<TunnelKind>("-1", "out of range for a tunnel type");
    refused::<Scheduler>(r#""a-name-that-is-too-long""#, "at most 15");
    refused::<Forward>(r#"{"other":3}"#, "forwarding method 3 is Route");
    refused::<Forward>(r#"{"other":8}"#, "above 7");
    refused::<Service>(r#"{"scheduler":"rr"}"#, "missing field `key`");
    refused::<Service>(
        r#"{"key":{"fwmark":{"mark":1,"family":"inet"}},"sheduler":"rr"}"#,
        "unknown field `sheduler`",
    );
}

#[test]
fn a_table_round_trips_through_the_insert_path() {
    let listed = Table::from_entries([fixture()]);
    let json = round_trip(&listed);
    assert!(json.contains(r#""connections":3"#), "{json}");
    // A wanted table's destinations have no connections: none are written.
    let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    let mut wanted = Table::new();
    let d = |last: u8, weight| Destination::new([10, 1, 0, last].into(), 80).with_weight(weight);
    wanted.insert(Service::new(key), [d(2, 1), d(1, 1)]);
    let json = round_trip(&wanted);
    assert!(!json.contains("connections"), "{json}");
    // Read as insert reads: sorted, the last of a duplicate kept.
    let unsorted = format!(
        r#"[{{"service":{{"key":{{"inet":{{"protocol":"TCP","addr":"10.0.0.1","port":80}}}}}},
             "destinations":[{a2},{a1},{a2w}]}}]"#,
        a2 = r#"{"addr":"10.1.0.2","port":80,"weight":4}"#,
        a1 = r#"{"addr":"10.1.0.1","port":80}"#,
        a2w = r#"{"addr":"10.1.0.2","port":80,"weight":1}"#,
    );
    let read: Table = serde_json::from_str(&unsorted).unwrap();
    assert_eq!(read, wanted);
    let mut more = wanted.clone();
    more.insert(Service::new(key), [d(1, 1), d(2, 5)]);
    assert_ne!(round_trip(&more), round_trip(&wanted));
}
